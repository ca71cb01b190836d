"""test_voice_file.py — the pizza bot by voice from a file: samples/voice/file.yaml.

Two orders spoken by espeak-ng (made here, with a second of silence around each) go through
audio.gst → asr.pocketsphinx (the pizza language model) → nlu.bert → dialog.frames → tts.espeak →
audio.out (`wavenc ! filesink`) → text.stdout: two replies come out in order, the first
with intent order_pizza and size "large", the second with the topping it named; the reply's
speech is a WAV file of more than half a second.

Usage: test_voice_file.py PARLEY MODEL_DIR SOURCE_ROOT   (skips, exit 77, without espeak-ng/sox)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, done

parley, model, root = sys.argv[1:4]
if not (shutil.which("espeak-ng") and shutil.which("sox")):
    print("skip: needs espeak-ng and sox")
    sys.exit(77)
tmp = tempfile.mkdtemp(prefix="parley-voice-")
parts = []
for i, (text, voice) in enumerate([("i want a large pizza", "en-us"),
                                   ("order two pizzas with anchovies", "en-us+m3")]):
    raw = os.path.join(tmp, "u%d.raw.wav" % i)
    subprocess.run(["espeak-ng", "-v", voice, "-s", "150", "-w", raw, text], check=True)
    parts.append(raw)
silence = os.path.join(tmp, "silence.wav")
subprocess.run(["sox", "-n", "-r", "22050", "-c", "1", "-b", "16", silence, "trim", "0", "1"],
               check=True)
order = os.path.join(tmp, "order.wav")
subprocess.run(["sox", silence, parts[0], silence, parts[1], silence, order], check=True)
reply = os.path.join(tmp, "reply.wav")
r = subprocess.run([parley, "run", os.path.join(root, "samples", "voice", "file.yaml"),
                    "--set", "mic.source=filesrc location=%s ! decodebin" % order,
                    "--set", "speaker.sink=wavenc ! filesink location=%s" % reply,
                    "--set", "nlu.model=" + model, "--set", "dialog.model=" + model,
                    "--set", "dialog.store=" + os.path.join(tmp, "voice.db"),
                    "--set", "asr.cache_dir=" + os.path.join(tmp, "cache")],
                   capture_output=True, text=True, timeout=240)
out = [json.loads(line) for line in r.stdout.splitlines()]
check(r.returncode == 0 and len(out) == 2, "two replies: rc %d, %r %s" %
      (r.returncode, r.stdout, r.stderr))
if len(out) == 2:
    check(out[0].get("intent") == "order_pizza" and out[0]["slots"].get("size") == "large",
          "first order: %r" % out[0])
    check("anchovies" in json.dumps(out[1]["slots"]), "second order names its topping: %r" % out[1])
    check(all(o.get("reply") for o in out), "every reply has text")
size = os.path.getsize(reply) if os.path.exists(reply) else 0
check(size > 44 + 16000, "the reply's speech: %d bytes of WAV" % size)
shutil.rmtree(tmp)
sys.exit(done("e2e/voice_file"))
