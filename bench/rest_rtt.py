"""rest_rtt.py — a turn's round trip through ws.server's REST API (POST /webhooks/rest/webhook)
against the same turn over its websocket, on one server (bench/RESULTS.md, "Websocket
and REST round trips").

Starts `parley run tests/services/ws/pizza_ws.yaml` with the model given and a fresh store,
then for each client count runs both transports in turn (REST first, then the websocket,
ROUNDS times): every client is one user in a closed loop (one turn in flight) through the
pizza bot's order conversation, WARMUP s unmeasured, then SECONDS s measured. REST clients
are threads, each with one kept-alive connection (http.client); websocket clients are
asyncio tasks, each with one connection (python3-websockets). Latency is from sending the
turn to reading its whole answer in the client. Prints one line per run and a table of the
medians over the rounds.

Usage: rest_rtt.py PARLEY MODEL_DIR [CLIENTS ...]   (default clients: 1 100; env ROUNDS=3,
SECONDS=5, WARMUP=1, FIRST=rest: which transport runs first in each round)
"""
import asyncio
import http.client
import json
import os
import secrets
import statistics
import sys
import tempfile
import threading
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "services", "ws"))
from ws_server import Server, recv_json, websockets  # noqa: E402

parley, model = sys.argv[1:3]
counts = [int(c) for c in sys.argv[3:]] or [1, 100]
ROUNDS = int(os.environ.get("ROUNDS", "3"))
SECONDS = float(os.environ.get("SECONDS", "5"))
WARMUP = float(os.environ.get("WARMUP", "1"))
ORDER = ("websocket", "rest") if os.environ.get("FIRST") == "websocket" else ("rest", "websocket")
CONV = ["hello", "i want a large pizza with mushrooms", "2 pizzas", "deliver it to 5 main street",
        "yes"]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else float("nan")


def rest_run(port, n):
    lat, errors = [], [0]
    t_start = time.monotonic()
    t_measure, t_end = t_start + WARMUP, t_start + WARMUP + SECONDS
    lock = threading.Lock()

    def client():
        user = "u-" + secrets.token_hex(16)
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        mine, i = [], 0
        while True:
            t0 = time.monotonic()
            if t0 >= t_end:
                break
            body = json.dumps({"sender": user, "message": CONV[i % len(CONV)]})
            c.request("POST", "/webhooks/rest/webhook", body,
                      {"Content-Type": "application/json"})
            r = c.getresponse()
            data = r.read()
            t1 = time.monotonic()
            if r.status != 200 or not json.loads(data):
                with lock:
                    errors[0] += 1
            elif t0 >= t_measure:
                mine.append((t1 - t0) * 1000)
            i += 1
        c.close()
        with lock:
            lat.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return lat, errors[0]


async def ws_run_async(url, n):
    lat, errors = [], [0]
    t_start = time.monotonic()
    t_measure, t_end = t_start + WARMUP, t_start + WARMUP + SECONDS

    async def client():
        async with websockets.connect(url, max_queue=None) as ws:
            await recv_json(ws)
            i = 0
            while True:
                t0 = time.monotonic()
                if t0 >= t_end:
                    break
                await ws.send(json.dumps({"text": CONV[i % len(CONV)]}))
                r = await recv_json(ws)
                t1 = time.monotonic()
                if r.get("type") != "reply":
                    errors[0] += 1
                elif t0 >= t_measure:
                    lat.append((t1 - t0) * 1000)
                i += 1

    await asyncio.gather(*(client() for _ in range(n)))
    return lat, errors[0]


def main():
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        srv = Server(parley, model, tmp, "ws.max_connections=2000")
        try:
            for n in counts:
                for rnd in range(ROUNDS):
                    for name in ORDER:
                        if name == "rest":
                            lat, err = rest_run(srv.port, n)
                        else:
                            lat, err = asyncio.run(ws_run_async(srv.url(), n))
                        tps = len(lat) / SECONDS
                        p50, p99 = pct(lat, 50), pct(lat, 99)
                        rows.setdefault((name, n), []).append((tps, p50, p99, err))
                        print("%-9s clients %4d round %d: %7.1f turns/s p50 %8.2f ms p99 %8.2f ms "
                              "errors %d" % (name, n, rnd + 1, tps, p50, p99, err), flush=True)
        finally:
            srv.stop()
    print("\n| transport, clients | turns/s (runs) | median p50 | median p99 | errors |")
    print("| --- | --- | ---: | ---: | ---: |")
    for (name, n), rs in rows.items():
        print("| %s, %d | %s | %.2f ms | %.2f ms | %d |" % (
            "REST" if name == "rest" else name, n, ", ".join("%.1f" % r[0] for r in rs),
            statistics.median(r[1] for r in rs), statistics.median(r[2] for r in rs),
            sum(r[3] for r in rs)))


main()
