#!/usr/bin/env bash
# gpu_run.sh — everything the GPU figures need, in one go on a machine with a CUDA GPU:
# the gpu test suite (kernels and whole model against the CPU path), compute-sanitizer
# memcheck of the model test, and bench/gpu_vs_torch.py. Logs go to $OUT (or ./gpu-out).
#
#   bash bench/gpu_run.sh BIN_DIR [LIB_DIR]
# BIN_DIR holds parley, test_cuda_ops and test_cuda_bert built with CUDA; LIB_DIR, if given,
# holds shared libraries the machine lacks (libopenblas, libcjson, ...).
set -uo pipefail
bin=$1 lib=${2:-}
out=${OUT:-gpu-out}
mkdir -p "$out"
cublas=$(ls /usr/local/cuda/lib64/libcublas.so.13 2>/dev/null ||
         python3 -c 'import nvidia.cu13, os; print(os.path.dirname(nvidia.cu13.__file__) + "/lib/libcublas.so.13")' 2>/dev/null ||
         find / -name 'libcublas.so.13' 2>/dev/null | head -1)
export LD_LIBRARY_PATH=${lib:+$lib:}$(dirname "$cublas"):${LD_LIBRARY_PATH:-}
{ nvidia-smi; nvcc --version | tail -2; echo "cublas: $cublas"; } 2>&1 | tee "$out/device.txt"
for t in test_cuda_ops test_cuda_bert; do
    echo "== $t"; "$bin/$t"; echo "exit $?"
done 2>&1 | tee "$out/tests.txt"
echo "== compute-sanitizer memcheck test_cuda_bert" | tee "$out/sanitizer.txt"
compute-sanitizer --tool memcheck --leak-check full "$bin/test_cuda_bert" 2>&1 | tail -15 | tee -a "$out/sanitizer.txt"
python3 bench/gpu_vs_torch.py --parley "$bin/parley" --json "$out/gpu_vs_torch.json" 2>&1 | tee "$out/bench.txt"
