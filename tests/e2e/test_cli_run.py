"""test_cli_run.py — `parley run`, `parley chat` and `parley inspect` on the pizza sample.

run: every input line that is not blank gets exactly one output line — a reply, or an error
object {"user","turn","line","error"} for a line the pipeline could not take (broken JSON,
invalid UTF-8, a bad user id); users keep their own order; every output line is strict JSON
(UTF-8, no NaN). The same through the echo graph (tests/services/lines/echo.yaml, no model)
with many malformed lines, paired with their input by "line" and by count. A param given
twice with --set is an error naming both values.
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

from checks import check, done

parley, model, root = sys.argv[1:4]
graph = os.path.join(root, "samples", "pizza", "pipeline.yaml")


def strict_json(raw):
    """Each output line as an object: UTF-8 and JSON both strict (no NaN or Infinity)."""
    def no_constant(name):
        raise ValueError("not JSON: " + name)
    out = []
    for line in raw.split(b"\n")[:-1]:
        try:
            out.append(json.loads(line.decode("utf-8"), parse_constant=no_constant))
        except ValueError as e:
            check(False, "output line %r: %s" % (line[:80], e))
    check(raw == b"" or raw.endswith(b"\n"), "output ends with a newline")
    return out


def sets(tmp):
    return ["--set", "nlu.bert.model=" + model, "--set", "dialog.model=" + model,
            "--set", "dialog.store=" + os.path.join(tmp, "pizza.db")]


with tempfile.TemporaryDirectory() as tmp:
    lines = [b"i want a large pizza with mushrooms",
             b'{"user": "bob", "text": "a small pizza with olives"}',
             b'{"user": "bob", "text": ',            # broken JSON: an error line, user null
             b"2 pizzas",
             b"\xff\xfe not utf-8",                  # refused at the input: an error line
             b'{"user": 7, "text": "hello"}',
             b"",                                    # blank: skipped
             b'{"user": "bob", "text": "cancel my order"}']
    p = subprocess.run([parley, "run", graph] + sets(tmp), input=b"\n".join(lines) + b"\n",
                       capture_output=True, timeout=120)
    check(p.returncode == 0, "run exit code %d: %s" % (p.returncode, p.stderr.decode()))
    out = strict_json(p.stdout)
    check(len(out) == 7, "7 lines that are not blank in, %d lines out: %s" % (len(out), out))
    by_user = {}
    for o in out:
        by_user.setdefault(o["user"], []).append(o)
    d = by_user.get("default", [])
    check(len(d) == 3 and d[0]["intent"] == "order_pizza" and d[0]["slots"].get("size") == "large"
          and d[1]["slots"].get("count") == "2" and "error" in d[2], "default user: %s" % d)
    check(len(d) == 3 and "text: invalid UTF-8 at byte 0" in d[2].get("error", "")
          and d[2].get("line") == 5, "utf-8 error named: %s" % d)
    broken = by_user.get(None, [])
    check(len(broken) == 1 and broken[0].get("line") == 3
          and "input line 3: JSON:1:24: not valid JSON" in broken[0].get("error", ""),
          "broken JSON answered: %s" % broken)
    b = by_user.get("bob", [])
    check([o.get("intent") for o in b] == ["order_pizza", "cancel"] and b[0]["turn"] == 1
          and b[1]["turn"] == 2, "bob in order: %s" % b)
    check("7" in by_user and by_user["7"][0]["intent"] == "greet", "numeric user id: %s" % out)
    check(all(set(o) == {"user", "turn", "reply", "intent", "confidence", "slots"}
              for o in out if "error" not in o), "reply line keys: %s" % out)
    check(b"input line 3" in p.stderr, "broken JSON line reported: %s" % p.stderr.decode())
    check(all(set(o) == {"user", "turn", "line", "error"} for o in out if "error" in o),
          "error line keys: %s" % out)

    # A param set twice: a clear error naming both values, before anything runs.
    p = subprocess.run([parley, "run", graph] + sets(tmp) +
                       ["--set", "nlu.bert.device=cpu", "--set", "nlu.device=auto"],
                       input=b"hello\n", capture_output=True, timeout=120)
    check(p.returncode == 1 and p.stdout == b"" and
          b"--set nlu.bert.device=cpu and --set nlu.device=auto both set param 'device'"
          in p.stderr, "--set twice: %d %s" % (p.returncode, p.stderr.decode()))

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

    # Flags repeated many times are options, not a fixed array's worth: the same chat works
    # with 40 --verbose, and a second --user is refused as such.
    p = subprocess.run([parley, "chat", graph, "--user", "dave"] + ["--verbose"] * 40 + sets(tmp),
                       input=b"i want a large pizza with ham\n", capture_output=True, timeout=120)
    check(p.returncode == 0 and "size=large" in p.stdout.decode(),
          "chat with 40 --verbose: %d %s" % (p.returncode, p.stderr.decode()[-300:]))
    p = subprocess.run([parley, "chat", graph, "--user", "a", "--user", "b"], input=b"",
                       capture_output=True, timeout=60)
    check(p.returncode == 2 and b"--user is given twice" in p.stderr,
          "chat --user twice: %d %s" % (p.returncode, p.stderr.decode()[-300:]))

# Many malformed lines through the echo graph (no model): one strict JSON line per line that
# is not blank, each naming its input line when it is an error, in input order (one worker).
echo = os.path.join(root, "tests", "services", "lines", "echo.yaml")
bad = [b'{"user": "bob", "text": "one"}',
       b'{"user": "bob", "text": ',
       b'{"user": "a\\u0000b", "text": "cancel"}',
       b'{"user": "\xff\xfe", "text": "invalid UTF-8 id"}',
       b'{"user": "ok", "text": "\xc3"}',
       b'{"user": true, "text": "x"}',
       b'{"user": "bob", "user": "eve", "text": "x"}',
       b'{}',
       b'   ',
       b'{"user": "bob", "text": "\\ud800"}',
       b'{"user": "' + b"[" * 5000 + b'"}',
       b'{"a":' * 2000,
       b"plain \x00 NUL",
       b"x" * ((1 << 20) + 1),
       b'{"user": "bob", "text": "two"}']
p = subprocess.run([parley, "run", echo], input=b"\n".join(bad) + b"\n", capture_output=True,
                   timeout=120)
check(p.returncode == 0, "echo run: %d %s" % (p.returncode, p.stderr.decode()[-500:]))
out = strict_json(p.stdout)
want_lines = [i + 1 for i, l in enumerate(bad) if l.strip()]
got_lines = [o.get("line") for o in out]
check(len(out) == len(want_lines), "%d lines that are not blank, %d answers" % (len(want_lines),
                                                                              len(out)))
check([o.get("user") for o in out][:1] == ["bob"] and out[-1].get("user") == "bob"
      and "error" not in out[0] and "error" not in out[-1], "good lines answered: %s" % out)
check(got_lines[1:-1] == want_lines[1:-1] and all("error" in o for o in out[1:-1]),
      "every bad line answered in order with its line: %s" % got_lines)
check("longer than 1048576 bytes" in out[-2].get("error", ""), "long line: %s" % out[-2])

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

sys.exit(done("cli run/chat/inspect"))
