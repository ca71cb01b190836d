"""ws_server.py — what the websocket tests share: a `parley run` of tests/services/ws/pizza_ws.yaml
(or a graph given) started on a free port, and small client helpers over python3-websockets.

Server(parley, model, tmp, *sets) starts the graph with the test model and a fresh store
(model None: a graph without the pizza bot's nodes, started as it is; preexec runs in the
child before it starts, as subprocess's preexec_fn),
reads the port from the line "ws: listening on ws://HOST:PORT/" on stderr, and keeps reading
stderr (kept in .log). stop(sig) sends a signal and waits for the exit code. The tests exit 77
when python3-websockets is missing or the build has no websocket server (NOT_BUILT: when a
Server starts, or up front with skip_without_ws_server).
"""
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

try:
    import websockets
except ImportError:
    print("python3-websockets is not installed: skipped")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPH = os.path.join(HERE, "pizza_ws.yaml")
LISTEN = re.compile(r"ws: listening on (wss?)://([0-9.]+):([0-9]+)/")


def skip_without_ws_server(parley):
    """Exits 77 in a build without the websocket server: a graph naming ws.server does not
    open there (NOT_BUILT), where a build with it refuses a certificate without its key."""
    p = subprocess.run([parley, "run", os.path.join(HERE, "audio_only.yaml"), "--set",
                        "ws.cert=x"], capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    if b"PARLEY_ERR_NOT_BUILT" in p.stderr:
        print("this build has no websocket server (no libwebsockets): skipped")
        sys.exit(77)


class Server:
    def __init__(self, parley, model, tmp, *sets, graph=GRAPH, preexec=None):
        args = [parley, "run", graph]
        if model:  # a graph with the pizza bot's nodes
            args += ["--set", "nlu.bert.model=" + model, "--set", "dialog.model=" + model,
                     "--set", "dialog.store=" + os.path.join(tmp, "pizza.db")]
        for s in sets:
            args += ["--set", s]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, preexec_fn=preexec)
        self.log = []
        self.port = None
        self.scheme = None
        ready = threading.Event()

        def read_stderr():
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace")
                self.log.append(line)
                m = LISTEN.search(line)
                if m and not ready.is_set():
                    self.scheme, self.port = m.group(1), int(m.group(3))
                    ready.set()
            ready.set()

        self.reader = threading.Thread(target=read_stderr, daemon=True)
        self.reader.start()
        ready.wait(120)
        if self.port is None:
            self.proc.kill()
            if any("PARLEY_ERR_NOT_BUILT" in line for line in self.log):
                print("this build has no websocket server (no libwebsockets): skipped")
                sys.exit(77)
            raise RuntimeError("the server did not start: " + "".join(self.log))

    def url(self, path="/"):
        return "%s://127.0.0.1:%d%s" % (self.scheme, self.port, path)

    def http(self, path):
        return "%s://127.0.0.1:%d%s" % ("https" if self.scheme == "wss" else "http", self.port,
                                        path)

    def rss_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Sends sig (None: none, it is stopping already), waits; returns the exit code (None
        when it had to be killed)."""
        if sig is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = None
        self.reader.join(5)
        return rc


async def recv_json(ws, timeout=60):
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))


async def turn(ws, text, **extra):
    """Sends a typed turn and returns the server's answer to it."""
    await ws.send(json.dumps(dict(text=text, **extra)))
    return await recv_json(ws)


async def closed_with(ws, timeout=30):
    """Waits for the server to close ws; returns (code, reason, messages received before)."""
    got = []
    try:
        while True:
            got.append(json.loads(await asyncio.wait_for(ws.recv(), timeout)))
    except websockets.ConnectionClosed as e:
        return e.code, e.reason, got
