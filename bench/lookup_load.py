"""lookup_load.py — what a large lookup table costs a process that loads the model: the
wall time, CPU time and peak memory of `parley nlu predict` on one utterance (bench/RESULTS.md,
"Memory").

Copies a trained model (the pizza model the build trains for the e2e tests), fills its
"topping" table (sparse.json) up to N values with random ones of one to three words (its own
values kept, so the model still finds its toppings), and runs `parley nlu predict` under
/usr/bin/time -v for each N, printing seconds and max RSS; N = 0 is the model as trained.

Usage: lookup_load.py PARLEY MODEL [N ...]   (defaults 0 200000 1000000)
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

parley, model = sys.argv[1], sys.argv[2]
sizes = [int(a) for a in sys.argv[3:]] or [0, 200000, 1000000]
rng = random.Random(7)
letters = "abcdefghijklmnopqrstuvwxyz"


def word():
    return "".join(rng.choice(letters) for _ in range(rng.randint(3, 10)))


with tempfile.TemporaryDirectory() as tmp:
    for n in sizes:
        out = os.path.join(tmp, f"m{n}")
        shutil.copytree(model, out)
        path = os.path.join(out, "sparse.json")
        with open(path) as f:
            sparse = json.load(f)
        table = sparse["lookups"]["topping"]
        seen, want = set(table), n
        while len(table) < want:
            v = " ".join(word() for _ in range(rng.choice((1, 1, 2, 3))))
            if v not in seen:
                seen.add(v)
                table.append(v)
        with open(path, "w") as f:
            json.dump(sparse, f)
        run = subprocess.run(["/usr/bin/time", "-v", parley, "nlu", "predict", "--model", out,
                              "--threads", "1", "i want a large pizza with mushrooms"],
                             capture_output=True, text=True)
        if run.returncode:
            sys.exit(f"lookup_load: {n} values: parley failed:\n{run.stderr[-2000:]}")
        wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", run.stderr)
        rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr)
        cpu = sum(float(re.search(r"%s time \(seconds\): ([\d.]+)" % k, run.stderr).group(1))
                  for k in ("User", "System"))
        secs = int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
        print(f"{n:>8} values: load + one parse {secs:6.2f} s ({cpu:.2f} s CPU), "
              f"max RSS {int(rss.group(1)) / 1024:7.1f} MiB; {run.stdout.strip()[:100]}")
        shutil.rmtree(out)
