"""voice_coffee.py — command acceptance on orders phrased unlike the bot's examples: a coffee
bot written for the test (bench/coffee/nlu.yaml: 50 examples, seven slot types with lookup
tables) and 40 orders of other phrasings (bench/coffee/orders.txt: other word orders, "um",
"uh", "please", greetings), each spoken by the seven voices of bench/voice_wer.py, clean and
with noise at 12 and 6 dB (or --snrs): --noise kitchen (bench/voice_wer.py's: chatter, rumble,
clatter) or stationary (no speech in it: rumble, clatter, hum, hiss). --snr-rule peak measures
the SNR as the speech-to-intent benchmark the voice issue cites mixes its recordings (the
loudest 128 ms of the speech against the loudest of the noise; "active", the default, is the
speech's active power against the noise's mean). --room makes each order a recording of one
request like that benchmark's (2 s of a quiet room before it, 2.5 s after; the noise over all
of it); --reverb R makes the room echo (sox's reverb at R% reverberance, before the noise).
--gain DB makes the speaker quieter (or louder) by DB before the room and the noise: a quiet
speaker, or a microphone set low. --tempo F speaks F times as fast (sox's tempo: the pitch
kept) and --pitch C shifts the voice by C cents (sox's pitch: the speed kept), before all
that: faster and slower talkers, higher and deeper voices than the synthesizers'. --generic W builds the bot's model with the generic model's
words mixed in at weight W (`parley asr build --generic`); --reference decodes the same files
with the voice issue's reference recognizer too (a plain word trigram of the examples, each
file decoded whole: bench/plain_trigram.py; needs Debian's python3-pocketsphinx), each figure
printed beside parley's. --kiosk runs each file through the kiosk graph too, as one stream
(bench/voice_endpoint.py's: audio.gst -> asr.pocketsphinx -> nlu.bert): a command is
accepted there when the stream gives exactly one turn and it is right.

The NLU is trained with parley's defaults (`parley train --data nlu.yaml`), as a bot's author
would; its parse of the orders' text is the ceiling. A command is accepted when its intent
and every slot the order marks come out right (canonical values) and the recognizer did not
reject it (bench/voice_wer.py's rules). Word errors count words as spoken. Speech is made
here and never committed.

Usage: python3 bench/voice_coffee.py PARLEY OUTDIR [--snrs 12,6] [--noise kitchen|stationary]
       [--snr-rule active|peak] [--room] [--reverb R] [--gain DB] [--tempo F] [--pitch C]
       [--generic W] [--reference] [--kiosk]
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plain_trigram  # noqa: E402
import voice_endpoint  # noqa: E402
import voice_wer as vw  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "coffee")
SPAN = re.compile(r"\[([^\]]+)\]\((\w+)\)")
NOISES = {"kitchen": vw.kitchen_noise, "stationary": vw.stationary_noise}


def orders():
    """(text, {slot: value}) of each test order."""
    out = []
    for line in open(os.path.join(HERE, "orders.txt")):
        line = line.strip()
        if line and not line.startswith("#"):
            slots = {}
            for m in SPAN.finditer(line):
                slots.setdefault(m.group(2), m.group(1))
            out.append((SPAN.sub(lambda m: m.group(1), line), slots))
    return out


def figures(model, heard, refs, wants):
    """WER, exact transcripts, rejected and accepted commands of (transcripts, rejected)."""
    hyps, rejected = heard
    wer, exact = vw.score(refs, hyps)
    return {"utterances": len(hyps), "wer": round(wer, 1), "exact": exact,
            "rejected": sum(rejected),
            "accepted": sum(vw.accepted(p, "order_drink", w) and not r
                            for p, w, r in zip(vw.parses(model, hyps), wants, rejected))}


def kiosk(nlu, model, heard, wants):
    """The kiosk graph's figures over the files: accepted (one turn, and right), and how many
    streams gave no turn, one, or more."""
    turns, accepted = [0, 0, 0], 0
    for path, want in zip(heard, wants):
        parsed = voice_endpoint.turns(nlu, model, path)
        turns[min(len(parsed), 2)] += 1
        accepted += len(parsed) == 1 and vw.accepted(parsed[0], "order_drink", want)
    return {"accepted": accepted, "turns_0_1_more": turns}


def louder(path, db):
    """path with its speech scaled by db dB."""
    dst = path[:-4] + "_gain%d.wav" % db
    vw.write_wav(dst, vw.read_wav(path) * 10 ** (db / 20))
    return dst


def reshaped(path, tempo, pitch):
    """path spoken tempo times as fast and pitch cents higher (sox; the silence around it
    scaled with it)."""
    dst = path[:-4] + "_t%g_p%d.wav" % (tempo, pitch)
    effects = (["tempo", "-s", str(tempo)] if tempo != 1 else []) + \
        (["pitch", str(pitch)] if pitch else [])
    subprocess.run(["sox", path, dst] + effects, check=True)
    return dst


def bot_dictionary(parley, nlu):
    """The pronunciation dictionary parley builds for the bot (`parley asr build`)."""
    lm = subprocess.run([parley, "asr", "build", "--nlu", nlu, "--cache",
                         os.path.join(vw.out, "cache")], capture_output=True, text=True,
                        check=True).stdout.split()[0]
    return lm[:-len(".lm")] + ".dict"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("parley")
    ap.add_argument("out")
    ap.add_argument("--snrs", default="12,6")
    ap.add_argument("--noise", choices=NOISES, default="kitchen")
    ap.add_argument("--snr-rule", choices=sorted(vw.SNR_RULES), default="active")
    ap.add_argument("--room", action="store_true")
    ap.add_argument("--reverb", type=int, default=0)
    ap.add_argument("--gain", type=int, default=0)
    ap.add_argument("--tempo", type=float, default=1.0)
    ap.add_argument("--pitch", type=int, default=0)
    ap.add_argument("--generic")
    ap.add_argument("--reference", action="store_true")
    ap.add_argument("--kiosk", action="store_true")
    args = ap.parse_args()
    snrs = [None] + [int(s) for s in args.snrs.split(",") if s]
    mix = ["--generic", args.generic] if args.generic else []
    vw.configure([None, args.parley, args.out, "--models", "ngram"])
    nlu = os.path.join(HERE, "nlu.yaml")
    model = os.path.join(args.out, "coffee_model")
    if not os.path.exists(os.path.join(model, "model.safetensors")):
        subprocess.run([args.parley, "train", "--data", nlu, "--out", model, "--quiet"],
                       check=True)
    items = orders()
    ceiling = vw.parses(model, [t for t, _ in items])
    report = {"orders": len(items), "noise": args.noise, "snr_rule": args.snr_rule,
              "room": args.room, "reverb": args.reverb, "gain": args.gain,
              "tempo": args.tempo, "pitch": args.pitch,
              "ceiling": sum(vw.accepted(p, "order_drink", s) for p, (_, s) in zip(ceiling, items))}
    print("text, fully right: %d of %d" % (report["ceiling"], len(items)), flush=True)
    files, refs, wants = [], [], []
    for k, (text, slots) in enumerate(items):
        for v in range(len(vw.VOICES)):
            path = os.path.join(args.out, "coffee_%02d_%d.wav" % (k, v))
            vw.synth(text, path, v)
            files.append(path)
            refs.append(text)
            wants.append(slots)
    reference = (plain_trigram.decoder(nlu, bot_dictionary(args.parley, nlu), args.out)
                 if args.reference else None)
    noise = NOISES[args.noise]() if len(snrs) > 1 else None
    g = np.random.default_rng(vw.seed)
    if args.tempo != 1 or args.pitch:
        files = [reshaped(f, args.tempo, args.pitch) for f in files]
    if args.gain:
        files = [louder(f, args.gain) for f in files]
    if args.room:
        files = [vw.in_room(f, g) for f in files]
    if args.reverb:
        files = [vw.reverberant(f, args.reverb) for f in files]
    for snr in snrs:
        heard = files if snr is None else [vw.noisy(f, snr, noise, g, args.snr_rule, args.noise)
                                           for f in files]
        key = "clean" if snr is None else "%d dB" % snr
        report[key] = figures(model, vw.transcribe(heard, ["--nlu", nlu] + mix)[:2], refs, wants)
        if reference:
            report[key]["reference"] = figures(
                model, (plain_trigram.transcribe(reference, heard), [False] * len(heard)),
                refs, wants)
        if args.kiosk:
            report[key]["kiosk"] = kiosk(nlu, model, heard, wants)
        print(key, report[key], flush=True)
    json.dump(report, open(os.path.join(args.out, "voice_coffee.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
