"""test_ws_load.py — ws.server under many clients, too many clients and a client that never reads.

500 simultaneous connections (the client's open-file limit raised to allow them): each gets
its own fresh user id and the answer to its own turn. With `max_connections: 3`, a fourth
client is refused at the handshake with HTTP 503 and a new one is accepted once one has
left. A client that floods turns and never reads its replies is paced: the server stops
reading from it, its memory stays within a bound (resident size grows by less than 64 MiB),
and another client is served meanwhile. With `timeout: 2`, a client that stops answering
pings is closed, and one that answers them stays.

Usage: test_ws_load.py PARLEY MODEL_DIR
"""
import asyncio
import json
import os
import resource
import sys
import tempfile

from checks import check, done
from ws_server import Server, recv_json, turn, websockets

parley, model = sys.argv[1:3]
N = 500


async def one_client(srv, i, opened, go):
    async with websockets.connect(srv.url(), open_timeout=120, ping_interval=None) as ws:
        r = await recv_json(ws, 120)
        opened.append(r["user"])
        await go.wait()
        x = await turn(ws, "i want %d large pizzas" % (i % 9 + 1), id=i)
        return r["user"], x


async def many(srv):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < N + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, N + 200), hard))
    opened, go = [], asyncio.Event()
    tasks = [asyncio.ensure_future(one_client(srv, i, opened, go)) for i in range(N)]
    for _ in range(600):
        if len(opened) == N or all(t.done() for t in tasks):
            break
        await asyncio.sleep(0.1)
    check(len(opened) == N, "%d of %d clients connected at once" % (len(opened), N))
    print("RSS with %d idle connections: %d KiB" % (len(opened), srv.rss_kb()))
    go.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    bad = [r for r in results if isinstance(r, BaseException)]
    check(not bad, "every client finished: %d failed, first %r" % (len(bad), bad[:1]))
    good = [r for r in results if not isinstance(r, BaseException)]
    check(len({u for u, _ in good}) == len(good), "every connection has its own user id")
    check(all(x.get("type") == "reply" and x.get("user") == u and x.get("id") == i
              for i, (u, x) in enumerate(good)), "every client got the reply to its own turn")


async def capped(tmp):
    srv = Server(parley, model, tmp, "ws.max_connections=3")
    try:
        conns = [await websockets.connect(srv.url()) for _ in range(3)]
        for c in conns:
            await recv_json(c)
        try:
            async with websockets.connect(srv.url()) as ws:
                await recv_json(ws)
            check(False, "a fourth connection must be refused")
        except websockets.InvalidStatusCode as e:
            check(e.status_code == 503, "the fourth is refused with 503: %d" % e.status_code)
        await conns[0].close()
        await asyncio.sleep(0.5)
        async with websockets.connect(srv.url()) as ws:
            r = await recv_json(ws)
            check(r.get("type") == "ready", "a place freed is taken again: %r" % r)
        for c in conns[1:]:
            await c.close()
    finally:
        srv.stop()


async def never_reads(srv):
    before = srv.rss_kb()
    # max_queue=1 and a small read_limit: the client's library stops reading the socket too.
    flood = await websockets.connect(srv.url(), max_queue=1, read_limit=1024, write_limit=1024,
                                     ping_interval=None)

    async def send_all():
        for i in range(100000):
            await flood.send(json.dumps({"text": "i want a large pizza with olives " * 20,
                                         "id": i}))
    sender = asyncio.ensure_future(send_all())
    await asyncio.sleep(3)
    async with websockets.connect(srv.url()) as ws:
        await recv_json(ws)
        ok = 0
        for i in range(20):
            x = await turn(ws, "a small pizza with onions", id=i)
            ok += x.get("type") == "reply" and x.get("id") == i
        check(ok == 20, "another client is served meanwhile: %d of 20" % ok)
    await asyncio.sleep(3)
    check(not sender.done(), "the flooding client is paced (its sends block)")
    grown = srv.rss_kb() - before
    print("RSS growth with a client that never reads: %d KiB" % grown)
    check(grown < 64 * 1024, "the server's memory stays bounded: grew %d KiB" % grown)
    sender.cancel()
    flood.transport.abort()


async def idle(tmp):
    srv = Server(parley, model, tmp, "ws.timeout=2")
    try:
        async with websockets.connect(srv.url(), ping_interval=None) as quiet, \
                websockets.connect(srv.url(), ping_interval=None) as alive:
            await recv_json(quiet)
            await recv_json(alive)
            quiet.transport.pause_reading()  # it answers no ping from now on
            await asyncio.sleep(6)
            quiet.transport.resume_reading()
            try:
                await asyncio.wait_for(quiet.recv(), 10)
                check(False, "a client that answers no ping must be closed after the timeout")
            except websockets.ConnectionClosed:
                pass
            x = await turn(alive, "a large pizza", id="alive")
            check(x.get("id") == "alive", "a client that answers pings stays: %r" % x)
    finally:
        srv.stop()


async def main():
    # Under AddressSanitizer freed memory is held in a quarantine (256 MiB by default), which
    # the resident size would count as growth: keep it small (a release build ignores this).
    os.environ["ASAN_OPTIONS"] = ":".join(
        o for o in (os.environ.get("ASAN_OPTIONS"), "quarantine_size_mb=16") if o)
    with tempfile.TemporaryDirectory() as tmp:
        srv = Server(parley, model, tmp)
        try:
            await many(srv)
            await never_reads(srv)
            check(srv.proc.poll() is None, "the server is still running")
        finally:
            check(srv.stop() == 0, "a clean exit on SIGTERM")
        await capped(tmp)
        await idle(tmp)


asyncio.run(main())
sys.exit(done("ws_load"))
