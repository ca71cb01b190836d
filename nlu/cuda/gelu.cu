/* gelu.cu — the exact (erf) GELU over the FP32 values of training, as cpu_gelu
 * (nlu/cpu/gelu.c): a grid-stride loop, one value per step.
 *
 * Inference applies GELU fused with the bias add, in the storage type (cuda_bias_gelu,
 * elementwise.cu). The backward is gelu_backward.cu.
 */
#include <math.h>

#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/train_ops.cuh"

static __global__ void gelu_kernel(float *out, const float *inp, size_t n)
{
    CUDA_GRID_STRIDE (i, n)
        out[i] = cuda_gelu_value(inp[i]);
}

void cuda_gelu(float *out, const float *inp, size_t n, cudaStream_t s)
{
    if (n)
        gelu_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, s>>>(out, inp, n);
}
