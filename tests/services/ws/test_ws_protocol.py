"""test_ws_protocol.py — the websocket protocol of ws.server, against `parley run` of the pizza
bot, with an independent client (python3-websockets).

Every message: ready (a fresh u-<32 hex> id), typed turns with and without an id, config,
eof (answers what is pending, then closes 1000). Every bad input gets an error and the
connection goes on: not JSON, not an object, unknown type, wrong field types, two types in
one message, a \\u0000 escape, a text over the limit, an unknown rate, a config after a turn,
audio (no recognizer in this graph; the rest of the utterance is dropped), an odd byte count.
Fatal ones close with their code: invalid UTF-8 (1007), a message over max_message_bytes
(1009), too many errors (1008). Fragmented messages are reassembled. Two users at once keep
their contexts apart; a client resumes with its ready id (also after vanishing mid-turn); a
client-chosen id is refused without the token; a second connection for the same user takes
over and the first is closed (1008). HTTP: /healthz, static files, 404. SIGTERM with turns in
flight: every turn is answered, connections close with 1001, the exit code is 0. /metrics
counts connections and errors by kind, and passes `promtool check metrics` (when installed).
A graph whose ws.server text output links nowhere answers typed turns with an error. A port
in use, or a certificate without its key, fails `parley run` with the reason.

Usage: test_ws_protocol.py PARLEY MODEL_DIR
"""
import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

from checks import check, done
from ws_server import HERE, Server, closed_with, recv_json, turn, websockets

parley, model = sys.argv[1:3]
ID = re.compile(r"^u-[0-9a-f]{32}$")


async def ready(ws):
    r = await recv_json(ws)
    check(r.get("type") == "ready" and r.get("protocol") == 1 and ID.match(r.get("user", "")) and
          r.get("sample_rate") == 16000, "ready: %r" % r)
    return r


async def messages(srv):
    async with websockets.connect(srv.url()) as ws:
        r = await ready(ws)
        check(r.get("resumed") is False, "a fresh connection is not resumed: %r" % r)
        a = await turn(ws, "i want a large pizza with mushrooms", id="a-1")
        check(a.get("type") == "reply" and a.get("id") == "a-1", "reply with its id: %r" % a)
        check(a.get("user") == r["user"] and a.get("turn") == 1, "user and turn: %r" % a)
        check(a.get("text") == "i want a large pizza with mushrooms", "text echoed: %r" % a)
        check(a.get("intent") == "order_pizza" and isinstance(a.get("reply"), str) and
              0 < a.get("confidence", 0) <= 1, "intent, reply, confidence: %r" % a)
        check(a.get("slots", {}).get("size") == "large", "slots: %r" % a)
        lat = a.get("latency_ms", {})
        check(all(isinstance(lat.get(k), (int, float)) and lat[k] >= 0
                  for k in ("nlu", "dialog", "total")) and lat["total"] >= lat["nlu"],
              "latency_ms: %r" % lat)
        b = await turn(ws, "2 pizzas", id=42)
        check(b.get("type") == "reply" and b.get("id") == 42 and b.get("turn") == 2,
              "numeric id echoed, turn 2: %r" % b)
        c = await turn(ws, "cancel my order")
        check(c.get("type") == "reply" and "id" not in c, "no id, none echoed: %r" % c)
        # A message in two fragments is one message.
        await ws.send(iter(['{"text": "a small', ' pizza", "id": "frag"}']))
        f = await recv_json(ws)
        check(f.get("type") == "reply" and f.get("id") == "frag", "fragmented message: %r" % f)
        # eof: what is pending is answered, then a normal close.
        await ws.send(json.dumps({"text": "with olives", "id": "last"}))
        await ws.send(json.dumps({"eof": 1}))
        code, reason, got = await closed_with(ws)
        check([g.get("id") for g in got] == ["last"] and got[0].get("type") == "reply",
              "eof answers the pending turn first: %r" % got)
        check(code == 1000, "eof closes with 1000: %r %r" % (code, reason))


BAD = [  # (message, what the error must mention, id expected back)
    ("not json", "not valid JSON", None),
    ("", "not valid JSON", None),
    ("[1, 2]", "object", None),
    ('{"hello": 1}', "unknown message type", None),
    ('{"text": 5, "id": "t5"}', "\"text\"", "t5"),
    ('{"text": "hi", "id": [1]}', "\"id\"", None),
    ('{"text": "hi", "eof": 1}', "one of", None),
    ('{"text": "hi", "text": "ho"}', "one of", None),
    ('{"text": "a\\u0000b", "id": 3}', "NUL", 3),
    (json.dumps({"text": "x" * 70000, "id": "long"}), "text", "long"),
    ('{"eof": 2}', "eof", None),
    ('{"config": 1}', "config", None),
    ('{"config": {"sample_rate": 4000}}', "sample_rate", None),
    ('{"config": {"sample_rate": 16000.5}}', "sample_rate", None),
    ('{"config": {"user": 7}}', "config.user", None),
    ('{"config": {"user": "bad\\u0001id"}}', "user", None),
]


async def bad_inputs(srv):
    async with websockets.connect(srv.url(), max_size=None) as ws:
        await ready(ws)
        for msg, what, want_id in BAD:
            e = await recv_json(ws) if await ws.send(msg) is None else None
            check(e.get("type") == "error" and what in e.get("error", ""),
                  "%.60r: error mentioning %r: %r" % (msg, what, e))
            check(e.get("id") == want_id, "%.60r: error id %r: %r" % (msg, want_id, e))
        # Audio: no recognizer in this graph; one error per utterance, the rest dropped.
        await ws.send(b"\x01\x02\x03")
        e = await recv_json(ws)
        check(e.get("type") == "error" and "odd" in e.get("error", ""), "odd PCM: %r" % e)
        await ws.send(b"\x00\x00" * 1600)
        await ws.send(b"\x00\x00" * 1600)
        e = await recv_json(ws)
        check(e.get("type") == "error" and "speech recognizer" in e.get("error", ""),
              "audio without a recognizer: %r" % e)
        r = await turn(ws, "a large pizza", id="after")
        check(r.get("type") == "reply" and r.get("id") == "after",
              "one error for the utterance, then the connection goes on: %r" % r)
        e = await recv_json(ws) if await ws.send('{"config": {"sample_rate": 8000}}') is None \
            else None
        check(e.get("type") == "error" and "before the first turn" in e.get("error", ""),
              "config after a turn: %r" % e)
    # A valid config before any turn: ready again with the settled rate.
    async with websockets.connect(srv.url()) as ws:
        first = await ready(ws)
        await ws.send('{"config": {"sample_rate": 8000}}')
        r = await recv_json(ws)
        check(r.get("type") == "ready" and r.get("sample_rate") == 8000 and
              r.get("user") == first["user"] and r.get("resumed") is False,
              "config sample_rate: %r" % r)


async def fatal_inputs(srv):
    async with websockets.connect(srv.url()) as ws:
        await ready(ws)
        await ws.write_frame(True, 0x1, b'{"text": "\xff\xfe"}')  # a text frame, not UTF-8
        code, reason, _ = await closed_with(ws)
        check(code == 1007, "invalid UTF-8 closes with 1007: %r %r" % (code, reason))
    async with websockets.connect(srv.url()) as ws:
        await ready(ws)
        await ws.send(json.dumps({"text": "y" * (1 << 20)}))  # over the 1 MiB default
        code, reason, _ = await closed_with(ws)
        check(code == 1009, "a message over max_message_bytes closes with 1009: %r" % code)
    async with websockets.connect(srv.url()) as ws:
        await ready(ws)
        await ws.write_frame(False, 0x1, b'{"text": "' + b"z" * 600000)
        await ws.write_frame(True, 0x0, b"z" * 600000 + b'"}')  # the last frame tips it over
        code, reason, _ = await closed_with(ws)
        check(code == 1009, "fragments adding up over the limit close with 1009: %r" % code)
    async with websockets.connect(srv.url()) as ws:
        await ready(ws)
        for _ in range(32):  # the 32nd error closes the connection
            await ws.send("nope")
        code, reason, got = await closed_with(ws)
        check(code == 1008 and len(got) == 32 and all(g["type"] == "error" for g in got),
              "too many errors: 1008 after 32: %r %r (%d)" % (code, reason, len(got)))


async def users_apart(srv):
    async with websockets.connect(srv.url()) as a, websockets.connect(srv.url()) as b:
        ra, rb = await ready(a), await ready(b)
        check(ra["user"] != rb["user"], "two connections, two users")
        await a.send(json.dumps({"text": "i want a large pizza with mushrooms"}))
        await b.send(json.dumps({"text": "a small pizza with olives"}))
        xa, xb = await recv_json(a), await recv_json(b)
        check(xa.get("user") == ra["user"] and xb.get("user") == rb["user"],
              "each reply to its own user: %r %r" % (xa, xb))
        ya = await turn(a, "2 pizzas")
        yb = await turn(b, "3 pizzas")
        check(ya["slots"].get("size") == "large" and ya["slots"].get("topping") == "mushrooms",
              "user a keeps its order: %r" % ya["slots"])
        check(yb["slots"].get("size") == "small" and yb["slots"].get("topping") == "olives",
              "user b keeps its order: %r" % yb["slots"])
        return ra["user"]


async def resume(srv):
    async with websockets.connect(srv.url()) as ws:
        user = (await ready(ws))["user"]
        await turn(ws, "i want a large pizza with pepperoni")
    async with websockets.connect(srv.url()) as ws:
        await ready(ws)
        await ws.send(json.dumps({"config": {"user": user}}))
        r = await recv_json(ws)
        check(r.get("type") == "ready" and r.get("user") == user and r.get("resumed") is True,
              "resumed with the ready id: %r" % r)
        x = await turn(ws, "2 pizzas")
        check(x.get("user") == user and x.get("turn") == 2 and
              x["slots"].get("topping") == "pepperoni", "the context is back: %r" % x)
    # Vanishing mid-turn: the turn finishes, its context stays for the next connection.
    async with websockets.connect(srv.url()) as ws:
        user2 = (await ready(ws))["user"]
        await ws.send(json.dumps({"text": "i want a small pizza with onions"}))
        ws.transport.abort()
    await asyncio.sleep(1)
    check(srv.proc.poll() is None, "the server survives a client vanishing mid-turn")
    async with websockets.connect(srv.url()) as ws:
        await ready(ws)
        await ws.send(json.dumps({"config": {"user": user2}}))
        await recv_json(ws)
        x = await turn(ws, "2 pizzas")
        check(x.get("turn") == 2 and x["slots"].get("topping") == "onions",
              "the vanished client's turn was stored: %r" % x)
    # A client-chosen id without the token: refused, the fresh id stays.
    async with websockets.connect(srv.url()) as ws:
        fresh = (await ready(ws))["user"]
        await ws.send(json.dumps({"config": {"user": "alice"}}))
        e = await recv_json(ws)
        check(e.get("type") == "error" and "token" in e.get("error", ""),
              "a chosen id needs the token: %r" % e)
        x = await turn(ws, "hello")
        check(x.get("user") == fresh, "the connection keeps its fresh id: %r" % x)
    # A second connection for the same user takes over; the first is closed with 1008.
    async with websockets.connect(srv.url()) as old, websockets.connect(srv.url()) as new:
        await ready(old)
        await ready(new)
        await old.send(json.dumps({"config": {"user": user}}))
        await recv_json(old)
        await new.send(json.dumps({"config": {"user": user}}))
        r = await recv_json(new)
        code, reason, _ = await closed_with(old)
        check(code == 1008 and "took over" in reason, "the older one closed: %r %r" % (code,
                                                                                   reason))
        x = await turn(new, "3 pizzas")
        check(r.get("resumed") is True and x.get("user") == user and x.get("type") == "reply",
              "the newer one goes on: %r" % x)


def http(srv):
    def get(path):
        try:
            with urllib.request.urlopen(srv.http(path), timeout=30) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
    check(get("/healthz") == (200, b"ok\n"), "healthz: %r" % (get("/healthz"),))
    status, body = get("/")
    check(status == 200 and b"static files are served" in body, "index.html at /: %r" % status)
    check(get("/style.css") == (200, b"body { color: black; }\n"), "a static file")
    check(get("/nothing-here")[0] == 404, "404 for a missing file")
    check(get("/../pizza_ws.yaml")[0] in (403, 404), "nothing outside static_dir")
    status, body = get("/metrics")
    text = body.decode()
    check(status == 200 and "parley_turns_total" in text, "/metrics: %r" % status)
    for line in ('parley_ws_connections_open{node="ws"} 0',
                 'parley_ws_connections_refused_total{node="ws",reason="token"} 0',
                 'parley_ws_protocol_errors_total{node="ws",kind="too_large"} 2',
                 'parley_ws_protocol_errors_total{node="ws",kind="too_many_errors"} 1'):
        check(line in text.splitlines(), "/metrics has %r" % line)
    accepted = [l for l in text.splitlines() if l.startswith("parley_ws_connections_total")]
    check(accepted and int(float(accepted[0].split()[-1])) >= 15, "connections counted: %r"
          % accepted)
    if shutil.which("promtool"):
        p = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True)
        check(p.returncode == 0, "promtool check metrics: %s" % (p.stdout + p.stderr).decode())


async def stop_in_flight(srv):
    async with websockets.connect(srv.url()) as ws:
        await ready(ws)
        for i in range(6):
            await ws.send(json.dumps({"text": "a large pizza with olives", "id": i}))
        # the first reply says the server reads this connection (sent at once, the turns
        # reach it together); a signal before that found none of them received yet
        first = json.loads(await asyncio.wait_for(ws.recv(), 30))
        srv.proc.send_signal(signal.SIGTERM)
        code, reason, got = await closed_with(ws)
        got = [first] + got
        ids = sorted(g.get("id") for g in got)
        check(ids == list(range(6)), "every turn in flight is answered: %r" % got)
        check(code == 1001, "closed with 1001 when the server stops: %r %r" % (code, reason))
    check(srv.stop(None) == 0, "exit code 0 after SIGTERM: %s" % "".join(srv.log[-5:]))


async def no_text_consumer(tmp):
    srv = Server(parley, None, tmp, graph=os.path.join(HERE, "audio_only.yaml"))
    try:
        async with websockets.connect(srv.url()) as ws:
            await ready(ws)
            e = await turn(ws, "a large pizza", id="t")
            check(e.get("type") == "error" and "no typed turns" in e.get("error", "") and
                  e.get("id") == "t", "a graph that takes no typed turns says so: %r" % e)
    finally:
        srv.stop()


def static_links(tmp):
    """static_dir serves regular files under it only: a link inside it that points out of it
    (to a file, to a folder) answers 404; one that stays inside is served."""
    web = os.path.join(tmp, "static")
    os.makedirs(os.path.join(web, "docs"))
    for path, text in (("index.html", "home\n"), ("docs/a.txt", "inside\n"),
                       ("docs/index.html", "docs home\n")):
        with open(os.path.join(web, path), "w") as f:
            f.write(text)
    with open(os.path.join(tmp, "secret.txt"), "w") as f:
        f.write("outside\n")
    os.symlink(os.path.join(tmp, "secret.txt"), os.path.join(web, "leak.txt"))
    os.symlink("/etc/passwd", os.path.join(web, "passwd"))
    os.symlink(tmp, os.path.join(web, "up"))
    os.symlink("docs/a.txt", os.path.join(web, "same.txt"))
    srv = Server(parley, None, tmp, "ws.static_dir=" + web,
                 graph=os.path.join(HERE, "audio_only.yaml"))

    def get(path):
        try:
            with urllib.request.urlopen(srv.http(path), timeout=30) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, b""
    try:
        check(get("/") == (200, b"home\n") and get("/docs/") == (200, b"docs home\n") and
              get("/docs/a.txt") == (200, b"inside\n"), "files under static_dir are served")
        check(get("/same.txt") == (200, b"inside\n"), "a link that stays inside is served")
        for path in ("/leak.txt", "/passwd", "/up/secret.txt"):
            check(get(path)[0] == 404, "a link out of static_dir: %s answers %r" % (
                path, get(path)))
    finally:
        srv.stop()


def refused_configs(srv, tmp):
    """A port in use, TLS with a certificate and no key: the graph does not open."""
    for sets, what in ((["ws.port=%d" % srv.port], "cannot listen"),
                       (["ws.cert=" + os.path.join(HERE, "pizza_ws.yaml")], "both cert and key")):
        args = [parley, "run", os.path.join(HERE, "audio_only.yaml")]
        for s in sets:
            args += ["--set", s]
        p = subprocess.run(args, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        err = p.stderr.decode()
        check(p.returncode == 1 and what in err, "%s: refused with %r: %d %s" % (sets, what,
                                                                                  p.returncode, err))


async def main():
    with tempfile.TemporaryDirectory() as tmp:
        srv = Server(parley, model, tmp)
        try:
            await messages(srv)
            await bad_inputs(srv)
            await fatal_inputs(srv)
            await users_apart(srv)
            await resume(srv)
            http(srv)
            refused_configs(srv, tmp)
            check(srv.proc.poll() is None, "the server is still running")
            await stop_in_flight(srv)
        finally:
            srv.stop(signal.SIGKILL)
        await no_text_consumer(tmp)
        static_links(tmp)


asyncio.run(main())
sys.exit(done("ws_protocol"))
