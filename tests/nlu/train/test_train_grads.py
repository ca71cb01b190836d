"""test_train_grads.py — bert_train_step's loss, logits and every parameter gradient against
torch autograd in float64 on the same weights (tests/reference/bert_train_ref.py, the loss on
top of tests/reference/bert_ref.py's model).

Random small models (L2 H32 A4 I64, and an odd L3 H36 A3 I52 with eps 1e-5), weights
uniform in +-0.5 and LayerNorm gains in [0.5, 1.5] so activations, attention and gradients
are far from trivial (BERT's 0.02 init would leave gradients near zero and hide mistakes);
with sparse features too (the maps sparse_intent_classifier and sparse_slot_classifier
over random rows of features, one per sequence and one per token, some empty; and a model
with sentence features only);
batches of sequences of different lengths (1 and max_position_embeddings included, one
[PAD] token inside a sequence), slot labels with unscored tokens, a batch with no scored
slot, and slot weights 1 and 0.5. The C step runs with dropout 0, writes its outputs
(tests/tools/train_grads.c), and this compares.

Tolerance per gradient tensor: max |g - g_ref| <= 1e-4 * max |g_ref| + 1e-6. The C side
computes in float32 (unit rounding 6e-8); each of the ~10 ops per layer adds relative errors
of a few ulps times the square root of its sum length, and a backward pass through L layers
compounds them a few times over: 1e-5 relative is typical (printed), and 1e-4 leaves a
factor of ten while still failing any wrong term (a missing term or a transposed index is
an O(1) relative error). The loss must match to 1e-5 relative, logits to 1e-4 * max|logit|.

The masked-LM step (bert_mlm_step_ws) is held to bert_train_ref.mlm_loss_and_grads the same
way: random heads (cls.predictions.*), about a third of the pieces masked, a [PAD] token in
the batch (its row gets only the tied decoder's share), the loss, the count of right
guesses, every model and head gradient; and a batch with nothing masked gives loss 0 and
no gradient at all.

Usage: test_train_grads.py TRAIN_GRADS   (exits 77 without torch or numpy)
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
    sys.exit(77)

from reference import bert_train_ref
from reference import safetensors_io as sio

TOOL = sys.argv[1]
FAILURES = []
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def hf_tensors(rng, V, H, L, I, P, NI, NS):
    """Random weights for every tensor of a joint model, Hugging Face names, no prefix."""
    def u(*shape):
        return rng.uniform(-0.5, 0.5, size=shape).astype(np.float32)

    def gain(n):
        return rng.uniform(0.5, 1.5, size=(n,)).astype(np.float32)

    t = {"embeddings.word_embeddings.weight": u(V, H), "embeddings.position_embeddings.weight": u(P, H),
         "embeddings.token_type_embeddings.weight": u(2, H), "embeddings.LayerNorm.weight": gain(H),
         "embeddings.LayerNorm.bias": u(H)}
    for l in range(L):
        p = "encoder.layer.%d." % l
        for m in ("query", "key", "value"):
            t[p + "attention.self.%s.weight" % m] = u(H, H)
            t[p + "attention.self.%s.bias" % m] = u(H)
        t.update({p + "attention.output.dense.weight": u(H, H), p + "attention.output.dense.bias": u(H),
                  p + "attention.output.LayerNorm.weight": gain(H), p + "attention.output.LayerNorm.bias": u(H),
                  p + "intermediate.dense.weight": u(I, H), p + "intermediate.dense.bias": u(I),
                  p + "output.dense.weight": u(H, I), p + "output.dense.bias": u(H),
                  p + "output.LayerNorm.weight": gain(H), p + "output.LayerNorm.bias": u(H)})
    t.update({"pooler.dense.weight": u(H, H), "pooler.dense.bias": u(H),
              "intent_classifier.weight": u(NI, H), "intent_classifier.bias": u(NI),
              "slot_classifier.weight": u(NS, H), "slot_classifier.bias": u(NS)})
    return t


def write_model(d, cfg, tensors):
    os.makedirs(d)
    if cfg.get("sparse_sentence_features") or cfg.get("sparse_word_features"):
        fs, fw = cfg.get("sparse_sentence_features", 0), cfg.get("sparse_word_features", 0)
        with open(os.path.join(d, "sparse.json"), "w") as f:
            json.dump({"format": "parley-sparse", "version": 1,
                       "sentence": {"features": ["w:s%d" % i for i in range(fs)], "idf": [1.0] * fs},
                       "word": {"features": ["0:w:w%d" % i for i in range(fw)]}, "lookups": {}}, f)
    V = cfg["vocab_size"]
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("\n".join(SPECIALS + ["w%d" % i for i in range(V - len(SPECIALS))]) + "\n")
    sio.save(os.path.join(d, "model.safetensors"), tensors, prefix="bert.")


def make_batch(rng, cfg, lens, scored=0.7):
    V, NS, NI = cfg["vocab_size"], len(cfg["slot_labels"]), len(cfg["intent_labels"])
    ids, slot = [], []
    for n in lens:
        seq = [2] + [int(rng.integers(5, V)) for _ in range(n - 2)] + [3] if n >= 2 else [2]
        labels = [int(rng.integers(0, NS)) if rng.random() < scored else -1 for _ in range(n)]
        labels[0] = labels[-1] = -1
        ids += seq
        slot += labels
    if len(ids) > 3:
        ids[len(ids) // 2] = 0  # a [PAD] token: its word row gets no gradient
    intent = [int(rng.integers(0, NI)) for _ in lens]
    return ids, intent, slot


def sparse_rows(rng, n_rows, n_feat, density, empty=()):
    """n_rows rows of [index, value] pairs, increasing indices; the rows in `empty` empty."""
    rows = []
    for r in range(n_rows):
        idx = [] if r in empty else sorted(set(int(j) for j in rng.integers(0, n_feat, size=density)))
        rows.append([[j, float(rng.uniform(-1, 1))] for j in idx])
    return rows


def run_case(tmp, name, cfg, tensors, lens, ids, intent, slot, slot_weight, sparse=None,
             intent_weight=None):
    d = os.path.join(tmp, name)
    write_model(os.path.join(d, "model"), cfg, tensors)
    batch = {"len": lens, "ids": ids, "intent": intent, "slot": slot, "slot_weight": slot_weight,
             "dropout": 0.0, "seed": 1}
    if sparse:
        batch["sent"], batch["tok"] = sparse
    if intent_weight is not None:
        batch["intent_weight"] = intent_weight
    with open(os.path.join(d, "batch.json"), "w") as f:
        json.dump(batch, f)
    r = subprocess.run([TOOL, os.path.join(d, "model"), os.path.join(d, "batch.json"), d],
                       capture_output=True, text=True)
    if r.returncode != 0:
        check(False, "%s: train_grads failed: %s" % (name, r.stderr.strip()))
        return
    with open(os.path.join(d, "outputs.json")) as f:
        out = json.load(f)
    grads = {k[5:] if k.startswith("bert.") else k: v
             for k, v in sio.load(os.path.join(d, "grads", "model.safetensors")).items()}

    ref, g_ref = bert_train_ref.loss_and_grads(os.path.join(d, "model"), lens, ids, intent, slot,
                                               slot_weight, pad_id=0, sparse=sparse,
                                               intent_weight=intent_weight)
    print("%s: %d sequences, %d tokens, %d scored; loss %.7f (torch %.7f)" % (
        name, len(lens), len(ids), sum(s >= 0 for s in slot), out["loss"], ref["loss"]))
    for key in ("loss", "intent_loss", "slot_loss"):
        check(abs(out[key] - ref[key]) <= 1e-5 * abs(ref[key]) + 1e-7,
              "%s: %s %.8g vs torch %.8g" % (name, key, out[key], ref[key]))
    check(out["slot_scored"] == sum(s >= 0 for s in slot), "%s: scored slot count" % name)
    for key in ("intent_logits", "slot_logits"):
        got, want = np.array(out[key]), ref[key].reshape(-1)
        diff = np.max(np.abs(got - want))
        check(got.shape == want.shape and diff <= 1e-4 * np.max(np.abs(want)),
              "%s: %s max |diff| %.3g (max %.3g)" % (name, key, diff, np.max(np.abs(want))))
    check(set(grads) == set(g_ref), "%s: the same tensors" % name)
    worst = 0.0
    for key in sorted(g_ref):
        g, want = grads[key].astype(np.float64), g_ref[key]
        scale = np.max(np.abs(want))
        diff = np.max(np.abs(g - want)) if g.shape == want.shape else np.inf
        if scale > 1e-6:  # the key biases' gradient is zero in exact arithmetic
            worst = max(worst, diff / scale)
        check(diff <= 1e-4 * scale + 1e-6, "%s: grad %-48s max |diff| %.3g (max |g_ref| %.3g)" % (
            name, key, diff, scale))
    print("%s: worst max|diff| / max|g_ref| over the nonzero tensors %.3g" % (name, worst))
    pad_row = grads["embeddings.word_embeddings.weight"][0]
    check(not np.any(pad_row), "%s: the [PAD] row has no gradient" % name)
    if cfg.get("intent_sparse_only"):
        check(not np.any(grads["pooler.dense.weight"]) and not np.any(grads["intent_classifier.weight"]),
              "%s: the intent is the sparse features' alone: no gradient to the pooler or the "
              "encoder's intent head" % name)


def run_mlm_case(tmp, name, cfg, tensors, rng, lens):
    d = os.path.join(tmp, name)
    write_model(os.path.join(d, "model"), cfg, tensors)
    V, H = cfg["vocab_size"], cfg["hidden_size"]
    u = lambda *shape: rng.uniform(-0.5, 0.5, size=shape).astype(np.float32)
    p = "cls.predictions."
    sio.save(os.path.join(d, "model", "mlm_head.safetensors"), {
        p + "transform.dense.weight": u(H, H), p + "transform.dense.bias": u(H),
        p + "transform.LayerNorm.weight": rng.uniform(0.5, 1.5, size=(H,)).astype(np.float32),
        p + "transform.LayerNorm.bias": u(H), p + "bias": u(V)})
    ids, _, _ = make_batch(rng, cfg, lens)
    target = [int(rng.integers(1, V)) if rng.random() < 0.35 else -1 for _ in ids]
    if not name.endswith("unmasked"):
        target[len(ids) // 2] = int(rng.integers(1, V))  # the [PAD] position is predicted too
    else:
        target = [-1] * len(ids)
    with open(os.path.join(d, "batch.json"), "w") as f:
        json.dump({"len": lens, "ids": ids, "target": target, "dropout": 0.0, "seed": 1}, f)
    r = subprocess.run([TOOL, os.path.join(d, "model"), os.path.join(d, "batch.json"), d],
                       capture_output=True, text=True)
    if r.returncode != 0:
        check(False, "%s: train_grads failed: %s" % (name, r.stderr.strip()))
        return
    with open(os.path.join(d, "outputs.json")) as f:
        out = json.load(f)
    grads = {k[5:] if k.startswith("bert.") else k: v
             for k, v in sio.load(os.path.join(d, "grads", "model.safetensors")).items()}
    grads.update(sio.load(os.path.join(d, "grads", "mlm_head.safetensors")))
    if name.endswith("unmasked"):
        check(out["loss"] == 0 and out["masked"] == 0, "%s: nothing masked, loss 0" % name)
        check(all(not np.any(g) for g in grads.values()), "%s: no gradient at all" % name)
        return
    (loss, masked, correct), g_ref = bert_train_ref.mlm_loss_and_grads(
        os.path.join(d, "model"), lens, ids, target, pad_id=0)
    print("%s: %d tokens, %d masked; loss %.7f (torch %.7f)" % (name, len(ids), masked, out["loss"], loss))
    check(abs(out["loss"] - loss) <= 1e-5 * abs(loss), "%s: loss %.8g vs torch %.8g" % (name, out["loss"], loss))
    check(out["masked"] == masked and out["correct"] == correct,
          "%s: %d masked, %d right (torch %d, %d)" % (name, out["masked"], out["correct"], masked, correct))
    check(set(grads) == set(g_ref), "%s: the same tensors" % name)
    worst = 0.0
    for key in sorted(g_ref):
        g, want = grads[key].astype(np.float64), g_ref[key]
        scale = np.max(np.abs(want))
        diff = np.max(np.abs(g - want)) if g.shape == want.shape else np.inf
        if scale > 1e-6:
            worst = max(worst, diff / scale)
        check(diff <= 1e-4 * scale + 1e-6, "%s: grad %-48s max |diff| %.3g (max |g_ref| %.3g)" % (
            name, key, diff, scale))
    print("%s: worst max|diff| / max|g_ref| over the nonzero tensors %.3g" % (name, worst))
    check(not np.any(grads["pooler.dense.weight"]) and not np.any(grads["intent_classifier.weight"]),
          "%s: the pooler and the joint heads get no gradient" % name)
    check(np.any(grads["embeddings.word_embeddings.weight"][0]), "%s: the decoder's share reaches the [PAD] row" % name)


def main():
    torch.set_num_threads(1)
    rng = np.random.default_rng(20240611)
    shapes = [  # V, H, L, NH, I, P, NI, NS, eps
        (50, 32, 2, 4, 64, 24, 5, 7, 1e-12),
        (37, 36, 3, 3, 52, 17, 3, 9, 1e-5),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for k, (V, H, L, NH, I, P, NI, NS, eps) in enumerate(shapes):
            cfg = {"vocab_size": V, "hidden_size": H, "num_hidden_layers": L, "num_attention_heads": NH,
                   "intermediate_size": I, "max_position_embeddings": P, "type_vocab_size": 2,
                   "layer_norm_eps": eps, "hidden_act": "gelu", "model_type": "bert",
                   "intent_labels": ["i%d" % i for i in range(NI)],
                   "slot_labels": ["O"] + ["%s-s%d" % (bi, i // 2) for i, bi in zip(range(NS - 1), "BI" * NS)]}
            tensors = hf_tensors(rng, V, H, L, I, P, NI, NS)
            lens = [5, 1, P, 12, 2] if k == 0 else [P, 3, 9]
            ids, intent, slot = make_batch(rng, cfg, lens)
            run_case(tmp, "shape%d" % k, cfg, tensors, lens, ids, intent, slot, 1.0)
            ids, intent, slot = make_batch(rng, cfg, lens[:3], scored=0.5)
            run_case(tmp, "shape%d-weight0.5" % k, cfg, tensors, lens[:3], ids, intent, slot, 0.5)
            ids, intent, slot = make_batch(rng, cfg, [4, 7], scored=0.0)
            run_case(tmp, "shape%d-unscored" % k, cfg, tensors, [4, 7], ids, intent, slot, 1.0)
            # Sparse features beside the encoder: their maps' logits and gradients too.
            FS, FW = (40, 30) if k == 0 else (7, 0)
            scfg = dict(cfg, sparse_sentence_features=FS, sparse_word_features=FW)
            stensors = dict(tensors, **{"sparse_intent_classifier.weight":
                                        rng.uniform(-0.5, 0.5, size=(NI, FS)).astype(np.float32)})
            if FW:
                stensors["sparse_slot_classifier.weight"] = rng.uniform(-0.5, 0.5, size=(NS, FW)).astype(np.float32)
            ids, intent, slot = make_batch(rng, cfg, lens)
            first = set(np.cumsum([0] + lens[:-1]))  # [CLS] tokens carry no word features
            sparse = (sparse_rows(rng, len(lens), FS, 6, empty={1}),
                      sparse_rows(rng, len(ids), max(FW, 1), 4 if FW else 0, empty=first))
            run_case(tmp, "shape%d-sparse" % k, scfg, stensors, lens, ids, intent, slot, 1.0, sparse)
            # Each intent's weight in the loss (nlu/train/defaults.c), and the intent left to
            # the sparse features alone (config "intent_sparse_only").
            weights = [float(w) for w in rng.uniform(0.1, 1.0, size=NI)]
            run_case(tmp, "shape%d-sparse-weighted" % k, scfg, stensors, lens, ids, intent, slot,
                     1.0, sparse, intent_weight=weights)
            run_case(tmp, "shape%d-sparse-only" % k, dict(scfg, intent_sparse_only=True), stensors,
                     lens, ids, intent, slot, 1.0, sparse, intent_weight=weights)
            run_mlm_case(tmp, "shape%d-mlm" % k, cfg, tensors, rng, lens)
            run_mlm_case(tmp, "shape%d-mlm-unmasked" % k, cfg, tensors, rng, [4, 7])
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
