#!/usr/bin/env python3
"""gpu_vs_torch.py — parley's CUDA forward pass against PyTorch + Hugging Face on one GPU.

Run on a machine with a CUDA GPU, torch and transformers (see bench/gpu_run.sh):

    python3 bench/gpu_vs_torch.py --parley PATH/TO/parley [--json FILE]

It writes one random BERT-base-shaped joint model (L12 H768 A12 I3072, 30,522 pieces, 7
intents, 73 slot tags) with `parley model init`, loads the same safetensors weights into
transformers' BertModel plus the two linear heads (intent on the pooled output, slots on
every token), and times, each side from token ids on the host to both heads' logits on the
host (the work an application waits for):
  - parley: `parley bench nlu --device cuda:0 --precision fp16` (CUDA graphs, fused kernels;
    also with each attention path forced, with small batches' products not split over K,
    and in BF16);
  - torch eager in FP16 under inference_mode, and (at batch 1) torch.compile of the same
    module when it compiles here;
at batch 1 for sequences of 32, 64 and 128, and batch 32, 128 and 256 for sequences of 128.
It also times an 8192^3 BF16 matrix product with torch to give the card's practical peak,
and reports parley's batch-256 throughput as a share of it (BERT-base is about 22.4 GFLOP
per sequence of 128: 2 * 85M weights * 128 tokens + attention).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import torch

LAT = [(1, 32), (1, 64), (1, 128)]
THR = [(32, 128), (128, 128), (256, 128)]
SHAPE = dict(layers=12, hidden=768, heads=12, intermediate=3072)


def flops_per_seq(T, L=12, H=768, I=3072):
    dense = 2 * T * L * (4 * H * H + 2 * H * I)
    attention = 2 * 2 * T * T * H * L
    return dense + attention


def make_model(parley, tmp):
    vocab = os.path.join(tmp, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n")
        f.writelines(f"tok{i}\n" for i in range(30522 - 5))
    out = os.path.join(tmp, "base")
    slots = ",".join(f"{p}-slot{i}" for i in range(36) for p in "BI")
    subprocess.run([parley, "-q", "model", "init", "--layers", "12", "--hidden", "768",
                    "--heads", "12", "--intermediate", "3072", "--vocab", vocab,
                    "--intents", ",".join(f"intent{i}" for i in range(7)), "--slots", slots,
                    "--out", out], check=True)
    return out


class Joint(torch.nn.Module):
    def __init__(self, model_dir):
        super().__init__()
        from safetensors.torch import load_file
        from transformers import BertConfig, BertModel
        cfg = json.load(open(os.path.join(model_dir, "config.json")))
        self.bert = BertModel(BertConfig(**{k: cfg[k] for k in (
            "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
            "intermediate_size", "max_position_embeddings", "type_vocab_size",
            "layer_norm_eps")}, hidden_act="gelu"), add_pooling_layer=True)
        sd = load_file(os.path.join(model_dir, "model.safetensors"))
        self.intent = torch.nn.Linear(768, len(cfg["intent_labels"]))
        self.slot = torch.nn.Linear(768, len(cfg["slot_labels"]))
        self.intent.weight.data = sd.pop("intent_classifier.weight")
        self.intent.bias.data = sd.pop("intent_classifier.bias")
        self.slot.weight.data = sd.pop("slot_classifier.weight")
        self.slot.bias.data = sd.pop("slot_classifier.bias")
        sd = {k[5:] if k.startswith("bert.") else k: v for k, v in sd.items()}
        missing, unexpected = self.bert.load_state_dict(sd, strict=False)
        assert not unexpected and all("position_ids" in m for m in missing), (missing, unexpected)

    def forward(self, ids):
        out = self.bert(input_ids=ids)
        return self.intent(out.pooler_output), self.slot(out.last_hidden_state)


def time_torch(model, B, T, iters):
    ids = torch.randint(5, 30522, (B, T))
    def step():
        i, s = model(ids.cuda(non_blocking=False))
        return i.float().cpu(), s.float().cpu()
    with torch.inference_mode():
        for _ in range(5):
            step()
        torch.cuda.synchronize()
        lat = []
        for _ in range(iters):
            t0 = time.perf_counter()
            step()
            lat.append((time.perf_counter() - t0) * 1e3)
    lat.sort()
    return lat[len(lat) // 2]


def time_parley(parley, model_dir, B, T, iters, precision, attention="auto", split_k="on"):
    r = subprocess.run([parley, "-q", "bench", "nlu", "--model", model_dir, "--device", "cuda:0",
                        "--precision", precision, "--attention", attention, "--split-k", split_k,
                        "--batch", str(B), "--seq", str(T),
                        "--iters", str(iters), "--warmup", "10"],
                       check=True, capture_output=True, text=True)
    return json.loads(r.stdout)


def bf16_peak():
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(20):
        a @ b
    end.record()
    torch.cuda.synchronize()
    return 2 * 8192 ** 3 * 20 / (start.elapsed_time(end) / 1e3) / 1e12


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parley", required=True)
    ap.add_argument("--json")
    args = ap.parse_args()
    import transformers
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "transformers": transformers.__version__, "rows": []}
    print(f"{res['device']}, torch {res['torch']}, transformers {res['transformers']}", flush=True)
    res["bf16_peak_tflops"] = bf16_peak()
    print(f"bf16 matmul 8192^3: {res['bf16_peak_tflops']:.0f} TFLOP/s", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = make_model(args.parley, tmp)
        eager = Joint(model_dir).half().cuda().eval()
        compiled = None
        try:
            compiled = torch.compile(eager)
            with torch.inference_mode():
                compiled(torch.randint(5, 30522, (1, 32), device="cuda"))
        except Exception as e:  # noqa: BLE001 - report and go on without it
            print(f"torch.compile failed here: {type(e).__name__}: {str(e)[:200]}", flush=True)
            compiled = None
        for B, T in LAT + THR:
            iters = 200 if B == 1 else 30
            p = time_parley(args.parley, model_dir, B, T, iters, "fp16")
            row = {"batch": B, "seq": T, "parley_ms": p["latency_ms"]["p50"],
                   "parley_device": p["device"], "torch_eager_ms": time_torch(eager, B, T, iters)}
            if compiled is not None and B == 1:  # compiling each big shape takes minutes
                try:
                    row["torch_compile_ms"] = time_torch(compiled, B, T, iters)
                except Exception as e:  # noqa: BLE001
                    print(f"torch.compile B{B} T{T}: {type(e).__name__}", flush=True)
            for att in ("fused", "gemm", "flash"):
                row[f"parley_{att}_ms"] = time_parley(args.parley, model_dir, B, T, iters, "fp16",
                                                      att)["latency_ms"]["p50"]
            row["parley_whole_k_ms"] = time_parley(args.parley, model_dir, B, T, iters, "fp16",
                                                   split_k="off")["latency_ms"]["p50"]
            row["parley_bf16_ms"] = time_parley(args.parley, model_dir, B, T, iters,
                                                "bf16")["latency_ms"]["p50"]
            row["parley_tflops"] = B * flops_per_seq(T) / (row["parley_ms"] / 1e3) / 1e12
            row["peak_share"] = row["parley_tflops"] / res["bf16_peak_tflops"]
            res["rows"].append(row)
            tc = f"{row['torch_compile_ms']:8.3f}" if "torch_compile_ms" in row else "     n/a"
            print(f"B={B:<4d} T={T:<4d} parley {row['parley_ms']:8.3f} ms  torch eager "
                  f"{row['torch_eager_ms']:8.3f} ms ({row['torch_eager_ms'] / row['parley_ms']:5.2f}x)"
                  f"  torch.compile {tc} ms  parley {row['parley_tflops']:6.1f} TFLOP/s "
                  f"({100 * row['peak_share']:4.1f}% of peak); attention fused "
                  f"{row['parley_fused_ms']:.3f} gemm {row['parley_gemm_ms']:.3f} flash "
                  f"{row['parley_flash_ms']:.3f}; split K off {row['parley_whole_k_ms']:.3f}; "
                  f"bf16 {row['parley_bf16_ms']:.3f} ms", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
