"""test_ws_rest.py — Rasa's HTTP API on ws.server's port (services/ws_rest.c), against `parley
run` of the pizza bot, with python3's urllib and with curl (its checks are skipped, with a
line saying so, where curl is not installed; run.sh installs it).

A conversation through POST /webhooks/rest/webhook gets the same replies, turn for turn, as
the same conversation over the websocket, with urllib and with curl; the REST users are the
websocket's users (a websocket resumes a REST conversation at the right turn, REST continues
a websocket one) and /model/parse between the turns changes nothing. REST and websocket turns
of one user sent interleaved are answered in order. /model/parse agrees with `parley nlu
predict` on the same model (intent, confidences, entities with their canonical values and
offsets in characters, the ranking). /version says `parley --version`'s version, /status the
model. Unknown API paths answer a JSON 404, a known path with the wrong method 405 with
Allow, a bad body 400 naming what is wrong, a body over max_message_bytes 413; the chat page
is still served at / (GET only). With a token, REST needs it as the websocket does (401
without it or with a wrong one; /version is open), and may then name any sender; without
one, only an id of the form the server issues. SIGTERM with webhook turns in flight answers
each of them before the server exits (the store's turns are the answers given).

Usage: test_ws_rest.py PARLEY MODEL_DIR
"""
import asyncio
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from checks import check, done
from ws_server import Server, recv_json, turn, websockets

parley, model = sys.argv[1:3]
TOKEN = "rest-Token_7"
CONV = ["hello", "i want a large pizza with mushrooms", "2 pizzas",
        "deliver it to 5 main street", "yes"]
CURL = shutil.which("curl")
if not CURL:
    print("curl is not installed: its checks are skipped")


def new_id():
    return "u-" + secrets.token_hex(16)


def http(srv, method, path, body=None, raw=None, headers=None):
    """(status, headers, body: parsed JSON when the answer says JSON, else bytes)."""
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(srv.http(path), data=data, method=method,
                                 headers=dict({"Content-Type": "application/json"},
                                              **(headers or {})))
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            status, hdrs, payload = r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        status, hdrs, payload = e.code, e.headers, e.read()
    if "application/json" in hdrs.get("Content-Type", ""):
        try:
            return status, hdrs, json.loads(payload)
        except ValueError:
            pass
    return status, hdrs, payload


def webhook(srv, sender, text, **kw):
    return http(srv, "POST", "/webhooks/rest/webhook", {"sender": sender, "message": text}, **kw)


def curl(srv, path, body, *args):
    """POSTs body (a str) with curl; returns (status, parsed JSON or the text)."""
    p = subprocess.run([CURL, "-s", "-w", "\n%{http_code}", "-H",
                        "Content-Type: application/json", "--data-binary", "@-", *args,
                        srv.http(path)], input=body.encode(), capture_output=True, timeout=60)
    text, _, code = p.stdout.decode().rpartition("\n")
    try:
        return int(code), json.loads(text)
    except ValueError:
        return int(code or 0), text


def rasa(sender, reply):
    return [{"recipient_id": sender, "text": reply}] if reply else []


async def ws_conversation(srv, texts, user=None):
    """The websocket's answers to texts, one connection (resuming `user` when given)."""
    async with websockets.connect(srv.url()) as ws:
        r = await recv_json(ws)
        if user:
            await ws.send(json.dumps({"config": {"user": user}}))
            r = await recv_json(ws)
            check(r.get("resumed") is True and r.get("user") == user, "resumed: %r" % r)
        return r["user"], [await turn(ws, t) for t in texts]


def parse(srv, text):
    return http(srv, "POST", "/model/parse", {"text": text})


async def reference(ref_srv, user, texts=CONV):
    """The replies to texts over the websocket of the reference server (its own store) for
    `user`: a response's variation depends on the user and the turn, so a conversation is
    compared with the same user's."""
    _, ref = await ws_conversation(ref_srv, texts, user=user)
    check(all(a.get("type") == "reply" and a.get("reply") for a in ref),
          "the reference conversation: %r" % ref)
    return [a.get("reply") for a in ref]


async def same_conversation(srv, ref_srv):
    # urllib, with /model/parse between the turns
    u = new_id()
    replies = await reference(ref_srv, u)
    for i, t in enumerate(CONV):
        status, hdrs, got = webhook(srv, u, t)
        check(status == 200 and got == rasa(u, replies[i]),
              "REST turn %d %r: %r %r (websocket: %r)" % (i + 1, t, status, got, replies[i]))
        check("application/json" in hdrs.get("Content-Type", ""), "JSON: %r" % dict(hdrs))
        status, _, p = parse(srv, "cancel my order")
        check(status == 200 and p.get("intent", {}).get("name") == "cancel", "parse: %r" % p)
    # The same user over the websocket: the store counted the REST turns, and no parse.
    _, more = await ws_conversation(srv, ["hello"], user=u)
    check(more[0].get("turn") == len(CONV) + 1,
          "a websocket resumes the REST user at turn %d: %r" % (len(CONV) + 1, more[0]))
    # curl
    if CURL:
        c = new_id()
        replies = await reference(ref_srv, c)
        for i, t in enumerate(CONV):
            status, got = curl(srv, "/webhooks/rest/webhook",
                               json.dumps({"sender": c, "message": t}))
            check(status == 200 and got == rasa(c, replies[i]),
                  "curl turn %d %r: %r %r" % (i + 1, t, status, got))
    # A websocket conversation continued over REST.
    w = new_id()
    replies = await reference(ref_srv, w)
    _, first = await ws_conversation(srv, CONV[:2], user=w)
    check([a.get("reply") for a in first] == replies[:2], "websocket half: %r" % first)
    for i in range(2, len(CONV)):
        status, _, got = webhook(srv, w, CONV[i])
        check(status == 200 and got == rasa(w, replies[i]),
              "REST continues the websocket user at turn %d: %r" % (i + 1, got))


async def interleaved(srv, ref_srv):
    """One user's turns sent alternately over the websocket and REST, each sent before the
    one before it is answered: answered in the order sent, as one conversation."""
    for rnd in range(3):
        user = new_id()
        replies = await reference(ref_srv, user)
        async with websockets.connect(srv.url()) as ws:
            await recv_json(ws)
            await ws.send(json.dumps({"config": {"user": user}}))
            await recv_json(ws)
            rest = {}
            threads = []
            for i, t in enumerate(CONV):
                if i % 2 == 0:
                    await ws.send(json.dumps({"text": t, "id": i}))
                else:
                    def post(i=i, t=t):
                        rest[i] = webhook(srv, user, t)
                    th = threading.Thread(target=post)
                    th.start()
                    threads.append(th)
                await asyncio.sleep(0.03)  # the server reads each before the next is sent
            got = [await recv_json(ws) for _ in range(0, len(CONV), 2)]
            for th in threads:
                th.join(60)
            for a in got:
                i = a.get("id")
                check(a.get("type") == "reply" and a.get("turn") == i + 1 and
                      a.get("reply") == replies[i],
                      "round %d: websocket turn %r answered in order: %r" % (rnd, i, a))
            for i, (status, _, body) in sorted(rest.items()):
                check(status == 200 and body == rasa(user, replies[i]),
                      "round %d: REST turn %d answered in order: %r %r" % (rnd, i + 1, status,
                                                                           body))
            check(len(rest) == len(CONV) // 2, "round %d: every REST turn answered" % rnd)


def parse_shape(srv):
    text = "ñé a big pizza with ham"
    p = subprocess.run([parley, "nlu", "predict", "--model", model, "--top", "10"],
                       input=text.encode(), capture_output=True, timeout=120)
    ref = json.loads(p.stdout.decode().splitlines()[0])
    status, _, got = parse(srv, text)
    check(status == 200 and isinstance(got, dict), "parse: %r %r" % (status, got))
    got = got if isinstance(got, dict) else {}
    check(got.get("text") == text, "text echoed: %r" % got.get("text"))
    it = got.get("intent", {})
    check(it.get("name") == ref["intent"] and abs(it.get("confidence", -1) - ref["confidence"])
          <= 2e-4, "intent as parley nlu predict: %r vs %r" % (it, ref))
    ents = got.get("entities", [])
    check(len(ents) == len(ref["slots"]) and ents, "entities: %r vs %r" % (ents, ref["slots"]))
    raw = text.encode()
    for e, s in zip(ents, ref["slots"]):
        start = len(raw[:s["start"]].decode())  # bytes -> characters
        end = len(raw[:s["end"]].decode())
        check(e.get("entity") == s["slot"] and e.get("value") == s.get("canonical", s["value"])
              and e.get("start") == start and e.get("end") == end and
              text[e["start"]:e["end"]] == s["value"],
              "entity %r against %r (characters %d-%d)" % (e, s, start, end))
    check(any(e.get("value") != text[e["start"]:e["end"]] for e in ents),
          "a synonym's canonical value (big -> large): %r" % ents)
    rank = got.get("intent_ranking", [])
    check(len(rank) == len(ref["ranking"]) and rank and rank[0] == it,
          "ranking: %r vs %r" % (rank, ref["ranking"]))
    confs = [r.get("confidence", -1) for r in rank]
    check(confs == sorted(confs, reverse=True) and all(0 <= c <= 1 for c in confs),
          "ranking best first: %r" % confs)
    want = {r["intent"]: r["confidence"] for r in ref["ranking"]}
    check(all(abs(want.get(r.get("name"), -1) - r.get("confidence", 9)) <= 2e-4 for r in rank),
          "ranking as parley nlu predict: %r vs %r" % (rank, want))
    status, _, got = parse(srv, "")
    check(status == 200 and got.get("text") == "" and got.get("entities") == [],
          "an empty text parses: %r %r" % (status, got))


def version_status(srv):
    v = subprocess.run([parley, "--version"], capture_output=True).stdout.decode().split()[-1]
    status, _, got = http(srv, "GET", "/version")
    check(status == 200 and got == {"version": v, "minimum_compatible_version": v},
          "version %s: %r %r" % (v, status, got))
    status, _, got = http(srv, "GET", "/status")
    check(status == 200 and got.get("model_file") == model and
          got.get("model_id") == model.rstrip("/").rsplit("/", 1)[-1] and
          got.get("num_active_training_jobs") == 0, "status: %r %r" % (status, got))


def errors(srv):
    u = new_id()

    def error_of(got):
        return got.get("error", "") if isinstance(got, dict) else ""

    for method, path in [("GET", "/model/foo"), ("POST", "/webhooks/nope"),
                         ("GET", "/conversations/x/tracker"), ("POST", "/model")]:
        status, _, got = http(srv, method, path, {"sender": u, "message": "hi"}
                              if method == "POST" else None)
        check(status == 404 and path in error_of(got), "%s %s: 404 JSON: %r %r" %
              (method, path, status, got))
    for method, path, allow in [("GET", "/webhooks/rest/webhook", "POST"),
                                ("PUT", "/model/parse", "POST"), ("POST", "/version", "GET"),
                                ("DELETE", "/status", "GET"), ("POST", "/", "GET"),
                                ("POST", "/index.html", "GET")]:
        status, hdrs, got = http(srv, method, path, {"text": "x"} if method != "GET" else None)
        check(status == 405 and hdrs.get("Allow") == allow and method in error_of(got),
              "%s %s: 405, Allow %s: %r %r %r" % (method, path, allow, status,
                                                  hdrs.get("Allow"), got))
    status, hdrs, page = http(srv, "GET", "/")
    check(status == 200 and b"static files are served" in page, "GET /: the page: %r" % page)
    for body, why in [(b'{"sender": "x", "messa', "not valid JSON"),
                      (json.dumps({"message": "hi"}).encode(), '"sender": missing'),
                      (json.dumps({"sender": u}).encode(), '"message": missing'),
                      (json.dumps({"sender": 5, "message": "hi"}).encode(),
                       '"sender": expected a string, not a number'),
                      (json.dumps({"sender": u, "message": ["hi"]}).encode(),
                       '"message": expected a string, not an array'),
                      (b'[1, 2]', "expected a JSON object, not an array"),
                      (b'{"sender": "%s", "message": "a\\u0000b"}' % u.encode(), "\\u0000"),
                      (json.dumps({"sender": "", "message": "hi"}).encode(), '"sender"'),
                      (b"", "empty")]:
        status, _, got = http(srv, "POST", "/webhooks/rest/webhook", raw=body)
        check(status == 400 and why in error_of(got),
              "400 for %r naming %r: %r %r" % (body[:40], why, status, got))
    status, _, got = http(srv, "POST", "/model/parse", {"txt": "hi"})
    check(status == 400 and '"text": missing' in error_of(got), "parse: 400: %r" % got)
    status, _, got = webhook(srv, "alice", "hi")
    check(status == 403 and "sender" in error_of(got),
          "without the token a chosen sender is refused: %r %r" % (status, got))
    big = {"sender": u, "message": "x" * (1 << 20)}
    for path in ["/webhooks/rest/webhook", "/model/parse"]:
        status, _, got = http(srv, "POST", path, big)
        check(status == 413 and "1048576 bytes" in error_of(got),
              "%s: 413 over max_message_bytes: %r %r" % (path, status, got))
    if CURL:
        status, got = curl(srv, "/webhooks/rest/webhook", '{"sender": 1')
        check(status == 400 and "not valid JSON" in error_of(got), "curl 400: %r" % got)
        status, got = curl(srv, "/webhooks/rest/webhook", json.dumps(big))
        check(status == 413, "curl 413: %r %r" % (status, got))
    status, _, got = webhook(srv, u, "hello")  # still serving
    check(status == 200 and got and got[0].get("recipient_id") == u, "after errors: %r" % got)


def rest_counts(srv):
    """{(metric, route): value} of the REST API's counters on /metrics."""
    _, _, text = http(srv, "GET", "/metrics")
    return {(m, route): int(v) for m, route, v in re.findall(
        r'^(parley_ws_rest_(?:requests|errors)_total)\{[^}]*route="(\w+)"\} (\d+)$',
        text.decode(), re.M)}


def metrics(srv):
    """Each answer counts once in requests_total by its route, an error in errors_total too."""
    before = rest_counts(srv)
    check(len(before) == 10, "two counters of five routes: %r" % sorted(before))
    http(srv, "GET", "/version")
    http(srv, "POST", "/model/parse", {"text": "a large pizza"})
    http(srv, "POST", "/model/parse", {"txt": "x"})
    http(srv, "GET", "/model/foo")
    webhook(srv, new_id(), "hello")
    after = rest_counts(srv)
    delta = {k: after.get(k, 0) - v for k, v in before.items() if after.get(k, 0) != v}
    want = {("parley_ws_rest_requests_total", "version"): 1,
            ("parley_ws_rest_requests_total", "parse"): 2,
            ("parley_ws_rest_errors_total", "parse"): 1,
            ("parley_ws_rest_requests_total", "other"): 1,
            ("parley_ws_rest_errors_total", "other"): 1,
            ("parley_ws_rest_requests_total", "webhook"): 1}
    check(delta == want, "the REST counters moved by %r, not %r" % (delta, want))


def stop_in_flight(tmp):
    """SIGTERM while 50 users each keep a webhook turn in flight: every turn the server took
    is answered before it exits with 0. A turn it took is one the store holds (a turn in
    flight at a stop completes and is stored): each user's stored turns must equal the 200s
    it got. A request that comes while it stops gets 503; one that comes after its loop
    ended is never read (and not stored)."""
    srv = Server(parley, model, tmp)
    # The server logs its port before the graph has started and `parley run` has taken
    # SIGTERM: a first turn answered says both are done.
    status, _, first = webhook(srv, new_id(), "hello")
    check(status == 200 and first, "a first turn: %r %r" % (status, first))
    users = [new_id() for _ in range(50)]
    answered = {u: 0 for u in users}
    odd = []

    def loop(u):
        while True:
            try:
                status, _, body = webhook(srv, u, CONV[answered[u] % len(CONV)])
            except Exception:  # after the server's loop ended: never read
                return
            if status == 200 and body and body[0].get("text"):
                answered[u] += 1
            elif not (status == 503 and "stopping" in body.get("error", "")):
                odd.append((status, body))
                return
            if status == 503:
                return

    threads = [threading.Thread(target=loop, args=(u,)) for u in users]
    for th in threads:
        th.start()
    time.sleep(1)
    rc = srv.stop()
    for th in threads:
        th.join(60)
    check(rc == 0, "SIGTERM with webhook turns in flight: exit code 0, not %r" % rc)
    check(not odd, "only 200 or 503 while stopping: %r" % odd[:3])
    p = subprocess.run([parley, "store", "export", os.path.join(tmp, "pizza.db")],
                       capture_output=True, timeout=120)
    stored = {}
    for line in p.stdout.decode().splitlines():
        row = json.loads(line)
        stored[row["user"]] = row.get("turns")
    lost = {u: (answered[u], stored.get(u)) for u in users if stored.get(u) != answered[u]}
    check(p.returncode == 0 and not lost and sum(answered.values()) > len(users),
          "every stored turn was answered (%d turns): (answered, stored) %r" %
          (sum(answered.values()), list(lost.items())[:5]))


async def tokens(tmp):
    srv = Server(parley, model, tmp, "ws.token=" + TOKEN)
    try:
        bearer = {"Authorization": "Bearer " + TOKEN}
        for path, body in [("/webhooks/rest/webhook", {"sender": "alice", "message": "hello"}),
                           ("/model/parse", {"text": "hello"}), ("/status", None)]:
            method = "GET" if body is None else "POST"
            for what, p, h in [("no token", path, {}), ("a wrong token", path,
                                                         {"Authorization": "Bearer x" + TOKEN}),
                               ("a wrong query token", path + "?token=" + TOKEN[:-1], {})]:
                status, _, got = http(srv, method, p, body, headers=h)
                check(status == 401 and "token" in got.get("error", ""),
                      "%s %s with %s: 401: %r %r" % (method, path, what, status, got))
            for what, p, h in [("the header", path, bearer),
                               ("the query", path + "?token=" + TOKEN, {})]:
                status, _, got = http(srv, method, p, body, headers=h)
                check(status == 200, "%s %s with %s: 200: %r %r" % (method, path, what, status,
                                                                      got))
        status, _, got = webhook(srv, "bob", "i want a large pizza", headers=bearer)
        check(status == 200 and got and got[0].get("recipient_id") == "bob",
              "with the token any sender: %r" % got)
        status, _, got = http(srv, "GET", "/version")
        check(status == 200 and "version" in got, "/version needs no token: %r" % got)
        if CURL:
            status, got = curl(srv, "/webhooks/rest/webhook",
                               json.dumps({"sender": "carol", "message": "hello"}))
            check(status == 401, "curl without the token: %r %r" % (status, got))
            status, got = curl(srv, "/webhooks/rest/webhook",
                               json.dumps({"sender": "carol", "message": "hello"}), "-H",
                               "Authorization: Bearer " + TOKEN)
            check(status == 200 and got and got[0].get("recipient_id") == "carol",
                  "curl with the token: %r %r" % (status, got))
        # The websocket keeps the same rule.
        try:
            async with websockets.connect(srv.url()) as ws:
                await recv_json(ws)
            check(False, "a websocket without the token is refused")
        except websockets.InvalidStatusCode as e:
            check(e.status_code == 401, "a websocket without the token: %r" % e.status_code)
    finally:
        check(srv.stop() == 0, "the token server stops cleanly")


async def main():
    with tempfile.TemporaryDirectory() as tmp:
        srv = Server(parley, model, tmp)
        os.mkdir(os.path.join(tmp, "ref"))
        ref_srv = Server(parley, model, os.path.join(tmp, "ref"))
        try:
            await same_conversation(srv, ref_srv)
            await interleaved(srv, ref_srv)
            parse_shape(srv)
            version_status(srv)
            errors(srv)
            metrics(srv)
        finally:
            check(srv.stop() == 0, "the server stops cleanly: %s" % "".join(srv.log[-5:]))
            ref_srv.stop()
    with tempfile.TemporaryDirectory() as tmp:
        await tokens(tmp)
    with tempfile.TemporaryDirectory() as tmp:
        stop_in_flight(tmp)


asyncio.run(main())
sys.exit(done("test_ws_rest"))
