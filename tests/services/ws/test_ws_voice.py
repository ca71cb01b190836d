"""test_ws_voice.py — speech over the websocket (ws.server + asr.pocketsphinx + tts.espeak).

Orders are spoken by flite (voice slt) and resampled by sox here (nothing recorded is committed).
Over the protocol: PCM at 8, 16, 44.1 and 48 kHz in frames of odd sizes (997 samples) gets
partial and final transcripts, the reply with its utterance number and the reply's speech
(an "audio" header, then a binary frame of exactly that many samples); a binary message of
an odd number of bytes is an error and the connection goes on; a long order (5.7 s) with
little silence around it keeps its softer last words ("... with ham please"); a smart-home request, which
the pizza model hears as pizza words that the NLU reads as an order ("send it can catch are
to tuna and ham big please": order_pizza, size large), is rejected by the recognizer's
confidence and answered by the fallback, its final showing the words heard; silence only makes no turn
({"end":1} is answered with an error saying so); a mains hum the stream's pause ends, heard
as no words, is answered by nothing, and the order after it on the same connection is
answered as its utterance 2, the stream closing at its eof; an utterance over max_ms is ended and
answered while the client still streams; two users speaking at once keep their own slots;
a client that vanishes mid-utterance leaves the server serving and its user's stored
context intact (resumed by id); `parley stream URL FILE.wav` prints partial, final, reply
and audio; 50 clients streaming at once all get replies (8 under ASan, for its memory cost per
decoder): each new stream makes its decoder on one of the recognizer's two workers, at once.

Usage: test_ws_voice.py PARLEY MODEL_DIR   (exits 77 without flite/sox, websockets, or
a build without the websocket server or pocketsphinx)
"""
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, done

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import sounds  # noqa: E402
from ws_server import Server, recv_json, skip_without_ws_server, websockets  # noqa: E402

parley, model = sys.argv[1:3]
if not (shutil.which("flite") and shutil.which("sox")):
    print("skip: needs flite and sox")
    sys.exit(77)
skip_without_ws_server(parley)
tmp = tempfile.mkdtemp(prefix="parley-wsvoice-")
LARGE, SMALL = "i want a large pizza", "i want a small pizza"
OUTSIDE = "set the temperature to twenty five degrees"
LONG_ORDER = ("hi um i would like a large pizza with mushrooms and extra cheese and a small "
              "pizza with ham please")


def pcm(text, rate, name, pad_end=1.2):
    """Raw 16-bit mono PCM of `text` at `rate`, with silence around it."""
    wav = os.path.join(tmp, name + ".wav")
    raw = os.path.join(tmp, name + ".raw")
    subprocess.run(["flite", "-voice", "slt", "-t", text, "-o", wav], check=True)
    subprocess.run(["sox", wav, "-r", str(rate), "-b", "16", "-c", "1", "-e", "signed",
                    "-t", "raw", raw, "pad", "0.3", str(pad_end)], check=True)
    return open(raw, "rb").read()


async def speak(ws, data, frame=2 * 997, pace=0.0):
    for i in range(0, len(data), frame):
        await ws.send(data[i:i + frame])
        if pace:
            await asyncio.sleep(pace)


async def collect(ws, until_close=True, want_replies=1, timeout=120):
    """Messages until the server closes (or want_replies replies came): text messages as
    dicts, binary frames as bytes."""
    got, replies = [], 0
    try:
        while until_close or replies < want_replies:
            m = await asyncio.wait_for(ws.recv(), timeout)
            m = m if isinstance(m, bytes) else json.loads(m)
            got.append(m)
            replies += isinstance(m, dict) and m.get("type") in ("reply", "error") and \
                "utterance" in m
    except (websockets.ConnectionClosed, asyncio.TimeoutError):
        pass
    return got


def of_type(msgs, t):
    return [m for m in msgs if isinstance(m, dict) and m.get("type") == t]


def hum_then(data):
    """The kiosk test's mains hum (tests/services/sounds.py), then data."""
    return sounds.mains_hum() + data


async def one_utterance(url, rate, text=LARGE, name="large", pad_end=1.2):
    data = pcm(text, rate, "%s%d" % (name, rate), pad_end)
    async with websockets.connect(url, max_size=None) as ws:
        await recv_json(ws)
        await ws.send(json.dumps({"config": {"sample_rate": rate}}))
        await recv_json(ws)
        await speak(ws, data)
        await ws.send(json.dumps({"eof": 1}))
        return await collect(ws)


async def main(srv):
    url = srv.url()
    # rates and odd frame sizes
    for rate in (8000, 16000, 44100, 48000):
        msgs = await one_utterance(url, rate)
        final = of_type(msgs, "final")
        reply = of_type(msgs, "reply")
        audio = of_type(msgs, "audio")
        check(len(reply) == 1 and reply[0].get("utterance") == 1,
              "%d Hz: one reply for utterance 1: %r" % (rate, msgs[:6]))
        if rate != 8000:  # telephone band: answered, not necessarily right
            check(final and final[-1]["text"] == LARGE, "%d Hz: final %r" % (rate, final))
            check(reply and reply[0].get("intent") == "order_pizza" and
                  reply[0].get("slots", {}).get("size") == "large", "%d Hz: %r" % (rate, reply))
        check(of_type(msgs, "partial") or rate == 8000, "%d Hz: partials came" % rate)
        i = msgs.index(audio[0]) if audio else -1
        check(audio and i + 1 < len(msgs) and isinstance(msgs[i + 1], bytes) and
              len(msgs[i + 1]) == 2 * audio[0]["samples"] and audio[0]["samples"] > 8000,
              "%d Hz: the reply's speech follows its header" % rate)

    # a long order with little silence around it: its softer last words stay (the speaker's
    # span, a floor of speech, once cut them, and the utterance was heard again without them)
    msgs = await one_utterance(url, 16000, LONG_ORDER, "longorder", pad_end=0.1)
    reply = of_type(msgs, "reply")
    check(reply and "ham" in reply[0].get("slots", {}).get("topping", ""),
          "a long order's last topping: %r" % of_type(msgs, "final")[-1:])

    # speech the bot does not serve: the recognizer rejects it (asr.pocketsphinx's
    # reject_below: its confidence is 41), so the fallback answers, not an order; the final
    # still shows what was heard
    msgs = await one_utterance(url, 16000, OUTSIDE, "outside")
    final, reply = of_type(msgs, "final"), of_type(msgs, "reply")
    check(final and len(final[-1]["text"].split()) >= 3, "outside: final %r" % final)
    check(len(reply) == 1 and reply[0].get("intent") == "fallback" and
          reply[0].get("reply", "").startswith("Sorry"), "outside: %r" % reply)

    # an odd binary message, then silence only
    async with websockets.connect(url) as ws:
        await recv_json(ws)
        await ws.send(b"\x01\x02\x03")
        e = await recv_json(ws)
        check(e.get("type") == "error" and "odd number" in e.get("error", ""), "odd: %r" % e)
        await speak(ws, bytes(2 * 16000 * 2))  # 2 s of silence
        await ws.send(json.dumps({"end": 1}))
        e = await recv_json(ws)
        check(e.get("type") == "error" and "no speech" in e.get("error", ""), "silence: %r" % e)
        await ws.send(json.dumps({"eof": 1}))
        rest = await collect(ws)
        check(not of_type(rest, "reply") and not of_type(rest, "final"),
              "silence makes no turn: %r" % rest)

    # a hum the pause ends is heard as no words: nothing answers it, and the order after it is
    # answered as utterance 2 (the turn left no reply owed: the eof closes the stream)
    async with websockets.connect(url, max_size=None) as ws:
        await recv_json(ws)
        await speak(ws, hum_then(pcm(LARGE, 16000, "afterhum")))
        await ws.send(json.dumps({"eof": 1}))
        msgs = await collect(ws)
    answers = [m for m in msgs if isinstance(m, dict) and m.get("type") in ("reply", "error")]
    check(len(answers) == 1 and answers[0].get("type") == "reply" and
          answers[0].get("utterance") == 2 and answers[0].get("slots", {}).get("size") == "large",
          "a hum, then an order: only the order answered: %r" % answers)

    # two users at once keep their own slots
    a, b = pcm(LARGE, 16000, "a"), pcm(SMALL, 16000, "b")

    async def user(data):
        async with websockets.connect(url, max_size=None) as ws:
            ready = await recv_json(ws)
            await speak(ws, data, pace=0.01)
            await ws.send(json.dumps({"eof": 1}))
            return ready["user"], await collect(ws)
    (ua, ma), (ub, mb) = await asyncio.gather(user(a), user(b))
    ra, rb = of_type(ma, "reply"), of_type(mb, "reply")
    check(ra and rb and ra[0]["user"] == ua and rb[0]["user"] == ub and ua != ub,
          "two users answered on their own connections")
    check(ra and ra[0]["slots"].get("size") == "large" and rb and
          rb[0]["slots"].get("size") == "small", "their slots apart: %r %r" % (ra, rb))

    # a client that vanishes mid-utterance; its user comes back
    async with websockets.connect(url, max_size=None) as ws:
        ready = await recv_json(ws)
        await speak(ws, a)
        await ws.send(json.dumps({"end": 1}))
        first = await collect(ws, until_close=False)
        await speak(ws, a[:len(a) // 3])  # half an utterance, then gone
    uid = ready["user"]
    check(of_type(first, "reply"), "the first utterance was answered")
    async with websockets.connect(url) as ws:
        await recv_json(ws)
        await ws.send(json.dumps({"config": {"user": uid}}))
        r = await recv_json(ws)
        check(r.get("resumed") is True, "resumed: %r" % r)
        await ws.send(json.dumps({"text": "with mushrooms", "id": 1}))
        r = await recv_json(ws)
        check(r.get("type") == "reply" and r["slots"].get("size") == "large",
              "the context survived the drop, and the dropped utterance's words were not "
              "shown to the new connection: %r" % r)


async def long_utterance(url):
    """max_ms 1500: a 3-utterance-long stream of speech is cut and answered as it goes."""
    data = pcm("i want a large pizza with mushrooms and olives and extra cheese and pepperoni",
               16000, "long", pad_end=0.2)
    async with websockets.connect(url, max_size=None) as ws:
        await recv_json(ws)
        await speak(ws, data)
        early = await collect(ws, until_close=False, timeout=60)
        await ws.send(json.dumps({"eof": 1}))
        await collect(ws)
    check(early and any(isinstance(m, dict) and m.get("utterance") == 1 and
                        m.get("type") in ("reply", "error") for m in early),
          "an utterance over max_ms is answered before the stream ends: %r" % early[:4])


async def many(url, n):
    data = pcm(LARGE, 16000, "many")

    async def client():
        async with websockets.connect(url, max_size=None) as ws:
            await recv_json(ws)
            await speak(ws, data, frame=3200, pace=0.02)
            await ws.send(json.dumps({"eof": 1}))
            return of_type(await collect(ws, timeout=240), "reply")
    replies = await asyncio.gather(*[client() for _ in range(n)])
    check(all(len(r) == 1 for r in replies), "%d streams at once: %d answered" %
          (n, sum(len(r) == 1 for r in replies)))


sets = ["asr.cache_dir=" + os.path.join(tmp, "cache")]
graph = os.path.join(HERE, "pizza_voice.yaml")
srv = Server(parley, model, tmp, *sets, graph=graph)
asyncio.run(main(srv))
# parley stream with a WAV file
wav = os.path.join(tmp, "stream.wav")
subprocess.run(["sox", "-r", "16000", "-b", "16", "-c", "1", "-e", "signed", "-t", "raw",
                os.path.join(tmp, "large16000.raw"), wav], check=True)
r = subprocess.run([parley, "stream", srv.url(), wav, "--fast"], capture_output=True, text=True,
                   timeout=120)
kinds = [json.loads(line).get("type") for line in r.stdout.splitlines()]
check(r.returncode == 0 and "partial" in kinds and "final" in kinds and "reply" in kinds and
      "audio" in kinds, "parley stream: rc %d, %r %s" % (r.returncode, kinds, r.stderr[-300:]))
asan = b"libasan" in subprocess.run(["ldd", parley], capture_output=True).stdout
asyncio.run(many(srv.url(), 8 if asan else 50))
check(srv.stop() == 0, "the server stops cleanly")

srv = Server(parley, model, tmp, *sets, "ws.max_ms=1500", graph=graph)
asyncio.run(long_utterance(srv.url()))
check(srv.stop() == 0, "the server stops cleanly")
shutil.rmtree(tmp)
sys.exit(done("services/ws_voice_protocol"))
