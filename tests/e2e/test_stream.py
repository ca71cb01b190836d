"""test_stream.py — `parley stream` against the real websocket server (samples/pizza/server.yaml).

Typed turns (--text, and standard input's lines with '-', waiting or not) are answered in
order with replies that carry their ids, and the session ends with the server's normal close
(exit 0); a WAV file is refused by this graph with the protocol's "no speech recognizer"
error (exit 1, the error printed); a WAV file that is not 16-bit PCM mono, one at a rate the
protocol does not take and a file that is no WAV are refused before connecting; a token right and wrong (HTTP 401, exit 1), a
client-chosen user id with the token, a message over max_message_bytes (close 1009), one
connection more than max_connections (HTTP 503); wss:// with a certificate made at test
time, trusted with --ca or --insecure and refused otherwise; --user with a ready id resumes
the conversation where it was, and without the token a made-up id is refused; no turns at all is a clean close; a
turn the server answers with an error fails the run, and so does a line that is not UTF-8
(the server closes with 1007); a server that is not there, a bad URL,
a server that never speaks (--timeout) and usage errors each fail with a clear message.
Every stdout line is one JSON object. The server is started by tests/services/ws/ws_server.py
(which skips, 77, without python3-websockets or a build without libwebsockets).

Usage: test_stream.py PARLEY MODEL_DIR SOURCE_ROOT
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import wave

from checks import check, done

parley, model, root = sys.argv[1:4]
graph = os.path.join(root, "samples", "pizza", "server.yaml")

sys.path.insert(0, os.path.join(root, "tests", "services", "ws"))
from ws_server import Server, skip_without_ws_server  # noqa: E402 (exits 77 without websockets)

skip_without_ws_server(parley)


def start(tmp, *sets):
    """`parley run samples/pizza/server.yaml` on a free port with the test model."""
    return Server(parley, model, tmp, "ws.server.port=0", *sets, graph=graph)


def stream(*args, stdin=None, timeout=120):
    """Runs parley stream; returns (exit code, the stdout lines as objects, stderr)."""
    p = subprocess.run([parley, "stream"] + list(args), input=stdin, capture_output=True,
                       text=True, timeout=timeout)
    lines = []
    for line in p.stdout.splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            check(False, "stdout line is not JSON: %r" % line)
    check(p.stdout == "" or p.stdout.endswith("\n"), "stdout ends with a newline")
    return p.returncode, lines, p.stderr


def of_type(lines, t):
    return [m for m in lines if m.get("type") == t]


def write_wav(path, channels=1, width=2, seconds=0.5):
    with wave.open(path, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(16000)
        w.writeframes(b"\x10\x00" * (width // 2 if width > 1 else 1) * channels *
                      int(16000 * seconds))


with tempfile.TemporaryDirectory() as tmp:
    srv = start(tmp)
    try:
        url = srv.url()
        # Typed turns, in order, each answered; the dialog's slots carry over.
        rc, out, err = stream(url, "--text", "i want a large pizza with mushrooms",
                              "--text", "2 pizzas")
        check(rc == 0, "typed turns: exit %d: %s" % (rc, err))
        ready = of_type(out, "ready")
        check(len(ready) == 1 and re.fullmatch(r"u-[0-9a-f]{32}", ready[0].get("user", "")),
              "one ready with a server-issued id first: %s" % out[:1])
        check(out[:1] == ready[:1], "ready comes first")
        replies = of_type(out, "reply")
        check([r.get("id") for r in replies] == [1, 2], "replies carry the ids: %s" % replies)
        check(replies[:1] and replies[0].get("intent") == "order_pizza"
              and replies[0].get("slots", {}).get("size") == "large",
              "the order is understood: %s" % replies[:1])
        check(len(replies) == 2 and replies[1].get("slots", {}).get("count") == "2"
              and replies[1]["slots"].get("size") == "large",
              "the second turn goes on from the first: %s" % replies[1:])
        user = ready[0]["user"] if ready else ""

        # --user with the ready id resumes that conversation on a new connection.
        rc, out, err = stream(url, "--user", user, "--text", "deliver to 5 main street")
        check(rc == 0, "resume: exit %d: %s" % (rc, err))
        ready = of_type(out, "ready")
        check(len(ready) == 2 and ready[1].get("user") == user and ready[1].get("resumed") is True,
              "the second ready resumes the user: %s" % ready)
        replies = of_type(out, "reply")
        check(len(replies) == 1 and replies[0].get("slots", {}).get("count") == "2"
              and replies[0]["slots"].get("address") == "5 main street",
              "the resumed conversation keeps its order: %s" % replies)

        # A made-up id without the token is refused: the run fails, the error printed.
        rc, out, err = stream(url, "--user", "alice", "--text", "hello")
        check(rc == 1 and "parley stream: the server refused the config (--user)" in err,
              "made-up --user without token: exit %d: %s" % (rc, err))
        check(len(of_type(out, "error")) == 1 and not of_type(out, "reply"),
              "the refusal is printed and no turn is sent: %s" % out)

        # Standard input's lines, blank ones skipped; waiting and not waiting.
        for extra in ([], ["--no-wait"]):
            rc, out, err = stream(url, "-", *extra, stdin="hello\n\n  \nthanks\r\ncancel my order\n")
            replies = of_type(out, "reply")
            check(rc == 0 and [r.get("id") for r in replies] == [1, 2, 3]
                  and [r.get("text") for r in replies] == ["hello", "thanks", "cancel my order"],
                  "stdin lines %s: exit %d, %s: %s" % (extra, rc, replies, err))

        # No turns at all: ready, then {"eof":1} and the server's normal close.
        rc, out, err = stream(url)
        check(rc == 0 and len(out) == 1 and out[0].get("type") == "ready",
              "no turns: exit %d, %s: %s" % (rc, out, err))

        # A turn the server answers with an error (a text over the limit) fails the run.
        rc, out, err = stream(url, "-", stdin="x" * 70000 + "\n")
        errors = of_type(out, "error")
        check(rc == 1 and len(errors) == 1 and errors[0].get("id") == 1,
              "an empty turn: exit %d, %s" % (rc, out))
        check("parley stream: the server answered with 1 error(s)" in err, "says so: %s" % err)

        # A line that is not UTF-8 goes out as it is: the server closes with 1007.
        p = subprocess.run([parley, "stream", url, "-"], input=b"caf\xe9\n", capture_output=True,
                           timeout=120)
        check(p.returncode == 1 and b"the server closed the connection" in p.stderr
              and b"(code 1007)" in p.stderr, "not UTF-8: exit %d: %s" % (p.returncode, p.stderr))

        # A WAV file: this graph has no speech recognizer, which the server says once.
        wav = os.path.join(tmp, "speech.wav")
        write_wav(wav)
        for extra in ([], ["--fast"]):
            t0 = time.monotonic()
            rc, out, err = stream(url, wav, *extra)
            took = time.monotonic() - t0
            errors = of_type(out, "error")
            check(rc == 1 and len(errors) == 1
                  and "no speech recognizer" in errors[0].get("error", ""),
                  "WAV %s: exit %d, %s: %s" % (extra, rc, out, err))
            check(len(of_type(out, "ready")) == 2 and of_type(out, "ready")[1].get(
                "sample_rate") == 16000, "WAV %s: the rate is configured: %s" % (extra, out))
            if not extra:
                check(took >= 0.45, "0.5 s of audio at real-time pace takes 0.5 s: %.2f" % took)
        stereo = os.path.join(tmp, "stereo.wav")
        write_wav(stereo, channels=2)
        rc, out, err = stream(url, stereo)
        check(rc == 1 and out == [] and "only 16-bit PCM mono" in err,
              "stereo WAV: exit %d: %s" % (rc, err))
        slow = os.path.join(tmp, "slow.wav")
        with wave.open(slow, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(4000)
            w.writeframes(b"\0\0" * 400)
        rc, out, err = stream(url, slow)
        check(rc == 1 and out == [] and "4000 Hz; the protocol takes 8000 to 48000" in err,
              "a rate out of range: exit %d: %s" % (rc, err))
        rc, out, err = stream(url, graph)
        check(rc == 1 and out == [] and "not a WAV file" in err, "not a WAV: %d %s" % (rc, err))
        rc, out, err = stream(url, wav, "--text", "hi")
        check(rc == 2 and "do not go together" in err, "WAV and --text: %d %s" % (rc, err))
    finally:
        srv.stop()

    # A server with a token: refused without it or with a wrong one (HTTP 401 at the
    # handshake); with it, a client-chosen id is accepted.
    srv = start(tmp, "ws.server.token=s3cret", "ws.server.max_connections=1",
                 "ws.server.max_message_bytes=2048")
    try:
        for args in ([], ["--token", "wrong"]):
            rc, out, err = stream(srv.url(), "--text", "hello", *args)
            check(rc == 1 and out == [] and "HTTP 401" in err,
                  "token %s: exit %d: %s" % (args, rc, err))
        rc, out, err = stream(srv.url(), "--token", "s3cret", "--user", "alice", "--text", "hello")
        ready = of_type(out, "ready")
        check(rc == 0 and len(ready) == 2 and ready[1].get("user") == "alice"
              and of_type(out, "reply")[0].get("user") == "alice",
              "right token and a chosen id: exit %d, %s: %s" % (rc, out, err))
        # A message over max_message_bytes: the server closes with 1009, and the run fails.
        rc, out, err = stream(srv.url(), "--token", "s3cret", "--text", "x" * 4000)
        check(rc == 1 and "parley stream: the server closed the connection" in err
              and "(code 1009)" in err, "over max_message_bytes: exit %d: %s" % (rc, err))
        # One connection held open (its standard input stays open): the next is refused
        # at the handshake with HTTP 503.
        held = subprocess.Popen([parley, "stream", srv.url(), "--token", "s3cret", "-"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        check(json.loads(held.stdout.readline()).get("type") == "ready", "the first is in")
        rc, out, err = stream(srv.url(), "--token", "s3cret", "--text", "hello")
        check(rc == 1 and out == [] and "HTTP 503" in err, "over max_connections: %d %s" % (rc, err))
        held.communicate("hello\n", timeout=60)
        check(held.returncode == 0, "the held connection ends well: exit %d" % held.returncode)
    finally:
        srv.stop()

    # TLS with a self-signed certificate made now: refused unless trusted.
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days",
                           "1", "-subj", "/CN=localhost", "-keyout", key, "-out", cert],
                          capture_output=True)
    if made.returncode != 0:
        print("no openssl: the TLS cases are left out")
    else:
        srv = start(tmp, "ws.server.cert=" + cert, "ws.server.key=" + key)
        try:
            check(srv.url().startswith("wss://"), "the server speaks TLS: %s" % srv.url())
            tls = srv.url().replace("127.0.0.1", "localhost")  # the certificate's name
            rc, out, err = stream(tls, "--text", "hello")
            check(rc == 1 and out == [] and "TLS handshake failed" in err,
                  "an untrusted certificate: exit %d: %s" % (rc, err))
            for args in (["--ca", cert], ["--insecure"]):
                rc, out, err = stream(tls, "--text", "hello", *args)
                check(rc == 0 and len(of_type(out, "reply")) == 1,
                      "wss with %s: exit %d, %s: %s" % (args, rc, out, err))
        finally:
            srv.stop()

    # Nobody there: a port that was free a moment ago.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    rc, out, err = stream("ws://127.0.0.1:%d/" % port, "--text", "hi")
    check(rc == 1 and out == [] and "parley stream: cannot connect to 127.0.0.1:%d" % port in err,
          "no server: exit %d: %s" % (rc, err))

    # A server that accepts the connection and never answers: --timeout ends the wait.
    mute = socket.socket()
    mute.bind(("127.0.0.1", 0))
    mute.listen(1)
    t0 = time.monotonic()
    rc, out, err = stream("ws://127.0.0.1:%d/" % mute.getsockname()[1], "--timeout", "2",
                          "--text", "hi")
    took = time.monotonic() - t0
    mute.close()
    check(rc == 1 and out == [] and err.startswith("parley stream: ") and took < 15,
          "a mute server: exit %d after %.1f s: %s" % (rc, took, err))

    # What a server says is printed without its control characters: no escape sequence or
    # bell reaches the terminal (an independent server: tests/services/ws_peer.py).
    peer = subprocess.Popen([sys.executable, os.path.join(root, "tests", "services", "ws_peer.py")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port = int(peer.stdout.readline())
        rc, out, err = stream("ws://127.0.0.1:%d/escape" % port, "--timeout", "10", "--text", "hi")
        check(rc == 1 and "bye ?[31mred?]0;title? ?2J" in err and "\x1b" not in err and
              "\x07" not in err and "\u009b" not in err, "a close reason with escapes: %d %r" % (
                  rc, err))
        rc, out, err = stream("ws://127.0.0.1:%d/escape_msg" % port, "--timeout", "10", "--text",
                              "hi")
        check(rc == 1 and "not JSON: ?[2J?[31mnot json" in err and "\x1b" not in err,
              "a message with escapes: %d %r" % (rc, err))
    finally:
        peer.stdin.close()
        peer.wait(timeout=30)

    # Usage errors.
    rc, out, err = stream("http://127.0.0.1:1/")
    check(rc == 1 and "it must begin with ws:// or wss://" in err, "bad URL: %d %s" % (rc, err))
    for args in ([], ["ws://x/", "--timeout", "0"], ["ws://x/", "--bogus"], ["ws://x/", "--text"]):
        rc, out, err = stream(*args)
        check(rc == 2, "usage %s: exit %d: %s" % (args, rc, err))
    p = subprocess.run([parley, "stream", "--help"], capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout.startswith("usage: parley stream URL"),
          "--help: exit %d: %s" % (p.returncode, p.stdout[:80]))

sys.exit(done("stream"))
