#!/usr/bin/env python3
"""ws_bench.py — typed turns over ws.server against the same graph over stdin (see RESULTS.md).

Starts `parley run samples/pizza/server.yaml` (port 0, the given model, a fresh store) and
measures with python3-websockets: the round trip of one client's turns in a closed loop
(p50/p99), the throughput of C clients in a closed loop (each sends its next turn when the
last is answered), and the server's resident size with C idle connections. Then the same
one-client loop through `parley run samples/pizza/pipeline.yaml` over a pipe (a line in, a
JSON line out) as the reference. Not a test: it asserts nothing and prints a table.

Usage: bench/ws_bench.py PARLEY MODEL_DIR [--turns N] [--clients C] [--rounds R]
"""
import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "services", "ws"))
from ws_server import Server, recv_json, websockets  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
TEXTS = ["i want a large pizza with mushrooms", "2 pizzas", "a small one with olives",
         "cancel my order", "hello"]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


async def one_client(srv, n):
    lat = []
    async with websockets.connect(srv.url()) as ws:
        await recv_json(ws)
        for i in range(n):
            t = time.perf_counter()
            await ws.send(json.dumps({"text": TEXTS[i % len(TEXTS)]}))
            await recv_json(ws)
            lat.append((time.perf_counter() - t) * 1000)
    return lat


async def many_clients(srv, c, rounds):
    conns = [await websockets.connect(srv.url(), open_timeout=120, ping_interval=None)
             for _ in range(c)]
    for ws in conns:
        await recv_json(ws, 120)
    idle_rss = srv.rss_kb()

    async def loop(ws):
        for i in range(rounds):
            await ws.send(json.dumps({"text": TEXTS[i % len(TEXTS)]}))
            await recv_json(ws, 300)
    t = time.perf_counter()
    await asyncio.gather(*(loop(ws) for ws in conns))
    dt = time.perf_counter() - t
    for ws in conns:
        await ws.close()
    return idle_rss, c * rounds / dt


def stdin_client(parley, model, tmp, n):
    graph = os.path.join(ROOT, "samples", "pizza", "pipeline.yaml")
    p = subprocess.Popen([parley, "run", graph, "--set", "nlu.bert.model=" + model,
                          "--set", "dialog.model=" + model,
                          "--set", "dialog.store=" + os.path.join(tmp, "stdin.db")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    lat = []
    for i in range(n):
        t = time.perf_counter()
        p.stdin.write((TEXTS[i % len(TEXTS)] + "\n").encode())
        p.stdin.flush()
        json.loads(p.stdout.readline())
        lat.append((time.perf_counter() - t) * 1000)
    p.stdin.close()
    p.wait()
    return lat


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("parley")
    ap.add_argument("model")
    ap.add_argument("--turns", type=int, default=500)
    ap.add_argument("--clients", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, a.clients + 200), hard))
    with tempfile.TemporaryDirectory() as tmp:
        srv = Server(a.parley, a.model, tmp, "ws.port=0",
                     graph=os.path.join(ROOT, "samples", "pizza", "server.yaml"))
        try:
            base_rss = srv.rss_kb()
            await one_client(srv, 20)  # warm up
            ws_lat = await one_client(srv, a.turns)
            idle_rss, tput = await many_clients(srv, a.clients, a.rounds)
        finally:
            srv.stop()
        stdin_client(a.parley, a.model, tmp, 20)
        st_lat = stdin_client(a.parley, a.model, tmp, a.turns)
    print("| path | turns | p50 ms | p99 ms |")
    print("| --- | ---: | ---: | ---: |")
    for name, lat in (("websocket, 1 client", ws_lat), ("stdin pipe", st_lat)):
        print("| %s | %d | %.2f | %.2f |" % (name, len(lat), statistics.median(lat),
                                             pct(lat, 99)))
    print()
    print("%d clients x %d turns, closed loop: %.0f turns/s" % (a.clients, a.rounds, tput))
    print("server RSS: %.1f MiB with no client, %.1f MiB with %d idle connections" %
          (base_rss / 1024, idle_rss / 1024, a.clients))


asyncio.run(main())
