"""test_cli_store.py — `parley store`: a bot's users moved SQLite -> PostgreSQL -> SQLite, migrate, purge and the errors.

Conversations of the pizza sample (20 users x 6 turns through `parley run`) fill a SQLite
store; `parley store export` writes it, `import` puts it into a PostgreSQL database, whose
export is imported into a new SQLite file: the three exports must be byte for byte the same,
with every user and turn. `migrate` on an empty database creates the schema at the current
version; `purge --older-than 30` removes exactly the users last active 100 days ago; a
wrong password fails with exit 1 and a message that does not hold it; a bad import line
fails naming its line number. Skips (77) without PostgreSQL.

Usage: test_cli_store.py PARLEY MODEL_DIR SOURCE_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(0, os.path.join(here, "..", "fault"))
import pizza_proc as pp  # noqa: E402
import pg_server  # noqa: E402
import checks  # noqa: E402
from checks import check  # noqa: E402

parley, model, root = sys.argv[1:4]
USERS, TURNS = 20, 6


def store_cmd(*args, stdin=None):
    return subprocess.run([parley, "store"] + list(args), input=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def fill_sqlite(path, tmp):
    p = pp.Parley(parley, os.path.join(root, "samples", "pizza", "pipeline.yaml"),
                  pp.pizza_sets(model, path), os.path.join(tmp, "run.txt"))
    for k in range(TURNS):
        for u in range(USERS):
            p.send("c%02d" % u, pp.utterance(u, k))
    p._close_stdin()
    n = 0
    while p.reply() is not None:
        n += 1
    check(p.finish() == 0 and n == USERS * TURNS, "filling the store: %d replies" % n)


def main(srv, tmp):
    a_db, c_db = os.path.join(tmp, "a.db"), os.path.join(tmp, "c.db")
    fill_sqlite(a_db, tmp)
    srv.psql("CREATE DATABASE moved")
    pg = srv.uri("moved")

    a = store_cmd("export", a_db)
    check(a.returncode == 0, "export a: %s" % a.stderr)
    lines = a.stdout.splitlines()
    check(len(lines) == USERS, "%d users exported" % len(lines))
    check(all(len(json.loads(line)["history"]) == TURNS for line in lines),
          "a user's history is not all there")
    r = store_cmd("import", pg, stdin=a.stdout)
    check(r.returncode == 0 and "imported %d users" % USERS in r.stderr, "import pg: %s" % r.stderr)
    b = store_cmd("export", pg)
    check(b.returncode == 0, "export pg: %s" % b.stderr)
    check(b.stdout == a.stdout, "SQLite -> PostgreSQL changed the export")
    r = store_cmd("import", c_db, "-i", "/dev/stdin", stdin=b.stdout)
    check(r.returncode == 0, "import c: %s" % r.stderr)
    c = store_cmd("export", c_db)
    check(c.stdout == a.stdout, "SQLite -> PostgreSQL -> SQLite changed the export")

    srv.psql("CREATE DATABASE fresh")
    r = store_cmd("migrate", srv.uri("fresh"))
    check(r.returncode == 0, "migrate: %s" % r.stderr)
    check(srv.psql("SELECT max(version) FROM parley_schema", "fresh").strip() == "2",
          "migrate did not create the schema")

    # Half the users last active 100 days ago: purge --older-than 30 takes exactly them.
    old_ms = int(time.time() * 1000) - 100 * 86400 * 1000
    aged = []
    for i, line in enumerate(lines):
        o = json.loads(line)
        if i % 2:
            o["last_active_ms"] = old_ms
        aged.append(json.dumps(o))
    check(store_cmd("import", pg, stdin="\n".join(aged) + "\n").returncode == 0, "aged import")
    r = store_cmd("purge", pg, "--older-than", "30")
    check(r.returncode == 0 and "purged %d users" % (USERS // 2) in r.stderr,
          "purge: %s" % r.stderr)
    left = srv.psql("SELECT count(*), (SELECT count(*) FROM turns), (SELECT count(*) FROM slots "
                    "WHERE user_id NOT IN (SELECT user_id FROM users)) FROM users", "moved")
    check(left.strip() == "%d|%d|0" % (USERS // 2, USERS // 2 * TURNS),
          "after the purge: users|turns|orphan slots = %s" % left.strip())

    bad = srv.uri("moved").replace(srv.password, "not-the-password")
    r = store_cmd("export", bad)
    check(r.returncode == 1 and "password authentication failed" in r.stderr and
          "not-the-password" not in r.stderr, "wrong password: %s" % r.stderr)
    r = store_cmd("import", pg, stdin=lines[0] + "\n{\"user\": 3}\n")
    check(r.returncode == 1 and "line 2" in r.stderr, "bad import line: %s" % r.stderr)
    r = store_cmd("purge", pg)
    check(r.returncode == 2 and "--older-than" in r.stderr, "purge without days: %s" % r.stderr)


def with_tmp(srv):
    with tempfile.TemporaryDirectory() as tmpdir:
        main(srv, tmpdir)
    return checks.done("cli_store")


sys.exit(pg_server.with_server(with_tmp))
