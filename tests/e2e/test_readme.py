"""test_readme.py — the README's commands run as written, so they stay true.

Every command of every ```sh block of README.md and of samples/starter/README.md (lines
joined at a trailing backslash, comments dropped) must be listed below: in RUN, which this
test runs in order with bash in a fresh folder laid out as a clone is (a copy of samples/,
the parley under test first on PATH) and which must exit 0, or in SKIP with the reason it
is not run here. A README command that is in neither list fails the test, so a new example
is either run or explained. The pizza model the examples use is the one the build trains for
tests/e2e (copied to models/pizza): training it again as the README does takes 20-50 s and
`parley train` itself is tested by tests/sdk/cli/test_train_cli.py.

Usage: test_readme.py SOURCE_ROOT PIZZA_MODEL_DIR   (PARLEY_BIN names the tool)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from checks import check, done

ROOT, PIZZA = sys.argv[1], sys.argv[2]
BIN = os.path.abspath(os.environ.get("PARLEY_BIN", "parley"))

# (folder relative to the clone, command) in the order they run.
RUN = [
    ("", 'echo "a large pizza with ham to 12 Baker Street?" | parley nlu predict --model models/pizza'),
    ("", 'echo "a big pizza with ham" | parley nlu predict --model models/pizza'),
    ("", "parley model init --layers 4 --hidden 256 --heads 4 --intermediate 1024 --vocab "
         "models/pizza/vocab.txt --intents greet,order --slots B-size,I-size --out models/mini"),
    ("", "parley eval --model models/pizza --data samples/pizza/nlu.yaml --failures failures.jsonl"),
    ("", "parley init mybot"),
    ("", "parley chat mybot/pipeline.yaml"),
    ("", "cd mybot && parley test && cd .."),
    ("", "parley check mybot/pipeline.yaml"),
    ("mybot", "parley chat pipeline.yaml"),
    ("mybot", "parley test"),
    ("mybot", "parley check pipeline.yaml"),
    ("mybot", "parley train --data nlu.yaml --out models/nlu"),
    ("", 'flite -voice slt -t "i want a large pizza" -o order.wav'),
    ("", 'parley run samples/voice/file.yaml --set mic.source="filesrc location=order.wav ! '
         'decodebin"'),
    ("", "parley asr build --nlu samples/pizza/nlu.yaml"),
    ("", "parley asr transcribe --nlu samples/pizza/nlu.yaml order.wav"),
    ("", "parley asr transcribe order.wav"),
]
SKIP = {
    "bash run.sh demo": "installs packages and builds: what CI itself does",
    "bash run.sh test": "the whole CI run",
    "meson setup build && ninja -C build && meson test -C build": "the build this test runs in",
    "meson install -C build": "installs system-wide (tests/e2e's kiosk_installed installs to a "
                              "temporary prefix)",
    "parley train --data samples/pizza/nlu.yaml --out models/pizza":
        "20-50 s; the build's tests/e2e pizza model stands in for it (see above)",
    "parley train --data ../shared/data/nlu/snips/train --dev ../shared/data/nlu/snips/dev "
    "--out models/snips": "21 minutes on data outside the repository",
    "bash bench/pretrain_corpus.sh /tmp/corpus": "gathers data from outside the repository",
    "parley pretrain --text /tmp/corpus/corpus.txt --out models/encoder --epochs 20":
        "needs that corpus; minutes (tests/sdk/cli/test_train_cli.py runs parley pretrain)",
    "parley train --init models/encoder --lr 5e-4 --data ../shared/data/nlu/snips/train --dev "
    "../shared/data/nlu/snips/dev --out models/snips": "needs the pretrained encoder above",
    "parley run samples/voice/pipeline.yaml": "a server that runs until stopped, on a fixed port "
                                              "(tests/e2e/test_voice_page.js runs it on port 0)",
    "parley stream ws://127.0.0.1:8765/ order.wav": "needs that server (tests/services/ws/ "
                                                    "streams WAV files to it)",
}


def commands(path):
    """The commands of the ```sh blocks of a README, one string each."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+", " ", re.sub(r"\s+#.*$", "", line)).strip()
            if line:
                out.append(line)
    return out


listed = {c for _, c in RUN} | set(SKIP)
for readme in ("README.md", os.path.join("samples", "starter", "README.md")):
    for c in commands(os.path.join(ROOT, readme)):
        check(c in listed, "%s: '%s' is neither run nor skipped by tests/e2e/test_readme.py" %
              (readme, c))

clone = tempfile.mkdtemp(prefix="parley-readme-")
shutil.copytree(os.path.join(ROOT, "samples"), os.path.join(clone, "samples"))
shutil.copytree(PIZZA, os.path.join(clone, "models", "pizza"))
bindir = os.path.join(clone, ".bin")
os.makedirs(bindir)
os.symlink(BIN, os.path.join(bindir, "parley"))
# The README's trainings (parley init mybot) use every default; they start from no encoder
# here, named, whatever this machine's cache or environment holds: the commands are checked,
# not the model (the starter's own tests pass without one).
env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), HOME=clone,
           PARLEY_ENCODER="none")
for where, cmd in RUN:
    p = subprocess.run(["bash", "-c", cmd], cwd=os.path.join(clone, where), env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "README command in ./%s: %s\n  exit %d: %s" %
          (where, cmd, p.returncode, (p.stderr or p.stdout)[-800:]))
    if cmd.startswith("echo") and "Baker" in cmd:
        check('"intent":"order_pizza"' in p.stdout and '"value":"12 Baker Street"' in p.stdout,
              "the README's nlu predict example: %s" % p.stdout)
    elif cmd.startswith("echo") and "big" in cmd:
        check('"intent":"order_pizza"' in p.stdout and
              '{"slot":"size","value":"big","canonical":"large"' in p.stdout,
              "the README's synonym example: %s" % p.stdout)
    if "--failures" in cmd:
        check(os.path.exists(os.path.join(clone, "failures.jsonl")), "eval wrote failures.jsonl")
    if cmd.startswith("parley train") and where == "mybot":
        check("up to date" in p.stdout, "the starter's retrain command matches init's: %s" %
              p.stdout)

shutil.rmtree(clone)
sys.exit(done("readme commands"))
