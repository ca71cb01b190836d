"""test_ws_idle.py — plain TCP connections that never begin a handshake, more than the files
the server may open (its file limit set low for the test: 128).

They must not make the server spin or flood its log: while they are held it uses little CPU
and logs a handful of lines, not one per failed accept() (86,678 lines and 1.2 s of CPU in 3 s
before it stopped accepting at its limit); they are dropped after the handshake timeout,
after which /healthz answers again. Skips (77) without python3-websockets
or a build without libwebsockets.

Usage: test_ws_idle.py PARLEY
"""
import os
import resource
import socket
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, done  # noqa: E402
from ws_server import HERE, Server, skip_without_ws_server  # noqa: E402

parley = sys.argv[1]
skip_without_ws_server(parley)
LIMIT, IDLE = 128, 150


def low_file_limit():
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


def cpu_s(pid):
    """User + system CPU seconds of a process so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft < IDLE + 64:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, IDLE + 256), hard))
import tempfile  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    srv = Server(parley, None, tmp, graph=os.path.join(HERE, "audio_only.yaml"),
                 preexec=low_file_limit)
    socks = []
    try:
        for _ in range(IDLE):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
            socks.append(s)
        time.sleep(1)
        lines0, cpu0 = len(srv.log), cpu_s(srv.proc.pid)
        time.sleep(3)
        lines, cpu = len(srv.log) - lines0, cpu_s(srv.proc.pid) - cpu0
        check(cpu < 0.5, "CPU while %d idle connections are held: %.2f s in 3 s" % (IDLE, cpu))
        check(lines < 20, "log lines while they are held: %d in 3 s: %s" % (
            lines, "".join(srv.log[-3:])))
        check(srv.proc.poll() is None, "the server is running")
        t0 = time.monotonic()
        with urllib.request.urlopen(srv.http("/healthz"), timeout=60) as r:
            ok = r.status == 200
        # The server holds 64 sockets at this limit (128 less 64 for its own files); the rest
        # wait in the kernel's backlog and each round is dropped after the 10 s handshake
        # timeout: /healthz, queued behind 150, gets in within three rounds.
        check(ok and time.monotonic() - t0 < 45, "/healthz once idle ones time out: %.1f s" % (
            time.monotonic() - t0))
    finally:
        for s in socks:
            s.close()
        srv.stop()
sys.exit(done("ws idle connections"))
