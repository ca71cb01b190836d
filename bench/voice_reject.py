"""voice_reject.py — how often the recognizer's confidence rejects speech, per condition, for
bench/RESULTS.md ("Voice"): the cost in the bots' own sentences wrongly rejected, and the
share of speech the bot does not serve that goes to its fallback.

In-domain: sentences of the pizza and smart-home bots through their own class model, drawn
and spoken as bench/voice_wer.py does (its seven voices of flite, espeak-ng and festival's
HTS voice), clean and with its kitchen-like noise at 12 dB; and Debian's five real "cards"
recordings through voice_wer.py's card-game bot. Out of domain: the same sentences through the OTHER bot's model; general
English sentences read by festival's HTS voice (cmu_us_slt_arctic_hts, one of the in-domain
voices too), clean and at 12 dB, through both models; Debian's real librivox sentences and
"go forward ten meters" through all three models. Confidences come from `parley asr
transcribe --confidence`; a transcript counts as right when its words are the sentence's.

Usage: python3 bench/voice_reject.py PARLEY OUTDIR [--per-bot N] [--seed S] [--below T,...]
"""
import collections
import os
import subprocess
import sys

import voice_wer as vw

HTS = ["the weather was cold and grey when we reached the harbour",
       "she read the letter twice before she put it away",
       "most of the students had never seen the ocean",
       "the committee will meet again next tuesday afternoon",
       "he told me that the old bridge had been closed for repairs",
       "there is a small museum at the end of the street",
       "we spent the whole evening talking about music and books",
       "the train was late because of snow on the tracks",
       "my brother works at a hospital in the north of the city",
       "they planted apple trees along the fence last spring",
       "a good map is worth more than a long explanation",
       "the children laughed when the dog jumped into the lake",
       "nobody knew who had left the door open all night",
       "the river rises every year when the snow melts",
       "i think the meeting went better than we expected",
       "the price of bread has gone up again this month"]


def hts(text, path):
    """A 16 kHz WAV of text in festival's HTS voice, with 0.3 s of silence around it."""
    raw = path + ".raw.wav"
    subprocess.run(["text2wave", "-eval", "(voice_cmu_us_slt_arctic_hts)", "-o", raw],
                   input=text, text=True, check=True)
    subprocess.run(["sox", raw, "-r", "16000", "-b", "16", path, "pad", "0.3", "0.3"],
                   check=True)


def confidences(files, nlu):
    """(confidence, transcript) of each file through the bot model of nlu."""
    r = subprocess.run([vw.parley, "asr", "transcribe", "--confidence", "--cache",
                        os.path.join(vw.out, "cache"), "--nlu", nlu] + files,
                       capture_output=True, text=True, check=True)
    got = []
    for line in r.stdout.split("\n")[:len(files)]:
        c, _, text = line.partition("\t")
        got.append((float(c) if c != "-" else float("nan"), text))
    return got


def main():
    vw.configure(sys.argv)
    below = [float(t) for t in (sys.argv[sys.argv.index("--below") + 1].split(",")
                                if "--below" in sys.argv else ["50"])]
    nlu = {b: os.path.join(vw.ROOT, "samples", b, "nlu.yaml") for b in ("pizza", "smarthome")}
    nlu["cards"] = os.path.join(vw.out, "cards-nlu.yaml")
    with open(nlu["cards"], "w") as f:
        f.write(vw.CARDS_NLU)
    rows = []  # (condition, model, wav, sentence)
    noise = vw.kitchen_noise()
    g = vw.np.random.default_rng(vw.seed)
    for bot, other in (("pizza", "smarthome"), ("smarthome", "pizza")):
        for i, (text, _, _) in enumerate(vw.sentences(bot)):
            p = os.path.join(vw.out, "%s_%03d.wav" % (bot, i))
            vw.synth(text, p, i)
            for wav, cond in ((p, "clean"), (vw.noisy(p, 12, noise, g), "12 dB")):
                rows.append(("in: own sentences, " + cond, bot, wav, text))
                rows.append(("out: the other bot's sentences, " + cond, other, wav, text))
    for i, text in enumerate(HTS):
        p = os.path.join(vw.out, "hts_%02d.wav" % i)
        hts(text, p)
        for wav, cond in ((p, "clean"), (vw.noisy(p, 12, noise, g), "12 dB")):
            for bot in ("pizza", "smarthome"):
                rows.append(("out: general English (HTS voice), " + cond, bot, wav, text))
    for kind, wav, text in vw.real_speech():
        if kind == "cards":
            rows.append(("in: real card commands", "cards", wav, text))
        else:
            for bot in ("pizza", "smarthome", "cards"):
                rows.append(("out: real %s" % kind, bot, wav, text))
    got = {}
    for bot in nlu:
        files = sorted({w for _, m, w, _ in rows if m == bot})
        got.update(((bot, w), c) for w, c in zip(files, confidences(files, nlu[bot])))
    by = collections.defaultdict(list)
    for cond, bot, wav, text in rows:
        c, heard = got[(bot, wav)]
        by[cond].append((c, vw.words(heard) == vw.words(text)))
    for t in below:
        print("reject_below %g" % t)
        for cond in sorted(by):
            v = by[cond]
            cs = sorted(c for c, _ in v)
            print("  %-46s %3d/%-3d rejected (%d of them right; right in all %d); confidence "
                  "%.1f..%.1f, median %.1f" % (
                      cond, sum(c < t for c, _ in v), len(v), sum(c < t and ok for c, ok in v),
                      sum(ok for _, ok in v), cs[0], cs[-1], cs[len(cs) // 2]))


if __name__ == "__main__":
    main()
