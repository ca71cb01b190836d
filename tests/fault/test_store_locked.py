"""test_store_locked.py — the context store locked by another process: this test holds an
exclusive SQLite transaction on the store of a running `parley run` (pizza sample).

It checks that:
  - with busy_timeout_ms 300, a turn that comes while the lock is held fails with an error
    line that names the store and says it is locked, and the process goes on;
  - after the lock is released the next turn succeeds with the number after the last turn
    that did (the failed turn stored nothing);
  - with busy_timeout_ms 60000 a turn waits for the lock: no reply while it is held (for a
    second), then its reply, a success, once it is released;
  - readers are not blocked: the store stays readable during all this; at the end
    PRAGMA integrity_check is "ok" and the store holds exactly the answered turns.

Usage: test_store_locked.py PARLEY MODEL_DIR SOURCE_ROOT
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pizza_proc as pp  # noqa: E402
from checks import check, done, failures  # noqa: E402

parley, model, root = sys.argv[1:4]
pp.need_python_sqlite()
graph = os.path.join(root, "samples", "pizza", "pipeline.yaml")
answered = {}  # (user, turn) -> reply
next_turn = {}


def answer(p, user, text, want_ok, timeout=120):
    """Sends a turn and reads its line; returns the line."""
    check(p.send(user, text), "the process reads its input")
    r = p.reply(timeout=timeout)
    if not check(r is not None and r.get("user") == user, "a line for %s's turn: %s" % (user, r)):
        raise SystemExit(done("fault/store_locked"))
    if "error" not in r:
        check(r.get("turn") == next_turn.get(user, 1), "%s: turn %s answered, expected %d" % (
            user, r.get("turn"), next_turn.get(user, 1)))
        next_turn[user] = r.get("turn", 0) + 1
        answered[(user, r.get("turn"))] = r.get("reply")
    check(("error" not in r) == want_ok, "%s: expected %s, got %s" % (
        user, "a reply" if want_ok else "an error", r))
    return r


def lock(store):
    """Another process's write lock: an open exclusive transaction."""
    con = pp.sqlite3.connect(store, isolation_level=None, timeout=30)
    con.execute("BEGIN EXCLUSIVE")
    return con


with tempfile.TemporaryDirectory() as tmp:
    store = os.path.join(tmp, "pizza.db")
    err = os.path.join(tmp, "stderr.txt")
    p = pp.Parley(parley, graph, pp.pizza_sets(model, store, ["dialog.busy_timeout_ms=300"]), err)
    try:
        for k in range(3):
            answer(p, "ann", pp.utterance(0, k), True)
        con = lock(store)
        r = answer(p, "ann", pp.utterance(0, 3), False)
        msg = r.get("error", "")
        check(store in msg and "locked" in msg, "the error names the store and the lock: %s" % msg)
        check(p.alive(), "the process lives on")
        # Readers are not writers: the store is still readable while the lock is held.
        reader = pp.sqlite3.connect(store, timeout=1)
        check(reader.execute("SELECT count(*) FROM turns").fetchone()[0] == 3, "readable")
        reader.close()
        con.execute("ROLLBACK")
        con.close()
        for k in range(3, 6):
            answer(p, "ann", pp.utterance(0, k), True)
        check(p.finish() == 0, "first process exit code")

        p = pp.Parley(parley, graph, pp.pizza_sets(model, store, ["dialog.busy_timeout_ms=60000"]),
                      err)
        answer(p, "bob", pp.utterance(1, 0), True)
        con = lock(store)
        check(p.send("bob", pp.utterance(1, 1)), "the process reads its input")
        check(not p.pending(1.0), "no reply while the lock is held")
        con.execute("ROLLBACK")
        con.close()
        r = p.reply(timeout=120)
        check(r is not None and "error" not in r and r.get("turn") == 2,
              "the waiting turn goes through once the lock is released: %s" % r)
        if r is not None and "error" not in r:
            answered[("bob", r.get("turn"))] = r.get("reply")
            next_turn["bob"] = r.get("turn") + 1
        answer(p, "ann", pp.utterance(0, 6), True)
        check(p.finish() == 0, "second process exit code")
        p = None
        result = pp.integrity(store)
        check(result == "ok", "integrity_check: %s" % result)
        turns, _ = pp.stored_turns(store)
        stored = {(u, t): reply for u, mine in turns.items() for t, (_, reply) in mine.items()}
        check(stored == answered, "the store holds exactly the answered turns: %d stored, %d "
              "answered" % (len(stored), len(answered)))
        print("store locked: %d turns answered, the locked one failed with: %s" % (
            len(answered), msg))
    finally:
        if p is not None:
            p.kill()
sys.exit(done("fault/store_locked"))
