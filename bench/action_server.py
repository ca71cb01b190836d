#!/usr/bin/env python3
"""What an action server costs a turn (bench/RESULTS.md, "Actions over HTTP").

  python3 bench/action_server.py [BUILD] [--turns N] [--users U]

Runs BUILD/bench/action_bench (default build/) against the test's action server
(tests/dialog/action_server/server.py: Python's http.server on this machine, one thread per
request) and prints a Markdown table: a turn whose action the dialog answers itself
(`builtin`) against the same turn whose action the server answers (`hi`, the same reply),
one user at a time (latency, and the time the dialog node worked on the turn: its two runs
and their store work, the wait for the server not) and U users at once (turns/s), with the
difference.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--users", type=int, default=16)
    a = ap.parse_args()
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tests/dialog/action_server/server.py"), "run",
         os.path.join(a.build, "bench/action_bench"), str(a.turns), str(a.users)],
        check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        intent, mode, *kv = line.split()
        rows[intent, mode] = {k: float(v) for k, v in (x.split("=") for x in kv)}
    b, h = rows["builtin", "sequential"], rows["hi", "sequential"]
    print("| turn | mean ms | p50 ms | p99 ms | dialog ms | turns/s, %d users |" % a.users)
    print("| --- | --- | --- | --- | --- | --- |")
    for name, intent in (("built-in action (domain reply)", "builtin"),
                         ("action server (same reply over HTTP)", "hi")):
        s, c = rows[intent, "sequential"], rows[intent, "concurrent"]
        print("| %s | %.2f | %.2f | %.2f | %.3f | %.0f |" % (
            name, s["mean_ms"], s["p50_ms"], s["p99_ms"], s["dialog_ms"], c["turns_per_s"]))
    print("| difference | +%.2f | +%.2f | +%.2f | +%.3f | |" % (
        h["mean_ms"] - b["mean_ms"], h["p50_ms"] - b["p50_ms"], h["p99_ms"] - b["p99_ms"],
        h["dialog_ms"] - b["dialog_ms"]))


if __name__ == "__main__":
    main()
