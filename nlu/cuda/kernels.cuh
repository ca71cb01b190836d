/* kernels.cuh — what the kernel files of nlu/cuda/ share, as nlu/cpu/kernels.h does for the
 * CPU ops: the launch shapes of row-wise and element-wise kernels, the grid-stride loop, and
 * LayerNorm's row statistics (training) and row normalization (inference).
 *
 * A row-wise kernel gives each row one block of CUDA_ROW_THREADS threads striding over the
 * row's columns; a training element-wise kernel runs a grid-stride loop on cuda_ew_blocks(n)
 * blocks of CUDA_EW_THREADS threads. Not here: storage types, warp and block sums, the error
 * checks (common.cuh); the inference element-wise kernels' 2-D row grids (elementwise.cu).
 */
#ifndef NLU_CUDA_KERNELS_CUH
#define NLU_CUDA_KERNELS_CUH

#include "nlu/cuda/common.cuh"

extern "C" {
#include "nlu/cpu/ops_backward.h"
}

enum { CUDA_ROW_THREADS = 256, CUDA_EW_THREADS = 256, CUDA_EW_MAX_BLOCKS = 4096 };

/* The blocks of an element-wise grid over n values: one per CUDA_EW_THREADS values, between 1
 * and CUDA_EW_MAX_BLOCKS. */
static inline int cuda_ew_blocks(size_t n)
{
    size_t b = (n + CUDA_EW_THREADS - 1) / CUDA_EW_THREADS;
    const size_t most = CUDA_EW_MAX_BLOCKS;
    return (int)(b < 1 ? 1 : b > most ? most : b);
}

/* for (i = this thread's first index; i < n; i += the threads of the grid) */
#define CUDA_GRID_STRIDE(i, n)                                              \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (size_t)gridDim.x * blockDim.x)

/* The exact (erf) GELU of one value: inference's bias + GELU (elementwise.cu) and training's
 * GELU (gelu.cu) alike. */
__device__ __forceinline__ float cuda_gelu_value(float x)
{
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}

/* The dropout factor of element e of the tensor of `key`: 0 or scale = 1 / (1 - p) by the
 * CPU's mask (threshold = cpu_dropout_threshold(p)), 1 when not masked (p = 0). */
__device__ __forceinline__ float cuda_drop_factor(uint64_t key, size_t e, uint32_t threshold,
                                                  float scale, int masked)
{
    return !masked ? 1.0f : cpu_dropout_bits(key, e) >= threshold ? scale : 0.0f;
}

/* Mean and 1/std of row x (C), two passes in float; every thread gets both. red is 32 floats
 * of shared memory (block_sum). */
__device__ __forceinline__ void cuda_row_stats(const float *x, int C, float eps, float *red,
                                               float *mean, float *rstd)
{
    float acc = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        acc += x[c];
    const float mu = block_sum(acc, red) / (float)C;
    acc = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        const float d = x[c] - mu;
        acc += d * d;
    }
    const float var = block_sum(acc, red) / (float)C;
    *mean = mu;
    *rstd = rsqrtf(var + eps);
}

/* Normalizes x (H, in shared memory) into out with w, b (the inference LayerNorm of
 * layernorm.cu and embedding.cu); every thread of the block takes part. */
template <typename S>
__device__ void cuda_normalize_row(S *out, const float *x, const float *w, const float *b, int H,
                                   float eps, float *red)
{
    float mean, rstd;
    cuda_row_stats(x, H, eps, red, &mean, &rstd);
    for (int i = threadIdx.x; i < H; i += blockDim.x)
        out[i] = from_f<S>((x[i] - mean) * rstd * w[i] + b[i]);
}

#endif
