#!/usr/bin/python3
"""bot_temperature.py — how far a sample bot's intent confidences are from calibrated.

A bot trained without --dev keeps its intent temperature at 1 unless its intent is the sparse
features' alone (then it is cross-fitted). This measures what a cross-fitted temperature
would be for a bot whose intent uses the encoder, with the parley CLI alone: the bot's written
examples of each intent are dealt into 3 folds (seeded), a model is trained on each pair of
folds (the lookup tables, synonyms and regexes kept), the held-out fold is predicted with
every intent's confidence, and the temperature T minimizing the held-out negative
log-likelihood is found on a grid (0.50 to 10.45 by 0.05). Then the bot's model trained on
all its examples is scored on the bot's test sentences (samples/BOT/test_nlu.yaml) at T = 1
and at the fitted T: the in-scope negative log-likelihood, and at the dialog's default
threshold 0.3 and the bot's own (domain.yaml) the in-scope sentences right and confident,
those that fall back, and the out_of_scope sentences caught. Nothing is tuned on the test
sentences: T comes from the training examples alone. Figures go to bench/RESULTS.md.

  /usr/bin/python3 bench/bot_temperature.py --parley build/sdk/cli/parley --bot pizza --seeds 3
"""
import argparse
import json
import math
import os
import random
import subprocess
import tempfile

import yaml

from fewshot import OOS, fallback_threshold, load_rasa_texts, plain_text, rasa_examples, \
    sample_files

HERE = os.path.dirname(os.path.abspath(__file__))
FOLDS = 3
FLOOR = 1e-6  # the smallest confidence `nlu predict` gives, as a probability


def train(parley, data, out, seed):
    subprocess.run([parley, "-q", "train", "--data", data, "--out", out, "--seed", str(seed),
                    "--threads", "1", "--quiet", "--force"], check=True, capture_output=True)


def log_probs(parley, model, texts):
    """Each text's {intent: log confidence} over every intent of the model."""
    out = subprocess.run([parley, "-q", "nlu", "predict", "--model", model, "--top", "1000"],
                         input="\n".join(texts) + "\n", capture_output=True, text=True,
                         check=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    return [{r["intent"]: math.log(max(r["confidence"], FLOOR)) for r in row["ranking"]}
            for row in rows]


def at_temperature(lp, t):
    """softmax(lp / t) as {intent: probability}."""
    z = {k: v / t for k, v in lp.items()}
    top = max(z.values())
    den = sum(math.exp(v - top) for v in z.values())
    return {k: math.exp(v - top) / den for k, v in z.items()}


def nll(pairs, t):
    return sum(-math.log(max(at_temperature(lp, t).get(gold, FLOOR), FLOOR))
               for lp, gold in pairs) / len(pairs)


def held_out_pairs(parley, doc, seed, work):
    """(log probs, gold intent) of every written example, predicted by the fold model that
    did not see it."""
    rng = random.Random(seed)
    fold = {}
    for item in doc["nlu"]:
        if "intent" in item:
            order = list(range(len(rasa_examples(item))))
            rng.shuffle(order)
            for j, i in enumerate(order):
                fold[(item["intent"], i)] = j % FOLDS
    pairs = []
    for f in range(FOLDS):
        part, held = {"version": doc.get("version", "3.1"), "nlu": []}, []
        for item in doc["nlu"]:
            if "intent" not in item:
                part["nlu"].append(item)
                continue
            keep = []
            for i, e in enumerate(rasa_examples(item)):
                if fold[(item["intent"], i)] == f:
                    held.append((plain_text(e), item["intent"]))
                else:
                    keep.append(e)
            part["nlu"].append({"intent": item["intent"],
                                "examples": "".join("- %s\n" % e for e in keep)})
        data = os.path.join(work, "fold%d.yaml" % f)
        with open(data, "w") as out:
            yaml.safe_dump(part, out, sort_keys=False)
        model = os.path.join(work, "fold%d" % f)
        train(parley, data, model, seed)
        pairs += zip(log_probs(parley, model, [t for t, _ in held]), [g for _, g in held])
    return pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parley", default=os.path.join(HERE, "..", "build", "sdk", "cli", "parley"))
    ap.add_argument("--bot", default="pizza")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    nlu, test_file = sample_files(args.bot)
    with open(nlu) as f:
        doc = yaml.safe_load(f)
    test = [(text, intent) for text, intent, _ in load_rasa_texts(test_file)]
    own = fallback_threshold(args.bot)
    grid = [0.5 + 0.05 * i for i in range(200)]
    for seed in range(1, args.seeds + 1):
        with tempfile.TemporaryDirectory(prefix="parley-bot-t-") as work:
            pairs = held_out_pairs(args.parley, doc, seed, work)
            t = min(grid, key=lambda x: nll(pairs, x))
            right = sum(max(lp, key=lp.get) == g for lp, g in pairs)
            print("%s seed %d: folds right on %d of %d held-out examples; T %.2f (held-out NLL "
                  "%.3f at 1, %.3f at T)" % (args.bot, seed, right, len(pairs), t,
                                             nll(pairs, 1), nll(pairs, t)))
            model = os.path.join(work, "all")
            train(args.parley, nlu, model, seed)
            scored = list(zip(log_probs(args.parley, model, [s for s, _ in test]),
                              [g for _, g in test]))
            inside = [(lp, g) for lp, g in scored if g != OOS]
            outside = [lp for lp, g in scored if g == OOS]
            for temp in (1.0, t):
                for thr in sorted({0.3, own}):
                    probs = [(at_temperature(lp, temp), g) for lp, g in inside]
                    ok = sum(max(p, key=p.get) == g and max(p.values()) >= thr for p, g in probs)
                    low = sum(max(p.values()) < thr for p, _ in probs)
                    caught = 0
                    for lp in outside:
                        p = at_temperature(lp, temp)
                        caught += max(p.values()) < thr or max(p, key=p.get) == OOS
                    print("  T %.2f, threshold %.2f: test NLL (in scope) %.3f; in scope right %d "
                          "of %d, %d fall back; out of scope caught %d of %d" %
                          (temp, thr, nll(inside, temp), ok, len(inside), low, caught,
                           len(outside)))


if __name__ == "__main__":
    main()
