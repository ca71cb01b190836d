"""test_ws_memory.py — what clients that never read their answers cost the websocket server.

CLIENTS raw clients (ws_server.RawClient: they send, never read) each send typed turns of
60,000 control characters (each escaped to six bytes in its answer's JSON) with 256-byte ids
until the server stops reading from them. What the server holds for them must stay within its
per-connection count: /metrics' parley_ws_held_bytes at most 1.5 MiB a connection (reading
stops at 1 MiB; the last turn admitted keeps room for its answer; before the count, a
connection held up to ~1 MiB of answers plus 8 unanswered ones of ~360 KB each), and its RSS
grows by at most 4 MiB a connection beside 32 MiB for the turns' work. A reading client is
still answered at once. Skips (77) without python3-websockets or libwebsockets.

Usage: test_ws_memory.py PARLEY MODEL
"""
import asyncio
import json
import os
import re
import sys
import tempfile
import time
import urllib.request

from checks import check, done

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ws_server import (RawClient, Server, recv_json, skip_without_ws_server,  # noqa: E402
                       turn, websockets)

parley, model = sys.argv[1:3]
skip_without_ws_server(parley)
CLIENTS, MIB = 12, 1 << 20


def held_bytes(srv):
    text = urllib.request.urlopen(srv.http("/metrics"), timeout=30).read().decode()
    m = re.search(r"^parley_ws_held_bytes\{[^}]*\} (\d+)", text, re.M)
    return int(m.group(1)) if m else None


async def reader(srv):
    async with websockets.connect(srv.url()) as ws:
        await recv_json(ws)
        t0 = time.monotonic()
        r = await turn(ws, "i want a large pizza", id=1)
        return r, time.monotonic() - t0


# Under AddressSanitizer freed memory waits in a quarantine (256 MiB by default) that the
# resident size would count: keep it small (a release build ignores this).
os.environ["ASAN_OPTIONS"] = ":".join(
    o for o in (os.environ.get("ASAN_OPTIONS"), "quarantine_size_mb=16") if o)
with tempfile.TemporaryDirectory() as tmp:
    srv = Server(parley, model, tmp)
    rss0 = srv.rss_kb()
    text = json.dumps({"text": "\x01" * 60000, "id": "i" * 256})
    clients, sent = [], 0
    for _ in range(CLIENTS):
        c = RawClient(srv.port)
        clients.append(c)
        # Until a send blocks for a second: the server stopped reading, the kernel's buffers
        # are full.
        for _ in range(400):
            if not c.send(text, timeout=1.0):
                break
            sent += 1
    time.sleep(3)  # the turns in flight are answered into the queues
    held = held_bytes(srv)
    rss = srv.rss_kb()
    print("%d clients sent %d turns; held %s bytes (%.2f MiB a client), RSS +%.1f MiB "
          "(%.2f MiB a client)" % (CLIENTS, sent, held, (held or 0) / CLIENTS / MIB,
                                   (rss - rss0) / 1024, (rss - rss0) / 1024 / CLIENTS))
    check(held is not None, "/metrics has parley_ws_held_bytes")
    check(held is not None and held <= CLIENTS * 1.5 * MIB,
          "held for %d clients that do not read: %s bytes, over 1.5 MiB each" % (CLIENTS, held))
    check(rss - rss0 <= (CLIENTS * 4 + 32) * 1024,
          "RSS grew by %.1f MiB for %d clients, over 4 MiB each (and 32 MiB for the turns' "
          "work)" % ((rss - rss0) / 1024, CLIENTS))
    r, secs = asyncio.run(reader(srv))
    check(r.get("type") == "reply" and secs < 5,
          "a reading client beside them: %s in %.2f s" % (r.get("type"), secs))
    for c in clients:
        c.close()
    time.sleep(1)
    after = held_bytes(srv)
    check(after == 0, "held once they are gone: %s bytes" % after)
    check(srv.stop() == 0, "the server stops cleanly")
sys.exit(done("services/ws_memory"))
