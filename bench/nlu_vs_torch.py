#!/usr/bin/python3
"""nlu_vs_torch.py — parley's CPU forward pass against the PyTorch reference, in one run.

For each model shape (BERT-mini: L4 H256 A4 I1024; BERT-base: L12 H768 A12 I3072, both with
the 30,522-piece vocabulary) it writes a random model directory with `parley model init`,
then times, with the same thread count and the same (batch, sequence) shapes:
  - `parley bench nlu` (bert_forward on packed sequences, plus model load = open to first
    result), and
  - tests/reference/bert_ref.py's JointBert in float32 under torch.inference_mode(), on a
    padded batch with an all-ones mask (the ordinary eager PyTorch way).
It prints a table of p50 latencies and the ratio torch / parley (above 1: parley is faster)
and, with --json FILE, writes every figure. Run with Debian's python3 (python3-torch):

    /usr/bin/python3 bench/nlu_vs_torch.py --parley build/sdk/cli/parley [--threads 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))


def blas_core():
    """The OpenBLAS kernels for this CPU's features. OpenBLAS 0.3.21 falls back to SSE3
    kernels on CPUs newer than itself; the parley tool then restarts itself with
    OPENBLAS_CORETYPE set (sdk/cli/main.c), so torch, which uses the same OpenBLAS for its
    float32 GEMMs, must get the same setting for a fair comparison."""
    with open("/proc/cpuinfo") as f:
        flags = next((line.split() for line in f if line.startswith("flags")), [])
    if "avx512f" in flags and "avx512bw" in flags:
        return "SkylakeX"
    if "avx2" in flags and "fma" in flags:
        return "Haswell"
    return None


if blas_core() and "OPENBLAS_CORETYPE" not in os.environ:
    os.environ["OPENBLAS_CORETYPE"] = blas_core()

import torch  # noqa: E402

from reference import bert_ref  # noqa: E402

SHAPES = {
    "mini": dict(layers=4, hidden=256, heads=4, intermediate=1024),
    "base": dict(layers=12, hidden=768, heads=12, intermediate=3072),
}
# (batch, seq, iterations) per shape: fewer iterations where one pass takes seconds.
CASES = {
    "mini": [(1, 32, 200), (1, 128, 100), (32, 32, 30), (32, 128, 10)],
    "base": [(1, 32, 40), (1, 128, 20), (32, 32, 5), (32, 128, 3)],
}


def vocab_file(tmp):
    shared = os.environ.get("PARLEY_SHARED_DATA", os.path.join(HERE, "..", "..", "shared", "data"))
    std = os.path.join(shared, "vocab", "bert-base-uncased-vocab.txt")
    if os.path.exists(std):
        return std
    path = os.path.join(tmp, "vocab.txt")  # same size as the standard one
    with open(path, "w") as f:
        f.write("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n")
        f.writelines(f"tok{i}\n" for i in range(30522 - 5))
    return path


def make_model(parley, tmp, name, shape):
    out = os.path.join(tmp, name)
    slots = ",".join(f"{p}-slot{i}" for i in range(36) for p in "BI")  # 73 tags, like SNIPS
    intents = ",".join(f"intent{i}" for i in range(7))
    subprocess.run([parley, "-q", "model", "init", "--layers", str(shape["layers"]),
                    "--hidden", str(shape["hidden"]), "--heads", str(shape["heads"]),
                    "--intermediate", str(shape["intermediate"]), "--vocab", vocab_file(tmp),
                    "--intents", intents, "--slots", slots, "--seed", "1", "--out", out],
                   check=True)
    return out


def bench_parley(parley, model, b, t, iters, threads):
    r = subprocess.run([parley, "bench", "nlu", "--model", model, "--batch", str(b), "--seq", str(t),
                        "--iters", str(iters), "--warmup", str(max(1, iters // 10)),
                        "--threads", str(threads)], check=True, capture_output=True, text=True)
    return json.loads(r.stdout)


def bench_torch(model, b, t, iters, vocab_size):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(5, vocab_size, (b, t), generator=g)
    ids[:, 0], ids[:, -1] = 2, 3
    mask = torch.ones((b, t), dtype=torch.long)
    lat = []
    with torch.inference_mode():
        for i in range(max(1, iters // 10) + iters):
            t0 = time.perf_counter()
            model(ids, mask)
            if i >= max(1, iters // 10):
                lat.append((time.perf_counter() - t0) * 1e3)
    lat.sort()
    return {"p50": lat[len(lat) // 2], "p99": lat[int((len(lat) - 1) * 0.99)],
            "mean": statistics.fmean(lat), "sequences_per_s": b * 1e3 / statistics.fmean(lat)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parley", default=os.path.join(HERE, "..", "build", "sdk", "cli", "parley"))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--shapes", default="mini,base")
    ap.add_argument("--json", help="write all figures to this file")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rows = []
    with tempfile.TemporaryDirectory(prefix="parley-bench-") as tmp:
        for name in args.shapes.split(","):
            model_dir = make_model(args.parley, tmp, name, SHAPES[name])
            ref = bert_ref.load(model_dir, dtype=torch.float32)
            for b, t, iters in CASES[name]:
                p = bench_parley(args.parley, model_dir, b, t, iters, args.threads)
                r = bench_torch(ref, b, t, iters, ref.config.vocab_size)
                row = {"shape": name, "batch": b, "seq": t, "threads": args.threads,
                       "parley_p50_ms": p["latency_ms"]["p50"], "parley_p99_ms": p["latency_ms"]["p99"],
                       "torch_p50_ms": r["p50"], "torch_p99_ms": r["p99"],
                       "parley_seq_per_s": p["sequences_per_s"], "torch_seq_per_s": r["sequences_per_s"],
                       "ratio_torch_over_parley": r["p50"] / p["latency_ms"]["p50"],
                       "parley_load_ms": p["load_ms"], "parley_peak_rss_mb": p["peak_rss_mb"]}
                rows.append(row)
                print(f"{name:5} B={b:<3} T={t:<4} parley p50 {row['parley_p50_ms']:9.2f} ms "
                      f"(p99 {row['parley_p99_ms']:9.2f})  torch p50 {row['torch_p50_ms']:9.2f} ms  "
                      f"torch/parley {row['ratio_torch_over_parley']:5.2f}x  "
                      f"parley {row['parley_seq_per_s']:8.1f} seq/s  load {row['parley_load_ms']:6.1f} ms  "
                      f"rss {row['parley_peak_rss_mb']:6.0f} MB", flush=True)
            del ref
    print(f"torch {torch.__version__}, threads {args.threads}, {os.cpu_count()} cpus, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(auto)')}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "threads": args.threads, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
