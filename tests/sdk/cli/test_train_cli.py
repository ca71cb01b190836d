"""`parley train` and `parley pretrain` end to end: options, errors, progress output,
Ctrl-C and --resume.

Runs $PARLEY_BIN on the tiny synthetic set in tests/nlu/train/tiny/ (and a JointBERT
copy of it written here): --help; every kind of usage error (exit 2); bad data (exit 1,
FILE:LINE:COL of the culprit); a small training run whose plain log lines, summary and
model directory are checked, the model then used by `parley nlu predict`; the same for
data without a single slot annotation; and a run
interrupted by SIGINT (exit 130, state kept) then continued with --resume, which must end
with the same files, byte for byte, as an uninterrupted run. `parley pretrain`: --help,
usage errors, bad text (FILE:LINE:COL), a run on the tiny set's utterances whose log and
files are checked, then `parley train --init` on its output. Needs only the standard
library.
"""
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

from checks import check, done

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = os.path.join(HERE, "..", "..", "nlu", "train", "tiny")
DATA = os.path.join(TINY, "nlu.yaml")
DEV = os.path.join(TINY, "dev.yaml")
BAD = os.path.join(TINY, "bad.yaml")
NO_SLOTS = os.path.join(TINY, "no_slots.yaml")
BIN = os.environ.get("PARLEY_BIN")
# The checks below do not depend on this machine's default encoder and its background
# sentences (tools/encoder.sh; tests/nlu/train/test_api.c tests those).
os.environ["PARLEY_ENCODER"] = "none"
SMALL = ["--layers", "2", "--hidden", "64", "--heads", "2", "--intermediate", "128",
         "--max-positions", "32", "--batch", "8", "--lr", "3e-3", "--threads", "1"]
MODEL_FILES = ("config.json", "model.safetensors", "vocab.txt")


def run(args, cmd="train", **kw):
    return subprocess.run([BIN, cmd] + args, capture_output=True, text=True, timeout=120, **kw)


def same_files(a, b):
    for name in MODEL_FILES:
        with open(os.path.join(a, name), "rb") as fa, open(os.path.join(b, name), "rb") as fb:
            if fa.read() != fb.read():
                return False
    return True


def test_help():
    r = run(["--help"])
    check(r.returncode == 0 and "usage: parley train" in r.stdout and "--resume" in r.stdout,
          "--help: rc %d" % r.returncode)


def test_usage_errors(tmp):
    out = os.path.join(tmp, "usage")
    cases = [
        ([], "required"),
        (["--data", DATA], "required"),
        (["--data", DATA, "--out", out, "--bogus"], "unknown option"),
        (["--data", DATA, "--out", out, "--epochs", "0"], "--epochs"),
        (["--data", DATA, "--out", out, "--epochs", "x"], "--epochs"),
        (["--data", DATA, "--out", out, "--epochs"], "--epochs"),
        (["--data", DATA, "--out", out, "--lr", "-1"], "--lr"),
        (["--data", DATA, "--out", out, "--dropout", "1"], "--dropout"),
        (["--data", DATA, "--out", out, "--word-dropout", "1"], "--word-dropout"),
        (["--data", DATA, "--out", out, "--augment", "-1"], "--augment"),
        (["--data", DATA, "--out", out, "--background", "-1"], "--background"),
        (["--data", DATA, "--out", out, "--warmup", "1.5"], "--warmup"),
        (["--data", DATA, "--out", out, "--seed", "-3"], "--seed"),
        (["--data", DATA, "--out", out, "--init", out, "--layers", "2"], "--init"),
        (["--data", DATA, "--out", out, "--init", out, "--vocab-size", "100"], "--init"),
        (["--data", DATA, "--out", out, "--vocab", DATA, "--vocab-size", "100"], "not both"),
        (["--data", DATA, "--out", out, "--resume", "--lr", "1e-3"], "--resume"),
        (["--data", DATA, "--out", out, "--hidden", "30", "--heads", "4"], "multiple"),
    ]
    for args, needle in cases:
        r = run(args)
        check(r.returncode == 2 and needle in r.stderr,
              "usage error %s: rc %d, stderr %r" % (args, r.returncode, r.stderr))
    check(not os.path.exists(out), "a usage error wrote files")


def test_failures(tmp):
    out = os.path.join(tmp, "fail")
    r = run(["--data", BAD, "--out", out])
    check(r.returncode == 1 and re.search(r"bad\.yaml:4:\d+", r.stderr), "bad data: %r" % r.stderr)
    r = run(["--data", DATA, "--out", out, "--device", "cuda:7"])
    # No GPU 7 here: refused as not built (no CUDA in this build) or as a missing device, in
    # the CLI's one error form "parley CMD: message".
    check(r.returncode == 1 and r.stderr.startswith("parley train: ") and "cuda:7" in r.stderr,
          "cuda: %r" % r.stderr)
    r = run(["--data", DATA, "--out", out, "--device", "tpu"])
    check(r.returncode == 1 and "tpu" in r.stderr, "unknown device: %r" % r.stderr)
    r = run(["--data", DATA, "--out", out, "--resume"])
    check(r.returncode == 1 and "no training state" in r.stderr, "resume without state: %r" % r.stderr)
    r = run(["--data", os.path.join(tmp, "missing.yaml"), "--out", out])
    check(r.returncode == 1 and "missing.yaml" in r.stderr, "missing data: %r" % r.stderr)
    check(not os.path.exists(os.path.join(out, "config.json")), "a failed run wrote a model")


def test_train_and_predict(tmp):
    out = os.path.join(tmp, "model")
    r = run(["--data", DATA, "--dev", DEV, "--out", out, "--epochs", "40", "--augment", "0"] + SMALL)
    check(r.returncode == 0, "train: rc %d, stderr %r" % (r.returncode, r.stderr[-2000:]))
    # Not a terminal: plain lines, no carriage returns.
    check("\r" not in r.stderr, "carriage returns in a log")
    check("40 examples, 4 intents, 13 slot tags; dev 6 examples" in r.stderr, "start line: %r" % r.stderr[:300])
    check("vocabulary" in r.stderr and "(learned)" in r.stderr, "vocabulary line")
    epochs = re.findall(r"^epoch (\d+)/40 done: loss [\d.]+  dev intent [\d.]+%  slot F1 [\d.]+%  sentence [\d.]+%",
                        r.stderr, re.M)
    check(len(epochs) == 40, "%d epoch lines" % len(epochs))
    check(re.search(r"^epoch \d+/40 step 50/200 loss [\d.]+ lr \S+ \d+ ex/s ETA \S+$", r.stderr, re.M),
          "step log line")
    m = re.search(r"best dev: intent ([\d.]+)%, slot F1 ([\d.]+)%, sentence ([\d.]+)%", r.stdout)
    check(m and r.stdout.startswith("trained in "), "summary: %r" % r.stdout)
    # One dev example has an intent the training set lacks: 5 of 6 at best.
    check(m and float(m.group(1)) <= 100 * 5 / 6 + 0.01, "dev intent above 5/6")
    for name in MODEL_FILES:
        check(os.path.exists(os.path.join(out, name)), "missing " + name)
    check(not os.path.exists(os.path.join(out, "train_state")), "state left after a completed run")

    texts = "play some jazz by miles davis\nweather in paris tomorrow\nset an alarm for seven\n"
    p = subprocess.run([BIN, "nlu", "predict", "--model", out], input=texts, capture_output=True, text=True,
                       timeout=60)
    check(p.returncode == 0, "predict: %r" % p.stderr)
    got = [json.loads(line) for line in p.stdout.splitlines()]
    want = ["play_music", "get_weather", "set_alarm"]
    check([g.get("intent") for g in got] == want, "predicted intents %r" % [g.get("intent") for g in got])
    check(got and got[0]["tags"] == ["O", "O", "B-genre", "O", "B-artist", "I-artist"], "tags %r" % got[0]["tags"])


def write_jointbert(dst):
    """The tiny set as a JointBERT folder, from the model's own view of it: plain words."""
    rows = [("play some jazz", "O O B-genre", "play_music"),
            ("weather in new york", "O O B-city I-city", "get_weather"),
            ("set an alarm for seven", "O O O O B-time", "set_alarm"),
            ("book a table for two", "O O O O B-count", "book_table")] * 3
    os.makedirs(dst)
    for name, col in (("seq.in", 0), ("seq.out", 1), ("label", 2)):
        with open(os.path.join(dst, name), "w") as f:
            f.write("".join(r[col] + "\n" for r in rows))


def test_no_slots(tmp):
    """Data without any slot annotation: one tag, "O"; training and prediction still work."""
    out = os.path.join(tmp, "no_slots")
    r = run(["--data", NO_SLOTS, "--out", out, "--epochs", "1", "--layers", "1", "--hidden", "32",
             "--heads", "2", "--intermediate", "64"])
    check(r.returncode == 0 and
          "23 examples (with 17 built-in replies), 2 intents, 1 slot tags" in r.stderr,
          "train without slots: rc %d, stderr %r" % (r.returncode, r.stderr[-2000:]))
    if r.returncode:
        return
    with open(os.path.join(out, "config.json")) as f:
        check(json.load(f)["slot_labels"] == ["O"], "slot labels of a model without slots")
    p = subprocess.run([BIN, "nlu", "predict", "--model", out], input="see you later\n", capture_output=True,
                       text=True, timeout=60)
    got = json.loads(p.stdout) if p.returncode == 0 else {}
    check(got.get("tags") == ["O", "O", "O"] and got.get("slots") == [], "predict without slots: %r %r"
          % (p.stdout, p.stderr))


def test_jointbert(tmp):
    src = os.path.join(tmp, "jb")
    write_jointbert(src)
    r = run(["--data", src, "--out", os.path.join(tmp, "jb_model"), "--epochs", "2"] + SMALL)
    check(r.returncode == 0 and "12 examples, 4 intents, 9 slot tags" in r.stderr,
          "JointBERT folder: rc %d %r" % (r.returncode, r.stderr[-500:]))
    with open(os.path.join(src, "seq.out"), "a") as f:
        f.write("O O\n")  # one line more than seq.in
    r = run(["--data", src, "--out", os.path.join(tmp, "jb_model2"), "--epochs", "1"] + SMALL)
    check(r.returncode == 1 and re.search(r"seq\.(in|out)", r.stderr), "bad JointBERT folder: %r" % r.stderr)


def test_interrupt_and_resume(tmp):
    whole, parts = os.path.join(tmp, "whole"), os.path.join(tmp, "parts")
    # No dev: the last epoch is saved, so the comparison covers every step.
    args = ["--data", DATA, "--epochs", "30", "--batch", "2"] + SMALL[:-6] + ["--threads", "1"]
    r = run(args + ["--out", whole])
    check(r.returncode == 0, "uninterrupted: %r" % r.stderr[-500:])

    proc = subprocess.Popen([BIN, "train"] + args + ["--out", parts], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    # Wait for the first epoch to end, then interrupt.
    seen = ""
    while "done:" not in seen:
        line = proc.stderr.readline()
        if not line:
            break
        seen += line
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        print("note: the run ended before SIGINT arrived; resume not exercised", file=sys.stderr)
        check(same_files(whole, parts), "two uninterrupted runs differ")
        return
    check(proc.returncode == 130 and "--resume" in out, "interrupted: rc %d %r" % (proc.returncode, out))
    state = os.path.join(parts, "train_state")
    check(os.path.exists(os.path.join(state, "latest")), "no state after SIGINT")
    r = run(["--resume", "--data", DATA, "--out", parts, "--threads", "1"])
    check(r.returncode == 0 and "resuming at step" in r.stderr, "resume: rc %d %r" % (r.returncode, r.stderr[-500:]))
    check(same_files(whole, parts), "interrupted + resumed differs from uninterrupted")
    check(not os.path.exists(state), "state left after the resumed run completed")


def files_of(folder):
    """Every file under folder (train_state/ left out) as {relative path: bytes}."""
    got = {}
    for base, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d != "train_state"]
        for name in names:
            path = os.path.join(base, name)
            with open(path, "rb") as f:
                got[os.path.relpath(path, folder)] = f.read()
    return got


def limit_file_size(limit):
    """For the child: files stop growing past `limit` bytes (EFBIG, as a full disk's ENOSPC
    stops them), the signal that would kill it ignored."""
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return apply


def test_failed_retrain_keeps_model(tmp):
    """A retrain that fails on a write (after its first epoch's model was saved) leaves the
    old model whole: every file as it was. A retrain that completes replaces it whole."""
    out = os.path.join(tmp, "retrain")
    args = ["--data", DATA, "--out", out, "--epochs", "3", "--init", "none"] + SMALL
    r = run(args + ["--seed", "1"])
    check(r.returncode == 0, "first training: %r" % r.stderr[-500:])
    before = files_of(out)
    weights = len(before.get("model.safetensors", b""))
    # The model's files fit under the limit; the optimizer's moments (twice the weights) do not.
    r = subprocess.run([BIN, "train"] + args + ["--seed", "2", "--force"], capture_output=True,
                       text=True, timeout=120, preexec_fn=limit_file_size(weights * 3 // 2))
    check(r.returncode == 1 and "saving the training state" in r.stderr,
          "the retrain fails on a write: rc %d %r" % (r.returncode, r.stderr[-500:]))
    after = files_of(out)
    check(after == before, "the old model is whole after the failed retrain: changed %s" % sorted(
        k for k in set(before) | set(after) if before.get(k) != after.get(k)))
    check(not os.path.exists(out + ".parley-new"), "nothing left beside the model")
    r = run(args + ["--seed", "2", "--force"])
    check(r.returncode == 0, "the retrain once the writes work: %r" % r.stderr[-500:])
    now = files_of(out)
    check(now["model.safetensors"] != before["model.safetensors"] and
          json.loads(now["training.json"])["options"]["seed"] == 2,
          "the new model and its record replaced the old: %s" % now.get("training.json", b"")[:300])
    check(not os.path.exists(os.path.join(out, "train_state")) and
          not os.path.exists(out + ".parley-new"), "no state, nothing beside")
    # A folder that holds more than a model is not replaced.
    mixed = os.path.join(tmp, "mixed")
    os.makedirs(mixed)
    with open(os.path.join(mixed, "notes.txt"), "w") as f:
        f.write("mine\n")
    r = run(["--data", DATA, "--out", mixed, "--epochs", "1", "--init", "none"] + SMALL)
    check(r.returncode == 1 and "notes.txt" in r.stderr and os.listdir(mixed) == ["notes.txt"],
          "a folder with other files: rc %d %r %s" % (r.returncode, r.stderr[-300:],
                                                      os.listdir(mixed)))


def write_text(path):
    """The tiny set's utterances without their annotations, as plain text."""
    lines = []
    with open(DATA, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("- ") and not line.startswith("- intent"):
                lines.append(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line[2:]))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines * 2) + "\n\n")  # every line twice, and a blank one
    return len(set(lines))


def test_pretrain(tmp):
    text = os.path.join(tmp, "text.txt")
    n = write_text(text)
    out = os.path.join(tmp, "pre")
    r = run(["--help"], "pretrain")
    check(r.returncode == 0 and "usage: parley pretrain" in r.stdout and "--mask-prob" in r.stdout,
          "pretrain --help: rc %d" % r.returncode)
    for args, needle in [([], "required"), (["--text", text], "required"),
                         (["--text", "--out", out], "--text"),
                         (["--text", text, "--out", out, "--mask-prob", "0"], "--mask-prob"),
                         (["--text", text, "--out", out, "--holdout", "0.9"], "--holdout"),
                         (["--text", text, "--out", out, "--init", out, "--hidden", "64"], "--init"),
                         (["--text", text, "--out", out, "--data", DATA], "unknown option")]:
        r = run(args, "pretrain")
        check(r.returncode == 2 and needle in r.stderr,
              "pretrain usage error %s: rc %d, stderr %r" % (args, r.returncode, r.stderr))
    bad = os.path.join(tmp, "bad.txt")
    with open(bad, "wb") as f:
        f.write(b"fine\nalso fine\nnot \xc3\x28 fine\n")
    r = run(["--text", text, bad, "--out", out], "pretrain")
    check(r.returncode == 1 and "bad.txt:3:5: invalid UTF-8" in r.stderr, "bad text: %r" % r.stderr)
    check(not os.path.exists(out), "a failed pretraining wrote files")

    r = run(["--text", text, "--out", out, "--epochs", "3", "--holdout", "0.25"] + SMALL, "pretrain")
    check(r.returncode == 0, "pretrain: rc %d, stderr %r" % (r.returncode, r.stderr[-2000:]))
    held = n // 4
    check("pretrain: %d lines, %d held out" % (n, held) in r.stderr, "start line: %r" % r.stderr[:300])
    epochs = re.findall(r"^epoch (\d+)/3 done: loss [\d.]+  held-out masked-LM loss [\d.]+  accuracy [\d.]+%",
                        r.stderr, re.M)
    check(len(epochs) == 3, "%d epoch lines in %r" % (len(epochs), r.stderr[-1000:]))
    check(re.match(r"pretrained after \d+ steps \(3 epochs\) in .*held-out masked-LM loss [\d.]+, accuracy",
                   r.stdout), "summary: %r" % r.stdout)
    for name in MODEL_FILES + ("mlm_head.safetensors",):
        check(os.path.exists(os.path.join(out, name)), "pretrain: missing " + name)

    tuned = os.path.join(tmp, "tuned")
    r = run(["--data", DATA, "--out", tuned, "--init", out, "--epochs", "2", "--lr", "3e-3", "--batch", "8",
             "--threads", "1"])
    check(r.returncode == 0 and "heads" in r.stderr, "train --init on a pretrained encoder: rc %d %r"
          % (r.returncode, r.stderr[-800:]))


def main():
    if not BIN or not os.path.exists(BIN):
        print("PARLEY_BIN is not set", file=sys.stderr)
        return 77
    tmp = tempfile.mkdtemp(prefix="parley-test-train-cli-")
    try:
        test_help()
        test_usage_errors(tmp)
        test_failures(tmp)
        test_train_and_predict(tmp)
        test_no_slots(tmp)
        test_jointbert(tmp)
        test_interrupt_and_resume(tmp)
        test_failed_retrain_keeps_model(tmp)
        test_pretrain(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return done("train cli")


if __name__ == "__main__":
    sys.exit(main())
