#!/usr/bin/env bash
# gpu_pretrain.sh — masked-LM pretraining (parley pretrain) on the CPU and on a GPU in the
# same run: the SNIPS training sentences, a new encoder of pretrain's default shape (4
# layers, 256 wide) on the standard WordPiece vocabulary, the same epochs and seed on each
# side. Prints each side's summary line (wall time, lines/s, held-out masked-LM loss and
# accuracy). The GPU trains in BF16; the CPU on all cores.
#
#   bash bench/gpu_pretrain.sh PARLEY [EPOCHS]     # default: 1 epoch
# Reads $PARLEY_SHARED_DATA (default ../shared/data); models go to a temporary folder that
# is removed.
set -euo pipefail
parley=$1 epochs=${2:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${PARLEY_SHARED_DATA:-$root/../shared/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for dev in cpu cuda:0; do
    echo "== $dev"
    "$parley" pretrain --text "$shared/nlu/snips/train/seq.in" \
        --vocab "$shared/vocab/bert-base-uncased-vocab.txt" --out "$tmp/${dev%%:*}" \
        --epochs "$epochs" --device "$dev" --quiet 2>&1 | tail -3
done
