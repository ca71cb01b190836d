#!/usr/bin/python3
"""test_bert_ref.py — parley's bert_forward against the independent PyTorch reference.

    test_bert_ref.py BERT_LOGITS_TOOL        (PARLEY_BIN in the environment)

Models come from `parley model init` (BERT's std 0.02 initialization, zero biases) and from
this script, which writes model directories with larger random weights (std 0.3 / sqrt-scaled
for wide models), random biases and LayerNorm gains around 1, so that attention is peaked and
every part of the network moves the logits: a test that small errors cannot hide in. Batches
of 1, 2 and 7 sequences with lengths from 1 to max_position_embeddings run through
tests/tools/bert_logits (packed, no padding) and through reference/bert_ref.py (padded batch
with an attention mask, float64).

Tolerance, per batch and per head (intent logits, slot logits), with c parley's value and r
the reference's:  |c - r| <= 1e-4 * max|r| + 1e-4 * |r|  for every element.
A control run shows the tolerance is tight enough to catch the tanh approximation of GELU.
Exits 77 (skipped) without torch and numpy.
"""
import json
import os
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

RTOL_MAX = 1e-4  # times max|r|
RTOL = 1e-4      # times |r|

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
INTENTS = ["greet", "book", "cancel", "ask_price", "bye"]
SLOTS = ["O", "B-city", "I-city", "B-date", "I-date", "B-n", "I-n"]


def write_vocab(path, size):
    with open(path, "w", encoding="utf-8") as f:
        for tok in SPECIALS + ["tok%d" % i for i in range(size - len(SPECIALS))]:
            f.write(tok + "\n")


def write_model(d, V, H, L, NH, I, P, std, seed, prefix="bert."):
    """A model directory with random weights of the given std, random biases (std 0.1) and
    LayerNorm gains in [0.5, 1.5]."""
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(seed)

    def normal(shape, s=std):
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(s)).astype(np.float32)

    def ln(name, t):
        t[name + ".weight"] = (0.5 + rng.random(H, dtype=np.float32)).astype(np.float32)
        t[name + ".bias"] = normal(H, 0.1)

    def linear(name, t, rows, cols):
        t[name + ".weight"] = normal((rows, cols))
        t[name + ".bias"] = normal(rows, 0.1)

    t = {}
    t["embeddings.word_embeddings.weight"] = normal((V, H), 1.0)
    t["embeddings.position_embeddings.weight"] = normal((P, H), 1.0)
    t["embeddings.token_type_embeddings.weight"] = normal((2, H), 1.0)
    ln("embeddings.LayerNorm", t)
    for l in range(L):
        p = "encoder.layer.%d." % l
        for proj in ("query", "key", "value"):
            linear(p + "attention.self." + proj, t, H, H)
        linear(p + "attention.output.dense", t, H, H)
        ln(p + "attention.output.LayerNorm", t)
        linear(p + "intermediate.dense", t, I, H)
        linear(p + "output.dense", t, H, I)
        ln(p + "output.LayerNorm", t)
    linear("pooler.dense", t, H, H)
    linear("intent_classifier", t, len(INTENTS), H)
    linear("slot_classifier", t, len(SLOTS), H)
    safetensors_io.save(os.path.join(d, "model.safetensors"), t, prefix=prefix)
    config = {
        "model_type": "bert", "architectures": ["BertModel"], "vocab_size": V, "hidden_size": H,
        "num_hidden_layers": L, "num_attention_heads": NH, "intermediate_size": I,
        "max_position_embeddings": P, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
        "hidden_act": "gelu", "intent_labels": INTENTS, "slot_labels": SLOTS,
    }
    with open(os.path.join(d, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)
    write_vocab(os.path.join(d, "vocab.txt"), V)


def init_model(d, tmp, V, H, L, NH, I, P, seed):
    vocab = os.path.join(tmp, "vocab%d.txt" % V)
    write_vocab(vocab, V)
    cmd = [os.environ["PARLEY_BIN"], "model", "init", "--layers", str(L), "--hidden", str(H),
           "--heads", str(NH), "--intermediate", str(I), "--max-positions", str(P),
           "--vocab", vocab, "--intents", ",".join(INTENTS), "--slots", ",".join(SLOTS[1:]),
           "--seed", str(seed), "--out", d]
    subprocess.run(cmd, check=True)


def parley_logits(tool, d, seqs, tmp, threads=None):
    out = os.path.join(tmp, "logits.f32")
    text = "".join(" ".join(str(i) for i in s) + "\n" for s in seqs)
    args = [tool, d, out] + ([str(threads)] if threads else [])
    subprocess.run(args, input=text.encode(), check=True)
    flat = np.fromfile(out, dtype="<f4").astype(np.float64)
    ni, n = len(INTENTS) * len(seqs), sum(len(s) for s in seqs)
    check(flat.size == ni + n * len(SLOTS), "bert_logits wrote %d floats, expected %d"
          % (flat.size, ni + n * len(SLOTS)))
    return flat[:ni].reshape(len(seqs), -1), flat[ni:].reshape(n, -1)


def worst(c, r):
    """(max |c - r|, max of |c - r| / tolerance) under the stated tolerance."""
    tol = RTOL_MAX * np.abs(r).max() + RTOL * np.abs(r)
    d = np.abs(c - r)
    return d.max(), (d / tol).max()


def random_batch(rng, V, P, n):
    """n sequences: the first of length P, one of length 1 when n > 1, the rest random."""
    lens = [P] + ([1] if n > 1 else []) + [int(x) for x in rng.integers(1, P + 1, size=max(0, n - 2))]
    return [[int(x) for x in rng.integers(0, V, size=t)] for t in lens[:n]]


def compare(tool, name, d, seqs, tmp, model=None, threads=None):
    model = model or bert_ref.load(d)
    ci, cs = parley_logits(tool, d, seqs, tmp, threads)
    ri, rs = bert_ref.logits(model, seqs)
    rs = np.concatenate(rs)
    (di, ei), (ds, es) = worst(ci, ri), worst(cs, rs)
    print("%-34s B=%d N=%-4d intent max|diff| %.2e (%.3f of tol, max|ref| %.3g)  "
          "slot max|diff| %.2e (%.3f of tol, max|ref| %.3g)"
          % (name, len(seqs), len(rs), di, ei, np.abs(ri).max(), ds, es, np.abs(rs).max()))
    check(ei <= 1 and es <= 1, "%s: logits differ beyond tolerance" % name)
    return model


def gelu_control(model, seqs):
    """The same reference with the tanh GELU must differ beyond the tolerance, or the
    comparison could not tell the two apart."""
    exact = bert_ref.Intermediate.forward

    def tanh_gelu(self, x):
        h = self.dense(x)
        return 0.5 * h * (1 + torch.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))

    ri, rs = bert_ref.logits(model, seqs)
    bert_ref.Intermediate.forward = tanh_gelu
    try:
        ti, ts = bert_ref.logits(model, seqs)
    finally:
        bert_ref.Intermediate.forward = exact
    e = max(worst(ti, ri)[1], worst(np.concatenate(ts), np.concatenate(rs))[1])
    print("control: tanh GELU is %.1f times the tolerance away" % e)
    check(e > 1, "the tolerance cannot tell the tanh GELU from the erf GELU")


def main():
    if len(sys.argv) != 2 or "PARLEY_BIN" not in os.environ:
        sys.exit("usage: PARLEY_BIN=... test_bert_ref.py BERT_LOGITS_TOOL")
    tool = sys.argv[1]
    rng = np.random.default_rng(20240607)
    with tempfile.TemporaryDirectory() as tmp:
        # BERT's own initialization, through `parley model init`.
        for (H, L, NH, I, P) in ((32, 2, 4, 64, 24), (48, 2, 3, 80, 17)):
            d = os.path.join(tmp, "init_h%d" % H)
            init_model(d, tmp, 40, H, L, NH, I, P, seed=H)
            model = None
            for n in (1, 2, 7):
                model = compare(tool, "init L%d H%d A%d I%d" % (L, H, NH, I), d,
                                random_batch(rng, 40, P, n), tmp, model)

        # Larger weights: every part of the network matters.
        shapes = ((32, 2, 4, 64, 40, "bert."), (48, 3, 3, 96, 33, ""), (64, 2, 1, 64, 65, "bert."))
        for k, (H, L, NH, I, P, prefix) in enumerate(shapes):
            d = os.path.join(tmp, "scaled_h%d" % H)
            write_model(d, 50, H, L, NH, I, P, std=0.3, seed=k, prefix=prefix)
            model = None
            for n in (1, 2, 7):
                seqs = random_batch(rng, 50, P, n)
                model = compare(tool, "scaled L%d H%d A%d I%d" % (L, H, NH, I), d, seqs, tmp, model)
            compare(tool, "scaled L%d H%d A%d I%d, 1 thread" % (L, H, NH, I), d, seqs, tmp, model,
                    threads=1)
            if k == 0:
                gelu_control(model, seqs)

        # BERT-base's shape with a small vocabulary; std 0.05 keeps pre-activations O(1) at
        # width 768.
        d = os.path.join(tmp, "base")
        write_model(d, 64, 768, 12, 12, 3072, 64, std=0.05, seed=99)
        compare(tool, "BERT-base shape L12 H768 A12 I3072", d,
                [[int(x) for x in rng.integers(0, 64, size=t)] for t in (64, 9)], tmp)

    return done("bert ref")


if __name__ == "__main__":
    sys.exit(main())
