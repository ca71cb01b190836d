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
import base64
import json
import os
import re
import signal
import socket
import struct
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


class RawClient:
    """A websocket client on a plain socket that sends and never reads (past the handshake's
    answer): what a client that stopped reading its answers looks like to the server.
    rcvbuf, sndbuf: its socket's buffers, small so the server's writes stop early and the
    client's sends block soon after the server stops reading."""

    def __init__(self, port, rcvbuf=4096, sndbuf=16384):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
        self.sock.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n" % key).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            got = self.sock.recv(1)
            if not got:
                raise RuntimeError("the server closed during the handshake")
            head += got
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError("handshake refused: %r" % head[:100])

    def send(self, payload, binary=False, timeout=None):
        """Sends one masked frame; False when the server stopped reading (a timeout) or closed."""
        if isinstance(payload, str):
            payload = payload.encode()
        n = len(payload)
        head = bytes([0x82 if binary else 0x81])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload)) if n < 4096 else \
            (int.from_bytes(payload, "little") ^ int.from_bytes(mask * (n // 4 + 1), "little")
             % (1 << (8 * n))).to_bytes(n, "little")
        self.sock.settimeout(timeout)
        try:
            self.sock.sendall(head + mask + body)
            return True
        except (socket.timeout, OSError):
            return False

    def close(self):
        self.sock.close()


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
