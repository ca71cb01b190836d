/* adamw.cu — the update of a training step on the GPU: the squared gradient norm as
 * per-block partial sums, then one fused kernel that clips the gradient and applies AdamW to
 * every parameter (the arithmetic of nlu/train/adamw.c), refreshing the BF16 copy of the
 * weights when there is one.
 *
 * The host adds the partial sums in double, as train_clip_grads does, and computes the
 * coefficients (cuda_adamw_coef: clip factor, bias corrections) once per step (train.cu).
 */
#include <math.h>

#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/train_ops.cuh"

static __global__ void sumsq_kernel(float *part, const float *g, size_t n)
{
    __shared__ float red[32];
    float acc = 0.0f;
    CUDA_GRID_STRIDE (i, n)
        acc += g[i] * g[i];
    acc = block_sum(acc, red);
    if (threadIdx.x == 0)
        part[blockIdx.x] = acc;
}

void cuda_sumsq_partials(float *part, const float *g, size_t n, cudaStream_t s)
{
    sumsq_kernel<<<CUDA_NORM_BLOCKS, CUDA_EW_THREADS, 0, s>>>(part, g, n);
}

static __global__ void adamw_kernel(float *p, __nv_bfloat16 *p16, const float *g, float *m,
                                    float *v, const unsigned char *decay, size_t n,
                                    cuda_adamw_coef k)
{
    CUDA_GRID_STRIDE (i, n) {
        const float gi = g[i] * k.gscale;
        const float pi = decay[i] ? p[i] * k.decay : p[i];
        const float mi = m[i] * k.b1 + k.one_minus_b1 * gi;
        const float vi = v[i] * k.b2 + k.one_minus_b2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        const float out = pi - k.step_size * (mi / (sqrtf(vi) / k.bc2_sqrt + k.eps));
        p[i] = out;
        if (p16)
            p16[i] = __float2bfloat16_rn(out);
    }
}

void cuda_adamw(float *p, __nv_bfloat16 *p16, const float *g, float *m, float *v,
                const unsigned char *decay, size_t n, cuda_adamw_coef k, cudaStream_t s)
{
    if (n)
        adamw_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, s>>>(p, p16, g, m, v, decay, n, k);
}
