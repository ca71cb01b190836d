"""test_kill9.py — durability under SIGKILL: many users talk to `parley run` on the pizza
sample while it is killed at seeded random points and restarted on the same store.

Each run sends every user's remaining turns (round-robin over users, as fast as the pipe
takes them) and reads replies; all but the last run end in SIGKILL, after a random number
of replies or, one time in four, a random moment in its first 0.1 s (start-up). After every kill and at
the end it checks that:
  - every turn whose reply line was read is in the store, with that reply;
  - PRAGMA integrity_check is "ok";
  - each user's stored turns are 1..n with the texts that user sent, in order, and the
    users table counts n (a turn is one transaction: never half a turn);
  - after a restart each user's next reply is turn n + 1 (the conversation resumes where
    the store says), and no turn fails.
The last run closes stdin and must exit 0 with every user at the full count. It prints the
counts (bench/RESULTS.md records one run). It checks durability, not speed.

Usage: test_kill9.py PARLEY MODEL_DIR SOURCE_ROOT [--users N] [--turns T] [--kills K]
                     [--seed S]
"""
import argparse
import os
import random
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pizza_proc as pp  # noqa: E402
import checks  # noqa: E402
from checks import check, failures  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("parley")
ap.add_argument("model")
ap.add_argument("root")
ap.add_argument("--users", type=int, default=200)
ap.add_argument("--turns", type=int, default=20, help="turns per user (the domain keeps 200)")
ap.add_argument("--kills", type=int, default=8)
ap.add_argument("--seed", type=int, default=1)
args = ap.parse_args()
pp.need_python_sqlite()
rng = random.Random(args.seed)
graph = os.path.join(args.root, "samples", "pizza", "pipeline.yaml")
users = ["u%03d" % i for i in range(args.users)]
answered = {}  # (user, turn) -> the reply read
stats = {"kills": 0, "answered": 0, "errors": 0, "runs": 0}


def check_store(store, after):
    """The store against what was answered and sent; returns {user: turns stored}."""
    turns, counters = pp.stored_turns(store)
    if os.path.exists(store):
        result = pp.integrity(store)
        check(result == "ok", "%s: integrity_check says %s" % (after, result))
    done = {}
    for no, u in enumerate(users):
        mine = turns.get(u, {})
        n = len(mine)
        done[u] = n
        check(sorted(mine) == list(range(1, n + 1)), "%s: %s has turns %s" % (after, u, sorted(mine)))
        check(counters.get(u, 0) == n, "%s: users.turns of %s is %s, %d rows" % (
            after, u, counters.get(u), n))
        for t, (text, _) in mine.items():
            check(text == pp.utterance(no, t - 1), "%s: %s turn %d holds '%s'" % (after, u, t, text))
    lost = [k for k, reply in answered.items() if turns.get(k[0], {}).get(k[1], (0, None))[1] != reply]
    check(not lost, "%s: %d answered turns not in the store, e.g. %s" % (after, len(lost), lost[:3]))
    return done


def one_run(store, tmp, kills_left):
    final = kills_left == 0
    done = check_store(store, "before run %d" % stats["runs"])
    todo = [(u, k) for k in range(args.turns) for no, u in enumerate(users) if k >= done[u]]
    user_no = {u: no for no, u in enumerate(users)}
    p = pp.Parley(args.parley, graph, pp.pizza_sets(args.model, store),
                  os.path.join(tmp, "stderr.txt"))

    def feed():
        for u, k in todo:
            if not p.send(u, pp.utterance(user_no[u], k)):
                return
        if final:
            p._close_stdin()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    # Killed after kill_after replies, or by the timer; at the latest once every turn sent
    # is answered (an idle process is killed too).
    kill_after, timer = len(todo), None
    if not final:
        if rng.random() < 0.25 or not todo:
            timer = threading.Timer(rng.uniform(0, 0.1), p.kill)
            timer.start()
        else:
            # About an even share of what is left per run, so the kills spread over the work.
            kill_after = rng.randint(1, max(1, 2 * len(todo) // (kills_left + 1)))
    expect = {u: done[u] + 1 for u in users}
    got = 0
    while True:
        r = p.reply(timeout=300)
        if r is None:
            break
        u = r.get("user")
        if "error" in r:
            stats["errors"] += 1
            check(False, "run %d: a turn failed: %s" % (stats["runs"], r))
            continue
        check(u in expect and r.get("turn") == expect[u],
              "run %d: %s answered turn %s, expected %s" % (stats["runs"], u, r.get("turn"),
                                                            expect.get(u)))
        if u in expect:
            expect[u] = r["turn"] + 1
        answered[(u, r["turn"])] = r["reply"]
        got += 1
        if got == kill_after and not final:
            p.kill()
    if timer:
        timer.join()
    writer.join(timeout=60)
    stats["answered"] += got
    stats.setdefault("per_run", []).append(got)
    stats["runs"] += 1
    if final:
        rc = p.finish()
        check(rc == 0, "the last run exited %s" % rc)
    else:
        stats["kills"] += 1
        p.finish()
    return got


with tempfile.TemporaryDirectory() as tmp:
    store = os.path.join(tmp, "pizza.db")
    start = time.monotonic()
    for run in range(args.kills + 1):
        one_run(store, tmp, args.kills - run)
    done = check_store(store, "at the end")
    short = [u for u in users if done[u] != args.turns]
    check(not short, "%d users short of %d turns, e.g. %s" % (len(short), args.turns, short[:3]))
    stored = sum(done.values())
    print("kill9: %d users, %d kills, %d turns answered, %d turns in the store (%d committed "
          "but unanswered when killed), %d failed, integrity %s, %.1f s" % (
              args.users, stats["kills"], stats["answered"], stored, stored - stats["answered"],
              stats["errors"], pp.integrity(store), time.monotonic() - start))
    print("kill9: replies read per run: %s" % stats["per_run"])
    if failures:
        with open(os.path.join(tmp, "stderr.txt"), "rb") as f:
            sys.stderr.write(f.read().decode(errors="replace")[-4000:])
sys.exit(checks.done("fault/kill9"))
