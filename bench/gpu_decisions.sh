#!/usr/bin/env bash
# gpu_decisions.sh — do the GPU and the CPU make the same decisions on a dev set?
#
#   bash bench/gpu_decisions.sh PARLEY MODEL_DIR DATA_DIR [PRECISION]
# runs `parley nlu predict --words` over DATA_DIR/seq.in on the CPU and on cuda:0 and prints
# how many utterances get the same intent and the same tag for every word, and the largest
# confidence difference.
set -euo pipefail
parley=$1 model=$2 data=$3 prec=${4:-fp16}
"$parley" -q nlu predict --words --model "$model" --device cpu < "$data/seq.in" > /tmp/dec_cpu.jsonl
"$parley" -q nlu predict --words --model "$model" --device cuda:0 --precision "$prec" \
    < "$data/seq.in" > /tmp/dec_gpu.jsonl
python3 - "$prec" <<'PY'
import json, sys
cpu = [json.loads(l) for l in open("/tmp/dec_cpu.jsonl")]
gpu = [json.loads(l) for l in open("/tmp/dec_gpu.jsonl")]
assert len(cpu) == len(gpu)
same_intent = sum(c["intent"] == g["intent"] for c, g in zip(cpu, gpu))
same_tags = sum(c["tags"] == g["tags"] for c, g in zip(cpu, gpu))
conf = max(abs(c["confidence"] - g["confidence"]) for c, g in zip(cpu, gpu))
print(f"{sys.argv[1]}: {len(cpu)} utterances: same intent {same_intent}, same tags {same_tags}, "
      f"largest confidence difference {conf:.2e}")
PY
