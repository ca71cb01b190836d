#!/usr/bin/env bash
# gpu_pack.sh — packs what bench/gpu_run.sh needs into one folder to carry to a GPU machine
# that has CUDA and PyTorch but none of parley's build dependencies: a release build with
# CUDA and without the optional audio and network features (fewer libraries to carry), the
# parley tool and the three gpu tests (stripped), the shared libraries they link beyond
# glibc, the C++ runtime and cuBLAS (OpenBLAS xz-compressed: gpu_run.sh unpacks it), the SNIPS training text and WordPiece vocabulary of ../shared/data
# when present (train_vs_torch.py falls back to generated text without them), and the
# default encoder when tools/encoder.sh built it (the sample bots start from it).
#
#   bash bench/gpu_pack.sh DIR [BUILD_DIR]      # BUILD_DIR: build-gpu by default
#   # then, on the GPU machine, from the repository root (DIR carried beside the tree):
#   PARLEY_SHARED_DATA=$PWD/DIR/data PARLEY_ENCODER=$PWD/DIR/encoder \
#       bash bench/gpu_run.sh DIR/bin DIR/lib
#
# DIR should be ignored by git (.git/info/exclude); it comes to about 30 MB.
set -euo pipefail
out=${1:?usage: gpu_pack.sh DIR [BUILD_DIR]} build=${2:-build-gpu}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -d "$build" ] || meson setup "$build" -Dbuildtype=release -Dcuda=enabled -Dgstreamer=disabled \
    -Dwebsockets=disabled -Dpocketsphinx=disabled -Despeak=disabled -Dflite=disabled \
    -Dpostgresql=disabled -Dcurl=disabled
bins=(sdk/cli/parley tests/nlu/cuda/test_cuda_ops tests/nlu/cuda/test_cuda_bert
      tests/nlu/cuda/test_cuda_train)
ninja -C "$build" "${bins[@]}"
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
for b in "${bins[@]}"; do cp "$build/$b" "$out/bin/" && strip "$out/bin/$(basename "$b")"; done
ldd "${bins[@]/#/$build/}" | awk '$3 ~ /^\// { print $1, $3 }' | sort -u |
    grep -Ev '^(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|libcublas(Lt)?)\.so' |
    while read -r name path; do cp -L "$path" "$out/lib/$name"; done
xz -T0 -6 "$out"/lib/libopenblas.so.*
shared=${PARLEY_SHARED_DATA:-$root/../shared/data}
if [ -d "$shared/nlu/snips/train" ]; then
    mkdir -p "$out/data/nlu/snips" "$out/data/vocab"
    cp -r "$shared/nlu/snips/train" "$out/data/nlu/snips/"
    cp "$shared/vocab/bert-base-uncased-vocab.txt" "$out/data/vocab/"
fi
encoder=${PARLEY_ENCODER:-$HOME/.cache/parley/encoder}
[ -f "$encoder/model.safetensors" ] && cp -r "$encoder" "$out/encoder"
du -sh "$out"
