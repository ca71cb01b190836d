"""voice_wer.py — recognition figures for bench/RESULTS.md: word error rate and intent
accuracy from audio, with the bot-specialized grammar and with the generic English model.

Test speech is made here and never committed: for each sample bot (pizza, smarthome) it
draws sentences from the nlu.yaml's example patterns with other slot values (lookup tables,
other examples' values), keeps only those that are NOT training examples, adds a few
hand-written phrasings no example has (out of grammar), and speaks them with espeak-ng in
several voices and speeds; a quarter get white noise mixed in by sox. Also Debian's real
recorded speech with its transcripts (pocketsphinx-testdata: goforward, 5 librivox
sentences, 5 "cards" commands), with the generic model, the pizza grammar (out of domain:
the fallback's test) and a grammar built the same way from a small card-game nlu.yaml. Transcripts come from `parley asr transcribe` (with and without
--nlu); intents from `parley nlu predict` on the transcripts with a model trained on the
bot (a small one: 2 layers of 128, as the e2e tests train; the same model on the reference
text gives the ceiling). CPU seconds of the
recognizer (children's user+sys time) over seconds of audio give the real-time factor.

Usage: python3 bench/voice_wer.py PARLEY OUTDIR [--per-bot N] [--seed S] [--real-only]
"""
import json
import os
import random
import re
import resource
import subprocess
import sys
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parley, out = sys.argv[1], sys.argv[2]
per_bot = int(sys.argv[sys.argv.index("--per-bot") + 1]) if "--per-bot" in sys.argv else 55
seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 7
rng = random.Random(seed)
os.makedirs(out, exist_ok=True)
VOICES = [("en-us", 150), ("en-us+f3", 140), ("en-us+m3", 165), ("en-gb", 155), ("en-us+f2", 170)]
NOVEL = {
    "pizza": [("i would love a large pizza with ham", "order_pizza"),
              ("could i please get two small pizzas", "order_pizza"),
              ("what toppings do you have today", "ask_menu"),
              ("please cancel everything", "cancel"),
              ("yes that is right", "affirm"),
              ("no thank you", "deny"),
              ("hello there", "greet"),
              ("make it a medium one with olives instead", "change_order")],
    "smarthome": [("switch on the lamp in the bedroom please", "turn_on"),
                  ("could you turn the kitchen lights off", "turn_off"),
                  ("i want the living room at twenty degrees", "set_temperature"),
                  ("is the heater in the office on", "ask_status"),
                  ("good morning", "greet"),
                  ("thanks a lot", "thank_you"),
                  ("no stop", "cancel"),
                  ("yes please", "affirm")],
}
TESTDATA = "/usr/share/pocketsphinx/test/data"
# a card-game bot for the real "cards" recordings: patterns of one to three cards, not the
# recorded sentences themselves
CARDS_NLU = """version: "3.1"
nlu:
  - intent: cards
    examples: |
      - [ten](rank) of [clubs](suit)
      - [ace](rank) of [spades](suit) and [two](rank) of [hearts](suit)
      - [king](rank) of [diamonds](suit) [three](rank) of [clubs](suit)
      - [jack](rank) of [hearts](suit) [nine](rank) of [spades](suit) [six](rank) of [clubs](suit)
  - lookup: rank
    examples: |
      - ace
      - two
      - three
      - four
      - five
      - six
      - seven
      - eight
      - nine
      - ten
      - jack
      - queen
      - king
  - lookup: suit
    examples: |
      - clubs
      - diamonds
      - hearts
      - spades
"""


def real_speech():
    """(wav path, transcript) of Debian's recordings: goforward, librivox, cards."""
    items = []
    path = os.path.join(out, "goforward.wav")
    subprocess.run(["sox", "-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1",
                    os.path.join(TESTDATA, "goforward.raw"), path], check=True)
    items.append(("goforward", path, "go forward ten meters"))
    for folder, listing in (("librivox", "transcription"), ("cards", "cards.transcription")):
        for line in open(os.path.join(TESTDATA, folder, listing)):
            m = re.match(r"<s>(.*)</s>\s*\((.*)\)", line.strip())
            if m:
                items.append((folder, os.path.join(TESTDATA, folder, m.group(2) + ".wav"),
                              " ".join(m.group(1).split())))
    return items
ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen " \
       "fifteen sixteen seventeen eighteen nineteen".split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def spell(n):
    if n >= 1000:
        return spell(n // 1000) + " thousand" + (" " + spell(n % 1000) if n % 1000 else "")
    if n >= 100:
        return ONES[n // 100] + " hundred" + (" " + spell(n % 100) if n % 100 else "")
    if n >= 20:
        return TENS[n // 10] + (" " + ONES[n % 10] if n % 10 else "")
    return ONES[n]


def words(text):
    """Lower-case spoken words: punctuation dropped, numbers spelled (as the grammar does)."""
    text = re.sub(r"\d+", lambda m: " " + spell(int(m.group())) + " ", text.lower())
    return re.sub(r"[^a-z' ]+", " ", text).split()


ANN = re.compile(r"\[([^\]]+)\](?:\((\w+)\)|\{[^}]*\"entity\":\s*\"(\w+)\"[^}]*\})")


def sentences(bot):
    doc = yaml.safe_load(open(os.path.join(ROOT, "samples", bot, "nlu.yaml")))["nlu"]
    patterns, values, train = [], {}, set()
    for item in doc:
        if "intent" in item:
            for line in item["examples"].splitlines():
                line = line.strip()[2:].strip()
                if not line:
                    continue
                spans = [(m.group(1), m.group(2) or m.group(3)) for m in ANN.finditer(line)]
                for v, s in spans:
                    values.setdefault(s, set()).add(v)
                train.add(" ".join(words(ANN.sub(lambda m: m.group(1), line))))
                patterns.append((item["intent"], line, spans))
        elif "lookup" in item:
            values.setdefault(item["lookup"], set()).update(
                v.strip()[2:].strip() for v in item["examples"].splitlines() if v.strip())
    values = {k: sorted(v) for k, v in values.items()}
    chosen, seen = [], set()
    slotted = [p for p in patterns if p[2]]
    for _ in range(5000):
        if len(chosen) >= per_bot - len(NOVEL[bot]):
            break
        intent, line, _ = rng.choice(slotted)
        text = ANN.sub(lambda m: rng.choice(values[m.group(2) or m.group(3)]), line)
        key = " ".join(words(text))
        if key in train or key in seen:
            continue
        seen.add(key)
        chosen.append((text, intent, "pattern"))
    return chosen + [(t, i, "novel") for t, i in NOVEL[bot]]


def synth(text, path, i):
    voice, speed = VOICES[i % len(VOICES)]
    raw = path + ".raw.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", raw, text], check=True)
    if i % 4 == 3:  # noise: white noise at -30 dB under full scale
        subprocess.run(["sox", raw, "-r", "16000", path + ".clean.wav", "pad", "0.3", "0.3"],
                       check=True)
        dur = float(subprocess.run(["soxi", "-D", path + ".clean.wav"], capture_output=True,
                                   text=True).stdout)
        subprocess.run(["sox", "-n", "-r", "16000", "-c", "1", "-b", "16", path + ".noise.wav",
                        "synth", str(dur), "whitenoise", "vol", "0.03"], check=True)
        subprocess.run(["sox", "-m", path + ".clean.wav", path + ".noise.wav", path], check=True)
    else:
        subprocess.run(["sox", raw, "-r", "16000", path, "pad", "0.3", "0.3"], check=True)
    return float(subprocess.run(["soxi", "-D", path], capture_output=True, text=True).stdout)


def edits(ref, hyp):
    d = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, d[0] = d[0], i
        for j, h in enumerate(hyp, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (r != h))
    return d[len(hyp)]


def transcribe(files, nlu):
    args = [parley, "asr", "transcribe"] + (["--nlu", nlu, "--cache", os.path.join(out, "cache")]
                                            if nlu else []) + files
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(args, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return r.stdout.split("\n")[:len(files)], cpu


def intents(model, texts):
    r = subprocess.run([parley, "nlu", "predict", "--model", model], input="\n".join(
        t if t.strip() else "-" for t in texts) + "\n", capture_output=True, text=True)
    return [json.loads(line).get("intent") for line in r.stdout.splitlines()]


def score(refs, hyps):
    e = sum(edits(words(r), h.split()) for r, h in zip(refs, hyps))
    n = sum(len(words(r)) for r in refs)
    exact = sum(words(r) == h.split() for r, h in zip(refs, hyps))
    return 100.0 * e / n, exact


report = {"date": time.strftime("%Y-%m-%d"), "bots": {}}
for bot in () if "--real-only" in sys.argv else ("pizza", "smarthome"):
    nlu = os.path.join(ROOT, "samples", bot, "nlu.yaml")
    model = os.path.join(out, bot + "_model")
    if not os.path.exists(os.path.join(model, "model.safetensors")):
        subprocess.run([parley, "train", "--data", nlu, "--out", model, "--seed", "1",
                        "--layers", "2", "--hidden", "128", "--heads", "2", "--intermediate",
                        "256", "--threads", "2"], check=True, capture_output=True)
    items = sentences(bot)
    files, audio = [], 0.0
    for i, (text, _, _) in enumerate(items):
        path = os.path.join(out, "%s_%03d.wav" % (bot, i))
        audio += synth(text, path, i)
        files.append(path)
    refs = [t for t, _, _ in items]
    gold = [i for _, i, _ in items]
    ref_int = intents(model, [" ".join(words(t)) for t in refs])
    res = {"utterances": len(items), "audio_s": round(audio, 1),
           "novel": sum(k == "novel" for _, _, k in items),
           "noisy": sum(1 for i in range(len(items)) if i % 4 == 3),
           "intent_on_text": sum(a == b for a, b in zip(ref_int, gold))}
    for name, g in (("grammar", nlu), ("generic", None)):
        hyps, cpu = transcribe(files, g)
        wer, exact = score(refs, hyps)
        got = intents(model, hyps)
        nov = [k == "novel" for _, _, k in items]
        wer_nov, _ = score([r for r, n in zip(refs, nov) if n], [h for h, n in zip(hyps, nov) if n])
        res[name] = {"wer": round(wer, 1), "exact": exact, "wer_novel": round(wer_nov, 1),
                     "intent": sum(a == b for a, b in zip(got, gold)),
                     "cpu_s": round(cpu, 1), "rtf": round(cpu / audio, 3),
                     "examples": list(zip(refs, hyps))[:3]}
    report["bots"][bot] = res
    print(bot, json.dumps(res, indent=1), flush=True)

cards_nlu = os.path.join(out, "cards-nlu.yaml")
with open(cards_nlu, "w") as f:
    f.write(CARDS_NLU)
items = real_speech()
report["real"] = {}
for name, g in (("generic", None), ("pizza grammar", os.path.join(ROOT, "samples", "pizza",
                                                                   "nlu.yaml")),
                ("cards grammar", cards_nlu)):
    for subset in ("goforward", "librivox", "cards"):
        sub = [(p, t) for k, p, t in items if k == subset]
        if name == "cards grammar" and subset != "cards":
            continue
        hyps, _ = transcribe([p for p, _ in sub], g)
        wer, exact = score([t for _, t in sub], hyps)
        report["real"]["%s / %s" % (subset, name)] = {
            "n": len(sub), "wer": round(wer, 1), "exact": exact, "hyps": hyps}
print("real", json.dumps(report["real"], indent=1))
json.dump(report, open(os.path.join(out, "voice_wer.json"), "w"), indent=1)
