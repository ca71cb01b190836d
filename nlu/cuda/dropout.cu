/* dropout.cu — inverted dropout with the CPU's counter-based mask, as cpu_dropout
 * (nlu/cpu/dropout.c): cpu_dropout_bits (nlu/cpu/ops_backward.h) runs on the device too, so
 * a GPU step drops the very elements a CPU step drops. A grid-stride loop; being linear with
 * the same mask, the same call is the backward.
 *
 * Not here: the keys (cpu_dropout_key, computed on the host), and the dropout on attention's
 * probabilities (attention_backward.cu).
 */
#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/train_ops.cuh"

static __global__ void dropout_kernel(float *out, const float *inp, const float *res, size_t n,
                                      uint32_t threshold, float scale, uint64_t key, int masked)
{
    CUDA_GRID_STRIDE (i, n) {
        const float m = cuda_drop_factor(key, i, threshold, scale, masked);
        out[i] = (res ? res[i] : 0.0f) + m * inp[i];
    }
}

void cuda_dropout(float *out, const float *inp, const float *res, size_t n, float p, uint64_t key,
                  cudaStream_t s)
{
    if (!n || (p <= 0.0f && !res && out == inp))
        return;
    dropout_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, s>>>(
            out, inp, res, n, cpu_dropout_threshold(p), 1.0f / (1.0f - p), key, p > 0.0f);
}
