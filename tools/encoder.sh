#!/usr/bin/env bash
# encoder.sh — builds the default encoder: the small pretrained encoder that `parley train`
# starts a new model of few examples from (under 2,000 examples, no shape or vocabulary
# given; nlu/train/encoder.h). It is a BERT of 2 layers of 128 (2 heads, 256 feed-forward,
# an 8,000-piece vocabulary learned from the text) pretrained with `parley pretrain` (masked
# language model, 20 epochs, seed 1, 2 threads) on the 48,339 example sentences of WordNet
# 3.0's glosses (tools/wordnet_examples.py; Debian's wordnet-base): general English, which a
# model trained on a bot's few examples knows nothing of. Nothing is shipped: it is built
# once, in about 7 minutes on two cores, and skipped while the folder holds this recipe's
# encoder. bench/HISTORY.md (few-shot, ninth pass) has what it changes.
#
# Beside it, in background/, it writes 5,000 sentences of the same text (plain words; a
# question and a command in every twelve; wordnet_examples.py --background) as a JointBERT
# folder labelled out_of_scope:
# what `parley train` adds to small data so that its model learns where its intents end
# (nlu/train/background.h; few-shot, tenth pass). It takes a second.
#
#   bash tools/encoder.sh PARLEY [DIR]
# DIR: $PARLEY_ENCODER, else ${XDG_CACHE_HOME:-$HOME/.cache}/parley/encoder, where
# `parley train` looks. The folder is replaced whole, so a stopped build leaves none half
# made.
set -euo pipefail
parley=${1:?usage: encoder.sh PARLEY [DIR]}
dir=${2:-${PARLEY_ENCODER:-${XDG_CACHE_HOME:-$HOME/.cache}/parley/encoder}}
here=$(cd "$(dirname "$0")" && pwd)
recipe="WordNet 3.0 gloss examples; 2 layers of 128, 2 heads, 256 feed-forward; vocabulary 8000; 20 epochs; seed 1; 2 threads; OpenBLAS Haswell kernels"
# OpenBLAS picks its GEMM kernels by CPU, and each kernel family sums in its own order: the
# same recipe pretrained with another family is another encoder, and every model trained
# from it another model. Every x86-64 CPU of the AVX2 generation or later runs the Haswell
# family, so the encoder is the same bit for bit on all of them (elsewhere, whatever
# OpenBLAS picks).
if grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo; then
    export OPENBLAS_CORETYPE=Haswell
fi
if [ ! -f /usr/share/wordnet/data.noun ]; then
    echo "encoder.sh: needs WordNet's data (apt-get install wordnet-base)" >&2
    exit 1
fi
mkdir -p "$(dirname "$dir")"
tmp=$(mktemp -d "${dir%/}.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# background/: the sentences, every word O (the trainer scores no tag of theirs), every label
# out_of_scope; rewritten when its RECIPE is not this one.
background_recipe="WordNet 3.0 gloss examples (WordNet 3.0 license, /usr/share/doc/wordnet-base/copyright): tools/wordnet_examples.py --background 5000, a question and a command in every twelve lines"
background() {
    [ "$(cat "$dir/background/RECIPE" 2>/dev/null)" = "$background_recipe" ] && return 0
    mkdir "$tmp/background"
    echo "$background_recipe" >"$tmp/background/RECIPE"
    /usr/bin/python3 "$here/wordnet_examples.py" --background 5000 >"$tmp/background/seq.in"
    awk '{ for (i = 1; i <= NF; i++) printf "%s%s", (i > 1 ? " " : ""), "O"; print "" }' \
        "$tmp/background/seq.in" >"$tmp/background/seq.out"
    sed 's/.*/out_of_scope/' "$tmp/background/seq.in" >"$tmp/background/label"
    rm -rf "$dir/background"
    mv "$tmp/background" "$dir/background"
    echo "encoder.sh: wrote $(wc -l <"$dir/background/seq.in") background sentences into $dir/background"
}

if [ -f "$dir/model.safetensors" ] && [ "$(cat "$dir/RECIPE" 2>/dev/null)" = "$recipe" ]; then
    echo "encoder.sh: $dir holds the default encoder"
    background
    exit 0
fi
/usr/bin/python3 "$here/wordnet_examples.py" >"$tmp/examples.txt"
echo "encoder.sh: pretraining the default encoder on $(wc -l <"$tmp/examples.txt") sentences into $dir (about 7 minutes on two cores)"
"$parley" pretrain --quiet --text "$tmp/examples.txt" --out "$tmp/encoder" --layers 2 --hidden 128 \
    --heads 2 --intermediate 256 --vocab-size 8000 --epochs 20 --seed 1 --threads 2
echo "$recipe" >"$tmp/encoder/RECIPE"
cat >"$tmp/encoder/SOURCES.txt" <<TXT
The default encoder of parley, made $(date -u +%F) by tools/encoder.sh with $("$parley" --version 2>/dev/null || echo parley).
Text: the example sentences of WordNet 3.0's glosses ($(wc -l <"$tmp/examples.txt") lines), from Debian's
wordnet-base. WordNet 3.0 Copyright 2006 by Princeton University; used under the WordNet 3.0
license (/usr/share/doc/wordnet-base/copyright).
TXT
rm -rf "$dir"
mv "$tmp/encoder" "$dir"
background
echo "encoder.sh: done: $dir"
