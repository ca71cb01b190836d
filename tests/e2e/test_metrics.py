"""test_metrics.py — the metrics of a real pipeline: the pizza bot (api → nlu.bert →
dialog.frames on a fresh SQLite store, tests/e2e/graphs/pizza_dialog.yaml) after N turns.

tests/tools/pipeline_metrics runs the turns and prints the Prometheus text; this test reads
it with a parser of its own and checks the format (one HELP and TYPE per name before its
samples, cumulative buckets, +Inf = _count) and the numbers: N turns ok and none failed,
N observations in the end-to-end and in each stage's histogram (nlu, dialog, store), NLU
batch sizes that add up to N, nothing left in flight or queued. Then `promtool check
metrics` (Debian's prometheus package) must accept the text without a complaint; without
promtool the test ends as skipped (77) once the checks above have passed.

Usage: test_metrics.py PIPELINE_METRICS MODEL_DIR GRAPH.yaml
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from checks import check, done

tool, model, graph = sys.argv[1:4]
USERS, TURNS = 20, 4
N = USERS * TURNS

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)')


def parse_labels(s):
    out, pos = {}, 0
    while pos < len(s):
        m = LABEL.match(s, pos)
        if not m:
            check(False, "labels {%s}: unreadable at %d" % (s, pos))
            return out
        out[m.group(1)] = m.group(2).replace('\\n', '\n').replace('\\"', '"').replace('\\\\', '\\')
        pos = m.end()
    return out


def parse(text):
    """{name: type}, and samples as (name, labels dict, value) in order."""
    types, helps, samples = {}, set(), []
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split(" ")[2]
            check(name not in helps, "HELP %s twice" % name)
            helps.add(name)
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            check(name not in types, "TYPE %s twice" % name)
            check(name in helps, "TYPE %s before its HELP" % name)
            types[name] = kind
        else:
            m = SAMPLE.match(line)
            check(m is not None, "not a sample line: %r" % line)
            if not m:
                continue
            name, labels, value = m.group(1), parse_labels(m.group(2) or ""), float(m.group(3))
            base = re.sub(r'_(bucket|sum|count)$', '', name)
            family = name if name in types else base
            check(family in types, "%s: sample before its TYPE" % name)
            if family != name:
                check(types.get(family) == "histogram", "%s: suffix of a non-histogram" % name)
            samples.append((name, labels, value))
    return types, samples


def value(samples, name, **labels):
    got = [v for n, l, v in samples if n == name and l == labels]
    check(len(got) == 1, "%s%s: %d samples" % (name, labels, len(got)))
    return got[0] if got else None


def check_histograms(types, samples):
    for name in (n for n, t in types.items() if t == "histogram"):
        series = {}
        for n, l, v in samples:
            if n == name + "_bucket":
                key = tuple(sorted((k, x) for k, x in l.items() if k != "le"))
                series.setdefault(key, []).append((l["le"], v))
        for key, buckets in series.items():
            bounds = [float(le) for le, _ in buckets]
            counts = [c for _, c in buckets]
            check(bounds == sorted(bounds) and bounds[-1] == float("inf"),
                  "%s%s: bounds rise to +Inf" % (name, key))
            check(counts == sorted(counts), "%s%s: cumulative buckets" % (name, key))
            count = value(samples, name + "_count", **dict(key))
            check(counts[-1] == count, "%s%s: +Inf %s = count %s" % (name, key, counts[-1], count))


with tempfile.TemporaryDirectory(prefix="parley-metrics-") as tmp:
    run = subprocess.run([tool, graph, str(USERS), str(TURNS), "nlu.bert.model=" + model,
                          "dialog.frames.store=" + os.path.join(tmp, "store.db")],
                         capture_output=True, text=True, timeout=240)
    check(run.returncode == 0, "pipeline_metrics: exit %d: %s" % (run.returncode, run.stderr))
    text = run.stdout
    types, samples = parse(text)
    check_histograms(types, samples)
    check(value(samples, "parley_turns_total", outcome="ok") == N, "%d turns ok" % N)
    check(value(samples, "parley_turns_total", outcome="error") == 0, "no turn failed")
    errors = [v for n, _, v in samples if n == "parley_turn_errors_total"]
    check(len(errors) >= 11 and not any(errors), "every error kind listed, at 0: %s" % errors)
    check(value(samples, "parley_turn_duration_seconds_count") == N, "end to end: N turns")
    for stage in ("nlu", "dialog", "store"):
        check(value(samples, "parley_stage_duration_seconds_count", stage=stage) == N,
              "stage %s: N observations" % stage)
    e2e = value(samples, "parley_turn_duration_seconds_sum")
    dialog = value(samples, "parley_stage_duration_seconds_sum", stage="dialog")
    store = value(samples, "parley_stage_duration_seconds_sum", stage="store")
    check(0 < store <= dialog < e2e, "store %s <= dialog %s < end to end %s" % (store, dialog, e2e))
    check(value(samples, "parley_batch_size_sum", node="nlu") == N, "NLU batch sizes add up to N")
    batches = value(samples, "parley_batch_size_count", node="nlu")
    check(batches is not None and 1 <= batches <= N, "1..N NLU batches: %s" % batches)
    check(value(samples, "parley_turns_in_flight") == 0, "nothing in flight")
    for node in ("api", "nlu", "dialog"):
        check(value(samples, "parley_queue_depth", node=node) == 0, "queue of %s empty" % node)
    promtool = shutil.which("promtool")
    if promtool:
        lint = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                              text=True, timeout=60)
        check(lint.returncode == 0 and not (lint.stdout + lint.stderr).strip(),
              "promtool check metrics: exit %d: %s%s" % (lint.returncode, lint.stdout, lint.stderr))

rc = done("e2e/metrics")
if rc == 0 and not promtool:
    print("promtool not found (Debian package prometheus): skipped its check")
    sys.exit(77)
sys.exit(rc)
