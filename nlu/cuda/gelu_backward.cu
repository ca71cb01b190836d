/* gelu_backward.cu — the backward of the exact (erf) GELU, d/dx x Phi(x) = Phi(x) + x phi(x),
 * as cpu_gelu_backward (nlu/cpu/gelu_backward.c): a grid-stride loop over FP32 values.
 *
 * This file does not compute the forward (gelu.cu). The pooler's tanh backward is pooler.cu's.
 */
#include <math.h>

#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/train_ops.cuh"

static __global__ void gelu_backward_kernel(float *dinp, const float *inp, const float *dout,
                                            size_t n)
{
    CUDA_GRID_STRIDE (i, n) {
        const float x = inp[i];
        const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
        const float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
        dinp[i] = dout[i] * (cdf + x * pdf);
    }
}

void cuda_gelu_backward(float *dinp, const float *inp, const float *dout, size_t n, cudaStream_t s)
{
    if (n)
        gelu_backward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, s>>>(dinp, inp, dout, n);
}
