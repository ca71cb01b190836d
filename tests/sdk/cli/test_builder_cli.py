"""test_builder_cli.py — the bot builder's commands end to end: init, test, chat, check,
train's record, eval --failures, nlu predict's inputs, help and the errors of the CLI.

`parley init` makes a starter bot and trains it; its model must be right on its own
examples and on new sentences, and `parley test` inside the folder must pass. Then each
command's error paths: a failing conversation shows a diff, a broken test file names
FILE:LINE:COL, `parley check` lists several problems of several files at once (every
problem of a domain, with the nearest name), the warnings (a response that says a slot that
can be unset among them) and the command that retrains a stale model, `parley train` skips
an unchanged model and keeps one made from other data, mistyped commands and options get a
did-you-mean, a missing model a hint. The chat is
driven through a pipe (its slash commands) and through a pseudo-terminal (libedit's
history: the up arrow brings the last line back). Needs only the standard library, and the
default encoder the starter trains from with every default: named to parley (PARLEY_ENCODER)
where it is built, the test skipped (77) where it is not.
"""
import atexit
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

import default_encoder
from checks import check, done

default_encoder.require("sdk/cli/builder")

BIN = os.path.abspath(os.environ.get("PARLEY_BIN", "parley"))


def run(args, cwd=None, stdin=None, timeout=300):
    return subprocess.run([BIN] + args, capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, input=stdin)


tmp = tempfile.mkdtemp(prefix="parley-builder-")
atexit.register(shutil.rmtree, tmp, True)  # also when a check raises
bot = os.path.join(tmp, "bot")
model = os.path.join(bot, "models", "nlu")

# ---- init -----------------------------------------------------------------------------
p = run(["init", bot])
check(p.returncode == 0, "init: %d %s" % (p.returncode, p.stderr[-500:]))
for f in ("nlu.yaml", "domain.yaml", "pipeline.yaml", "voice.yaml", "web/index.html",
          "web/voice.js", "web/voice.css", "web/mic-worklet.js", "README.md", "tests/order.yaml",
          "tests/cancel.yaml", "models/nlu/config.json", "models/nlu/model.safetensors",
          "models/nlu/training.json"):
    check(os.path.exists(os.path.join(bot, f)), "init wrote %s" % f)
p = run(["init", bot])
check(p.returncode == 1 and "is there already" in p.stderr, "init over a bot: %s" % p.stderr)
# A folder that holds a model (and no starter files): init must not train over it.
mine = os.path.join(tmp, "mine")
os.makedirs(os.path.join(mine, "models", "nlu"))
with open(os.path.join(mine, "models", "nlu", "config.json"), "w") as f:
    f.write("my model\n")
p = run(["init", mine])
check(p.returncode == 1 and os.path.join(mine, "models/nlu") in p.stderr and
      "is there already" in p.stderr, "init over a model folder: %d %s" % (
          p.returncode, p.stderr[-500:]))
with open(os.path.join(mine, "models", "nlu", "config.json")) as f:
    check(f.read() == "my model\n", "init left the model folder's files as they were")
check(sorted(os.listdir(mine)) == ["models"] and os.listdir(os.path.join(mine, "models", "nlu"))
      == ["config.json"], "init wrote nothing: %s" % sorted(os.listdir(mine)))
p = run(["init", os.path.join(tmp, "bare"), "--no-train"])
check(p.returncode == 0 and not os.path.exists(os.path.join(tmp, "bare", "models")),
      "init --no-train: %d %s" % (p.returncode, p.stderr))

record = json.load(open(os.path.join(model, "training.json")))
check(record.get("format") == "parley-training-record" and record["options"]["seed"] == 42
      and record["data"]["realpath"] == os.path.realpath(os.path.join(bot, "nlu.yaml"))
      and len(record["data"]["fnv1a64"]) == 16 and record["parley_version"]
      and record["options"]["epochs"] == -1  # PARLEY_AUTO: sized to the data
      and len(record["epochs"]) == record["run"]["best_epoch"] > 0
      and all("loss" in e for e in record["epochs"]), "training.json: %s" % record)

# The starter model is right on its own examples...
p = run(["-q", "eval", "--model", model, "--data", os.path.join(bot, "nlu.yaml"), "--json",
         "--device", "cpu"])
check(p.returncode == 0, "eval of the starter: %s" % p.stderr)
if p.returncode == 0:
    r = json.loads(p.stdout)
    check(r["intent_accuracy"] >= 0.95 and r["slots"]["f1"] >= 0.95,
          "starter on its own examples: intent %.3f slot F1 %.3f" % (r["intent_accuracy"],
                                                                     r["slots"]["f1"]))
# ... and on sentences it never saw.
new = [("can i have a small americano", "order_drink", {"size": "small", "drink": "americano"}),
       ("a medium mocha please", "order_drink", {"size": "medium", "drink": "mocha"}),
       ("hey", "greet", {}), ("cancel it", "cancel", {}), ("nope", "deny", {}),
       ("i'll have a tea", "order_drink", {"drink": "tea"})]
p = run(["-q", "nlu", "predict", "--model", model, "--device", "cpu"] + [t for t, _, _ in new])
right = 0
check(p.returncode == 0, "predict new sentences: %s" % p.stderr)
if p.returncode == 0:
    for (text, intent, slots), line in zip(new, p.stdout.splitlines()):
        o = json.loads(line)
        got = {s["slot"]: s["value"] for s in o["slots"]}
        right += o["intent"] == intent and got == slots
        check(re.fullmatch(r"0(\.\d{1,4})?|1(\.0+)?", str(o["confidence"])) is not None,
              "4 digits: %s" % o["confidence"])
check(right >= len(new) - 1, "starter on new sentences: %d of %d right" % (right, len(new)))

# ---- parley test ----------------------------------------------------------------------
p = run(["test"], cwd=bot)
check(p.returncode == 0 and "2 file(s), 9 turn(s): 0 file(s) failed" in p.stdout,
      "parley test in the bot: %d %s %s" % (p.returncode, p.stdout, p.stderr[-300:]))
check(not os.path.exists(os.path.join(bot, "bot.db")), "parley test left the bot's store alone")
wrong = os.path.join(tmp, "wrong.yaml")
with open(wrong, "w") as f:
    f.write("turns:\n  - text: hello\n    reply: \"Good night\"\n    slots: { drink: tea }\n")
p = run(["test", os.path.join(bot, "pipeline.yaml"), wrong])
check(p.returncode == 1 and "- reply: Good night" in p.stdout
      and "+ reply: Hello! What can I get you today?" in p.stdout
      and "- slots: drink=tea" in p.stdout and "wrong.yaml:2:" in p.stdout,
      "a failing test shows a diff: %s" % p.stdout)
broken = os.path.join(tmp, "broken.yaml")
with open(broken, "w") as f:
    f.write("turns:\n  - text: hi\n    replly: x\n")
p = run(["test", os.path.join(bot, "pipeline.yaml"), broken])
check(p.returncode == 1 and re.search(r"broken\.yaml:3:5: .*replly", p.stdout),
      "a broken test file names FILE:LINE:COL: %s" % p.stdout)
p = run(["test"], cwd=tmp)
check(p.returncode == 2 and "no pipeline.yaml here" in p.stderr, "test outside a bot: %s" % p.stderr)

# ---- chat through a pipe: the slash commands -------------------------------------------
graph = os.path.join(bot, "pipeline.yaml")
script = ("i want a large latte\n/restart\nyes\n/user bob\nyes\n/hlep\n/help\n"
          "/user \n/quit\nhello\n")
p = run(["chat", graph, "--verbose", "--user", "ann"], stdin=script)
out = p.stdout
check(p.returncode == 0, "chat: %d %s" % (p.returncode, p.stderr[-300:]))
check("parley> A large latte, is that right?" in out, "chat: the form asks to confirm: %s" % out)
check("(a new session for ann" in out, "chat: /restart: %s" % out)
after = out.split("(a new session for ann")[-1]
check("on its way" not in after.split("(you are now bob)")[0],
      "chat: after /restart a yes confirms nothing: %s" % after)
check("(you are now bob)" in out and "did you mean /help?" in out and "/user NAME" in out,
      "chat: /user, did-you-mean, /help: %s" % out)
check("intent: order_drink (" in out and "slots: drink=latte size=large" in out,
      "chat --verbose shows the NLU: %s" % out)
check("hello" not in out.split("/quit")[-1], "chat: /quit ends the chat: %s" % out)
# --fresh starts a new session: ann's form (kept in the store) is forgotten.
store = os.path.join(tmp, "chat.db")
sets = ["--set", "dialog.store=" + store]
run(["chat", graph, "--user", "cy"] + sets, stdin="i want a large latte\n")
p = run(["chat", graph, "--user", "cy"] + sets, stdin="yes\n")
check("on its way" in p.stdout, "chat: the store keeps the form: %s" % p.stdout)
run(["chat", graph, "--user", "cy"] + sets, stdin="i want a large latte\n")
p = run(["chat", graph, "--user", "cy", "--fresh"] + sets, stdin="yes\n")
check("on its way" not in p.stdout and "parley>" in p.stdout, "chat --fresh: %s" % p.stdout)
# An id the pipeline would refuse is refused when given, not at each turn after.
for bad, why in (("a\x01b", "control character U+0001"), ("x" * 129, "129 bytes")):
    p = run(["chat", graph, "--user", bad], stdin="hello\n")
    check(p.returncode == 2 and "parley chat: --user: user id" in p.stderr and why in p.stderr
          and "parley>" not in p.stdout, "chat --user %.20r: %d %s" % (bad, p.returncode, p.stderr))
p = run(["chat", graph, "--user", "dee"], stdin="/user e\x1bf\n/user \nhello\n")
check("(/user NAME: user id: control character U+001B at byte 1; you are still dee)" in p.stdout
      and "(/user NAME: user id is empty; you are still dee)" in p.stdout and
      "parley> " in p.stdout and "error" not in p.stdout.lower(),
      "chat /user with a bad id: %s" % p.stdout)
p = run(["chat", graph, "--usr", "x"])
check(p.returncode == 2 and "did you mean --user?" in p.stderr, "chat --usr: %s" % p.stderr)

# ---- chat on a terminal: libedit's history ---------------------------------------------
pid, fd = pty.fork()
if pid == 0:
    os.environ["HOME"] = tmp
    os.environ["TERM"] = "xterm"
    os.execv(BIN, [BIN, "-q", "chat", graph, "--user", "tty", "--set", "dialog.store=" +
                   os.path.join(tmp, "tty.db")])


def read_until(fd, what, limit=120):
    buf, end = b"", time.time() + limit
    while what not in buf and time.time() < end:
        r, _, _ = select.select([fd], [], [], 1)
        if r:
            try:
                buf += os.read(fd, 4096)
            except OSError:
                break
    return buf


# After each prompt a pause before typing: libedit sets the terminal up after printing its
# prompt, and keys that arrive before are read by the terminal's cooked mode (seen on a
# loaded machine: the up arrow echoed as "^[[A", then Ctrl-D never ended the chat).
seen = read_until(fd, b"you> ")
time.sleep(0.5)
os.write(fd, b"hello\r")
# The reply, its NLU details, then the prompt: libedit drops what is typed before it.
seen += read_until(fd, b"slots: none\x1b[0m\r\nyou> ")
time.sleep(0.5)
os.write(fd, b"\x1b[A\r")  # the up arrow brings "hello" back
seen2 = read_until(fd, b"slots: none\x1b[0m\r\nyou> ")
time.sleep(0.5)
# Ctrl-D, again every 2 s: libedit may drop a key typed while it sets the terminal up after
# printing its prompt (seen under ASan); 60 s at most (on a loaded machine the clean exit
# has been slow): a chat that does not end fails the test, never hangs it.
ended = False
for i in range(600):
    if i % 20 == 0:
        try:
            os.write(fd, b"\x04")
        except OSError:  # the chat has just closed its terminal
            pass
    ended = os.waitpid(pid, os.WNOHANG)[0] == pid
    if ended:
        break
    time.sleep(0.1)
if not ended:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
check(ended, "pty chat ends on Ctrl-D: %r" % seen2[-300:])
check(b"What can I get you today?" in seen, "pty chat answers: %r" % seen[-300:])
check(b"What can I get you today?" in seen2 and b"hello" in seen2,
      "pty chat: up arrow recalls the last line: %r" % seen2[-300:])
check(b"\x1b[2m" in seen, "pty chat: the NLU details are dimmed: %r" % seen[-300:])
hist = os.path.join(tmp, ".parley_history")
check(os.path.exists(hist) and "hello" in open(hist, errors="replace").read(),
      "pty chat keeps ~/.parley_history")

# ---- check ----------------------------------------------------------------------------
p = run(["check", graph])
check(p.returncode == 0 and "0 error(s), 0 warning(s)" in p.stdout, "check a good bot: %s" % p.stdout)
bad = os.path.join(tmp, "bad")
shutil.copytree(bot, bad)
with open(os.path.join(bad, "pipeline.yaml")) as f:
    g = f.read()
with open(os.path.join(bad, "pipeline.yaml"), "w") as f:
    f.write(g.replace("params: { model: models/nlu }", "params: { model: models/nlu, batch: 4 }"))
with open(os.path.join(bad, "domain.yaml")) as f:
    d = f.read()
with open(os.path.join(bad, "domain.yaml"), "w") as f:
    f.write(d.replace("  - intent: goodbye\n    reply: utter_goodbye",
                      "  - intent: goodbye\n    reply: utter_goodby")
            .replace("intents: [greet,", "intents: [thank_you, greet,")
            .replace("reply: utter_greet", "reply: utter_gret")
            .replace('"Your {size} {drink} is on its way!"', '"Your {sise} {drink} is on its way!"')

            .replace("slots:\n", "slots:\n  milk:\n    type: categorical\n    values: [oat, soy]\n"))
with open(os.path.join(bad, "nlu.yaml"), "a") as f:
    f.write("  - intent: thank_you\n    examples: |\n      - thanks\n      - hello\n"
            "      - thanks for the Latte!\n")
time.sleep(1.1)
os.utime(os.path.join(bad, "nlu.yaml"))
p = run(["check", os.path.join(bad, "pipeline.yaml")])
out = p.stdout
check(p.returncode == 1, "check a broken bot fails: %d" % p.returncode)
check(re.search(r"pipeline\.yaml:\d+:\d+: .*batch", out), "check: the graph's error: %s" % out)
check(re.search(r"domain\.yaml:\d+:\d+: .*utter_goodby", out) or
      re.search(r"domain\.yaml:\d+:\d+: .*thank_you", out), "check: the domain's error: %s" % out)
check(re.search(r"warning: .*domain\.yaml:\d+:\d+: intent 'thank_you' has 3 example", out),
      "check: few examples: %s" % out)
check(re.search(r"warning: .*'hello' is an example of both 'greet' and 'thank_you'", out),
      "check: an example under two intents: %s" % out)
check(re.search(r"warning: .*domain\.yaml:\d+:\d+: slot 'milk'", out), "check: slot unfilled: %s" % out)
check(re.search(r"warning: .*'thanks for the Latte!' \(thank_you\) holds 'latte', a value of the "
                r"lookup table 'drink', without marking it", out) and out.count("without marking") == 1,
      "check: a lookup value unmarked: %s" % out)
check(re.search(r"older than \S*bad/nlu\.yaml: retrain it: parley train --data \S*bad/nlu\.yaml "
                r"--out \S*bad/models/nlu --force\n", out),
      "check: model older than nlu.yaml, with the command (forced: the model is bot's): %s" % out)
check(re.search(r"(\d+) error\(s\)", out) and int(re.search(r"(\d+) error\(s\)", out).group(1)) >= 2,
      "check lists several errors at once: %s" % out)
# Every problem of the domain at once, each with the nearest name.
check(re.search(r"domain\.yaml:\d+:\d+: unknown response 'utter_goodby' .*did you mean 'utter_goodbye'\?", out)
      and re.search(r"domain\.yaml:\d+:\d+: unknown response 'utter_gret' .*did you mean 'utter_greet'\?", out)
      and re.search(r"domain\.yaml:\d+:\d+: the template names slot 'sise'.*did you mean 'size'\?", out),
      "check: every problem of the domain, did you mean: %s" % out)
# A response that says a slot the rule that says it cannot be sure of: a warning, until a
# variation for the slot unset comes first.
unset = os.path.join(tmp, "unset")
shutil.copytree(bot, unset)
with open(os.path.join(unset, "domain.yaml")) as f:
    d = f.read()
d = d.replace("  - intent: cancel\n    reply: utter_nothing_to_cancel",
              "  - intent: cancel\n    reply: utter_unset")
for fix in ("", "    - condition: [{ type: slot, name: size, value: null }]\n      text: \"Nothing to cancel.\"\n"):
    with open(os.path.join(unset, "domain.yaml"), "w") as f:
        f.write(d.replace("  utter_goodbye:\n", "  utter_unset:\n" + fix +
                          "    - text: \"No {size} one then.\"\n  utter_goodbye:\n"))
    p = run(["check", os.path.join(unset, "pipeline.yaml")])
    if not fix:
        check(p.returncode == 0 and re.search(
            r"warning: \S*unset/domain\.yaml:\d+:\d+: response 'utter_unset' says slot 'size', which "
            r"can be unset where it is said \(the rule for intent 'cancel'\)", p.stdout)
            and "0 error(s), 1 warning(s)" in p.stdout, "check: a slot that can be unset: %s" % p.stdout)
    else:
        check(p.returncode == 0 and "0 error(s), 0 warning(s)" in p.stdout,
              "check: the variation for size unset covers it: %s" % p.stdout)
nomodel = os.path.join(tmp, "nomodel")
shutil.copytree(os.path.join(tmp, "bare"), nomodel)
p = run(["check", os.path.join(nomodel, "pipeline.yaml")])
check(p.returncode == 1 and re.search(r"train it first: parley train --data \S*nomodel/nlu\.yaml "
                                     r"--out \S*nomodel/models/nlu", p.stdout),
      "check: a missing model's hint: %s" % p.stdout)

# ---- train's record -------------------------------------------------------------------
before = os.path.getmtime(os.path.join(model, "model.safetensors"))
p = run(["train", "--data", os.path.join(bot, "nlu.yaml"), "--out", model])  # init's: the defaults
check(p.returncode == 0 and "up to date" in p.stdout
      and os.path.getmtime(os.path.join(model, "model.safetensors")) == before,
      "train skips an unchanged model: %s %s" % (p.stdout, p.stderr[-300:]))
p = run(["train", "--data", os.path.join(bad, "nlu.yaml"), "--out", model])
check(p.returncode == 1 and "holds a model trained from" in p.stderr and "--force" in p.stderr,
      "train keeps a model made from other data: %s" % p.stderr)
fast = ["--layers", "1", "--hidden", "32", "--heads", "2", "--intermediate", "64",
        "--max-positions", "64", "--epochs", "1", "--quiet"]
other = os.path.join(tmp, "other")
p = run(["train", "--data", os.path.join(bot, "nlu.yaml"), "--out", other] + fast)
# No sparse features: their pre-fit alone learns the bot's examples, and the eval below
# wants a model that still gets some of them wrong.
p = run(["train", "--data", os.path.join(bad, "nlu.yaml"), "--out", other, "--force", "--sparse",
         "off"] + fast)
check(p.returncode == 0 and json.load(open(os.path.join(other, "training.json")))["data"]["realpath"]
      == os.path.realpath(os.path.join(bad, "nlu.yaml")), "train --force replaces: %s" % p.stderr)

# ---- eval --failures, nlu predict's inputs ---------------------------------------------
fails = os.path.join(tmp, "failures.jsonl")
p = run(["-q", "eval", "--model", other, "--data", os.path.join(bot, "nlu.yaml"), "--failures",
         fails])
lines = [json.loads(x) for x in open(fails)] if os.path.exists(fails) else []
check(p.returncode == 0 and lines and all(
    set(x) == {"text", "gold", "predicted", "ranking"} and "confidence" in x["predicted"]
    and (x["gold"]["intent"] != x["predicted"]["intent"] or x["gold"]["tags"] != x["predicted"]["tags"])
    for x in lines), "eval --failures: %s %s" % (p.stderr[-300:], lines[:2]))
inp = os.path.join(tmp, "in.txt")
with open(inp, "w") as f:
    f.write("hello\na large latte\n")
p = run(["-q", "nlu", "predict", "--model", model, "--input", inp])
check(p.returncode == 0 and [json.loads(x)["text"] for x in p.stdout.splitlines()]
      == ["hello", "a large latte"], "nlu predict --input: %s %s" % (p.stdout, p.stderr))
p = run(["-q", "nlu", "predict", "--model", model, "--input", inp, "hello"])
check(p.returncode == 2, "nlu predict --input and TEXT: %d" % p.returncode)

# ---- one dialect: help, did-you-mean, prefixes, hints -----------------------------------
p = run(["help"])
check(p.returncode == 0 and all(c in p.stdout for c in ("init", "chat", "check", "test", "help")),
      "help: %s" % p.stdout)
p = run(["help", "test"])
check(p.returncode == 0 and "usage: parley test" in p.stdout, "help test: %s" % p.stdout)
p = run(["chta"])
check(p.returncode == 2 and "did you mean 'chat'?" in p.stderr, "did you mean chat: %s" % p.stderr)
p = run(["eval", "--modle", "x"])
check(p.returncode == 2 and "parley eval: unknown option '--modle' (did you mean --model?)"
      in p.stderr, "did you mean --model: %s" % p.stderr)
p = run(["nlu", "predict", "--model", os.path.join(tmp, "none"), "hi"])
check(p.returncode == 1 and p.stderr.startswith("parley nlu predict: ")
      and "PARLEY_ERR" not in p.stderr and "train it first: parley train --data" in p.stderr,
      "missing model hint: %s" % p.stderr)
noout = os.path.join(bot, "noout.yaml")
with open(noout, "w") as f:
    f.write("nodes:\n  - name: in\n    kind: text.stdin\n  - name: nlu\n    kind: nlu.bert\n"
            "    inputs: { text: in.text }\n    params: { model: models/nlu }\n")
p = run(["run", noout], stdin="")
check(p.returncode == 1 and re.search(r"noout\.yaml:\d+:\d+: the graph has no output", p.stderr),
      "a graph with no output: %s" % p.stderr)

sys.exit(done("builder cli"))
