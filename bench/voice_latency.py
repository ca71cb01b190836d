"""voice_latency.py — speech over a real websocket: latency from the end of an utterance to
the reply and to the first byte of its speech, how many real-time streams the machine
carries, and the server's memory (bench/RESULTS.md).

Starts `parley run samples/voice/pipeline.yaml` (port 0, the model given, a fresh store),
makes one order with flite, voice slt ("i want a large pizza", 16 kHz, or --text) and streams
it in 100 ms frames at real-time pace. Mode eof: the client sends {"eof":1} right after the
speech and times from that send to the reply and to the binary frame of the reply's speech. Mode
endpoint: the speech is followed by silence at real-time pace until the reply; times from
the last frame of the order's audio (flite's own trailing silence, about 0.1 s, included) to
the reply: the endpoint's silence plus the reply's time. The server's endpoint follows what
the recognizer hears before the silence: 600 ms after a whole request ("i want a large
pizza" is one), 1 s where it cannot tell (docs/voice.md). Then N clients at once (each
streaming in real time, eof mode): the slowest reply, and VmHWM of the server; first as new
users (a first utterance waits for its own first mean), then as users heard once before
(named with a config message: they start from the mean they left).

With --room SNR the order is a recording of one request in a kitchen: 2 s of the
kitchen-like noise of bench/voice_wer.py before it and 1.5 s after, the noise over all of it
at SNR dB. The recognizer then hears the utterance again on the speaker's words alone
(docs/voice.md), and noisy speech asks the generic model for a second opinion. The times
then run from the end of the order's speech (the endpoint's 1 s of silence included: the
noise after it ends the utterance before the client's eof); server_cut_to_reply is the
server's own time from the utterance's last audio (its endpoint, or the eof) to the reply.

With --text T the order is T instead: a longer request, as people make at a counter, shows
what the recognizer leaves to the end of an utterance (the search's second pass; a new
user's two more frequency scales), which grows with its length.

Usage: python3 bench/voice_latency.py PARLEY MODEL_DIR [RUNS] [--room SNR] [--text T]
"""
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "services", "ws"))
from ws_server import Server, websockets  # noqa: E402

parley, model = sys.argv[1:3]
runs = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3][0] != "-" else 20
room = float(sys.argv[sys.argv.index("--room") + 1]) if "--room" in sys.argv else None
text = sys.argv[sys.argv.index("--text") + 1] if "--text" in sys.argv else "i want a large pizza"
tmp = tempfile.mkdtemp(prefix="parley-vlat-")
wav = os.path.join(tmp, "o.wav")
raw = os.path.join(tmp, "o.raw")
subprocess.run(["flite", "-voice", "slt", "-t", text, "-o", wav], check=True)
subprocess.run(["sox", wav, "-r", "16000", "-b", "16", "-c", "1", "-e", "signed", "-t", "raw",
                raw, "pad", "0.2", "0"], check=True)
speech = open(raw, "rb").read()
order_end = len(speech)  # where the order's speech ends, in bytes
if room is not None:
    import numpy as np
    import voice_wer as vw
    vw.configure([None, parley, tmp])
    x = np.frombuffer(speech, dtype=np.int16).astype(np.float64)
    x = np.concatenate([np.zeros(32000), x, np.zeros(24000)])
    noise = vw.kitchen_noise(10)[:len(x)]
    x += noise * np.sqrt(vw.active_power(x) / 10 ** (room / 10))
    speech = np.clip(x, -32768, 32767).astype(np.int16).tobytes()
    order_end += 2 * 32000
FRAME = 3200  # 100 ms
after_cut = []  # the server's time from the utterance's last audio to each reply (ms)


async def utterance(url, endpoint, user=None):
    async with websockets.connect(url, max_size=None) as ws:
        json.loads(await ws.recv())
        if user:  # a returning user: their next utterance starts from their own mean
            await ws.send(json.dumps({"config": {"user": user}}))
            json.loads(await ws.recv())
        t_last = t_order = 0.0
        start = time.monotonic()
        for i in range(0, len(speech), FRAME):
            await ws.send(speech[i:i + FRAME])
            t_last = time.monotonic()
            if i < order_end <= i + FRAME:
                t_order = t_last
            await asyncio.sleep(max(0, start + (i + FRAME) / 32000 - time.monotonic()))
        pacer = None
        if endpoint:
            t0 = t_last

            async def silence():  # paced, until the reply (at most 3 s)
                for k in range(30):
                    await ws.send(bytes(FRAME))
                    await asyncio.sleep(0.1)
            pacer = asyncio.create_task(silence())
        else:
            await ws.send(json.dumps({"eof": 1}))
            t0 = time.monotonic() if room is None else t_order
        t_reply = t_audio = None
        while t_audio is None:
            m = await asyncio.wait_for(ws.recv(), 60)
            if isinstance(m, bytes):
                t_audio = time.monotonic()
            elif json.loads(m).get("type") == "reply" and t_reply is None:
                t_reply = time.monotonic()
                after_cut.append(json.loads(m)["latency_ms"]["total"])
        if pacer:
            pacer.cancel()
        return (t_reply - t0) * 1000, (t_audio - t0) * 1000


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def hwm_mb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0


srv = Server(parley, None, tmp, "ws.port=0", "ws.trust_user_ids=true", "nlu.model=" + model,
             "dialog.model=" + model,
             "dialog.store=" + os.path.join(tmp, "v.db"),
             "asr.cache_dir=" + os.path.join(tmp, "cache"),
             graph=os.path.join(ROOT, "samples", "voice", "pipeline.yaml"))
url = srv.url()
out = {"speech_s": round(len(speech) / 32000, 2), "runs": runs, "room_snr_db": room, "text": text}
asyncio.run(utterance(url, False))  # warm-up: first decoder, first synthesis
for mode in ("order_end",) if room is not None else ("eof", "endpoint"):
    after_cut.clear()
    res = [asyncio.run(utterance(url, mode == "endpoint")) for _ in range(runs)]
    r = [a for a, _ in res]
    s = [b for _, b in res]
    out[mode] = {"reply_p50_ms": round(statistics.median(r), 1), "reply_p99_ms": round(pct(r, 99), 1),
                 "speech_p50_ms": round(statistics.median(s), 1),
                 "speech_p99_ms": round(pct(s, 99), 1),
                 "server_cut_to_reply_p50_ms": round(statistics.median(after_cut), 1),
                 "server_cut_to_reply_p99_ms": round(pct(after_cut, 99), 1)}
    print(mode, out[mode], flush=True)


async def together(n, users=None):
    return await asyncio.gather(*[utterance(url, False, users and users[k]) for k in range(n)])

# new users (each utterance a first one: its first mean measured on its own speech), then
# users heard once before, named, so each starts from the mean their last utterance left
for kind in ("concurrent", "concurrent_returning"):
    out[kind] = {}
    for n in (1, 5, 10, 20) if room is not None else (1, 5, 10, 20, 30, 40):
        users = None
        if kind == "concurrent_returning":
            users = ["bench-%d-%d" % (n, k) for k in range(n)]
            asyncio.run(together(n, users))  # their first utterances
        res = asyncio.run(together(n, users))
        worst = max(a for a, _ in res)
        out[kind][n] = {"slowest_reply_ms": round(worst, 1),
                        "median_reply_ms": round(statistics.median(a for a, _ in res), 1),
                        "server_hwm_mb": round(hwm_mb(srv.proc.pid), 1)}
        print(kind, n, out[kind][n], flush=True)
srv.stop()
print(json.dumps(out))
