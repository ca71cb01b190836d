"""test_cli_run.py — `parley run`, `parley chat` and `parley inspect` on the pizza sample.

run: every input line gets exactly one output line — a reply, or an error object for a
line the pipeline could not take (invalid UTF-8 reaches the NLU and fails there); a broken
JSON line is reported on stderr with its line number; users keep their own order.
SIGINT while the input is still open ends the run cleanly after answering what came in.
chat --verbose prints replies for people with the intent and slots. inspect lists the
kinds and describes one.

Usage: test_cli_run.py PARLEY MODEL_DIR SOURCE_ROOT
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

parley, model, root = sys.argv[1:4]
graph = os.path.join(root, "samples", "pizza", "pipeline.yaml")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what, file=sys.stderr)


def sets(tmp):
    return ["--set", "nlu.bert.model=" + model, "--set", "dialog.model=" + model,
            "--set", "dialog.store=" + os.path.join(tmp, "pizza.db")]


with tempfile.TemporaryDirectory() as tmp:
    lines = [b"i want a large pizza with mushrooms",
             b'{"user": "bob", "text": "a small pizza with olives"}',
             b'{"user": "bob", "text": ',            # broken JSON: stderr, no turn
             b"2 pizzas",
             b"\xff\xfe not utf-8",                  # fails in the NLU: an error line
             b'{"user": 7, "text": "hello"}',
             b"",                                    # blank: skipped
             b'{"user": "bob", "text": "cancel my order"}']
    p = subprocess.run([parley, "run", graph] + sets(tmp), input=b"\n".join(lines) + b"\n",
                       capture_output=True, timeout=120)
    check(p.returncode == 0, "run exit code %d: %s" % (p.returncode, p.stderr.decode()))
    out = [json.loads(l) for l in p.stdout.decode().splitlines()]
    check(len(out) == 6, "6 turns in, %d lines out: %s" % (len(out), out))
    by_user = {}
    for o in out:
        by_user.setdefault(o["user"], []).append(o)
    d = by_user.get("default", [])
    check(len(d) == 3 and d[0]["intent"] == "order_pizza" and d[0]["slots"].get("size") == "large"
          and d[1]["slots"].get("count") == "2" and "error" in d[2], "default user: %s" % d)
    check(len(d) == 3 and "UTF-8" in d[2].get("error", ""), "utf-8 error named: %s" % d)
    b = by_user.get("bob", [])
    check([o.get("intent") for o in b] == ["order_pizza", "cancel"] and b[0]["turn"] == 1
          and b[1]["turn"] == 2, "bob in order: %s" % b)
    check("7" in by_user and by_user["7"][0]["intent"] == "greet", "numeric user id: %s" % out)
    check(all(set(o) == {"user", "turn", "reply", "intent", "confidence", "slots"}
              for o in out if "error" not in o), "reply line keys: %s" % out)
    check(b"input line 3" in p.stderr, "broken JSON line reported: %s" % p.stderr.decode())

    # SIGINT with stdin still open: the turns already in are answered, then a clean exit.
    p = subprocess.Popen([parley, "run", graph] + sets(tmp), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(b'{"user": "carol", "text": "hello"}\n')
    p.stdin.flush()
    first = p.stdout.readline()
    p.send_signal(signal.SIGINT)
    try:
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "hung"
    p.stdin.close()
    p.stdout.close()
    p.stderr.close()
    check(rc == 0, "SIGINT exit: %s" % rc)
    check(json.loads(first or b"{}").get("user") == "carol", "answered before SIGINT: %s" % first)

    p = subprocess.run([parley, "chat", graph, "--user", "dave", "--verbose"] + sets(tmp),
                       input=b"i want a large pizza with ham\n", capture_output=True, timeout=120)
    text = p.stdout.decode()
    check(p.returncode == 0 and "parley> How many large pizzas with ham" in text
          and "intent: order_pizza" in text and "size=large" in text, "chat: %s" % text)

p = subprocess.run([parley, "inspect"], capture_output=True, timeout=30)
kinds = p.stdout.decode()
check(p.returncode == 0 and all(k in kinds for k in ["text.stdin", "text.stdout", "api",
                                                     "asr.stub", "nlu.bert", "dialog.frames"]),
      "inspect: %s" % kinds)
p = subprocess.run([parley, "inspect", "nlu.bert"], capture_output=True, timeout=30)
check(p.returncode == 0 and "max_queue_delay_us" in p.stdout.decode(), "inspect nlu.bert")
p = subprocess.run([parley, "inspect", "nope"], capture_output=True, timeout=30)
check(p.returncode == 1 and b"no node kind 'nope'" in p.stderr, "inspect unknown kind")
p = subprocess.run([parley, "run", os.path.join(root, "tests", "pipeline", "graphs",
                                                "unknown_kind.yaml")], capture_output=True)
check(p.returncode == 1 and b"unknown_kind.yaml:7:11: unknown node kind" in p.stderr,
      "run names the graph error: %s" % p.stderr.decode())

print("cli run/chat/inspect: %d failures" % failures)
sys.exit(1 if failures else 0)
