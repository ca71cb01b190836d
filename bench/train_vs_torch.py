#!/usr/bin/python3
"""train_vs_torch.py — training throughput of `parley train` against PyTorch, in one run.

Both sides do the same steps on the same data: the first --examples sentences of SNIPS's
training split (../shared/data/nlu/snips/train; a generated set of the same sentence lengths
when that is absent), the standard 30,522-piece vocabulary, the same model shape, batch,
epochs and thread count, joint loss, gradient clipping at norm 1 and AdamW with warmup and
linear decay (no decay on biases and LayerNorm). Dropout is 0 on both sides because the
reference model (tests/reference/bert_ref.py) has none.
  - parley: `parley train --quiet`; its summary reports examples/s over the optimizer
    steps only (no data loading, dev scoring or checkpoints).
  - torch: tests/reference/bert_ref.py's JointBert in float32, trained the ordinary eager way
    on padded batches (each batch padded to its longest sentence), timed over the same steps.
It prints both throughputs and the ratio parley / torch (above 1: parley is faster). Run
with Debian's python3 (python3-torch):

    /usr/bin/python3 bench/train_vs_torch.py --parley build/sdk/cli/parley [--threads 2]

With --device cuda both sides train on the GPU: parley with `--device cuda --precision P`,
torch with the model on the GPU and, for bf16, torch.autocast(dtype=torch.bfloat16) around
the forward pass (FP32 master weights, as parley keeps them); torch's steps are timed with
a synchronize after each, after one untimed forward and backward pass that sets up CUDA.
--shape base is BERT-base's (L12 H768 A12 I3072). parley trains the same dense model as
torch: no sparse features, the intent from the encoder, slot weight 1, no word dropout and
no lookup variants.
"""
import argparse
import contextlib
import os
import random
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, HERE)

from nlu_vs_torch import blas_core, vocab_file  # noqa: E402  (sets OPENBLAS_CORETYPE first)

import torch  # noqa: E402

from reference import bert_ref, bert_train_ref, tokenizer  # noqa: E402

SHARED = os.environ.get("PARLEY_SHARED_DATA", os.path.join(HERE, "..", "..", "shared", "data"))
SHAPES = {
    "mini": dict(layers=4, hidden=256, heads=4, intermediate=1024),
    "small": dict(layers=2, hidden=128, heads=2, intermediate=512),
    "base": dict(layers=12, hidden=768, heads=12, intermediate=3072),
}


def write_data(tmp, n):
    """A JointBERT folder with n examples; returns (folder, where they came from)."""
    src = os.path.join(SHARED, "nlu", "snips", "train")
    out = os.path.join(tmp, "data")
    os.makedirs(out)
    if os.path.isdir(src):
        files = {}
        for name in ("seq.in", "seq.out", "label"):
            with open(os.path.join(src, name), encoding="utf-8") as f:
                files[name] = f.read().split("\n")[:n]
        origin = f"SNIPS train, first {n}"
    else:
        rng = random.Random(1)
        words = [[f"w{rng.randrange(500)}" for _ in range(rng.randrange(3, 20))] for _ in range(n)]
        files = {"seq.in": [" ".join(w) for w in words],
                 "seq.out": [" ".join(rng.choice(["O", "B-a", "I-a"]) if i else "B-a" for i in range(len(w)))
                             for w in words],
                 "label": [f"intent{rng.randrange(7)}" for _ in range(n)]}
        origin = f"generated ({n}; SNIPS not found under {SHARED})"
    for name, lines in files.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return out, origin


def run_parley(args, data, vocab, model_dir):
    cmd = [args.parley, "train", "--quiet", "--data", data, "--out", model_dir, "--vocab", vocab,
           "--epochs", str(args.epochs), "--batch", str(args.batch), "--lr", str(args.lr),
           "--dropout", "0", "--threads", str(args.threads), "--seed", "1", "--device", args.device,
           "--sparse", "off", "--intent-encoder", "on", "--slot-weight", "1", "--word-dropout", "0",
           "--augment", "0", "--pretrain-epochs", "0"]
    if args.device == "cuda":
        cmd += ["--precision", args.precision]
    shape = SHAPES[args.shape]
    for k in ("layers", "hidden", "heads", "intermediate"):
        cmd += [f"--{k}", str(shape[k])]
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    m = re.search(r"([0-9.]+) examples/s", r.stdout + r.stderr)
    if not m:
        sys.exit(f"no throughput in parley's output:\n{r.stdout}{r.stderr}")
    return float(m.group(1)), " ".join(cmd)


def encode(data, model):
    """The examples as (ids, slot labels with -1 off first pieces, intent id)."""
    vocab, _ = tokenizer.load_vocab(os.path.join(model, "vocab.txt"))
    cfg = bert_ref.load(model, dtype=torch.float32).config
    tags = {t: i for i, t in enumerate(cfg.slot_labels)}
    intents = {t: i for i, t in enumerate(cfg.intent_labels)}
    with open(os.path.join(data, "seq.in"), encoding="utf-8") as f:
        texts = f.read().split("\n")
    with open(os.path.join(data, "seq.out"), encoding="utf-8") as f:
        outs = f.read().split("\n")
    with open(os.path.join(data, "label"), encoding="utf-8") as f:
        labels = f.read().split("\n")
    ex = []
    for text, out, label in zip(texts, outs, labels):
        if not text.strip():
            continue
        tk = tokenizer.tokenize(" ".join(text.split()).encode("utf-8"), vocab)
        words = out.split()
        ids, slot, prev = [vocab["[CLS]"]], [-1], -1
        for tid, w in zip(tk["ids"], tk["words"]):
            ids.append(tid)
            slot.append(tags[words[w]] if w != prev else -1)
            prev = w
        ids.append(vocab["[SEP]"])
        slot.append(-1)
        ex.append((ids, slot, intents[label]))
    return ex


def run_torch(args, ex, model_dir):
    dev = torch.device(args.device)
    model = bert_ref.load(model_dir, dtype=torch.float32).to(dev)
    model.train()
    cuda = args.device == "cuda"
    bf16 = cuda and args.precision == "bf16"
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    decay = [p for n, p in model.named_parameters() if not (n.endswith(".bias") or "LayerNorm" in n)]
    no_decay = [p for n, p in model.named_parameters() if n.endswith(".bias") or "LayerNorm" in n]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.999), eps=1e-8)
    steps_per_epoch = (len(ex) + args.batch - 1) // args.batch
    total = steps_per_epoch * args.epochs
    warm = round(0.1 * total)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: s / max(1, warm) if s < warm else max(0.0, (total - s) / max(1, total - warm)))
    if cuda:  # CUDA context, cuBLAS handles and autocast caches, as parley makes them before its steps
        b = ex[:args.batch]
        with autocast:
            out = bert_train_ref.joint_loss(model, [len(e[0]) for e in b], [t for e in b for t in e[0]],
                                            [e[2] for e in b], [t for e in b for t in e[1]], device=dev)
        out["loss"].backward()
        opt.zero_grad()
        torch.cuda.synchronize()
    rng = random.Random(1)
    t_steps, n_done = 0.0, 0
    for _ in range(args.epochs):
        order = list(range(len(ex)))
        rng.shuffle(order)
        for k in range(steps_per_epoch):
            batch = [ex[i] for i in order[k * args.batch:(k + 1) * args.batch]]
            lens = [len(b[0]) for b in batch]
            ids = [t for b in batch for t in b[0]]
            slot = [t for b in batch for t in b[1]]
            intent = [b[2] for b in batch]
            t0 = time.perf_counter()
            with autocast:
                out = bert_train_ref.joint_loss(model, lens, ids, intent, slot, device=dev)
            opt.zero_grad()
            out["loss"].backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            if cuda:
                torch.cuda.synchronize()
            t_steps += time.perf_counter() - t0
            n_done += len(batch)
    return n_done / t_steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parley", default=os.path.join(HERE, "..", "build", "sdk", "cli", "parley"))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--shape", choices=sorted(SHAPES), default="mini")
    ap.add_argument("--examples", type=int, default=1024)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--precision", choices=("bf16", "fp32"), default="bf16", help="on cuda")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix="parley-train-bench-") as tmp:
        data, origin = write_data(tmp, args.examples)
        model_dir = os.path.join(tmp, "model")
        p, cmd = run_parley(args, data, vocab_file(tmp), model_dir)
        ex = encode(data, model_dir)
        t = run_torch(args, ex, model_dir)
    s = SHAPES[args.shape]
    print(f"data: {origin}; model L{s['layers']} H{s['hidden']} A{s['heads']} I{s['intermediate']}, "
          f"vocab 30522, batch {args.batch}, {args.epochs} epochs, dropout 0, threads {args.threads}, "
          f"device {args.device}" + (f" ({args.precision})" if args.device == "cuda" else ""))
    print(f"parley: {cmd}")
    print(f"parley train  {p:9.1f} examples/s")
    print(f"torch         {t:9.1f} examples/s  (torch {torch.__version__}, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(auto)')}, blas_core {blas_core()})")
    print(f"parley / torch {p / t:5.2f}x")


if __name__ == "__main__":
    main()
