"""test_asr.py — `parley asr build` and `parley asr transcribe`, and audio.gst's errors.

build: the grammar of both sample bots is built (sentence patterns, slot classes, a
dictionary of exactly its words), found in
the cache the second time, and built anew when nlu.yaml changes; a broken nlu.yaml is an
error naming FILE:LINE:COL. transcribe: real recorded speech (pocketsphinx-testdata's
goforward.raw, "go forward ten meters") with the generic model; pizza orders synthesized
here by espeak-ng (several voices) through the pizza grammar; speech outside the grammar
still gets words (the fallback); a missing file is an error naming it. audio.gst: an
unknown element, a missing file and a file that is not audio are errors naming the
description and the cause, and `parley run` returns within seconds (no hang).

Usage: test_asr.py PARLEY SOURCE_ROOT   (skips, exit 77, without espeak-ng, sox or the data)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from checks import check, done

parley, root = sys.argv[1:3]
GOFORWARD = "/usr/share/pocketsphinx/test/data/goforward.raw"
if not (shutil.which("espeak-ng") and shutil.which("sox") and os.path.exists(GOFORWARD)):
    print("skip: needs espeak-ng, sox and pocketsphinx-testdata")
    sys.exit(77)

tmp = tempfile.mkdtemp(prefix="parley-asr-")
cache = os.path.join(tmp, "cache")
pizza = os.path.join(root, "samples", "pizza", "nlu.yaml")


def run(*args, timeout=120):
    return subprocess.run([parley, *args], capture_output=True, text=True, timeout=timeout)


def speak(text, name, voice="en-us", speed=150):
    """A 16 kHz WAV of `text` with half a second of silence around it."""
    raw, wav = os.path.join(tmp, name + ".raw.wav"), os.path.join(tmp, name + ".wav")
    subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", raw, text], check=True)
    subprocess.run(["sox", raw, "-r", "16000", wav, "pad", "0.5", "0.5"], check=True)
    return wav


# --- build -------------------------------------------------------------------------------
for bot in ("pizza", "smarthome"):
    nlu = os.path.join(root, "samples", bot, "nlu.yaml")
    r = run("asr", "build", "--nlu", nlu, "--cache", cache)
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and len(lines) == 2 and os.path.exists(lines[0]),
          "%s: build: rc %d, %r %s" % (bot, r.returncode, r.stdout, r.stderr))
    if lines:
        n = int(lines[1].split()[0]) if len(lines) > 1 else 0
        check(n > 100, "%s: %d sentence patterns" % (bot, n))
        gram = open(lines[0]).read()
        check(gram.startswith("#JSGF V1.0;") and "public <utterance>" in gram and "<c_" in gram,
              "%s: a JSGF grammar with slot classes" % bot)
        body = " ".join(line for line in gram[gram.index("public <utterance> ="):].splitlines()
                        if not line.startswith("//"))
        used = {w for w in re.split(r"[\s()|;=]+", body[len("public <utterance> ="):])
                if w and not w.startswith("<")}
        dict_words = {line.split()[0].split("(")[0] for line in open(lines[0][:-5] + ".dict")}
        check(used and used <= dict_words, "%s: the grammar's dictionary lacks %r" %
              (bot, sorted(used - dict_words)[:5]))
        again = run("asr", "build", "--nlu", nlu, "--cache", cache)
        check(again.stdout.splitlines()[0] == lines[0] and "(cached)" in again.stdout,
              "%s: the second build is the cached file: %r" % (bot, again.stdout))
        changed = os.path.join(tmp, bot + "-nlu.yaml")
        with open(changed, "w") as f:
            f.write(open(nlu).read() + "  - intent: extra_intent\n    examples: |\n"
                    "      - play some music\n")
        new = run("asr", "build", "--nlu", changed, "--cache", cache)
        check(new.returncode == 0 and new.stdout.splitlines()[0] != lines[0] and
              "(cached)" not in new.stdout and "play some music" in
              open(new.stdout.splitlines()[0]).read(),
              "%s: a changed nlu.yaml builds a new grammar: %r" % (bot, new.stdout))

broken = os.path.join(tmp, "broken.yaml")
with open(broken, "w") as f:
    f.write("version: \"3.1\"\nnlu:\n  - intent: a\n    examples: |\n      - [unclosed(slot\n")
r = run("asr", "build", "--nlu", broken, "--cache", cache)
check(r.returncode == 1 and "broken.yaml:" in r.stderr, "broken nlu.yaml: %r" % r.stderr)

# --- transcribe ----------------------------------------------------------------------------
real = os.path.join(tmp, "goforward.wav")
subprocess.run(["sox", "-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1",
                GOFORWARD, real], check=True)
r = run("asr", "transcribe", real)
check(r.returncode == 0 and r.stdout.strip() == "go forward ten meters",
      "real speech, generic model: %r %s" % (r.stdout, r.stderr))

orders = [("i'd like to order four large pizzas", "en-us", 150),
          ("i want a small pizza", "en-us+f3", 140),
          ("could you send two medium pizzas to twelve baker street", "en-us+f3", 150),
          ("give me a small pizza with sausage and pepperoni", "en-us", 150),
          ("go forward ten meters", "en-us", 150)]
wavs = [speak(t, "order%d" % i, v, s) for i, (t, v, s) in enumerate(orders[:4])]
oog = speak("the weather is lovely in paris today", "oog")
r = run("asr", "transcribe", "--nlu", pizza, "--cache", cache, *wavs, oog)
got = r.stdout.splitlines()
check(r.returncode == 0 and len(got) == 5, "transcribe: rc %d, %r" % (r.returncode, r.stdout))
right = sum(1 for (t, _, _), g in zip(orders, got) if g == t)
check(right >= 3, "pizza grammar: %d of 4 orders exact: %r" % (right, got[:4]))
check(len(got) == 5 and got[4].strip() != "", "out of grammar still gives words: %r" % got[4:])

r = run("asr", "transcribe", os.path.join(tmp, "nothing.wav"))
check(r.returncode == 1 and "nothing.wav" in r.stderr, "missing file: %r" % r.stderr)

# --- audio.gst errors ----------------------------------------------------------------------
graph = os.path.join(tmp, "gst.yaml")
with open(graph, "w") as f:
    f.write("name: gst\nnodes:\n  - name: mic\n    kind: audio.gst\n"
            "    params: { source: \"filesrc location=x ! decodebin\" }\n"
            "  - name: asr\n    kind: asr.stub\n    inputs: { in: mic.audio }\n"
            "  - name: out\n    kind: text.stdout\n    inputs: { reply: asr.text }\n")
notaudio = os.path.join(tmp, "notaudio.wav")
with open(notaudio, "w") as f:
    f.write("this is text, not a WAV file\n" * 100)
# the first two are found when the graph opens (exit 1); a decode error once it runs is the
# node's error, reported as it happens (the run then ends as at the end of input)
for desc, want, rc in [("nosuchelement ! decodebin", "no element", 1),
                       ("filesrc location=%s/missing.wav ! decodebin" % tmp, "missing.wav", 1),
                       ("filesrc location=%s ! decodebin" % notaudio, "text file", 0)]:
    try:
        r = run("run", graph, "--set", "mic.source=" + desc, timeout=30)
        check(r.returncode == rc and want in r.stderr and "GStreamer '%s'" % desc in r.stderr,
              "audio.gst '%s': rc %d, %r" % (desc, r.returncode, r.stderr))
    except subprocess.TimeoutExpired:
        check(False, "audio.gst '%s' hangs" % desc)

shutil.rmtree(tmp)
sys.exit(done("services/voice/asr"))
