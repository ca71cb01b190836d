#!/usr/bin/env python3
"""cluster_bench.py — turns/s and latency of the pizza bot over websockets, on SQLite, on PostgreSQL, and as two replicas behind HAProxy; take-over time after a kill -9.

Every configuration serves samples/pizza/server.yaml and is driven by
samples/cluster/client.py (USERS simulated users, TURNS turns each, closed loop: a user's
next turn leaves when the last is answered), on this machine:
  sqlite    one `parley run`, store a SQLite file
  postgres  one `parley run`, store a PostgreSQL database (tests/pg_server.py's server)
  cluster   samples/cluster/cluster.sh: two replicas, PostgreSQL, HAProxy (no Prometheus)
  takeover  the cluster again, TAKEOVER_TURNS turns per user pausing THINK ms between
            turns; replica 1 is killed
            with SIGKILL 3 s in; the time from each moved user's dropped connection to its
            next answer
For each it prints the client's JSON summary plus the store's share of a turn, read from
the replicas' /metrics: parley_stage_duration_seconds{stage="store"} (the store's lock,
read and write) over parley_turn_duration_seconds, sums over counts.

Usage: bench/cluster_bench.py PARLEY MODEL_DIR [--users 1000] [--turns 5] [--think 200]
                              [--takeover-turns 20]
                              [--only sqlite,postgres,cluster,takeover]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests"))
import pg_server  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("parley")
ap.add_argument("model")
ap.add_argument("--users", type=int, default=1000)
ap.add_argument("--turns", type=int, default=5)
ap.add_argument("--think", type=int, default=200)
ap.add_argument("--takeover-turns", type=int, default=20)
ap.add_argument("--only", default="sqlite,postgres,cluster,takeover")
args = ap.parse_args()
client_py = os.path.join(root, "samples", "cluster", "client.py")
graph = os.path.join(root, "samples", "pizza", "server.yaml")


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except OSError:
        return None, ""


def wait_up(url):
    for _ in range(600):
        if get(url)[0] == 200:
            return
        time.sleep(0.1)
    raise RuntimeError("%s did not come up" % url)


def sums(text, name, label=""):
    """(sum, count) of a histogram in a metrics text."""
    def one(suffix):
        m = re.search(r"^%s_%s(?:\{%s\})? ([0-9.e+-]+)$" % (name, suffix, re.escape(label)),
                      text, re.M)
        return float(m.group(1)) if m else 0.0
    return one("sum"), one("count")


def store_share(ports):
    st = tu = n = 0.0
    for p in ports:
        text = get("http://127.0.0.1:%d/metrics" % p)[1]
        s, _ = sums(text, "parley_stage_duration_seconds", 'stage="store"')
        t, c = sums(text, "parley_turn_duration_seconds")
        st, tu, n = st + s, tu + t, n + c
    return {"store_ms_mean": round(st / n * 1000, 3) if n else None,
            "turn_ms_mean": round(tu / n * 1000, 3) if n else None,
            "store_share": round(st / tu, 4) if tu else None}


def client(url, think=0, kill_pid=None):
    turns = args.takeover_turns if kill_pid else args.turns
    p = subprocess.Popen([sys.executable, client_py, url, "--users", str(args.users), "--turns",
                          str(turns), "--think-ms", str(think)], stdout=subprocess.PIPE,
                         text=True)
    if kill_pid:
        time.sleep(3)
        os.kill(kill_pid, 9)
    out, _ = p.communicate()
    return json.loads(out.strip().splitlines()[-1])


def one_process(name, store, env=None):
    port = 28765
    proc = subprocess.Popen([args.parley, "run", graph, "--set", "ws.server.port=%d" % port,
                             "--set", "ws.server.max_connections=5000",
                             "--set", "nlu.bert.model=" + args.model, "--set",
                             "dialog.model=" + args.model, "--set", "dialog.store=" + store],
                            stderr=subprocess.DEVNULL, env=env)
    try:
        wait_up("http://127.0.0.1:%d/healthz" % port)
        r = client("ws://127.0.0.1:%d/" % port)
        r.update(store_share([port]))
    finally:
        proc.terminate()
        proc.wait()
    print(json.dumps(dict(config=name, **r)), flush=True)


def cluster(name, think=0, kill=False):
    work = tempfile.mkdtemp(prefix="parley-bench-")
    os.rmdir(work)
    env = dict(os.environ, PARLEY=args.parley, MODEL=args.model, PORT="28080",
               REPLICA_PORTS="28771 28772", PROM_PORT="0")
    subprocess.run([os.path.join(root, "samples", "cluster", "cluster.sh"), "start", work],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    try:
        pid = None
        if kill:
            with open(os.path.join(work, "replica1.pid")) as f:
                pid = int(f.read())
        r = client("ws://127.0.0.1:28080/", think, pid)
        r.update(store_share([28772] if kill else [28771, 28772]))
    finally:
        subprocess.run([os.path.join(root, "samples", "cluster", "cluster.sh"), "stop", work],
                       env=env)
    print(json.dumps(dict(config=name, **r)), flush=True)


only = args.only.split(",")
if "sqlite" in only:
    with tempfile.TemporaryDirectory() as tmp:
        one_process("sqlite", os.path.join(tmp, "pizza.db"))
if "postgres" in only:
    srv = pg_server.PgServer()
    try:
        srv.psql("CREATE DATABASE bench")
        one_process("postgres", srv.uri("bench"))
    finally:
        srv.stop()
if "cluster" in only:
    cluster("cluster")
if "takeover" in only:
    cluster("takeover", think=args.think, kill=True)
