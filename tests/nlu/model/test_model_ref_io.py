"""test_model_ref_io.py — parley's model files against an independent numpy reading of them.

Python writes model directories (F32, F16 and BF16; with and without the "bert." prefix;
with an int64 position_ids buffer), the C loader reads each and saves it again as F32
(tests/tools/model_dump.c), and every value must equal numpy's widening bit for bit. The
widening of values no model may hold (NaN, infinities, beyond 1e4) is checked on the
tensors alone (model_dump --tensors), and the model loader must refuse them, naming the
tensor and the element.
It also drives `parley model init` and checks the directory it writes: names, shapes,
BERT's initialization, labels, determinism, and its errors.

Usage: test_model_ref_io.py MODEL_DUMP   (PARLEY_BIN names the parley CLI)
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    sys.exit(77)

from reference import safetensors_io as sio

DUMP = sys.argv[1]
PARLEY = os.environ["PARLEY_BIN"]
FAILURES = []

V_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "pizza", "large", "##s", "want"]
V, H, L, NH, I, P, TT = len(V_TOKENS), 8, 2, 2, 12, 10, 2
INTENTS = ["order", "greet", "bye"]
SLOTS = ["O", "B-size", "I-size"]


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, file=sys.stderr)


def hf_shapes(V=V, H=H, L=L, I=I, P=P, TT=TT, NI=len(INTENTS), NS=len(SLOTS)):
    """The tensors of a joint model in Hugging Face naming (no prefix) with their shapes."""
    s = {"embeddings.word_embeddings.weight": (V, H), "embeddings.position_embeddings.weight": (P, H),
         "embeddings.token_type_embeddings.weight": (TT, H),
         "embeddings.LayerNorm.weight": (H,), "embeddings.LayerNorm.bias": (H,)}
    for i in range(L):
        p = "encoder.layer.%d." % i
        for m in ("query", "key", "value"):
            s[p + "attention.self.%s.weight" % m] = (H, H)
            s[p + "attention.self.%s.bias" % m] = (H,)
        s.update({p + "attention.output.dense.weight": (H, H), p + "attention.output.dense.bias": (H,),
                  p + "attention.output.LayerNorm.weight": (H,), p + "attention.output.LayerNorm.bias": (H,),
                  p + "intermediate.dense.weight": (I, H), p + "intermediate.dense.bias": (I,),
                  p + "output.dense.weight": (H, I), p + "output.dense.bias": (H,),
                  p + "output.LayerNorm.weight": (H,), p + "output.LayerNorm.bias": (H,)})
    s.update({"pooler.dense.weight": (H, H), "pooler.dense.bias": (H,),
              "intent_classifier.weight": (NI, H), "intent_classifier.bias": (NI,),
              "slot_classifier.weight": (NS, H), "slot_classifier.bias": (NS,)})
    return s


def prefixed(name):
    return name if name.startswith(sio.HEADS) else "bert." + name


def write_dir(d, tensors, dtype, prefix, config=None):
    os.makedirs(d, exist_ok=True)
    cfg = config or {"vocab_size": V, "hidden_size": H, "num_hidden_layers": L, "num_attention_heads": NH,
                     "intermediate_size": I, "max_position_embeddings": P, "type_vocab_size": TT,
                     "layer_norm_eps": 1e-12, "hidden_act": "gelu", "model_type": "bert",
                     "intent_labels": INTENTS, "slot_labels": SLOTS}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("\n".join(V_TOKENS) + "\n")
    sio.save(os.path.join(d, "model.safetensors"), tensors, dtype=dtype, prefix=prefix)


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


def run(args):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def check_saved_header(path, what):
    header, start = sio.read_header(path)
    check(start % 8 == 0, "%s: data starts 8-byte aligned (%d)" % (what, start))
    check(header.get("__metadata__") == {"format": "pt"}, "%s: metadata" % what)
    check(all(e["dtype"] == "F32" for k, e in header.items() if k != "__metadata__"), "%s: all F32" % what)


def test_dtypes(tmp):
    rng = np.random.default_rng(5)
    special = np.array([0.0, -0.0, 1.0, -1.0, 1 / 3, 65504.0, 7e4, 1e-5, 6e-8, 1e-40, 3.4e38,
                        np.inf, -np.inf, np.nan, -2.5e-3, 0.1, 1e4, -9984.0], dtype=np.float32)
    # What a model may hold: finite and at most 1e4 in magnitude (nlu/model/model_io.c).
    loadable = special[np.abs(special) <= 1e4]
    for dtype in ("F32", "F16", "BF16"):
        for prefix in ("bert.", ""):
            what = "%s %s" % (dtype, prefix or "unprefixed")
            tensors = {n: rng.normal(0, 0.5, s).astype(np.float32) for n, s in hf_shapes().items()}
            word = tensors["embeddings.word_embeddings.weight"]
            word.flat[:len(special)] = special
            if dtype == "F16":
                tensors["embeddings.position_ids"] = np.arange(P, dtype=np.int64)[None, :]
            src = os.path.join(tmp, "src-%s-%s" % (dtype, prefix or "none"))
            write_dir(src, tensors, dtype, prefix)
            # Every value widens to F32 as numpy widens it, bit for bit, NaN and infinities too.
            src_file = os.path.join(src, "model.safetensors")
            r = run([DUMP, "--tensors", src_file, src + "-wide.safetensors"])
            check(r.returncode == 0, "%s: model_dump --tensors: %s" % (what, r.stderr.strip()))
            if r.returncode == 0:
                want = {k: v for k, v in sio.load(src_file).items() if not k.endswith("position_ids")}
                got = sio.load(src + "-wide.safetensors")
                check(sorted(got) == sorted(want), "%s: widened names" % what)
                for k in want:
                    check(k in got and got[k].shape == want[k].shape
                          and np.array_equal(bits(got[k]), bits(want[k])), "%s: %s widened bit for bit" % (what, k))
                check(dtype != "F16" or np.isinf(got[prefix + "embeddings.word_embeddings.weight"].flat[6]),
                      "F16: 7e4 overflows to inf")
            # As a model, the file is refused at its first value beyond 1e4 (65504, element 5).
            r = run([DUMP, src, src + "-refused"])
            check(r.returncode == 1 and 'embeddings.word_embeddings.weight": element [0, 5] is 65' in r.stderr,
                  "%s: a weight beyond 1e4 refused: %s" % (what, r.stderr.strip()))
            word.flat[:len(special)] = np.resize(loadable, len(special))
            write_dir(src, tensors, dtype, prefix)
            out = src + "-out"
            r = run([DUMP, src, out])
            check(r.returncode == 0, "%s: model_dump: %s" % (what, r.stderr.strip()))
            if r.returncode:
                continue
            # What numpy reads from the Python-written file, under the names parley writes.
            want = {prefixed(k[len(prefix):] if prefix and k.startswith(prefix) else k): v
                    for k, v in sio.load(os.path.join(src, "model.safetensors")).items()
                    if not k.endswith("position_ids")}
            got = sio.load(os.path.join(out, "model.safetensors"))
            check(sorted(got) == sorted(want), "%s: tensor names %s" % (what, sorted(set(got) ^ set(want))))
            for k in want:
                if k in got:
                    check(got[k].shape == want[k].shape and np.array_equal(bits(got[k]), bits(want[k])),
                          "%s: %s equal bit for bit" % (what, k))
            check_saved_header(os.path.join(out, "model.safetensors"), what)
            with open(os.path.join(out, "config.json")) as f:
                cfg = json.load(f)
            check(cfg["intent_labels"] == INTENTS and cfg["slot_labels"] == SLOTS and cfg["hidden_size"] == H
                  and cfg["num_hidden_layers"] == L and cfg["layer_norm_eps"] == 1e-12
                  and cfg["model_type"] == "bert", "%s: config.json kept" % what)
            with open(os.path.join(out, "vocab.txt")) as f:
                check(f.read().split("\n")[:V] == V_TOKENS, "%s: vocab.txt kept" % what)


def test_init(tmp):
    vocab = os.path.join(tmp, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(V_TOKENS + ["w%d" % i for i in range(200)]) + "\n")
    nv = len(V_TOKENS) + 200
    r = run([PARLEY, "model", "--help"])
    check(r.returncode == 0 and "parley model init" in r.stdout, "model --help")

    out = os.path.join(tmp, "init")
    base = [PARLEY, "model", "init", "--layers", "2", "--hidden", "16", "--heads", "4", "--intermediate", "32",
            "--max-positions", "64", "--vocab", vocab, "--intents", "order,greet", "--slots", "B-size,I-size"]
    r = run(base + ["--seed", "3", "--out", out])
    check(r.returncode == 0, "model init: %s" % r.stderr.strip())
    if r.returncode:
        return
    t = sio.load(os.path.join(out, "model.safetensors"))
    shapes = {prefixed(k): s for k, s in hf_shapes(V=nv, H=16, L=2, I=32, P=64, NI=2, NS=3).items()}
    check({k: v.shape for k, v in t.items()} == shapes, "init: names and shapes")
    for k, v in t.items():
        if k.endswith("LayerNorm.weight"):
            check(np.all(v == 1), "init: %s is 1" % k)
        elif k.endswith("bias"):
            check(np.all(v == 0), "init: %s is 0" % k)
        else:
            check(0.01 < v.std() < 0.03 and abs(v.mean()) < 0.01, "init: %s ~ normal(0, 0.02): %g" % (k, v.std()))
    w = t["bert.embeddings.word_embeddings.weight"]
    check(np.all(w[0] == 0) and np.all(w[1] != 0), "init: the [PAD] row is zero")
    big = np.concatenate([v.ravel() for k, v in t.items() if v.ndim == 2])
    check(abs(big.std() - 0.02) < 0.0005, "init: overall std %g" % big.std())
    with open(os.path.join(out, "config.json")) as f:
        cfg = json.load(f)
    check(cfg["slot_labels"] == ["O", "B-size", "I-size"] and cfg["intent_labels"] == ["order", "greet"]
          and cfg["vocab_size"] == nv
          and cfg["max_position_embeddings"] == 64 and cfg["type_vocab_size"] == 2, "init: config.json")
    with open(os.path.join(out, "vocab.txt")) as f, open(vocab) as g:
        check(f.read() == g.read(), "init: vocab.txt copied")
    check_saved_header(os.path.join(out, "model.safetensors"), "init")

    # Deterministic for a seed; the C loader reads it back unchanged.
    r = run(base + ["--seed", "3", "--out", out + "-same"])
    r2 = run(base + ["--seed", "4", "--out", out + "-other"])
    read = lambda d: open(os.path.join(d, "model.safetensors"), "rb").read()
    check(r.returncode == 0 and read(out) == read(out + "-same"), "init: same seed, same file")
    check(r2.returncode == 0 and read(out) != read(out + "-other"), "init: other seed, other file")
    r = run([DUMP, out, out + "-dump"])
    check(r.returncode == 0 and read(out) == read(out + "-dump"), "init: load and save give the same file")

    # Shape from a BertConfig file; its labels and vocab_size are replaced.
    cfg_path = os.path.join(tmp, "bert_config.json")
    hf = {"architectures": ["BertForMaskedLM"], "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
          "intermediate_size": 64, "max_position_embeddings": 32, "type_vocab_size": 2, "vocab_size": 30522,
          "hidden_act": "gelu", "layer_norm_eps": 1e-12, "torch_dtype": "float32", "intent_labels": ["x"]}
    with open(cfg_path, "w") as f:
        json.dump(hf, f)
    cfg_init = [PARLEY, "model", "init", "--config", cfg_path, "--vocab", vocab, "--intents", "a,b,c",
                "--slots", "O,B-t", "--out", out + "-cfg"]
    r = run(cfg_init)
    check(r.returncode == 0, "init --config: %s" % r.stderr.strip())
    if r.returncode == 0:
        with open(os.path.join(out + "-cfg", "config.json")) as f:
            cfg = json.load(f)
        check(cfg["num_hidden_layers"] == 1 and cfg["intermediate_size"] == 64 and cfg["vocab_size"] == nv
              and cfg["intent_labels"] == ["a", "b", "c"] and cfg["slot_labels"] == ["O", "B-t"],
              "init --config: shape from the file, labels and vocab from the flags")

    # Errors: exit 1 with the reason for bad values, 2 for bad usage.
    hf["hidden_act"] = "gelu_new"
    with open(cfg_path, "w") as f:
        json.dump(hf, f)
    cases = [(cfg_init, 1, "hidden_act"),
             (base + ["--slots", "B-size,B-size", "--out", out + "-x"], 1, "appears twice"),
             (base + ["--intents", "a,,b", "--out", out + "-x"], 1, "empty"),
             (base + ["--heads", "3", "--out", out + "-x"], 1, "does not divide"),
             (base + ["--vocab", vocab + ".none", "--out", out + "-x"], 1, "vocab.txt.none"),
             (base, 2, "--out"),
             (base + ["--config", cfg_path, "--out", out + "-x"], 2, "exclude"),
             (base + ["--hidden", "zero", "--out", out + "-x"], 2, "--hidden"),
             (base + ["--bogus", "1", "--out", out + "-x"], 2, "--bogus")]
    for args, rc, says in cases:
        r = run(args)
        check(r.returncode == rc and says in r.stderr,
              "init %s: exit %d, want %d, stderr %r" % (" ".join(args[3:]), r.returncode, rc, r.stderr))
    check(not os.path.exists(out + "-x"), "failed inits write nothing")


def main():
    with tempfile.TemporaryDirectory(prefix="parley-refio-") as tmp:
        test_dtypes(tmp)
        test_init(tmp)
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
