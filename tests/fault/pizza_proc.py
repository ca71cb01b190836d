"""pizza_proc.py — what the fault tests share: `parley run` on the pizza sample as a child
process fed one JSON turn per line, its reply lines read with a deadline, and the store read
back with Python's sqlite3 module (schema: dialog/store_sqlite.c).

It drives and observes; each test decides what must hold. Not a general client: the turn
lines are docs/pipelines.md's `{"user": ID, "text": ...}` and the replies text.stdout's JSON
lines.
"""
import json
import os
import queue
import subprocess
import sys
import threading

try:
    import sqlite3
except ImportError:  # a Python built without it; Debian's /usr/bin/python3 has it
    sqlite3 = None

SKIP = 77


def need_python_sqlite():
    """Exits 77 (meson's skip) unless this Python can read the store."""
    if sqlite3 is None:
        print("skip: this Python has no sqlite3 module")
        sys.exit(SKIP)


# What pizza customers say, in an order that walks the form (order, size, count, address,
# confirmation) and its detours (menu, cancel, greetings).
UTTERANCES = [
    "hello",
    "i want a large pizza with mushrooms",
    "make it two pizzas",
    "deliver to 5 main street",
    "yes",
    "what do you have",
    "can i get a small pepperoni pizza",
    "add olives",
    "cancel my order",
    "thanks",
    "i would like a medium pizza with ham and pineapple",
    "3 pizzas please",
    "no",
    "bye",
]


def utterance(user_no, k):
    """Turn k (0-based) of user number user_no: every user walks the list from its own place."""
    return UTTERANCES[(user_no * 5 + k) % len(UTTERANCES)]


class Parley:
    """`parley run GRAPH --set ...` with piped stdin and stdout; stderr goes to a file."""

    def __init__(self, parley, graph, sets, stderr_path):
        self.stderr = open(stderr_path, "ab")
        self.proc = subprocess.Popen([parley, "run", graph] + sets, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr)
        self.lines = queue.Queue()
        self.peeked = []  # a line pending() took from the queue, not yet read
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        # A line cut short by a kill has no newline: it was never answered in full.
        for raw in self.proc.stdout:
            if raw.endswith(b"\n"):
                self.lines.put(json.loads(raw))
        self.lines.put(None)

    def send(self, user, text):
        """Writes one turn; False once the process no longer reads (killed or gone)."""
        try:
            self.proc.stdin.write(json.dumps({"user": user, "text": text}).encode() + b"\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, ValueError, OSError):
            return False

    def reply(self, timeout=120):
        """The next reply line as a dict; None at the end of output. Raises on a stall."""
        if self.pending(timeout):
            line, self.peeked = self.peeked, []
            return line[0]
        raise TimeoutError("no reply line within %s s" % timeout)

    def pending(self, timeout):
        """Whether a line (or the end) arrives within timeout seconds; it stays unread."""
        if not self.peeked:
            try:
                self.peeked = [self.lines.get(timeout=timeout)]
            except queue.Empty:
                return False
        return True

    def alive(self):
        return self.proc.poll() is None

    def kill(self):
        """SIGKILL; returns once the process is gone (its output stays readable)."""
        self.proc.kill()
        self.proc.wait()
        self._close_stdin()

    def finish(self, timeout=300):
        """Closes stdin and waits for the exit code."""
        self._close_stdin()
        rc = self.proc.wait(timeout=timeout)
        self.reader.join(timeout=timeout)
        self.stderr.close()
        return rc

    def _close_stdin(self):
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass


def pizza_sets(model, store, extra=()):
    """The --set list that points samples/pizza/pipeline.yaml at a model and a store."""
    sets = ["nlu.bert.model=" + model, "dialog.model=" + model, "dialog.store=" + store]
    sets += list(extra)
    return [a for s in sets for a in ("--set", s)]


def integrity(store):
    """PRAGMA integrity_check's rows joined: "ok" for a sound file."""
    con = sqlite3.connect(store, timeout=30)
    try:
        return "; ".join(r[0] for r in con.execute("PRAGMA integrity_check"))
    finally:
        con.close()


def stored_turns(store):
    """{user: {turn_id: (text, reply)}} and {user: users.turns} as the store holds them."""
    turns, counters = {}, {}
    if not os.path.exists(store):
        return turns, counters
    con = sqlite3.connect(store, timeout=30)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "turns" not in tables:
            # Killed while creating the store: an empty database, nothing stored yet (the
            # answered-turns check still holds the test to every reply it read).
            return turns, counters
        for user, turn, text, reply in con.execute(
                "SELECT user_id, turn_id, text, reply FROM turns"):
            turns.setdefault(user, {})[turn] = (text, reply)
        for user, n in con.execute("SELECT user_id, turns FROM users"):
            counters[user] = n
    finally:
        con.close()
    return turns, counters
