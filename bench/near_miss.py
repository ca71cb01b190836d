#!/usr/bin/python3
"""near_miss.py — how often the value a bot receives for a slot is the one it knows, when the
text it parses is typed with slips or written as a recognizer writes it.

For each sample bot (pizza, smarthome, starter) it trains a small model (2 layers of 128, as
the e2e tests train; kept in OUTDIR) and parses the bot's test_nlu.yaml, never trained on, in
four forms: as written; with bench/typos.py's slip in each long slot value; as a transcript
(lower case, punctuation dropped, numbers spelled as words: "12" is "twelve", as
bench/voice_wer.py speaks them); and as a transcript with the slips. A slot is right when the
parse has a slot of its type whose canonical value is the value the bot knows: the annotated
one, through the bot's synonyms, its numbers as digits where the slot's values write digits.
Each form is parsed by the model and by the same model without config.json's "slot_values"
(canonical values from the synonyms alone), so the difference is what the resolution of near
misses (nlu/model/slot_values.h) gives; resolutions that changed a right value into a wrong
one are counted too.

Usage: python3 bench/near_miss.py PARLEY OUTDIR
"""
import json
import os
import re
import shutil
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from typos import slip  # noqa: E402
from voice_wer import spell  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPAN = re.compile(r"\[([^\]\n]+)\](?:\(([^)\n]+)\)|(\{[^}\n]+\}))")
SPOKEN = {spell(n): str(n) for n in range(10000)}


def transcript(text):
    """text as a recognizer writes it."""
    text = re.sub(r"\d+", lambda m: " " + spell(int(m.group())) + " ", text.lower())
    return " ".join(re.sub(r"[^a-z' ]", " ", text).split())


def fold(s):
    return " ".join(s.lower().split())


def digits(value):
    """value with its runs of number words as digits (for a slot whose values write digits)."""
    words, out, i = value.split(), [], 0
    while i < len(words):
        for j in range(len(words), i, -1):
            n = SPOKEN.get(" ".join(words[i:j]))
            if n is not None:
                out.append(n)
                i = j
                break
        else:
            out.append(words[i])
            i += 1
    return " ".join(out)


def load_bot(bot):
    """(test items [(annotated line)], synonyms {folded surface form: canonical})."""
    with open(os.path.join(ROOT, "samples", bot, "nlu.yaml"), encoding="utf-8") as f:
        data = yaml.safe_load(f)
    synonyms = {}
    for item in data.get("nlu", []):
        if "synonym" in item:
            for v in item["examples"].split("\n"):
                v = v.strip().lstrip("- ").strip()
                if v:
                    synonyms.setdefault(fold(v), item["synonym"])
    with open(os.path.join(ROOT, "samples", bot, "test_nlu.yaml"), encoding="utf-8") as f:
        test = yaml.safe_load(f)
    lines = []
    for item in test.get("nlu", []):
        for v in item.get("examples", "").split("\n"):
            v = v.strip()
            if v.startswith("- "):
                lines.append(v[2:].strip())
    return lines, synonyms


def form(line, typos, spoken):
    """(text, [(slot, value as annotated)]) of an annotated line in one of the four forms."""
    text, gold, at = [], [], 0
    for m in SPAN.finditer(line):
        text.append(line[at:m.start()])
        value = m.group(1)
        if m.group(2):
            slot, canon = m.group(2), value
        else:
            j = json.loads(m.group(3))
            slot, canon = j["entity"], j.get("value", value)
        if typos:
            slipped = slip(re.match(r"\[(.*)\]\((.*)\)", "[" + value + "](" + slot + ")"))
            value = slipped[1:slipped.rindex("](")]
        text.append(value)
        gold.append((slot, canon))
        at = m.end()
    text.append(line[at:])
    text = "".join(text)
    return (transcript(text) if spoken else " ".join(text.split())), gold


def parse(parley, model, texts):
    r = subprocess.run([parley, "nlu", "predict", "--model", model], input="\n".join(texts) + "\n",
                       capture_output=True, text=True, check=True)
    return [json.loads(x) for x in r.stdout.splitlines()]


def main():
    parley, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    slip.changed = 0
    report = {}
    for bot in ("pizza", "smarthome", "starter"):
        model = os.path.join(out, bot + "_model")
        if not os.path.exists(os.path.join(model, "model.safetensors")):
            subprocess.run([parley, "train", "--data", os.path.join(ROOT, "samples", bot, "nlu.yaml"),
                            "--out", model, "--seed", "1", "--layers", "2", "--hidden", "128",
                            "--heads", "2", "--intermediate", "256", "--threads", "2", "--force"],
                           check=True, capture_output=True)
        plain = model + "_plain"
        shutil.rmtree(plain, ignore_errors=True)
        shutil.copytree(model, plain)
        with open(os.path.join(model, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        values = config.pop("slot_values", {})
        with open(os.path.join(plain, "config.json"), "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2)
        lines, synonyms = load_bot(bot)
        report[bot] = {}
        for name, typos, spoken in (("written", 0, 0), ("typos", 1, 0), ("transcript", 0, 1),
                                    ("transcript+typos", 1, 1)):
            items = [form(x, typos, spoken) for x in lines]
            texts = [t for t, _ in items]
            row = {}
            results = {m: parse(parley, p, texts) for m, p in (("before", plain), ("after", model))}
            broke = 0
            for m, parsed in results.items():
                right = total = 0
                for k, ((text, gold), j) in enumerate(zip(items, parsed)):
                    for slot, canon in gold:
                        want = synonyms.get(fold(canon), canon)
                        if values.get(slot, {}).get("digits"):
                            want = digits(fold(want))
                        got = [fold(s.get("canonical", s["value"])) for s in j.get("slots", [])
                               if s["slot"] == slot]
                        ok = fold(want) in got
                        right += ok
                        total += 1
                        if m == "after" and not ok:
                            before = results["before"][k]
                            broke += fold(want) in [fold(s.get("canonical", s["value"]))
                                                    for s in before.get("slots", [])
                                                    if s["slot"] == slot]
                row[m] = round(100.0 * right / total, 1)
            row["slots"] = total
            row["made wrong"] = broke
            report[bot][name] = row
            print(bot, name, row, flush=True)
    with open(os.path.join(out, "near_miss.json"), "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
