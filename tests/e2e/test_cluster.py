"""test_cluster.py — samples/cluster end to end: kill -9 of a replica behind HAProxy.

cluster.sh starts PostgreSQL, two replicas of the pizza bot (the model tests/e2e trains),
HAProxy and Prometheus; samples/cluster/client.py runs 40 users x 40 turns through HAProxy
while one replica is killed with SIGKILL. Then:
  - no turn failed, and the killed replica's users reconnected (client reconnects > 0);
  - each user's answered turn numbers rise strictly (the conversation went on from the
    store, on the other replica: no restart at turn 1, no turn answered twice);
  - every answered turn is in the store with its reply; each user's stored turns are
    1..n with no gap and users.turns is n; turns stored but never answered (the killed
    replica's last, sent again and stored as the next: a user's first too) are at most
    one per user taken over;
  - HAProxy's /healthz answers 200 with one replica left, and Prometheus scraped both
    replicas' /metrics before the kill (its targets API lists both).
Prints the client's summary (take-over times). Skips (77) without PostgreSQL, HAProxy or
python3-websockets.

Usage: test_cluster.py PARLEY MODEL_DIR SOURCE_ROOT
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
import pg_server  # noqa: E402
import checks  # noqa: E402
from checks import check  # noqa: E402

parley, model, root = sys.argv[1:4]
sample = os.path.join(root, "samples", "cluster")
try:
    import websockets  # noqa: F401
    pg_server.bin_dir()
except (ImportError, pg_server.Unavailable) as e:
    print("skip:", e)
    sys.exit(77)
if not shutil.which("haproxy"):
    print("skip: no haproxy")
    sys.exit(77)

base = 20000 + os.getpid() % 20000  # ports of this run
env = dict(os.environ, PARLEY=parley, MODEL=model, PORT=str(base),
           REPLICA_PORTS="%d %d" % (base + 1, base + 2),
           PROM_PORT=str(base + 3) if shutil.which("prometheus") else "0")
work = tempfile.mkdtemp(prefix="parley-cluster-")
os.rmdir(work)  # cluster.sh makes it
r = subprocess.run([os.path.join(sample, "cluster.sh"), "start", work], env=env,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
if not check(r.returncode == 0, "cluster.sh start: %s" % r.stdout):
    sys.exit(checks.done("cluster"))


def http(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except OSError as e:
        return None, str(e)


try:
    if env["PROM_PORT"] != "0":
        # Prometheus scrapes every 5 s: wait for both targets to be up once (a loaded
        # machine may take a while to start it and to run the first scrapes).
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status, body = http("http://127.0.0.1:%s/api/v1/targets" % env["PROM_PORT"])
            if status == 200 and body.count('"health":"up"') == 2:
                break
            time.sleep(0.2)
        check(body.count('"health":"up"') == 2, "Prometheus did not scrape both replicas")
    record = os.path.join(work, "answers.jsonl")
    client = subprocess.Popen(
        [sys.executable, os.path.join(sample, "client.py"), "ws://127.0.0.1:%d/" % base,
         "--users", "40", "--turns", "40", "--think-ms", "50", "--record", record],
        stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    with open(os.path.join(work, "replica1.pid")) as f:
        os.kill(int(f.read()), 9)
    out, _ = client.communicate(timeout=300)
    summary = json.loads(out.strip().splitlines()[-1])
    print("client:", json.dumps(summary))
    check(client.returncode == 0 and summary["errors"] == 0, "client: %s" % summary)
    check(summary["reconnects"] > 0, "no user was on the killed replica")
    check(summary["turns"] == 40 * 40, "%d turns answered" % summary["turns"])
    status, _ = http("http://127.0.0.1:%d/healthz" % base)
    check(status == 200, "HAProxy /healthz with one replica: %s" % status)

    answers = {}
    with open(record) as f:
        for line in f:
            u, turn, reply, _ = json.loads(line)
            answers.setdefault(u, []).append((turn, reply))
    for u, a in answers.items():
        turns = [t for t, _ in a]
        check(turns == sorted(set(turns)), "%s: answered turns %s" % (u, turns))
    with open(os.path.join(work, "pg", "password")) as f:
        pw = f.read().strip()
    with open(os.path.join(work, "store_uri")) as f:
        uri = f.read().strip().replace("parley@", "parley:%s@" % pw)
    psql = os.path.join(pg_server.bin_dir(), "psql")
    rows = subprocess.run([psql, "-XAtq", "-d", uri, "-c",
                           "SELECT user_id, turn_id, reply FROM turns ORDER BY user_id, turn_id"],
                          stdout=subprocess.PIPE, text=True).stdout.splitlines()
    stored = {}
    for line in rows:
        u, t, reply = line.split("|", 2)
        stored.setdefault(u, {})[int(t)] = reply
    counters = dict(line.split("|") for line in subprocess.run(
        [psql, "-XAtq", "-d", uri, "-c", "SELECT user_id, turns FROM users"],
        stdout=subprocess.PIPE, text=True).stdout.splitlines())
    for u, a in answers.items():
        mine = stored.get(u, {})
        check(sorted(mine) == list(range(1, len(mine) + 1)) and int(counters.get(u, -1)) == len(mine),
              "%s: stored turns %s, counter %s" % (u, sorted(mine), counters.get(u)))
        lost = [t for t, reply in a if mine.get(t) != reply]
        check(not lost, "%s: answered turns %s are not in the store" % (u, lost))
    # A turn the killed replica stored but never answered (its user's first, too) is sent
    # again and stored as the next: at most one such turn per user taken over.
    unanswered = sum(len(stored.get(u, {})) - len(a) for u, a in answers.items())
    check(unanswered <= summary["users_taken_over"],
          "%d turns stored but not answered, %d users taken over" %
          (unanswered, summary["users_taken_over"]))
finally:
    subprocess.run([os.path.join(sample, "cluster.sh"), "stop", work], env=env)
sys.exit(checks.done("cluster"))
