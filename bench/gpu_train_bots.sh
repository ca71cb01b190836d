#!/usr/bin/env bash
# gpu_train_bots.sh — the sample bots trained with the defaults (sparse features, the
# default encoder where $PARLEY_ENCODER or ~/.cache/parley/encoder holds it) on the CPU and
# on a GPU in the same run: each side's training wall time and examples/s, and both models
# scored on the bot's test sentences. The GPU trains in BF16; the CPU on all cores.
#
#   bash bench/gpu_train_bots.sh PARLEY [BOTS...]     # default: pizza smarthome starter
# Prints one line per bot and device; models go to a temporary folder that is removed.
set -euo pipefail
parley=$1
shift
bots=("$@")
[ ${#bots[@]} -gt 0 ] || bots=(pizza smarthome starter)
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-10s %-8s %8s %10s %8s %8s %8s\n' bot device wall_s examples/s intent sentence slot_f1
for bot in "${bots[@]}"; do
    for dev in cpu cuda:0; do
        out="$tmp/$bot-${dev%%:*}"
        start=$(date +%s.%N)
        if ! "$parley" -q train --data "$root/samples/$bot/nlu.yaml" --out "$out" \
                --device "$dev" > "$tmp/train.log" 2>&1; then
            echo "$bot on $dev: training failed:"; tail -5 "$tmp/train.log"; continue
        fi
        wall=$(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" \
               "$start" "$(date +%s.%N)")
        rate=$(sed -nE 's/^trained in .*, ([0-9.]+) examples\/s.*/\1/p' "$tmp/train.log")
        "$parley" -q eval --model "$out" --data "$root/samples/$bot/test_nlu.yaml" --json \
                --device cpu > "$tmp/eval.json"
        python3 - "$bot" "$dev" "$wall" "$rate" "$tmp/eval.json" <<'PY'
import json, sys
bot, dev, wall, rate, path = sys.argv[1:]
r = json.load(open(path))
print(f"{bot:<10} {dev:<8} {float(wall):8.1f} {rate:>10} {r['intent_accuracy']:8.3f} "
      f"{r['sentence_accuracy']:8.3f} {r['slots']['f1']:8.3f}")
PY
    done
done
