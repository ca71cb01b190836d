#!/usr/bin/python3
"""test_sparse_ref.py — a model with sparse features against the torch reference, and the
same predictions from every way of running it.

    test_sparse_ref.py SPARSE_LOGITS_TOOL TINY_DATA_DIR     (PARLEY_BIN in the environment)

A small model is trained by `parley train` (sparse features on) on the tiny set with a
lookup table, then every weight is replaced by a random one (uniform +-0.5, LayerNorm gains
around 1; the sparse maps too) so that both the encoder and the sparse maps move the logits.
Texts (lookup matches over one and two words, unknown words, punctuation, one text longer
than max_position_embeddings so that its last words are cut) run through
tests/tools/sparse_logits, which calls bert_run_pieces, the path of every caller, and writes
the logits with the sparse rows it used. reference/bert_ref.py recomputes the logits from the
token ids and those rows (float64): |c - r| <= 1e-4 * max|r| + 1e-4 * |r| per head. The rows
are held to their placement: the sentence row is not empty, and a token row is not empty
exactly on the first piece of each word that fits.

Then the trained model itself: `parley eval` on the dev set, and `parley nlu predict` on the
same texts scored here against the gold intents, agree on every count; the C API's own
test (tests/nlu/test_nlu.c) runs parley_nlu_parse, which predict calls. A model trained
with --sparse off has no sparse.json and no sparse keys in its config.json.
Exits 77 without torch and numpy.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError:
    print("torch or numpy missing: skipped")
    sys.exit(77)

from reference import bert_ref, safetensors_io
from checks import check, done

TOOL, TINY = sys.argv[1], sys.argv[2]
PARLEY = os.environ["PARLEY_BIN"]
TEXTS = [
    "weather in san francisco",
    "is it raining in Rome ?",
    "hello",
    "what is the weather in buenos aires tomorrow",
    "completely unheard-of words, here!",
    " ".join(["weather in lima"] * 12),  # more pieces than max_position_embeddings
]


def train(out, *extra):
    cmd = [PARLEY, "-q", "train", "--data", os.path.join(TINY, "lookup.yaml"), "--out", out,
           "--layers", "1", "--hidden", "16", "--heads", "2", "--intermediate", "32",
           "--max-positions", "24", "--epochs", "2", "--threads", "1", "--quiet"] + list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True)
    check(r.returncode == 0, "train %s: %s" % (" ".join(extra), r.stderr.strip()))


def randomize(d, rng):
    path = os.path.join(d, "model.safetensors")
    tensors = safetensors_io.load(path)
    for name, t in tensors.items():
        if name.endswith("LayerNorm.weight"):
            tensors[name] = rng.uniform(0.5, 1.5, size=t.shape).astype(np.float32)
        else:
            tensors[name] = rng.uniform(-0.5, 0.5, size=t.shape).astype(np.float32)
    safetensors_io.save(path, tensors)


def compare_logits(d, tmp):
    out = os.path.join(tmp, "logits.json")
    r = subprocess.run([TOOL, d, out], input="\n".join(TEXTS) + "\n", capture_output=True, text=True)
    check(r.returncode == 0, "sparse_logits: %s" % r.stderr.strip())
    if r.returncode:
        return
    with open(out) as f:
        seqs = json.load(f)["seqs"]
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    P = cfg["max_position_embeddings"]
    model = bert_ref.load(d)
    ids = [s["ids"] for s in seqs]
    lens = [len(x) for x in ids]
    x_sent, x_tok = bert_ref.sparse_inputs(model, [s["sent"] for s in seqs],
                                           [row for s in seqs for row in s["tok"]], lens)
    padded, mask = bert_ref.pad(ids)
    with torch.no_grad():
        intent, slot = model(padded, mask, x_sent, x_tok)
    worst = 0.0
    for i, s in enumerate(seqs):
        for name, c, ref in (("intent", np.array(s["intent"]), intent[i].numpy()),
                             ("slot", np.array(s["slot"]), slot[i, 1:lens[i] - 1].numpy())):
            tol = 1e-4 * np.max(np.abs(ref)) + 1e-4 * np.abs(ref)
            ok = c.shape == ref.shape and np.all(np.abs(c - ref) <= tol)
            if c.shape == ref.shape:
                worst = max(worst, float(np.max(np.abs(c - ref) / np.max(np.abs(ref)))))
            check(ok, "text %d: %s logits differ from the reference" % (i, name))
        check(len(s["sent"]) > 0, "text %d: no sentence features" % i)
        first = [t for t in range(1, lens[i] - 1) if s["words"][t] != s["words"][t - 1]]
        filled = [t for t in range(lens[i]) if s["tok"][t]]
        check(filled == first, "text %d: word features on tokens %s, first pieces %s" % (i, filled, first))
    check(lens[-1] == P, "the long text is cut to %d tokens (%d)" % (P, lens[-1]))
    print("logits: %d texts, worst |c - r| / max|r| %.3g" % (len(seqs), worst))


def eval_counts(d, data):
    r = subprocess.run([PARLEY, "-q", "eval", "--model", d, "--data", data], capture_output=True, text=True)
    check(r.returncode == 0, "eval: %s" % r.stderr.strip())
    for line in r.stdout.splitlines():
        if line.startswith("intent accuracy"):
            return line.split("(")[1].split(")")[0]  # "right/total"
    return None


def predict_counts(d, data):
    """Right/total intents of `parley nlu predict` over the dev examples of data (Rasa YAML)."""
    examples = []
    intent = None
    for line in open(data):
        m = re.match(r"- (intent|lookup|synonym|regex): (\S+)", line)
        if m:
            intent = m.group(2) if m.group(1) == "intent" else None
            continue
        m = re.match(r"\s+- (.*)$", line)
        if m and intent:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))
            examples.append((" ".join(text.split()), intent))
    r = subprocess.run([PARLEY, "-q", "nlu", "predict", "--model", d],
                       input="\n".join(t for t, _ in examples) + "\n", capture_output=True, text=True)
    check(r.returncode == 0, "predict: %s" % r.stderr.strip())
    got = [json.loads(line)["intent"] for line in r.stdout.splitlines() if line.strip()]
    right = sum(g == want for g, (_, want) in zip(got, examples))
    return "%d/%d" % (right, len(examples))


def main():
    rng = np.random.default_rng(12)
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "sparse")
        train(d)
        with open(os.path.join(d, "config.json")) as f:
            cfg = json.load(f)
        check(cfg.get("sparse_sentence_features", 0) > 0 and cfg.get("sparse_word_features", 0) > 0,
              "a model trained with sparse features says so in config.json")
        check(os.path.exists(os.path.join(d, "sparse.json")), "sparse.json written")
        dev = os.path.join(TINY, "lookup.yaml")
        e, p = eval_counts(d, dev), predict_counts(d, dev)
        check(e is not None and e == p, "parley eval %s and parley nlu predict %s agree" % (e, p))
        print("eval %s, predict %s" % (e, p))

        r = os.path.join(tmp, "random")
        subprocess.run(["cp", "-r", d, r], check=True)
        randomize(r, rng)
        compare_logits(r, tmp)

        off = os.path.join(tmp, "off")
        train(off, "--sparse", "off")
        with open(os.path.join(off, "config.json")) as f:
            text = f.read()
        check("sparse" not in text and not os.path.exists(os.path.join(off, "sparse.json")),
              "--sparse off writes a model without sparse features")
    return done("sparse_ref")


if __name__ == "__main__":
    sys.exit(main())
