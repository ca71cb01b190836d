"""ws_pressure.py — what hostile websocket clients cost everyone else (bench/RESULTS.md,
"Hardening and soak" and "Memory").

flood: `parley run tests/services/ws/pizza_voice.yaml` (asr.pocketsphinx, tts.espeak) with N
clients streaming loud noise as fast as their sockets take it (0: none, the baseline); for
20 s, twice a second, times a /healthz request and a typed turn on another connection, and
prints their median and worst, and how fast the flooders sent after their first 10 s (in
times real time).
unread: `parley run tests/services/ws/pizza_ws.yaml` with N clients that never read, each
sending turns of 60,000 control characters with 256-byte ids until the server stops reading
them; prints what the server says it holds for them (parley_ws_held_bytes, where it has it)
and its RSS growth, per client.

Both use tests/services/ws/ws_server.py (Server, RawClient: a socket client that never reads).

Usage: ws_pressure.py flood|unread PARLEY MODEL [N]   (defaults: 4 flooders, 12 readers)
"""
import asyncio
import json
import os
import random
import re
import statistics
import struct
import sys
import tempfile
import threading
import time
import urllib.request

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "services", "ws"))
from ws_server import HERE, RawClient, Server, recv_json, turn, websockets  # noqa: E402

mode, parley, model = sys.argv[1:4]
n = int(sys.argv[4]) if len(sys.argv) > 4 else (4 if mode == "flood" else 12)
rng = random.Random(3)
FRAME = struct.pack("<1600h", *[rng.randint(-12000, 12000) for _ in range(1600)])  # 100 ms


async def typed_turn(srv):
    async with websockets.connect(srv.url()) as ws:
        await recv_json(ws)
        t0 = time.monotonic()
        await turn(ws, "i want a large pizza", id=1)
        return time.monotonic() - t0


def healthz(srv):
    t0 = time.monotonic()
    urllib.request.urlopen(srv.http("/healthz"), timeout=120).read()
    return time.monotonic() - t0


def flood(srv):
    stop, sent = threading.Event(), [[0.0] for _ in range(n)]

    def stream(mine):
        c = RawClient(srv.port)
        while not stop.is_set() and c.send(FRAME, binary=True, timeout=30):
            mine[0] += 0.1
        c.close()

    threads = [threading.Thread(target=stream, args=(sent[i],), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    t0, health, turns, at10 = time.monotonic(), [], [], None
    while time.monotonic() - t0 < 20:
        health.append(healthz(srv))
        turns.append(asyncio.run(typed_turn(srv)))
        if at10 is None and time.monotonic() - t0 >= 10:
            at10 = (time.monotonic(), [s[0] for s in sent])
        time.sleep(0.5)
    rate = [(s[0] - a) / (time.monotonic() - at10[0]) for s, a in zip(sent, at10[1])] if n else []
    stop.set()
    print("%d flooders: /healthz median %.3f s, worst %.3f s; typed turn median %.3f s, worst "
          "%.3f s (%d of each); flooders after 10 s: %s times real time" % (
              n, statistics.median(health), max(health), statistics.median(turns), max(turns),
              len(turns), ", ".join("%.1f" % r for r in rate) or "-"))
    for t in threads:
        t.join(30)


def unread(srv):
    rss0, text, sent = srv.rss_kb(), json.dumps({"text": "\x01" * 60000, "id": "i" * 256}), 0
    clients = []
    for _ in range(n):
        clients.append(RawClient(srv.port))
        for _ in range(400):
            if not clients[-1].send(text, timeout=1.0):
                break
            sent += 1
    time.sleep(3)
    metrics = urllib.request.urlopen(srv.http("/metrics"), timeout=30).read().decode()
    m = re.search(r"^parley_ws_held_bytes\{[^}]*\} (\d+)", metrics, re.M)
    held = "%.2f MiB" % (int(m.group(1)) / n / 2**20) if m else "not counted"
    print("%d clients that never read, %d turns sent: held %s a client; RSS +%.2f MiB a client"
          % (n, sent, held, (srv.rss_kb() - rss0) / 1024 / n))
    for c in clients:
        c.close()


with tempfile.TemporaryDirectory() as tmp:
    if mode == "flood":
        srv = Server(parley, model, tmp, "asr.cache_dir=" + os.path.join(tmp, "cache"),
                     graph=os.path.join(HERE, "pizza_voice.yaml"))
    else:
        srv = Server(parley, model, tmp)
    try:
        flood(srv) if mode == "flood" else unread(srv)
    finally:
        srv.stop()
