"""voice_endpoint.py — how the audio sources cut a stream into utterances in noise, for
bench/RESULTS.md#voice-endpoint: the turns a graph makes of streams of several spoken
commands with the noise running through the pauses between them, and the commands that come
out right.

A kiosk in a kitchen hears noise all the time, between the orders too. Each stream here is
one speaker: bench/voice_wer.py's utterances of a bot (the same draw: seed 7, seven voices of
three engines) in one voice, up to 8 of them, as one user (the recognizer carries the
speaker's cepstral mean from one to the next), with 2.5 s of pause before each and after
the last, the noise mixed in over the
whole stream at 18, 12 or 6 dB under the mean active speech power (bench/voice_wer.py's
kitchen-like noise: chatter, rumble, clatter; and a stationary one: rumble, clatter, a 120 Hz
hum, white noise). It goes through a graph as an application would run it: audio.gst reads
the file and cuts it, asr.pocketsphinx recognizes with the bot's model, nlu.bert parses (a
small model trained here, as bench/voice_wer.py's), text.stdout prints each turn's parse.
Figures: turns made (one per command is right), streams cut into exactly one turn per
command, and commands accepted (a turn with the command's intent and every slot right,
matched in order).

With --single, each command is a stream of its own, as a recording of one request is: 1 s
of pause before it and 1.5 s after, the noise over all of it; a command is accepted when
its stream gives exactly one turn and that turn is right.

With --pause S, the speaker stops for S s in the middle of each command: its words up to
the middle one and the rest are synthesized apart (same voice), their own silences trimmed,
and S s of silence put between (the noise runs through it too). A command is kept whole
when the endpoint waits the pause out.

Usage: python3 bench/voice_endpoint.py PARLEY OUTDIR [--per-bot N] [--bots pizza,smarthome]
       [--single] [--pause S] [--conditions "clean,kitchen 12 dB,..."]
"""
import json
import os
import subprocess
import sys

import numpy as np

import voice_wer as V

PER_STREAM, GAP_S = 8, 2.5
CONDITIONS = [("clean", None, None), ("kitchen 18 dB", "kitchen", 18),
              ("kitchen 12 dB", "kitchen", 12), ("kitchen 6 dB", "kitchen", 6),
              ("stationary 12 dB", "stationary", 12), ("stationary 6 dB", "stationary", 6)]

GRAPH = """name: endpoint
nodes:
  - name: mic
    kind: audio.gst
    params: {{ source: "filesrc location={wav} ! decodebin", user: kiosk }}
  - name: asr
    kind: asr.pocketsphinx
    inputs: {{ in: mic.audio }}
    params: {{ nlu_data: {nlu} }}
  - name: nlu
    kind: nlu.bert
    inputs: {{ text: asr.text }}
    params: {{ model: {model}, device: cpu }}
  - name: output
    kind: text.stdout
    inputs: {{ reply: nlu.result }}
"""


def stream(clips, noise, snr, path, before=GAP_S, after=GAP_S):
    """The clips with `before` s of pause before each and `after` after the last, noise over
    all at snr dB."""
    gap = np.zeros(int(before * 16000))
    x = np.concatenate([np.concatenate([gap, c]) for c in clips] + [np.zeros(int(after * 16000))])
    if noise is not None:
        power = np.mean([V.active_power(c) for c in clips])
        x = x + np.resize(noise, len(x)) * np.sqrt(power / 10 ** (snr / 10))
    V.write_wav(path, x)


def trimmed(x):
    """x without its leading and trailing 10 ms frames more than 40 dB under its loudest."""
    frames = np.sqrt(np.mean(x[:len(x) // 160 * 160].reshape(-1, 160) ** 2, axis=1))
    loud = np.nonzero(frames > frames.max() * 0.01)[0]
    return x[loud[0] * 160:(loud[-1] + 1) * 160]


def paused_clip(bot, i, text, pause_s):
    """Command i's text said in two halves with pause_s s of silence between."""
    words = text.split()
    halves = (" ".join(words[:len(words) // 2]), " ".join(words[len(words) // 2:]))
    parts = []
    for h, half in enumerate(halves):
        path = os.path.join(V.out, "%s_%03d_half%d.wav" % (bot, i, h))
        if not os.path.exists(path):
            V.synth(half, path, i)
        parts.append(trimmed(V.read_wav(path)))
    return np.concatenate([parts[0], np.zeros(int(pause_s * 16000)), parts[1]])


def turns(nlu, model, wav):
    graph = os.path.join(V.out, "endpoint.yaml")
    with open(graph, "w") as f:
        f.write(GRAPH.format(wav=wav, nlu=nlu, model=model))
    r = subprocess.run([V.parley, "run", graph], capture_output=True, text=True, timeout=600)
    parsed = []
    for line in r.stdout.splitlines():
        j = json.loads(line)
        slots = {k: " ".join(V.words(v)) for k, v in (j.get("slots") or {}).items()}
        parsed.append((j.get("intent"), slots))
    return parsed


def matched(items, parsed):
    """Commands right, each matched to a later turn than the one before it."""
    at, right = 0, 0
    for _, intent, slots in items:
        for k in range(at, len(parsed)):
            if V.accepted(parsed[k], intent, slots):
                right, at = right + 1, k + 1
                break
    return right


def main():
    bots = (sys.argv[sys.argv.index("--bots") + 1].split(",") if "--bots" in sys.argv
            else ["pizza", "smarthome"])
    single = "--single" in sys.argv
    pause = float(sys.argv[sys.argv.index("--pause") + 1]) if "--pause" in sys.argv else None
    wanted = (sys.argv[sys.argv.index("--conditions") + 1].split(",")
              if "--conditions" in sys.argv else None)
    noises = {"kitchen": V.kitchen_noise(), "stationary": V.stationary_noise()}
    report = {}
    for bot in bots:
        nlu = os.path.join(V.ROOT, "samples", bot, "nlu.yaml")
        model = os.path.join(V.out, bot + "_model")
        if not os.path.exists(os.path.join(model, "model.safetensors")):
            subprocess.run([V.parley, "train", "--data", nlu, "--out", model, "--seed", "1",
                            "--layers", "2", "--hidden", "128", "--heads", "2",
                            "--intermediate", "256", "--threads", "2"],
                           check=True, capture_output=True)
        V.rng.seed(V.seed)
        items = V.sentences(bot)
        clips = []
        for i, (text, _, _) in enumerate(items):
            path = os.path.join(V.out, "%s_%03d.wav" % (bot, i))
            if not os.path.exists(path):
                V.synth(text, path, i)
            clips.append(V.read_wav(path) if pause is None
                         else paused_clip(bot, i, text, pause))
        # a stream per voice (synth cycles the voices by index), the hand-written phrasings
        # (no slots given) left out; or a stream per command
        streams = [[i for i in range(v, len(items), len(V.VOICES))
                    if items[i][2] is not None][:PER_STREAM] for v in range(len(V.VOICES))]
        pauses = (GAP_S, GAP_S)
        if single:
            streams, pauses = [[i] for idx in streams for i in idx], (1.0, 1.5)
        for name, kind, snr in CONDITIONS:
            if wanted and name not in wanted:
                continue
            made = exact = right = 0
            for k, idx in enumerate(streams):
                wav = os.path.join(V.out, "%s_stream%d.wav" % (bot, k))
                stream([clips[i] for i in idx], noises.get(kind), snr, wav, *pauses)
                parsed = turns(nlu, model, wav)
                made += len(parsed)
                exact += len(parsed) == len(idx)
                if not single or len(parsed) == 1:
                    right += matched([items[i] for i in idx], parsed)
            row = {"commands": sum(map(len, streams)), "turns": made, "streams": len(streams),
                   "streams_cut_right": exact, "accepted": right}
            report["%s %s" % (bot, name)] = row
            print(bot, name, row, flush=True)
    result = "voice_endpoint%s%s.json" % ("_single" if single else "",
                                          "_pause%g" % pause if pause is not None else "")
    with open(os.path.join(V.out, result), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    V.configure(sys.argv)
    main()
