#!/usr/bin/python3
"""cv.py — cross-validated comparison of training recipes on a training split alone.

The protocol for deciding a recipe row on full data (issue 37): choices are made on folds of
the training split, never on a dev or test split. The examples of a JointBERT folder
(seq.in, seq.out, label: SNIPS, ATIS) are dealt into K folds, each intent's examples
shuffled with random.Random(seed) and dealt round the folds, so every fold holds each
intent in proportion. For each fold and seed, each VARIANT trains on the other K-1 folds
(`parley train` with the variant's options, `--threads 1`, no --dev: the last epoch is
kept) and is scored on the held-out fold (`parley eval --json`): intent accuracy, slot F1,
sentence accuracy. Pairs of variants on the same fold and seed are compared as paired
differences (mean +- sd), the figure that says whether a row should change.

The training part must stay in the regime the recipe gives the whole split (its rules count
examples: ATIS's 4,478 examples lie past the 4,000 of the few-examples course, so 3 folds,
2,985 examples each, would train another recipe). So --folds 10 --run-folds 1 trains on 90%
and holds out one tenth, a different tenth for each seed: repeated held-out parts of the
training split that no choice looked at.

Every finished run is appended to a cache (JSON lines keyed by variant, fold, seed), so a
stopped run resumes; --table prints what the cache holds. Runs are niced (nice -n 10).

Usage: cv.py PARLEY DATA_DIR WORK_DIR [--folds 3] [--run-folds N] [--seeds 1,2,3] [--jobs 1]
             [--variant NAME=OPTIONS]... [--table]
e.g.   cv.py build/sdk/cli/parley ../shared/data/nlu/atis/train /tmp/cv-atis --folds 10 \\
             --run-folds 1 --variant default= --variant sparse-off="--sparse off"
"""
import argparse
import concurrent.futures
import json
import os
import random
import shlex
import statistics
import subprocess
import sys

MEASURES = ("intent_accuracy", "slot_f1", "sentence_accuracy")


def read_folder(path):
    cols = []
    for name in ("seq.in", "seq.out", "label"):
        with open(os.path.join(path, name), encoding="utf-8") as f:
            cols.append(f.read().splitlines())
    if not len(cols[0]) == len(cols[1]) == len(cols[2]):
        sys.exit("cv.py: %s: seq.in, seq.out and label differ in length" % path)
    return list(zip(*cols))


def deal(examples, folds, seed):
    """The fold of each example: each intent's examples shuffled, then dealt round."""
    by_intent = {}
    for i, ex in enumerate(examples):
        by_intent.setdefault(ex[2], []).append(i)
    fold = [0] * len(examples)
    rng = random.Random(seed)
    start = 0
    for intent in sorted(by_intent):
        idx = by_intent[intent]
        rng.shuffle(idx)
        for j, i in enumerate(idx):
            fold[i] = (start + j) % folds
        start += len(idx)  # the next intent's first example goes on where this one ended
    return fold


def write_folder(path, examples):
    os.makedirs(path, exist_ok=True)
    for col, name in enumerate(("seq.in", "seq.out", "label")):
        with open(os.path.join(path, name), "w", encoding="utf-8") as f:
            f.write("".join(ex[col] + "\n" for ex in examples))


def split(work, examples, folds, seed):
    """Writes each fold of SEED's deal as a held-out folder and the rest as its training set."""
    assign = deal(examples, folds, seed)
    for fold in range(folds):
        where = os.path.join(work, "seed%d-fold%d" % (seed, fold))
        write_folder(os.path.join(where, "train"),
                     [ex for ex, f in zip(examples, assign) if f != fold])
        write_folder(os.path.join(where, "held"),
                     [ex for ex, f in zip(examples, assign) if f == fold])


def run_one(parley, work, variant, options, fold, seed):
    """Trains VARIANT on the training set of FOLD (SEED's deal), scores it on FOLD."""
    where = os.path.join(work, "seed%d-fold%d" % (seed, fold))
    model = os.path.join(where, "model-" + variant)
    cmd = ["nice", "-n", "10", parley, "-q", "train", "--data", os.path.join(where, "train"),
           "--out", model, "--threads", "1", "--seed", str(seed), "--force"]
    cmd += shlex.split(options)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), p.stderr[-1000:]))
    p = subprocess.run([parley, "eval", "--model", model, "--data", os.path.join(where, "held"),
                        "--json"], capture_output=True, text=True, check=True)
    scores = json.loads(p.stdout)
    return {"variant": variant, "fold": fold, "seed": seed,
            "intent_accuracy": 100 * scores["intent_accuracy"],
            "slot_f1": 100 * scores["slots"]["f1"],
            "sentence_accuracy": 100 * scores["sentence_accuracy"]}


def mean_sd(xs):
    return "%.2f +- %.2f" % (statistics.mean(xs), statistics.stdev(xs) if len(xs) > 1 else 0)


def table(rows, variants):
    key = {(r["variant"], r["fold"], r["seed"]): r for r in rows}
    print("| variant | runs | intent | slot F1 | sentence |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for v in variants:
        rs = [r for r in rows if r["variant"] == v]
        if rs:
            print("| %s | %d | %s |" % (v, len(rs), " | ".join(mean_sd([r[m] for r in rs])
                                                            for m in MEASURES)))
    base = variants[0]
    for v in variants[1:]:
        pairs = [(key[(base, f, s)], r) for (vv, f, s), r in key.items()
                 if vv == v and (base, f, s) in key]
        if pairs:
            print("| %s - %s (paired) | %d | %s |" % (
                v, base, len(pairs),
                " | ".join(mean_sd([b[m] - a[m] for a, b in pairs]) for m in MEASURES)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("parley")
    ap.add_argument("data")
    ap.add_argument("work")
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--run-folds", type=int, default=0, help="hold out only the first N folds")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--table", action="store_true")
    a = ap.parse_args()
    variants = [v.split("=", 1) for v in a.variant] or [["default", ""]]
    names = [n for n, _ in variants]
    os.makedirs(a.work, exist_ok=True)
    cache = os.path.join(a.work, "results.jsonl")
    rows = []
    if os.path.exists(cache):
        with open(cache, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
    if not a.table:
        examples = read_folder(a.data)
        done = {(r["variant"], r["fold"], r["seed"]) for r in rows}
        todo = [(n, o, f, int(s)) for s in a.seeds.split(",")
                for f in range(a.run_folds or a.folds) for n, o in variants
                if (n, f, int(s)) not in done]
        print("cv.py: %d examples, %d in each training part" %
              (len(examples), len(examples) - len(examples) // a.folds), flush=True)
        for seed in {t[3] for t in todo}:
            split(a.work, examples, a.folds, seed)
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            futures = [pool.submit(run_one, os.path.abspath(a.parley), a.work, *t)
                       for t in todo]
            for fut in concurrent.futures.as_completed(futures):
                r = fut.result()
                rows.append(r)
                with open(cache, "a", encoding="utf-8") as f:
                    f.write(json.dumps(r) + "\n")
                print("%(variant)s fold %(fold)d seed %(seed)d: %(intent_accuracy).2f / "
                      "%(slot_f1).2f / %(sentence_accuracy).2f" % r, flush=True)
    table(rows, names)


if __name__ == "__main__":
    main()
