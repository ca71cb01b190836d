"""ws_idle.py — what plain TCP connections that never begin a handshake cost the websocket
server: how many it holds, its CPU and log lines while they are held, and how long
/healthz waits behind them (bench/RESULTS.md, "Hardening and soak").

Starts `parley run tests/services/ws/audio_only.yaml` (no model) with the open-file limit
given (soft and hard), opens N sockets that send nothing, then measures for 5 s: the
server's open files (/proc/PID/fd), its CPU seconds, its stderr lines; then the time a
/healthz request takes. Needs python3-websockets only to start the server the tests' way.

Usage: ws_idle.py PARLEY [N] [FILE_LIMIT]   (defaults 1400, 1024)
"""
import os
import resource
import socket
import sys
import tempfile
import time
import urllib.request

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "services", "ws"))
from ws_server import HERE, Server  # noqa: E402

parley = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1400
limit = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 256), hard))


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


with tempfile.TemporaryDirectory() as tmp:
    srv = Server(parley, None, tmp, graph=os.path.join(HERE, "audio_only.yaml"),
                 preexec=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit)))
    socks = [socket.create_connection(("127.0.0.1", srv.port), timeout=10) for _ in range(n)]
    time.sleep(1)
    lines0, cpu0 = len(srv.log), cpu_s(srv.proc.pid)
    time.sleep(5)
    held = len(os.listdir("/proc/%d/fd" % srv.proc.pid))
    cpu, lines = cpu_s(srv.proc.pid) - cpu0, len(srv.log) - lines0
    t0 = time.monotonic()
    with urllib.request.urlopen(srv.http("/healthz"), timeout=300) as r:
        status = r.status
    wait = time.monotonic() - t0
    for s in socks:
        s.close()
    srv.stop()
    print("idle sockets %d, file limit %d: server files open %d, CPU %.2f s and %d log lines "
          "in 5 s, /healthz %d after %.1f s" % (n, limit, held, cpu, lines, status, wait))
