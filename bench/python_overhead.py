"""python_overhead.py — what the Python package (python/parley, ctypes) adds to a parse.

The same model, the same sentences, one CPU thread, in one run: a C program calling
parley_nlu_parse() (compiled here against the build's libparley), then Python calling
Model.parse() (the package: strings in, Result objects out), and Python calling
parley_nlu_parse_batch() through ctypes directly (the call boundary alone, no objects
made). Prints the per-parse median and p99 of each, and the package's overhead against C.

    /usr/bin/python3 bench/python_overhead.py BUILD_DIR MODEL_DIR [N]

BUILD_DIR holds libparley.so (meson's build folder); MODEL_DIR a trained model (the e2e
pizza model: BUILD_DIR/tests/e2e/pizza_model); N parses per sentence (default 200).
"""
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time

build, model = sys.argv[1:3]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
lib = os.path.join(os.path.abspath(build), "libparley.so")
os.environ["PARLEY_LIBRARY"] = lib
sys.path.insert(0, os.path.join(root, "python"))
import parley  # noqa: E402  (after PARLEY_LIBRARY is set)

SENTENCES = ["i want a large pizza with mushrooms", "hi there",
             "can i get two small pizzas with ham and olives please",
             "deliver it to 12 baker street", "what toppings do you have"]

C_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "parley/parley.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                          return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    parley_nlu_params p = parley_nlu_params_default();
    p.device = "cpu"; p.threads = 1;
    parley_nlu *nlu;
    if (parley_nlu_open(argv[1], &p, &nlu) != PARLEY_OK) return 1;
    int n = atoi(argv[2]);
    for (int s = 3; s < argc; s++)
        for (int i = -10; i < n; i++) {
            parley_nlu_result *r;
            double t0 = now();
            if (parley_nlu_parse(nlu, argv[s], &r) != PARLEY_OK) return 1;
            parley_nlu_result_free(r);
            if (i >= 0) printf("%.9f\n", now() - t0);
        }
    parley_nlu_close(nlu);
    return 0;
}
"""


def summary(name, times):
    times = sorted(times)
    p50, p99 = statistics.median(times), times[int(0.99 * (len(times) - 1))]
    print("%-34s p50 %7.1f us   p99 %7.1f us" % (name, p50 * 1e6, p99 * 1e6))
    return p50


def c_times():
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "parse.c"), os.path.join(tmp, "parse")
        with open(src, "w") as f:
            f.write(C_PROGRAM)
        subprocess.run(["cc", "-O2", "-I", os.path.join(root, "sdk", "include"),
                        "-I", os.path.abspath(build), src, "-o", exe, lib,
                        "-Wl,-rpath," + os.path.abspath(build)], check=True)
        out = subprocess.run([exe, model, str(n), *SENTENCES], check=True,
                             capture_output=True, text=True).stdout
    return [float(x) for x in out.split()]


def python_times(parse):
    times = []
    for s in SENTENCES:
        for i in range(-10, n):
            t0 = time.perf_counter()
            parse(s)
            if i >= 0:
                times.append(time.perf_counter() - t0)
    return times


print("%d sentences x %d parses, 1 thread, model %s" % (len(SENTENCES), n, model))
c = summary("C: parley_nlu_parse", c_times())
with parley.Model(model, device="cpu", threads=1) as m:
    py = summary("Python: Model.parse", python_times(m.parse))
    raw_lib = ctypes.CDLL(lib)
    handle = m._handle()
    out = (ctypes.c_void_p * 1)()

    def raw(s):
        arr = (ctypes.c_char_p * 1)(s.encode())
        if raw_lib.parley_nlu_parse_batch(handle, arr, ctypes.c_size_t(1), out) != 0:
            raise RuntimeError("parse failed")
        raw_lib.parley_nlu_result_free(out[0])

    raw_p50 = summary("Python: ctypes call alone", python_times(raw))
print("package overhead against C: %+.1f us per parse (%.1f%%); the ctypes call alone %+.1f us"
      % ((py - c) * 1e6, 100 * (py - c) / c, (raw_p50 - c) * 1e6))
