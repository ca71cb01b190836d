#!/usr/bin/python3
"""fewshot.py — few-shot intent (and slot) benchmark: parley against TF-IDF + linear SVM.

From ../shared/data it builds few-shot training splits by seed (k examples per intent,
drawn from the training split with random.Random(seed)), trains on each split

  svm     the classical peer: TF-IDF + LinearSVC, on word n-grams (1-2) and on character
          n-grams (2-5, char_wb); both are kept, the table shows the better on the
          scoring split (which favours the peer);
  parley  `parley train` (with the VARIANT's extra options, none by default: the defaults
          sized to the data) then `parley eval --json --predictions`;

and prints a table of mean +- sd over the seeds. Sets:

  clinc150  train on CLINC150 `train` (k per intent) + all 100 `oos_train` (the intent
            "oos"); score on `val` + `oos_val`: in-scope accuracy (an in-scope utterance
            predicted oos is wrong), out-of-scope recall and precision (oos as positive),
            and the same again counting a prediction under the fallback threshold as oos
            (parley only: its calibrated confidence), and the in-scope accuracy then (an
            in-scope utterance that falls back counts as wrong);
  clinc150-nooos  the same without the oos class (train only; scored on `val`): the
            in-scope accuracy the oos class is compared with, without and with the
            fallback threshold (which a bot without the class has too);
  clinc150-unseen  train as clinc150-nooos, score as clinc150: out-of-scope requests that
            no training example shows, as a bot's writer who wrote none meets them (parley's
            background sentences, its default, are then its only out-of-scope examples);
  snips     train on SNIPS `train` (k per intent), score on `dev`: intent accuracy, slot F1;
  mixed64   64 intents of SNIPS, ATIS and CLINC150 in overlapping domains, 20 with slots
            (bench/mixed64.py): k per intent of their training splits, scored on up to 30
            other examples of each from the same splits; parley reads both as nlu.yaml;
  pizza, smarthome, starter  the sample bots: train on samples/NAME/nlu.yaml (k = all: parley reads
            the file itself, lookup tables and all), score on samples/NAME/test_nlu.yaml,
            sentences written for the test: in-scope accuracy, and where the test has
            `out_of_scope` sentences their recall and precision, also with the bot's own
            fallback threshold (its domain.yaml's).

The corpora train parley with --builtin off, so that it learns from the same examples as
the peer (CLINC150 has intents named goodbye, thank_you and cancel); the sample bots with
parley's defaults, its built-in replies included, as a bot's writer trains them.

k is a number or "all". Every finished run is appended to a results cache (JSON lines,
keyed by set, k, seed, system), so a stopped benchmark resumes where it was; --table only
prints what the cache holds. Runs are niced (nice -n 10); parley trains with --threads 1
and at most --jobs trainings run at once. Nothing here is a test: figures go to
bench/RESULTS.md.

  /usr/bin/python3 bench/fewshot.py --sets clinc150,snips --k 5,10 --seeds 3 --systems svm
  /usr/bin/python3 bench/fewshot.py --sets snips --k 10,50 --systems parley \\
      --parley build/sdk/cli/parley --variant dense="--sparse off" --variant sparse=
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "shared", "data", "nlu")
OOS = "out_of_scope"  # CLINC150's "oos", under the name the dialog takes as its fallback
THRESHOLD = 0.3  # the dialog's default fallback threshold (dialog/domain.c)
SAMPLES = ("pizza", "smarthome", "starter")


# ---- data -------------------------------------------------------------------------------


def words(text):
    return text.split()


def load_clinc(data):
    with open(os.path.join(data, "clinc150", "train_val.json")) as f:
        d = json.load(f)

    def ex(rows):
        return [(" ".join(words(t)), OOS if lab == "oos" else lab, None) for t, lab in rows if words(t)]

    return {k: ex(v) for k, v in d.items()}


def load_jointbert(folder):
    def lines(name):
        with open(os.path.join(folder, name)) as f:
            return [line.rstrip("\n") for line in f]

    out = []
    for text, tags, lab in zip(lines("seq.in"), lines("seq.out"), lines("label")):
        w, t = words(text), words(tags)
        if len(w) != len(t):
            raise SystemExit("%s: %r has %d words and %d tags" % (folder, text, len(w), len(t)))
        out.append((" ".join(w), lab, t))
    return out


def sample_k(examples, k, seed):
    """k examples of every intent (all of them for k = 'all'), in a seeded order."""
    by = {}
    for e in examples:
        by.setdefault(e[1], []).append(e)
    rng = random.Random(seed)
    out = []
    for lab in sorted(by):
        group = list(by[lab])
        rng.shuffle(group)
        out += group if k == "all" else group[: int(k)]
    rng.shuffle(out)
    return out


def rasa_examples(item):
    """The annotated examples of one intent item of a Rasa nlu.yaml, as written."""
    return [line.strip()[2:] for line in (item.get("examples") or "").splitlines()
            if line.strip().startswith("- ")]


def plain_text(annotated):
    """An annotated example's text: "[large](size) please" is "large please"."""
    text = re.sub(r"\[([^\]]*)\](\([^)]*\)|\{[^}]*\})", r"\1", annotated)
    return " ".join(words(text))


def load_rasa_texts(path):
    """(text, intent, None) of every example of a Rasa nlu.yaml, annotations removed."""
    import yaml

    with open(path) as f:
        doc = yaml.safe_load(f)
    return [(plain_text(e), item["intent"], None) for item in doc["nlu"] if "intent" in item
            for e in rasa_examples(item)]


def sample_files(set_name):
    folder = os.path.join(HERE, "..", "samples", set_name)
    return os.path.join(folder, "nlu.yaml"), os.path.join(folder, "test_nlu.yaml")


def fallback_threshold(set_name):
    """The confidence under which the dialog falls back: a sample bot's domain.yaml says; else
    the dialog's default."""
    if set_name not in SAMPLES:
        return THRESHOLD
    import yaml

    with open(os.path.join(HERE, "..", "samples", set_name, "domain.yaml")) as f:
        return (yaml.safe_load(f).get("fallback") or {}).get("threshold", THRESHOLD)


def make_split(set_name, k, seed, data):
    """(train, test) lists of (text, intent, tags or None)."""
    if set_name in SAMPLES:
        return tuple(load_rasa_texts(f) for f in sample_files(set_name))
    if set_name.startswith("clinc150"):
        d = load_clinc(data)
        train = sample_k(d["train"], k, seed)
        if set_name == "clinc150":
            return train + d["oos_train"], d["val"] + d["oos_val"]
        if set_name == "clinc150-unseen":
            return train, d["val"] + d["oos_val"]
        return train, d["val"]
    if set_name == "mixed64":
        import mixed64

        return mixed64.split(data, seed, int(k))
    if set_name == "snips":
        folder = os.path.join(data, "snips")
        return (
            sample_k(load_jointbert(os.path.join(folder, "train")), k, seed),
            load_jointbert(os.path.join(folder, "dev")),
        )
    raise SystemExit("unknown set %r" % set_name)


def write_jointbert(folder, examples):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seq.in"), "w") as fi, open(
        os.path.join(folder, "seq.out"), "w"
    ) as fo, open(os.path.join(folder, "label"), "w") as fl:
        for text, lab, tags in examples:
            fi.write(text + "\n")
            fo.write(" ".join(tags or ["O"] * len(words(text))) + "\n")
            fl.write(lab + "\n")


def annotated(text, tags):
    """A Rasa example: words with their BIO tags as "[new york](city)" spans."""
    out, span, slot = [], [], None
    for w, t in zip(words(text), tags or ["O"] * len(words(text))):
        if span and not (t.startswith("I-") and t[2:] == slot):
            out.append("[%s](%s)" % (" ".join(span), slot))
            span, slot = [], None
        if t == "O":
            out.append(w)
        else:
            span.append(w)
            slot = t[2:]
    if span:
        out.append("[%s](%s)" % (" ".join(span), slot))
    return " ".join(out)


def write_rasa(path, examples):
    """A Rasa nlu.yaml of (text, intent, BIO tags or None), the intents in order of name."""
    by = {}
    for text, lab, tags in examples:
        by.setdefault(lab, []).append(annotated(text, tags))
    with open(path, "w") as f:
        f.write('version: "3.1"\nnlu:\n')
        for lab in sorted(by):
            f.write("- intent: %s\n  examples: |\n" % lab)
            f.writelines("    - %s\n" % e for e in by[lab])


# ---- scores -----------------------------------------------------------------------------


def intent_scores(gold, pred):
    """Intent accuracy; with an oos class also in-scope accuracy and oos recall/precision."""
    n = len(gold)
    s = {"intent_acc": sum(g == p for g, p in zip(gold, pred)) / n}
    ins = [(g, p) for g, p in zip(gold, pred) if g != OOS]
    s["inscope_acc"] = sum(g == p for g, p in ins) / len(ins)
    n_oos = sum(g == OOS for g in gold)
    if n_oos:
        hit = sum(g == OOS and p == OOS for g, p in zip(gold, pred))
        said = sum(p == OOS for p in pred)
        s["oos_recall"] = hit / n_oos
        s["oos_precision"] = hit / said if said else 0.0
    return s


def run_svm(train, test):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.svm import LinearSVC

    out = {}
    for name, vec in (
        ("word", TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)),
        ("char", TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True)),
    ):
        t0 = time.time()
        x = vec.fit_transform([t for t, _, _ in train])
        clf = LinearSVC(C=1.0).fit(x, [lab for _, lab, _ in train])
        pred = clf.predict(vec.transform([t for t, _, _ in test]))
        s = intent_scores([lab for _, lab, _ in test], list(pred))
        s["wall_s"] = time.time() - t0
        out[name] = s
    best = max(out, key=lambda n: out[n]["inscope_acc"])
    return dict(out[best], features=best, word=out["word"], char=out["char"])


def run_timed(cmd, **kw):
    """Runs cmd; returns (completed process, CPU seconds it used). CPU time, not wall time, is
    what a shared machine lets one compare."""
    p = subprocess.Popen(cmd, **kw)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit("%s: exit %d" % (" ".join(cmd), p.returncode))
    return p, ru.ru_utime + ru.ru_stime


def run_parley(args, set_name, train, test, workdir, seed, extra):
    os.makedirs(workdir, exist_ok=True)
    train_path, test_path = os.path.join(workdir, "train"), os.path.join(workdir, "test")
    if set_name in SAMPLES:
        train_path, test_path = sample_files(set_name)
    elif set_name == "mixed64":  # mixed sources: their slots as a bot's writer annotates them
        train_path, test_path = train_path + ".yaml", test_path + ".yaml"
        write_rasa(train_path, train)
        write_rasa(test_path, test)
    else:
        write_jointbert(train_path, train)
        write_jointbert(test_path, test)
    model = os.path.join(workdir, "model")
    nice = ["nice", "-n", "10", args.parley]
    t0 = time.time()
    cmd = nice + ["train", "--data", train_path, "--out", model]
    cmd += ["--threads", "1", "--seed", str(seed), "--quiet"] + extra
    if set_name not in SAMPLES:  # a corpus: the same examples as the peer (see above)
        cmd += ["--builtin", "off"]
    with open(os.path.join(workdir, "train.log"), "w") as log:
        _, train_cpu = run_timed(cmd, stdout=log, stderr=subprocess.STDOUT)
    train_s = time.time() - t0
    preds = os.path.join(workdir, "pred.jsonl")
    cmd = nice + ["eval", "--model", model, "--data", test_path, "--json"]
    cmd += ["--threads", "1", "--predictions", preds]
    rep = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    with open(preds) as f:
        rows = [json.loads(line) for line in f]
    gold = [lab for _, lab, _ in test]
    s = intent_scores(gold, [r["intent"] for r in rows])
    if set_name.startswith("clinc150") or set_name in SAMPLES:  # the dialog's fallback: oos,
        threshold = fallback_threshold(set_name)  # or a confidence under the threshold
        fb = [OOS if r["confidence"] < threshold else r["intent"] for r in rows]
        s["fallback"] = intent_scores(gold, fb)
    s["slot_f1"] = rep["slots"]["f1"]
    s["train_s"] = train_s
    s["train_cpu_s"] = train_cpu
    s["wall_s"] = time.time() - t0
    with open(os.path.join(model, "config.json")) as f:
        s["temperature"] = json.load(f).get("intent_temperature", 1.0)
    return s


# ---- the cache and the table ------------------------------------------------------------

LOCK = threading.Lock()


def load_cache(path):
    got = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                got[(r["set"], r["k"], r["seed"], r["system"])] = r
    return got


def append_cache(path, row):
    with LOCK, open(path, "a") as f:
        f.write(json.dumps(row, sort_keys=True) + "\n")


def mean_sd(xs):
    if not xs:
        return "-"
    m = 100 * statistics.mean(xs)
    sd = 100 * statistics.stdev(xs) if len(xs) > 1 else 0.0
    return "%.1f ± %.1f" % (m, sd)


def col_num(xs):
    xs = [x for x in xs if x is not None]
    return "%.0f" % statistics.mean(xs) if xs else "-"


def table(rows):
    groups = {}
    for r in rows:
        groups.setdefault((r["set"], str(r["k"]), r["system"]), []).append(r)
    cols = ["in-scope/intent", "oos R", "oos P", "fallback R/P", "in-scope w/ fallback", "slot F1",
            "seeds", "wall s", "train CPU s"]
    print("| set | k | system | " + " | ".join(cols) + " |")
    print("|" + "---|" * (3 + len(cols)))
    for key in sorted(groups, key=lambda g: (g[0], int(g[1]) if g[1].isdigit() else 1e9, g[2])):
        rs = groups[key]

        def col(f):
            return mean_sd([f(r) for r in rs if f(r) is not None])

        fb = [r.get("fallback") for r in rs if r.get("fallback")]
        fallback = "-"
        if fb and all("oos_recall" in f for f in fb):
            fallback = "%s / %s" % (
                mean_sd([f["oos_recall"] for f in fb]),
                mean_sd([f["oos_precision"] for f in fb]),
            )
        cells = [
            col(lambda r: r["inscope_acc"]),
            col(lambda r: r.get("oos_recall")),
            col(lambda r: r.get("oos_precision")),
            fallback,
            mean_sd([f["inscope_acc"] for f in fb]) if fb else "-",
            col(lambda r: r.get("slot_f1")),
            str(len(rs)),
            col_num([r["wall_s"] for r in rs]),
            col_num([r.get("train_cpu_s") for r in rs]),
        ]
        if key[2] == "svm":
            feats = sorted({r["features"] for r in rs})
            key = (key[0], key[1], "svm (" + "/".join(feats) + ")")
        print("| " + " | ".join(key) + " | " + " | ".join(cells) + " |")


# ---- main -------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="clinc150,snips")
    ap.add_argument("--k", default="5,10", help="examples per intent: numbers or 'all'")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--systems", default="svm,parley", help="svm, parley")
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME=\"parley train options\": a parley system named parley-NAME")
    ap.add_argument("--parley", default=os.path.join(HERE, "..", "build", "sdk", "cli", "parley"))
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--work", default="/tmp/parley-fewshot")
    ap.add_argument("--cache", default=None, help="default: WORK/results.jsonl")
    ap.add_argument("--jobs", type=int, default=2, help="parley trainings at once (<= 2)")
    ap.add_argument("--table", action="store_true", help="print the cached results only")
    args = ap.parse_args()
    cache = args.cache or os.path.join(args.work, "results.jsonl")
    os.makedirs(args.work, exist_ok=True)
    if args.table:
        table(load_cache(cache).values())
        return 0
    os.nice(10)
    systems = {}
    for s in args.systems.split(","):
        if s == "parley" and not args.variant:
            systems["parley"] = []
        elif s != "parley":
            systems[s] = None
    for v in args.variant:
        name, _, opts = v.partition("=")
        systems["parley-" + name] = shlex.split(opts)
    done = load_cache(cache)
    jobs = []
    for set_name in args.sets.split(","):
        for k in args.k.split(","):
            for seed in range(1, args.seeds + 1):
                for system, extra in systems.items():
                    key = (set_name, k, seed, system)
                    if key not in done:
                        jobs.append((key, extra))

    def run(job):
        (set_name, k, seed, system), extra = job
        train, test = make_split(set_name, k, seed, args.data)
        t0 = time.time()
        if system == "svm":
            s = run_svm(train, test)
        else:
            work = os.path.join(args.work, "%s-k%s-s%d-%s" % (set_name, k, seed, system))
            s = run_parley(args, set_name, train, test, work, seed, extra)
        row = dict(s, set=set_name, k=k, seed=seed, system=system, n_train=len(train))
        row["wall_s"] = time.time() - t0
        append_cache(cache, row)
        print("%s k=%s seed %d %s: in-scope %.4f (%.0f s)"
              % (set_name, k, seed, system, s["inscope_acc"], row["wall_s"]), flush=True)

    svm_jobs = [j for j in jobs if j[0][3] == "svm"]
    other = [j for j in jobs if j[0][3] != "svm"]
    for j in svm_jobs:  # seconds each: first
        run(j)
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(args.jobs, 2)) as pool:
        for f in concurrent.futures.as_completed([pool.submit(run, j) for j in other]):
            f.result()
    table(load_cache(cache).values())
    return 0


if __name__ == "__main__":
    sys.exit(main())
