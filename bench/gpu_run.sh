#!/usr/bin/env bash
# gpu_run.sh — everything the GPU figures need, in one go on a machine with a CUDA GPU:
# the gpu test suite (kernels, whole model and trainer against the CPU path),
# compute-sanitizer memcheck of the model and trainer tests (2 minutes each at most),
# bench/train_vs_torch.py on the GPU (BERT-mini and BERT-base shapes, bf16), the sample bots
# trained with their defaults (sparse features) on the CPU and the GPU
# (bench/gpu_train_bots.sh), masked-LM pretraining on the CPU and the GPU
# (bench/gpu_pretrain.sh), then bench/gpu_vs_torch.py. Training's figures come before
# inference's, which were measured first and take longer (torch.compile). Logs go to $OUT
# (or ./gpu-out).
#
#   bash bench/gpu_run.sh BIN_DIR [LIB_DIR]
# BIN_DIR holds parley, test_cuda_ops, test_cuda_bert and test_cuda_train built with CUDA;
# LIB_DIR, if given, holds shared libraries the machine lacks (libopenblas, libcjson, ...).
# bench/gpu_pack.sh DIR builds and gathers both (DIR/bin, DIR/lib), the data (DIR/data, for
# PARLEY_SHARED_DATA) and the default encoder (DIR/encoder, for PARLEY_ENCODER) on a
# machine with the build dependencies.
set -uo pipefail
bin=$1 lib=${2:-}
out=${OUT:-gpu-out}
mkdir -p "$out"
for f in ${lib:+"$lib"/*.xz}; do # packed by gpu_pack.sh
    [ -e "$f" ] && python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.open(sys.argv[1]).read())' \
        "$f" "${f%.xz}"
done
cublas=$(ls /usr/local/cuda/lib64/libcublas.so.13 2>/dev/null ||
         python3 -c 'import nvidia.cu13, os; print(os.path.dirname(nvidia.cu13.__file__) + "/lib/libcublas.so.13")' 2>/dev/null ||
         find / -name 'libcublas.so.13' 2>/dev/null | head -1)
export LD_LIBRARY_PATH=${lib:+$lib:}$(dirname "$cublas"):${LD_LIBRARY_PATH:-}
{ nvidia-smi; nvcc --version | tail -2; echo "cublas: $cublas"; } 2>&1 | tee "$out/device.txt"
tiny=tests/nlu/train/tiny
for t in test_cuda_ops test_cuda_bert test_cuda_train; do
    echo "== $t"; "$bin/$t" $tiny; echo "exit $?"
done 2>&1 | tee "$out/tests.txt"
for t in test_cuda_bert test_cuda_train; do
    echo "== compute-sanitizer memcheck $t"
    timeout 120 compute-sanitizer --tool memcheck --leak-check full "$bin/$t" $tiny 2>&1 | tail -15
done 2>&1 | tee "$out/sanitizer.txt"
for shape in mini base; do
    python3 bench/train_vs_torch.py --parley "$bin/parley" --device cuda --precision bf16 --shape $shape \
        --examples 4096 --epochs 1 --batch 32
done 2>&1 | tee "$out/train_bench.txt"
bash bench/gpu_train_bots.sh "$bin/parley" 2>&1 | tee "$out/train_bots.txt"
bash bench/gpu_pretrain.sh "$bin/parley" 2>&1 | tee "$out/pretrain.txt"
python3 bench/gpu_vs_torch.py --parley "$bin/parley" --json "$out/gpu_vs_torch.json" 2>&1 | tee "$out/bench.txt"
