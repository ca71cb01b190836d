"""test_ws_auth.py — who may connect to ws.server and who may name their user id.

With a `token`: a handshake with `Authorization: Bearer TOKEN` or `?token=TOKEN` is accepted,
and such a client may name any user id; a wrong or missing token is refused with HTTP 401
and no websocket; an issued id still needs the token to connect at all. With
`trust_user_ids: true` and no token, anyone may name a user id. TLS: with a self-signed
certificate made here by openssl, the server speaks wss:// (and /healthz over https), and
a turn goes through; a plain ws:// client gets nothing.

Usage: test_ws_auth.py PARLEY MODEL_DIR
"""
import asyncio
import json
import os
import ssl
import subprocess
import sys
import tempfile
import urllib.request

from checks import check, done
from ws_server import Server, recv_json, turn, websockets

parley, model = sys.argv[1:3]
TOKEN = "s3cret-Token_42"


async def refused(url, **kw):
    """The HTTP status a refused handshake got, or None when it was accepted."""
    try:
        async with websockets.connect(url, **kw) as ws:
            await recv_json(ws)
            return None
    except websockets.InvalidStatusCode as e:
        return e.status_code


async def named(url, user, **kw):
    """Connects, asks for `user`, returns (the answer to config, the reply to a turn)."""
    async with websockets.connect(url, **kw) as ws:
        await recv_json(ws)
        await ws.send(json.dumps({"config": {"user": user}}))
        r = await recv_json(ws)
        return r, await turn(ws, "i want a small pizza")


async def with_token(tmp):
    srv = Server(parley, model, tmp, "ws.token=" + TOKEN)
    try:
        bearer = {"extra_headers": {"Authorization": "Bearer " + TOKEN}}
        r, x = await named(srv.url(), "alice", **bearer)
        check(r.get("type") == "ready" and r.get("user") == "alice" and r.get("resumed") is True,
              "header token: a chosen id is accepted: %r" % r)
        check(x.get("user") == "alice" and x.get("type") == "reply", "alice's turn: %r" % x)
        r, x = await named(srv.url("/?token=" + TOKEN), "bob")
        check(r.get("user") == "bob" and x.get("user") == "bob", "query token: %r %r" % (r, x))
        check(await refused(srv.url()) == 401, "no token: 401")
        check(await refused(srv.url("/?token=wrong")) == 401, "wrong query token: 401")
        check(await refused(srv.url("/?token=" + TOKEN + "x")) == 401, "longer token: 401")
        check(await refused(srv.url("/?token=" + TOKEN[:-1])) == 401, "shorter token: 401")
        check(await refused(srv.url(), extra_headers={"Authorization": "Bearer nope"}) == 401,
              "wrong header token: 401")
        check(await refused(srv.url(), extra_headers={"Authorization": "Basic " + TOKEN}) == 401,
              "not a bearer token: 401")
        check(srv.proc.poll() is None, "the server is still running")
    finally:
        srv.stop()


async def trusting(tmp):
    srv = Server(parley, model, tmp, "ws.trust_user_ids=true")
    try:
        r, x = await named(srv.url(), "carol")
        check(r.get("user") == "carol" and x.get("user") == "carol",
              "trust_user_ids: a chosen id without a token: %r %r" % (r, x))
    finally:
        srv.stop()


async def tls(tmp):
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    p = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", cert], capture_output=True)
    if p.returncode != 0:
        check(False, "openssl could not make a certificate: %s" % p.stderr.decode())
        return
    srv = Server(parley, model, tmp, "ws.cert=" + cert, "ws.key=" + key)
    try:
        check(srv.scheme == "wss", "the server says wss://: %s" % srv.scheme)
        ctx = ssl.create_default_context(cafile=cert)
        async with websockets.connect(srv.url(), ssl=ctx) as ws:
            r = await recv_json(ws)
            x = await turn(ws, "a large pizza with olives", id="tls")
            check(r.get("type") == "ready" and x.get("type") == "reply" and x.get("id") == "tls",
                  "a turn over TLS: %r" % x)
        with urllib.request.urlopen(srv.http("/healthz"), context=ctx, timeout=30) as h:
            check(h.status == 200 and h.read() == b"ok\n", "/healthz over https")
        try:
            async with websockets.connect(srv.url().replace("wss:", "ws:"), open_timeout=10) as ws:
                await recv_json(ws, 10)
            check(False, "a plain ws:// client must not get a websocket")
        except (websockets.WebSocketException, OSError, asyncio.TimeoutError):
            pass
        check(srv.proc.poll() is None, "the server is still running after a plain client")
    finally:
        srv.stop()


async def main():
    with tempfile.TemporaryDirectory() as tmp:
        await with_token(tmp)
        await trusting(tmp)
        await tls(tmp)


asyncio.run(main())
sys.exit(done("ws_auth"))
