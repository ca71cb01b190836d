"""test_metrics_ref.py — nlu/data/metrics.c against the independent Python scorer.

Generates random gold/predicted intents and BIO tag sequences (I- without B-, type changes,
chunks at both ends, all-O sentences, predictions that are near-misses of the gold ones),
scores them with tests/nlu/metrics_tool (the C library) and with tests/reference/seqeval_ref.py,
and compares every number: counts exactly, ratios within 1e-12.

Then, when PARLEY_BIN is set, the same comparison end to end: `parley model init` makes a
small random model, `parley eval --json --predictions` scores it on the committed JointBERT
folder, and the reference rescores the written predictions against the folder's gold.

Usage: test_metrics_ref.py METRICS_TOOL
"""
import json
import os
import random
import subprocess
import sys
import tempfile

from reference import seqeval_ref

TYPES = ["a", "b", "city", "to.loc"]
INTENTS = ["greet", "order", "atis_flight#atis_airfare", "bye"]
TAGS = ["O"] + ["%s-%s" % (p, t) for t in TYPES for p in "BI"]


def random_tags(rng, n):
    mode = rng.random()
    if mode < 0.1:
        return ["O"] * n
    if mode < 0.4:
        return [rng.choice(TAGS) for _ in range(n)]
    # Well-formed BIO: chunks of random types and lengths, B- then I-.
    tags = []
    while len(tags) < n:
        if rng.random() < 0.4:
            tags.append("O")
            continue
        t = rng.choice(TYPES)
        tags.append("B-" + t)
        tags.extend("I-" + t for _ in range(rng.randrange(3)))
    return tags[:n]


def mutate(rng, tags):
    """A prediction near the gold one: a few tags changed in the ways models get wrong."""
    out = list(tags)
    for _ in range(rng.randrange(3)):
        i = rng.randrange(len(out))
        kind = rng.random()
        if kind < 0.3:
            out[i] = "O"
        elif kind < 0.6 and out[i] != "O":
            out[i] = ("I-" if out[i][0] == "B" else "B-") + out[i][2:]  # boundary error
        elif kind < 0.8 and out[i] != "O":
            out[i] = out[i][:2] + rng.choice(TYPES)  # type error
        else:
            out[i] = rng.choice(TAGS)
    return out


def random_examples(rng, count, max_len):
    ex = []
    for _ in range(count):
        n = rng.randint(1, max_len)
        gold = random_tags(rng, n)
        pred = list(gold) if rng.random() < 0.3 else mutate(rng, gold) if rng.random() < 0.7 else random_tags(rng, n)
        gi = rng.choice(INTENTS)
        pi = gi if rng.random() < 0.8 else rng.choice(INTENTS)
        ex.append((gi, pi, gold, pred))
    return ex


HAND = [
    # gold B-a I-a O B-b, pred B-a I-a O I-b: the I-b chunk is right, the tags are not.
    ("greet", "greet", ["B-a", "I-a", "O", "B-b"], ["B-a", "I-a", "O", "I-b"]),
    ("greet", "order", ["I-a", "I-a", "B-a"], ["B-a", "I-a", "I-a"]),
    ("order", "order", ["B-a", "I-b", "I-b"], ["B-a", "I-a", "I-b"]),
    ("order", "order", ["O", "O"], ["O", "I-city"]),
    ("bye", "bye", ["B-city"], ["B-city"]),
]


def run_c(tool, sets):
    """Scores every set of examples with the C tool in one run; one report per set."""
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
        for examples in sets:
            for gi, pi, gt, pt in examples:
                f.write("%s\t%s\t%s\t%s\n" % (gi, pi, " ".join(gt), " ".join(pt)))
            f.write("\n")
        path = f.name
    try:
        out = subprocess.run([tool, path], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    return [json.loads(line) for line in out.splitlines()]


def close(a, b):
    return abs(a - b) <= 1e-12


def compare(tag, c, ref):
    errors = []

    def num(path, x, y):
        if isinstance(y, int) and not isinstance(y, bool):
            if x != y:
                errors.append("%s %s: C %r, reference %r" % (tag, path, x, y))
        elif not close(x, y):
            errors.append("%s %s: C %r, reference %r" % (tag, path, x, y))

    for key in ("examples", "intent_accuracy", "intent_correct", "sentence_accuracy", "sentence_correct",
                "tag_accuracy", "tags", "tags_correct"):
        num(key, c[key], ref[key])
    for field, value in ref["slots"].items():
        num("slots." + field, c["slots"][field], value)
    for group in ("intents", "slot_types"):
        if set(c[group]) != set(ref[group]):
            errors.append("%s %s: C labels %s, reference %s" % (tag, group, sorted(c[group]), sorted(ref[group])))
            continue
        for label, scores in ref[group].items():
            for field, value in scores.items():
                num("%s[%s].%s" % (group, label, field), c[group][label][field], value)
    for group in ("intent_confusions", "slot_confusions"):
        got = {(x["gold"], x["pred"]): x["count"] for x in c[group]}
        if got != ref[group]:
            errors.append("%s %s: C %s, reference %s" % (tag, group, got, ref[group]))
        counts = [x["count"] for x in c[group]]
        if counts != sorted(counts, reverse=True):
            errors.append("%s %s: not most frequent first" % (tag, group))
    return errors


def read_jointbert(folder):
    def lines(name):
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            return [line.split() for line in f.read().splitlines()]
    return [(label[0], words, tags) for words, tags, label in zip(lines("seq.in"), lines("seq.out"), lines("label"))]


def check_cli(parley):
    """`parley eval` on a random model, rescored by the reference from its predictions."""
    here = os.path.dirname(os.path.abspath(__file__))
    folder = os.path.join(here, "jointbert", "good")
    gold = read_jointbert(folder)
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model")
        slots = sorted({t[2:] for _, _, tags in gold for t in tags if t != "O"}) + ["other"]
        subprocess.run([parley, "model", "init", "--layers", "1", "--hidden", "16", "--heads", "2",
                        "--intermediate", "32", "--vocab", os.path.join(here, "..", "vocab_small.txt"),
                        "--intents", "PlayMusic,atis_flight,other",
                        "--slots", ",".join(p + s for s in slots for p in ("B-", "I-")),
                        "--seed", "3", "--out", model], check=True, capture_output=True)
        pred_path = os.path.join(tmp, "pred.jsonl")
        out = subprocess.run([parley, "eval", "--model", model, "--data", folder, "--json", "--batch", "2",
                              "--confusions", "-1", "--predictions", pred_path],
                             check=True, capture_output=True, text=True).stdout
        with open(pred_path, encoding="utf-8") as f:
            preds = [json.loads(line) for line in f]
    errors = []
    if len(preds) != len(gold):
        return ["parley eval wrote %d predictions for %d examples" % (len(preds), len(gold))]
    for (intent, words, tags), p in zip(gold, preds):
        if p["text"] != " ".join(words) or len(p["tags"]) != len(tags):
            errors.append("prediction %r does not line up with %r" % (p, words))
    ref = seqeval_ref.score([(g[0], p["intent"], g[2], p["tags"]) for g, p in zip(gold, preds)])
    return errors + compare("parley eval", json.loads(out), ref)


def main():
    tool = sys.argv[1]
    rng = random.Random(1234)
    # Many small sets (where ratios have small denominators and edge cases matter) and one big.
    cases = [("hand-written", HAND)]
    cases += [("random set %d" % i, random_examples(rng, rng.randint(1, 40), 8)) for i in range(150)]
    cases.append(("random set of 5000", random_examples(rng, 5000, 30)))
    errors = []
    checked = 0
    reports = run_c(tool, [examples for _, examples in cases])
    if len(reports) != len(cases):
        errors.append("metrics_tool gave %d reports for %d sets" % (len(reports), len(cases)))
    for (tag, examples), c in zip(cases, reports):
        errors += compare(tag, c, seqeval_ref.score(examples))
        checked += len(examples)
    # Known answers for the hand-written set, so the reference itself is pinned down.
    ref = seqeval_ref.score(HAND[:1])
    if not (ref["slots"]["f1"] == 1.0 and ref["sentence_accuracy"] == 0.0 and ref["tag_accuracy"] == 0.75):
        errors.append("reference: B-a I-a O B-b vs B-a I-a O I-b should give F1 1, sentence 0, tags 3/4")
    if seqeval_ref.chunks(["I-a", "I-a", "B-a", "I-b", "O", "I-b"]) != [("a", 0, 2), ("a", 2, 3), ("b", 3, 4),
                                                                         ("b", 5, 6)]:
        errors.append("reference: chunk rules")
    parley = os.environ.get("PARLEY_BIN")
    if parley and os.path.exists(parley):
        errors += check_cli(parley)
        print("parley eval: compared with the reference")
    else:
        print("parley eval: skipped (PARLEY_BIN not set)")
    for e in errors[:40]:
        print(e)
    print("%d examples in %d sets compared, %d mismatches" % (checked, len(cases), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
