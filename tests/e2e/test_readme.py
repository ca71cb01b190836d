"""test_readme.py — the commands of the README and of docs/ run as written, so they stay true.

Every command of every ```sh block of README.md, samples/starter/README.md and each page of
docs/ (lines joined at a trailing backslash, comments dropped) must be listed below: in the
page's RUN list, which this test runs page after page in the order of PAGES, each command
with bash in one fresh folder laid out as a clone is (a copy of samples/, the parley under
test first on PATH) and which must exit 0, or in SKIP with the reason it is not run here. A
command that is in neither fails the test, so a new example is either run or explained; a
page of docs/ missing from PAGES fails it too. A page's list may also hold Skip(command,
reason) for a command of that page alone. docs/nodes.md must be what `parley inspect
--markdown` writes. The pizza model the examples use is the one the build trains for
tests/e2e (copied to models/pizza): training it again as `run.sh demo` does takes 20-50 s and
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


class Skip:
    """A command of one page that is not run here, and why."""

    def __init__(self, cmd, why):
        self.cmd, self.why = cmd, why

BIN = os.path.abspath(os.environ.get("PARLEY_BIN", "parley"))

# Each page's (folder relative to the clone, command) in the order they run.
README = [
    ("", "parley init mybot"),
    ("", "parley chat mybot/pipeline.yaml"),
    ("", "cd mybot && parley test && cd .."),
    ("", "parley check mybot/pipeline.yaml"),
    ("", "parley train --data mybot/nlu.yaml --out mybot/models/nlu"),
    ("", "parley train --explain --data mybot/nlu.yaml"),
    Skip("cd mybot && parley run voice.yaml", "a server that runs until stopped, on a fixed "
         "port (tests/e2e/test_voice_page.js runs the voice page's graph on port 0)"),
    ("", 'flite -voice slt -t "i want a large pizza" -o order.wav'),
    ("", 'parley run samples/voice/file.yaml --set mic.source="filesrc location=order.wav ! '
         'decodebin"'),
    ("", "parley asr transcribe --nlu samples/pizza/nlu.yaml order.wav"),
    Skip("samples/cluster/cluster.sh run", "starts PostgreSQL, HAProxy, Prometheus and two "
         "servers until stopped (tests/e2e/test_cluster.py runs the cluster)"),
    Skip("parley bench nlu --model models/pizza --device cuda:0 --batch 32 --seq 32 --iters 200",
         "needs an NVIDIA GPU (bench/gpu_run.sh runs the GPU benchmarks)"),
]

# samples/starter/README.md: the starter bot's own page, in the folder `parley init` made
STARTER = [
    ("mybot", "parley chat pipeline.yaml"),
    ("mybot", "parley test"),
    ("mybot", "parley check pipeline.yaml"),
    ("mybot", "parley train --data nlu.yaml --out models/nlu"),
    Skip("parley run voice.yaml", "a server that runs until stopped, on a fixed port (the "
         "voice page is tested on samples/voice/pipeline.yaml by tests/e2e/test_voice_page.js)"),
    ("mybot", "parley check voice.yaml"),
]

# docs/bots.md: on the README's mybot/
BOTS = [
    Skip("parley init mybot", "the README ran it: this page uses its mybot/ (init refuses a "
         "folder that holds a bot; tests/sdk/cli/test_builder_cli.py tests init)"),
    ("", "parley chat mybot/pipeline.yaml"),
    ("", "printf 'hello\\ncan i get a large latte\\nyes\\n' | parley chat mybot/pipeline.yaml"),
    ("", "parley train --data mybot/nlu.yaml --out mybot/models/nlu"),
    ("", "parley test mybot/pipeline.yaml"),
    ("", "parley check mybot/pipeline.yaml"),
    Skip("cd mybot && parley run voice.yaml", "a server that runs until stopped, on a fixed port "
         "(the voice page is tested on samples/voice/pipeline.yaml by "
         "tests/e2e/test_voice_page.js)"),
    ("", "printf 'hello\\n/user bob\\ncan i get a large latte\\n/restart\\n/quit\\n' | "
         "parley chat mybot/pipeline.yaml --fresh --verbose"),
    ("", "cd mybot && parley test && cd .."),
    ("", "parley test mybot/pipeline.yaml mybot/tests/order.yaml"),
    ("", "parley check mybot/pipeline.yaml --data mybot/nlu.yaml"),
    ("", "parley check mybot/voice.yaml"),
    ("", "parley help"),
    ("", "parley help test"),
]

# docs/training.md (its training commands are in SKIP: the README shows them too)
TRAINING = [
    ("", "parley train --explain --data samples/pizza/nlu.yaml"),
    ("", "parley eval --model models/pizza --data samples/pizza/nlu.yaml --failures failures.jsonl"),
]

# docs/models.md
MODELS = [
    ("", "parley model init --layers 4 --hidden 256 --heads 4 --intermediate 1024 --vocab "
         "models/pizza/vocab.txt --intents greet,order --slots B-size,I-size --out models/mini"),
    ("", 'echo "a large pizza with ham to 12 Baker Street?" | parley nlu predict --model models/pizza'),
    ("", 'echo "a big pizza with ham" | parley nlu predict --model models/pizza'),
    ("", 'echo "I want Crème brûlée" | parley tokenize --vocab models/pizza/vocab.txt --words'),
]

# docs/pipelines.md
PIPELINES = [
    ("", "parley inspect"),
    ("", "parley inspect nlu.bert"),
    ("", "parley check samples/pizza/pipeline.yaml"),
    ("", "printf 'i want a large pizza with ham\\n{\"user\": \"bob\", \"text\": \"hello\"}\\ntwo please\\n' "
         "| parley run samples/pizza/pipeline.yaml"),
    ("", 'echo "i want a large pizza" | parley run samples/pizza/pipeline.yaml '
         "--set nlu.bert.device=cpu --set nlu.max_batch=8"),
    ("", "printf '{\"user\": \"ann\", \"text\": \"hello\"}\\n\\n{\"user\": 7, \"txt\": \"hi\"}\\n' "
         "| parley run samples/pizza/pipeline.yaml"),
]

# docs/dialog.md: the store commands on mybot's store, which docs/bots.md's chats filled
DIALOG = [
    ("", "parley check samples/pizza/pipeline.yaml"),
    ("", "printf 'can i get a large cappuccino\\nno\\nmake it medium\\nyes please\\n' | "
         "parley chat mybot/pipeline.yaml --fresh"),
    ("", "parley store migrate mybot/bot.db"),
    ("", "parley store export mybot/bot.db -o users.jsonl"),
    ("", "parley store import copy.db -i users.jsonl"),
    ("", "parley store export mybot/bot.db | parley store import copy.db"),
    ("", "parley store purge copy.db --older-than 30"),
    Skip("parley store export pizza.db | parley store import postgresql://db.internal/pizza",
         "needs a PostgreSQL server (tests/e2e/test_cli_store.py moves a store to PostgreSQL "
         "and back)"),
]

# docs/websocket.md: the server runs until stopped, so what talks to it is tested elsewhere
SERVER = "a server that runs until stopped, on a fixed port (tests/services/ws/ws_server.py " \
         "starts the pizza bot's server graph on a free port for the ws tests)"
WEBSOCKET = [
    Skip("parley run samples/pizza/server.yaml", SERVER),
    Skip("parley run samples/pizza/server.yaml --set ws.server.port=9000", SERVER),
    ("", "parley inspect ws.server"),
    ("", "parley check samples/pizza/server.yaml"),
    ("", "openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=localhost -keyout key.pem "
         "-out cert.pem"),
    Skip("parley run samples/pizza/server.yaml --set ws.server.cert=cert.pem --set "
         "ws.server.key=key.pem", SERVER + "; tests/services/ws/test_ws_auth.py serves wss:// "
         "with a certificate it makes"),
    Skip("curl -s localhost:8765/healthz", "needs the running server (tests/services/ws/ "
         "test_ws_protocol.py and tests/e2e/test_cluster.py ask /healthz)"),
    Skip("curl -s localhost:8765/metrics", "needs the running server (tests/services/ws/ "
         "test_ws_protocol.py reads /metrics; tests/e2e/test_metrics.py checks the metrics' text)"),
    Skip("curl -s localhost:8765/webhooks/rest/webhook -d '{\"sender\": "
         "\"u-0123456789abcdef0123456789abcdef\", \"message\": \"i want a large pizza with "
         "mushrooms\"}'", "needs the running server (tests/services/ws/test_ws_rest.py runs "
         "the webhook with curl and urllib)"),
    Skip("curl -s localhost:8765/model/parse -d '{\"text\": \"a big pizza with ham\"}'",
         "needs the running server (tests/services/ws/test_ws_rest.py checks /model/parse "
         "against parley nlu predict)"),
    Skip("curl -s localhost:8765/version", "needs the running server (tests/services/ws/"
         "test_ws_rest.py checks /version and /status)"),
    Skip('parley stream ws://127.0.0.1:8765/ --text "i want a large pizza with mushrooms" '
         '--text "2 pizzas"', "needs the running server (tests/e2e/test_stream.py runs parley "
         "stream against it)"),
    Skip('parley stream ws://127.0.0.1:8765/ --user u-2f9bcd432860808ba2940352f0bcbd2b --text '
         '"deliver to 5 main street"', "needs the running server, and a ready id it gave "
         "(tests/e2e/test_stream.py resumes a conversation with --user)"),
    Skip("printf 'hello\\nthanks\\n' | parley stream ws://127.0.0.1:8765/ -",
         "needs the running server (tests/e2e/test_stream.py sends standard input's lines)"),
    Skip("parley stream ws://127.0.0.1:8765/ question.wav", "needs the running server and a "
         "WAV file (tests/e2e/test_stream.py sends WAV files to it)"),
    ("", "parley help stream"),
]

# docs/cluster.md: servers (PostgreSQL, HAProxy, replicas) that run until stopped
CLUSTER_TEST = "tests/e2e/test_cluster.py runs cluster.sh and client.py, and kills a replica"
CLUSTER = [
    Skip("samples/cluster/cluster.sh run", "starts PostgreSQL, HAProxy, Prometheus and two "
         "replicas on fixed ports until Ctrl-C (" + CLUSTER_TEST + ")"),
    Skip("python3 samples/cluster/client.py ws://127.0.0.1:8080/ --users 100 --turns 10",
         "needs the cluster running (" + CLUSTER_TEST + ")"),
    Skip("samples/cluster/cluster.sh start", "starts the cluster's servers on fixed ports, "
         "left running (" + CLUSTER_TEST + ")"),
    Skip("samples/cluster/cluster.sh stop /tmp/parley-cluster-18lf7P", "stops what start "
         "started, in the folder it printed (" + CLUSTER_TEST + ")"),
]

# docs/voice.md
VOICE = [
    ("", 'flite -voice slt -t "i want a large pizza" -o order.wav'),
    ("", 'parley run samples/voice/file.yaml --set mic.source="filesrc location=order.wav ! '
         'decodebin"'),
    ("", 'parley run samples/voice/file.yaml --set mic.source="filesrc location=order.wav ! '
         'decodebin" --set speaker.sink="wavenc ! filesink location=reply.wav"'),
    ("", "test -s reply.wav"),
    ("", "parley asr build --nlu samples/pizza/nlu.yaml"),
    ("", "parley asr transcribe --nlu samples/pizza/nlu.yaml order.wav"),
    ("", "parley asr transcribe --grammar --nlu samples/pizza/nlu.yaml order.wav"),
    ("", "parley asr transcribe order.wav"),
    Skip("parley run samples/voice/file.yaml --set mic.source=autoaudiosrc",
         "needs a microphone; runs until stopped"),
    Skip("parley run samples/voice/pipeline.yaml", "a server that runs until stopped, on a "
         "fixed port (tests/e2e/test_voice_page.js runs it on port 0)"),
    Skip("parley stream ws://127.0.0.1:8765/ order.wav", "needs that server "
         "(tests/services/ws/ streams WAV files to it)"),
    Skip('parley run samples/voice/pipeline.yaml --set ws.cert=cert.pem --set ws.key=key.pem '
         '--set ws.host=""', "a server that runs until stopped, with a certificate"),
]

# docs/c-api.md
C_API = [
    Skip("cc app.c -o app $(pkg-config --cflags --libs parley)",
         "needs the library installed and an app.c of the reader's own (tests/e2e's "
         "kiosk_installed builds a program against an installed libparley)"),
]

# docs/python.md (tests/python/test_bindings.py runs its Python example)
PYTHON = [
    Skip("pip install --no-build-isolation ./python", "installs the package"),
    Skip("PYTHONPATH=python PARLEY_LIBRARY=build/libparley.so python3 app.py",
         "needs the repository's python/ and build/, and an app.py of the reader's own"),
]

# docs/gpu.md
GPU = [
    Skip("meson setup build -Dgpu_arch='80;90' && ninja -C build", "a build with CUDA"),
    ("", 'echo "a large pizza with ham" | parley nlu predict --model models/pizza --device auto'),
    Skip('echo "a large pizza with ham" | parley nlu predict --model models/pizza --device cuda:0',
         "needs an NVIDIA GPU"),
    Skip("parley bench nlu --model models/pizza --device cuda:0 --batch 32 --seq 128",
         "needs an NVIDIA GPU"),
    Skip("parley train --data samples/pizza/nlu.yaml --out models/pizza-gpu --device cuda",
         "needs an NVIDIA GPU"),
    Skip("meson test -C build --suite gpu", "needs a build with CUDA and an NVIDIA GPU"),
    Skip("bash bench/gpu_pack.sh gpu-pack", "a build with CUDA, for a GPU machine"),
    Skip("PARLEY_SHARED_DATA=$PWD/gpu-pack/data PARLEY_ENCODER=$PWD/gpu-pack/encoder "
         "bash bench/gpu_run.sh gpu-pack/bin gpu-pack/lib",
         "needs an NVIDIA GPU, torch and transformers"),
]

# docs/limits.md
LIMITS = [
    ("", """printf '{"user":"","text":"hi"}\\n{"user":"bob","text":"hi"}\\n' | """
         "parley run samples/pizza/pipeline.yaml"),
]

# docs/benchmarks.md
BENCHMARKS = [
    ("", "parley bench nlu --model models/pizza --iters 20"),
    ("", "parley bench nlu --model models/pizza --batch 32 --seq 128 --iters 10"),
    Skip("python3 bench/nlu_vs_torch.py --threads 2", "minutes; needs bench/ and python3-torch"),
    Skip("build/bench/pipeline_bench bench/pipeline_pizza.yaml models/pizza 3 "
         "--set dialog.frames.store=/tmp/bench.db", "needs the build folder; 12 s or more"),
    Skip("bash bench/ws_bench.sh build models/pizza", "needs the build folder; a minute"),
    Skip("python3 bench/voice_wer.py build/sdk/cli/parley /tmp/wer",
         "minutes: hundreds of utterances synthesized and recognized, clean and in noise"),
    Skip("OPENBLAS_CORETYPE=SkylakeX ./app", "the reader's own application"),
]

# The pages in the order they run (later pages may use what earlier ones made).
PAGES = [("README.md", README), (os.path.join("samples", "starter", "README.md"), STARTER)] + [
    (os.path.join("docs", name + ".md"), run) for name, run in [
        ("bots", BOTS), ("training", TRAINING), ("models", MODELS), ("pipelines", PIPELINES),
        ("dialog", DIALOG), ("websocket", WEBSOCKET), ("cluster", CLUSTER), ("voice", VOICE),
        ("c-api", C_API), ("python", PYTHON), ("gpu", GPU), ("limits", LIMITS),
        ("benchmarks", BENCHMARKS),
        ("nodes", []),  # generated: parley inspect --markdown
    ]]
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


docs = sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs"))
              if f.endswith(".md"))
for page in docs:
    check(page in dict(PAGES), "%s is not among the pages tests/e2e/test_readme.py runs" % page)
for page, run in PAGES:
    listed = {e.cmd if isinstance(e, Skip) else e[1] for e in run} | set(SKIP)
    for c in commands(os.path.join(ROOT, page)):
        check(c in listed, "%s: '%s' is neither run nor skipped by tests/e2e/test_readme.py" %
              (page, c))
RUN = [(page, e[0], e[1]) for page, run in PAGES for e in run if not isinstance(e, Skip)]

nodes = subprocess.run([BIN, "inspect", "--markdown"], capture_output=True, text=True)
with open(os.path.join(ROOT, "docs", "nodes.md"), encoding="utf-8") as f:
    check(nodes.returncode == 0 and nodes.stdout == f.read(),
          "docs/nodes.md is not what `parley inspect --markdown` writes: write it again")

clone = tempfile.mkdtemp(prefix="parley-readme-")
shutil.copytree(os.path.join(ROOT, "samples"), os.path.join(clone, "samples"))
shutil.copytree(PIZZA, os.path.join(clone, "models", "pizza"))
bindir = os.path.join(clone, ".bin")
os.makedirs(bindir)
os.symlink(BIN, os.path.join(bindir, "parley"))
# The trainings of the pages (parley init mybot) use every default; they start from no
# encoder here, named, whatever this machine's cache or environment holds: the commands are
# checked, not the model (the starter's own tests pass without one).
env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), HOME=clone,
           PARLEY_ENCODER="none")
for page, where, cmd in RUN:
    p = subprocess.run(["bash", "-c", cmd], cwd=os.path.join(clone, where), env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, "%s command in ./%s: %s\n  exit %d: %s" %
          (page, where, cmd, p.returncode, (p.stderr or p.stdout)[-800:]))
    if cmd.startswith("echo") and "Baker" in cmd:
        check('"intent":"order_pizza"' in p.stdout and '"value":"12 Baker Street"' in p.stdout,
              "docs/models.md's nlu predict example: %s" % p.stdout)
    elif cmd.startswith("echo") and "big" in cmd:
        check('"intent":"order_pizza"' in p.stdout and
              '{"slot":"size","value":"big","canonical":"large"' in p.stdout,
              "docs/models.md's synonym example: %s" % p.stdout)
    if "--failures" in cmd:
        check(os.path.exists(os.path.join(clone, "failures.jsonl")), "eval wrote failures.jsonl")
    if cmd.startswith("parley train --data") and "mybot" in where + cmd:
        check("up to date" in p.stdout, "the starter's retrain command matches init's: %s" %
              p.stdout)

shutil.rmtree(clone)
sys.exit(done("readme commands"))
