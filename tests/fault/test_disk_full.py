"""test_disk_full.py — the context store on a full disk: `parley run` on the pizza sample
with its store on a small tmpfs that the test fills up while the process runs.

It checks that:
  - while the disk is full, turns fail with an error line that names the store and says
    what happened (the disk is full, or an input/output error), one line per turn, and the
    process keeps reading and answering;
  - a failed turn leaves nothing behind: the next turn that succeeds has the number after
    the last one that did;
  - once space is freed, every turn succeeds again;
  - at the end the process exits 0, PRAGMA integrity_check is "ok", and the store holds
    exactly the turns that were answered, with their replies.
Mounting needs root: without it (or when the mount fails) the test skips (exit 77).

Usage: test_disk_full.py PARLEY MODEL_DIR SOURCE_ROOT
"""
import errno
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pizza_proc as pp  # noqa: E402
from checks import check, done, failures  # noqa: E402

parley, model, root = sys.argv[1:4]
pp.need_python_sqlite()
if os.geteuid() != 0:
    print("skip: mounting a tmpfs needs root")
    sys.exit(pp.SKIP)
graph = os.path.join(root, "samples", "pizza", "pipeline.yaml")
USERS = ["ann", "bob", "cid"]
# A long turn fills the store faster; it stays well under any input cap.
FILLER_TEXT = "i want a large pizza with ham and olives " * 4


def fill(path):
    """Writes path until the file system refuses a single byte more; returns its size."""
    size = 0
    with open(path, "wb", buffering=0) as f:
        for chunk in (1 << 16, 1 << 12, 1 << 9, 1):
            while True:
                try:
                    size += f.write(b"\0" * chunk)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    break
    return size


class Conversation:
    """Turns sent one at a time, each reply read before the next, with the expected turn."""

    def __init__(self, p):
        self.p = p
        self.next_turn = {u: 1 for u in USERS}
        self.answered = {}  # (user, turn) -> reply
        self.failed = 0
        self.errors = []

    def turn(self, user, text):
        """Sends one turn; returns True when it was answered, False when it failed."""
        check(self.p.send(user, text), "the process reads its input")
        r = self.p.reply(timeout=120)
        if not check(r is not None, "a line for every turn (got end of output)"):
            raise SystemExit(done("fault/disk_full"))
        check(r.get("user") == user, "the reply is %s's: %s" % (user, r))
        if "error" in r:
            self.failed += 1
            self.errors.append(r["error"])
            return False
        check(r.get("turn") == self.next_turn[user], "%s: turn %s answered, expected %d" % (
            user, r.get("turn"), self.next_turn[user]))
        self.next_turn[user] = r.get("turn", 0) + 1
        self.answered[(user, r.get("turn"))] = r.get("reply")
        return True


with tempfile.TemporaryDirectory() as tmp:
    mnt = os.path.join(tmp, "mnt")
    os.mkdir(mnt)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt]).returncode:
        print("skip: cannot mount a tmpfs here")
        sys.exit(pp.SKIP)
    p = None
    try:
        store = os.path.join(mnt, "pizza.db")
        p = pp.Parley(parley, graph, pp.pizza_sets(model, store), os.path.join(tmp, "stderr.txt"))
        c = Conversation(p)
        for k in range(10):
            for u in USERS:
                check(c.turn(u, pp.utterance(k, k)), "turn %d of %s before the disk fills" % (k, u))
        filler = os.path.join(mnt, "filler")
        fill(filler)
        # The store may still have room in pages it already holds: talk until a turn fails.
        sent_full = 0
        while c.failed == 0 and sent_full < 2000:
            c.turn(USERS[sent_full % 3], FILLER_TEXT)
            sent_full += 1
        check(c.failed > 0, "no turn failed in %d turns on a full disk" % sent_full)
        for _ in range(20):  # it keeps answering, whatever it can store
            c.turn(USERS[0], FILLER_TEXT)
        check(p.alive(), "the process lives on with a full disk")
        msg = c.errors[0] if c.errors else ""
        check(store in msg and ("full" in msg or "input/output" in msg),
              "the error names the store and the cause: %s" % msg)
        print("disk full: %d turns went through before the first failure, %d failed; "
              "first error: %s" % (sent_full - 1, c.failed, msg))
        os.unlink(filler)
        for k in range(10):
            for u in USERS:
                check(c.turn(u, pp.utterance(k, k)), "turn %d of %s after space is freed" % (k, u))
        rc = p.finish()
        p = None
        check(rc == 0, "exit code %s" % rc)
        result = pp.integrity(store)
        check(result == "ok", "integrity_check: %s" % result)
        turns, _ = pp.stored_turns(store)
        stored = {(u, t): reply for u, mine in turns.items() for t, (_, reply) in mine.items()}
        check(stored == c.answered, "the store holds exactly the answered turns (%d stored, "
              "%d answered)" % (len(stored), len(c.answered)))
    finally:
        if p is not None:
            p.kill()
        subprocess.run(["umount", mnt])
sys.exit(done("fault/disk_full"))
