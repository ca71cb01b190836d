/* layernorm.cu — the fused LayerNorm kernels: embeddings + LayerNorm, and bias + residual +
 * LayerNorm after each sublayer of an encoder layer.
 *
 * One warp per row, the row in registers (H <= CUDA_MAX_HIDDEN, every lane holding columns
 * lane, lane + 32, ...): mean and variance are two passes over the registers with warp
 * shuffles, as the CPU reference takes two passes, and nothing goes through shared memory
 * or waits on the block. Not here: the LayerNorm-free ops (elementwise.cu).
 */
#include "nlu/cuda/ops.cuh"

enum { LN_WARPS = 8, LN_PER_LANE = CUDA_MAX_HIDDEN / 32 };

// out (H) = (v - mean) / sqrt(var + eps) * w + b, v being this lane's columns of the row
template <typename S>
__device__ __forceinline__ void warp_normalize(S *out, const float (&v)[LN_PER_LANE], int H,
                                               const float *w, const float *b, float eps)
{
    const int lane = threadIdx.x & 31;
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < LN_PER_LANE; k++)
        if (lane + 32 * k < H)
            s += v[k];
    const float mean = warp_sum(s) / H;
    float q = 0.0f;
#pragma unroll
    for (int k = 0; k < LN_PER_LANE; k++)
        if (lane + 32 * k < H) {
            const float d = v[k] - mean;
            q += d * d;
        }
    const float rstd = rsqrtf(warp_sum(q) / H + eps);
#pragma unroll
    for (int k = 0; k < LN_PER_LANE; k++) {
        const int c = lane + 32 * k;
        if (c < H)
            out[c] = from_f<S>((v[k] - mean) * rstd * w[c] + b[c]);
    }
}

template <typename S>
__global__ void embedding_kernel(S *out, const int *ids, int M, int T, const float *word,
                                 const float *pos, const float *type, const float *w,
                                 const float *b, int H, float eps)
{
    const int r = blockIdx.x * LN_WARPS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (r >= M)
        return;
    const float *we = word + (size_t)ids[r] * H, *pe = pos + (size_t)(r % T) * H;
    float v[LN_PER_LANE];
#pragma unroll
    for (int k = 0; k < LN_PER_LANE; k++) {
        const int c = lane + 32 * k;
        v[k] = c < H ? we[c] + pe[c] + type[c] : 0.0f;
    }
    warp_normalize(out + (size_t)r * H, v, H, w, b, eps);
}

template <typename S>
__global__ void bias_residual_layernorm_kernel(S *h, const S *x, const float *bias,
                                               const float *w, const float *b, int M, int H,
                                               float eps)
{
    const int r = blockIdx.x * LN_WARPS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (r >= M)
        return;
    S *hr = h + (size_t)r * H;
    const S *xr = x + (size_t)r * H;
    float v[LN_PER_LANE];
#pragma unroll
    for (int k = 0; k < LN_PER_LANE; k++) {
        const int c = lane + 32 * k;
        v[k] = c < H ? to_f(hr[c]) + to_f(xr[c]) + (bias ? bias[c] : 0.0f) : 0.0f;
    }
    warp_normalize(hr, v, H, w, b, eps);
}

static unsigned ln_blocks(int M)
{
    return (unsigned)((M + LN_WARPS - 1) / LN_WARPS);
}

template <typename S>
void cu_embedding(S *out, const int *ids, int M, int T, const float *word, const float *pos,
                  const float *type, const float *w, const float *b, int H, float eps,
                  cudaStream_t stream)
{
    embedding_kernel<S><<<ln_blocks(M), LN_WARPS * 32, 0, stream>>>(out, ids, M, T, word, pos,
                                                                   type, w, b, H, eps);
}

template <typename S>
void cu_bias_residual_layernorm(S *h, const S *x, const float *bias, const float *w,
                                const float *b, int M, int H, float eps, cudaStream_t stream)
{
    bias_residual_layernorm_kernel<S><<<ln_blocks(M), LN_WARPS * 32, 0, stream>>>(
        h, x, bias, w, b, M, H, eps);
}

#define INSTANTIATE(S)                                                                       \
    template void cu_embedding<S>(S *, const int *, int, int, const float *, const float *,   \
                                  const float *, const float *, const float *, int, float,    \
                                  cudaStream_t);                                              \
    template void cu_bias_residual_layernorm<S>(S *, const S *, const float *, const float *, \
                                                const float *, int, int, float, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
