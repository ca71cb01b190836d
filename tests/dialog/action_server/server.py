#!/usr/bin/env python3
"""The action server of tests/dialog/test_action_server.c and bench/action_server.py: Rasa's
action server protocol (POST /webhook) with Python's standard library only, one thread per
request, so a request that hangs holds up no other.

  server.py run EXE [ARGS...]  serves on a free port, writes domain.yaml and graph.yaml of
                               this folder into a temporary folder with that port (and a port
                               nobody listens on) filled in, runs EXE ARGS... FOLDER and exits
                               with its status
  server.py serve              serves on a free port and prints it, until killed

What each action answers is below (ACTIONS); every answer is built from the request, so the
test's checks of the replies check what parley sent too.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))


def weather(req):
    t = req["tracker"]
    ents = {e["entity"]: e["value"] for e in t["latest_message"]["entities"]}
    city = ents.get("city") or t["slots"].get("city") or "Paris"
    visits = t["slots"].get("visits")
    d = req["domain"]
    domain_ok = "utter_weather" in d["responses"] and "city" in d["slots"] and \
        "weather" in d["intents"] and "action_weather" in d["actions"]
    return {
        "events": [{"event": "slot", "name": "city", "value": city},
                   {"event": "slot", "name": "temp", "value": "21 C"},
                   {"event": "slot", "name": "visits", "value": int(float(visits or 0)) + 1}],
        "responses": [
            {"text": "weather for %s (intent %s, next %s, domain %s, version %s)." % (
                req["sender_id"], t["latest_message"]["intent"]["name"], req["next_action"],
                "ok" if domain_ok else "bad", "ok" if req.get("version") else "missing")},
            {"response": "utter_weather"},
            {"response": "utter_weather", "temp": "hot"},
        ],
    }


def chain(req):
    return {"events": [{"event": "slot", "name": "city", "value": "Oslo"},
                       {"event": "followup", "name": "action_followed"}],
            "responses": [{"text": "first."}]}


def followed(req):
    return {"events": [], "responses": [
        {"text": "followed, city is %s." % req["tracker"]["slots"].get("city")}]}


def reset(req):
    return {"events": [{"event": "reset_slots"},
                       {"event": "bot", "text": "an event kind parley leaves out"}],
            "responses": [{"text": "all forgotten."}]}


def slow(req):
    time.sleep(4)  # longer than the test's action_timeout_ms
    return {"events": [], "responses": [{"text": "too late."}]}


def hi(req):
    return {"events": [], "responses": [{"response": "utter_hi"}]}


ACTIONS = {"action_hi": hi, "action_weather": weather, "action_chain": chain, "action_followed": followed,
           "action_reset": reset, "action_slow": slow}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps connections open, as action servers do
    disable_nagle_algorithm = True  # headers and body go in two writes: no 40 ms ACK wait

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        name = req["next_action"]
        if name == "action_garbage":
            status, body = 200, b"{this is not JSON"
        elif name == "action_big":  # over the test's action_max_bytes
            status, body = 200, json.dumps({"responses": [{"text": "x" * 100000}]}).encode()
        elif name == "action_error500":
            status, body = 500, b'{"error": "the action crashed"}'
        else:
            status, body = 200, json.dumps(ACTIONS[name](req)).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the caller gave up waiting (the slow action)

    def log_message(self, fmt, *args):
        pass


def serve():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def write_bot(folder, port):
    for name in ("domain.yaml", "graph.yaml"):
        with open(os.path.join(HERE, name)) as f:
            text = f.read()
        text = text.replace("@PORT@", str(port)).replace("@DOWN@", str(free_port()))
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)


def main():
    server = serve()
    port = server.server_address[1]
    if sys.argv[1] == "serve":
        print(port, flush=True)
        threading.Event().wait()
    with tempfile.TemporaryDirectory() as folder:
        write_bot(folder, port)
        rc = subprocess.call(sys.argv[2:] + [folder])
    server.shutdown()
    sys.exit(rc)


if __name__ == "__main__":
    main()
