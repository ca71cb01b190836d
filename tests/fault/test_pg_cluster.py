"""test_pg_cluster.py — `parley run` processes sharing one PostgreSQL store, and that server stopped mid-run.

Replicas: two processes on the pizza sample with the same postgresql:// store; 50 users x 20
turns, each turn sent to one of the two at random (a user's next turn leaves once the last
is answered, as a client does), so every user's conversation hops between processes. The
store must hold exactly 1,000 turns, each user's numbered 1..20 with the texts sent, in
order, its counter at 20, and every reply's turn number must be the next one of that user.

Restart: one process (its graph file names the store's URI); the server is stopped (`pg_ctl stop -m fast`) while turns are in
flight and started again. Turns answered while it was away are errors naming the server;
every turn answered as a reply is in the store with that reply; each user's stored turns
are 1..n with no gap (nothing half-written), and after the restart every user's next turn
succeeds on the same process.

Usage: test_pg_cluster.py PARLEY MODEL_DIR SOURCE_ROOT   (skips, 77, without PostgreSQL)
"""
import os
import random
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pizza_proc as pp  # noqa: E402
import pg_server  # noqa: E402
import checks  # noqa: E402
from checks import check  # noqa: E402

USERS, TURNS = 50, 20
parley, model, root = sys.argv[1:4]
graph = os.path.join(root, "samples", "pizza", "pipeline.yaml")
rng = random.Random(17)
GRAPH = """name: pizza-restart
nodes:
  - { name: input, kind: text.stdin }
  - name: nlu
    kind: nlu.bert
    inputs: { text: input.text }
    params: { model: "%s" }
  - name: dialog
    kind: dialog.frames
    inputs: { nlu: nlu.result }
    params: { domain: "%s", store: "%s", model: "%s", busy_timeout_ms: 2000 }
  - { name: output, kind: text.stdout, inputs: { reply: dialog.reply } }
"""


def stored(srv, db):
    """{user: [(turn_id, text, reply)] in turn order} and {user: users.turns}."""
    turns, counters = {}, {}
    out = srv.psql("SELECT user_id, turn_id, text, reply FROM turns ORDER BY user_id, turn_id",
                   db)
    for line in out.splitlines():
        u, t, text, reply = line.split("|", 3)
        turns.setdefault(u, []).append((int(t), text, reply))
    for line in srv.psql("SELECT user_id, turns FROM users", db).splitlines():
        u, n = line.split("|")
        counters[u] = int(n)
    return turns, counters


def next_reply(procs, deadline):
    """(index, reply line) of whichever process answers first."""
    while time.monotonic() < deadline:
        for i, p in enumerate(procs):
            if p.pending(0.005):
                return i, p.reply()
    raise TimeoutError("no reply")


def replicas(srv, tmp):
    srv.psql("CREATE DATABASE replicas")
    store = srv.uri("replicas")
    procs = [pp.Parley(parley, graph, pp.pizza_sets(model, store),
                       os.path.join(tmp, "replica%d.txt" % i)) for i in range(2)]
    users = ["r%02d" % i for i in range(USERS)]
    sent = {u: 0 for u in users}  # turns sent per user
    served = [0, 0]
    hops = {u: set() for u in users}

    def send(u):
        i = rng.randrange(2)
        hops[u].add(i)
        procs[i].send(u, pp.utterance(users.index(u), sent[u]))
        sent[u] += 1

    for u in users:
        send(u)
    answered, start = 0, time.monotonic()
    while answered < USERS * TURNS:
        i, r = next_reply(procs, start + 600)
        if r is None:
            check(False, "replica %d ended early" % i)
            break
        answered += 1
        served[i] += 1
        u = r.get("user")
        if not check("error" not in r, "replica %d: a turn failed: %s" % (i, r)):
            continue
        check(r.get("turn") == sent[u], "%s answered turn %s, expected %d" % (u, r.get("turn"),
                                                                             sent[u]))
        if sent[u] < TURNS:
            send(u)
    secs = time.monotonic() - start
    for p in procs:
        check(p.finish() == 0, "a replica did not exit cleanly")
    turns, counters = stored(srv, "replicas")
    total = sum(len(t) for t in turns.values())
    check(total == USERS * TURNS, "%d turns stored, expected %d" % (total, USERS * TURNS))
    for no, u in enumerate(users):
        mine = turns.get(u, [])
        check([t for t, _, _ in mine] == list(range(1, TURNS + 1)),
              "%s has turns %s" % (u, [t for t, _, _ in mine]))
        check(all(text == pp.utterance(no, t - 1) for t, text, _ in mine),
              "%s: a stored text is not the one sent for its turn" % u)
        check(counters.get(u) == TURNS, "%s: users.turns is %s" % (u, counters.get(u)))
    both = sum(1 for u in users if len(hops[u]) == 2)
    check(both == USERS, "only %d users talked to both replicas" % both)
    print("replicas: %d turns in %.1f s, served %d + %d, %d users on both" % (
        answered, secs, served[0], served[1], both))


def restart(srv, tmp):
    srv.psql("CREATE DATABASE restart")
    store = srv.uri("restart")
    # The URI is written in the graph file itself (the loader must not take it for a path
    # relative to the file's folder).
    own_graph = os.path.join(tmp, "restart.yaml")
    with open(own_graph, "w") as f:
        f.write(GRAPH % (model, os.path.join(root, "samples", "pizza", "domain.yaml"), store,
                         model))
    p = pp.Parley(parley, own_graph, [], os.path.join(tmp, "restart.txt"))
    users = ["s%02d" % i for i in range(20)]
    sent = {u: 0 for u in users}
    ok, errors = {}, []

    def round_of_turns(stop_after=None):
        """One turn per user, answers read; stops the server after stop_after answers."""
        for u in users:
            p.send(u, pp.utterance(users.index(u), sent[u]))
            sent[u] += 1
        for n in range(len(users)):
            r = p.reply(timeout=120)
            if "error" in r:
                errors.append(r)
            else:
                ok[(r["user"], r["turn"])] = r["reply"]
            if stop_after is not None and n + 1 == stop_after:
                srv.stop_server("fast")

    round_of_turns()
    check(len(ok) == len(users) and not errors, "before the stop: %d ok, %d errors" % (
        len(ok), len(errors)))
    round_of_turns(stop_after=5)  # in flight when the server goes
    round_of_turns()  # the server is away
    n_err = len(errors)
    check(n_err >= len(users), "only %d turns failed while the server was away" % n_err)
    check(all("postgresql server" in e["error"] for e in errors),
          "an error does not name the server: %s" % [e["error"] for e in errors][:2])
    srv.start()
    before = len(ok)
    round_of_turns()
    check(len(ok) - before == len(users), "after the restart only %d of %d turns worked" % (
        len(ok) - before, len(users)))
    check(p.finish() == 0, "the process did not exit cleanly")
    turns, counters = stored(srv, "restart")
    for u in users:
        mine = turns.get(u, [])
        check([t for t, _, _ in mine] == list(range(1, len(mine) + 1)),
              "%s: stored turns %s have a gap" % (u, [t for t, _, _ in mine]))
        check(counters.get(u) == len(mine), "%s: counter %s, %d rows" % (u, counters.get(u),
                                                                        len(mine)))
    lost = [k for k, reply in ok.items()
            if not any(t == k[1] and rep == reply for t, _, rep in turns.get(k[0], []))]
    check(not lost, "answered turns missing from the store: %s" % lost[:3])
    print("restart: %d turns answered, %d failed while the server was stopped" % (len(ok), n_err))


def both(srv):
    with tempfile.TemporaryDirectory() as tmpdir:
        replicas(srv, tmpdir)
        restart(srv, tmpdir)
    return checks.done("pg_cluster")


sys.exit(pg_server.with_server(both))
