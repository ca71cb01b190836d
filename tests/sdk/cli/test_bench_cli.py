"""`parley bench nlu` end to end: the JSON it prints, and its errors.

Makes a small random model with `parley model init`, then runs the benchmark on it: the
output is one JSON object whose shape fields echo the model and the options, whose
latencies are positive and ordered (p50 <= p99) and whose throughputs agree with the mean
latency; usage errors (a --seq longer than the model's positions, an unknown --device or
--attention, a missing --model) exit 2; --device cuda:0 runs where a GPU works and
otherwise exits 1 with a message about CUDA. Needs only the standard library.
"""
import json
import os
import subprocess
import sys
import tempfile

from checks import check, done

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = os.path.join(HERE, "..", "..", "nlu", "vocab_small.txt")
BIN = os.environ.get("PARLEY_BIN")


def run(args):
    return subprocess.run([BIN, "bench", "nlu"] + args, capture_output=True, text=True,
                          timeout=120)


def main():
    if not BIN:
        print("PARLEY_BIN is not set", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="parley-bench-") as tmp:
        model = os.path.join(tmp, "model")
        r = subprocess.run([BIN, "model", "init", "--layers", "2", "--hidden", "16", "--heads",
                            "2", "--intermediate", "32", "--max-positions", "16", "--vocab",
                            VOCAB, "--intents", "a,b", "--slots", "B-x,I-x", "--out", model],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "model init: %s" % r.stderr)
        if r.returncode:
            return 1
        r = run(["--model", model, "--batch", "3", "--seq", "16", "--iters", "4", "--warmup",
                 "1", "--threads", "1"])
        check(r.returncode == 0, "bench: rc %d: %s" % (r.returncode, r.stderr))
        lines = r.stdout.splitlines()
        check(len(lines) == 1, "one line of output: %r" % r.stdout)
        try:
            j = json.loads(lines[0]) if lines else {}
        except ValueError:
            j = {}
        want = {"impl": "parley", "device": "cpu", "layers": 2, "hidden": 16, "batch": 3,
                "seq": 16, "iters": 4, "threads": 1}
        check(all(j.get(k) == v for k, v in want.items()), "fields: %s" % j)
        lat = j.get("latency_ms", {})
        check(0 < lat.get("p50", 0) <= lat.get("p99", 0) and lat.get("mean", 0) > 0,
              "latencies: %s" % lat)
        mean = lat.get("mean", 1)
        check(abs(j.get("sequences_per_s", 0) - 3e3 / mean) < 1e-6 * 3e3 / mean
              and abs(j.get("tokens_per_s", 0) - 48e3 / mean) < 1e-6 * 48e3 / mean,
              "throughputs from the mean latency: %s" % j)
        check(j.get("load_ms", 0) > 0 and j.get("peak_rss_mb", 0) > 0, "load and memory: %s" % j)

        for args, rc, says in [(["--seq", "17"], 2, "exceeds the model's 16 positions"),
                               (["--device", "gpu"], 2, "--device takes cpu or cuda:N"),
                               (["--attention", "x"], 2, "--attention takes"),
                               (["--batch", "0"], 2, "--batch")]:
            r = run(["--model", model] + args)
            check(r.returncode == rc and says in r.stderr,
                  "%s: rc %d, stderr %r" % (args, r.returncode, r.stderr))
        r = run(["--batch", "2"])
        check(r.returncode == 2 and "--model is required" in r.stderr, "no --model")
        r = run(["--model", model, "--device", "cuda:0", "--iters", "1"])
        check(r.returncode in (0, 1) and (r.returncode == 0 or "cuda" in r.stderr.lower()),
              "--device cuda:0: rc %d, %s" % (r.returncode, r.stderr))
    return done("bench cli")


if __name__ == "__main__":
    sys.exit(main())
