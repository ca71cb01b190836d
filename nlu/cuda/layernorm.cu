/* layernorm.cu — LayerNorm over rows: for inference, bias + residual + LayerNorm after each
 * sublayer of an encoder layer (a template on the storage type); for training, plain
 * LayerNorm over FP32 rows (cuda_layernorm, train_ops.cuh).
 *
 * One block per row. The inference kernel keeps the row, summed in float, in shared memory;
 * mean and variance take two passes over it (as the CPU reference does), then it is
 * normalized and written in the storage type (cuda_normalize_row). Where the row splits into
 * 128-bit words, a vectorized kernel does the same with one word of h and of x per thread,
 * the row in registers. The training kernel takes
 * the same two passes over its row in global memory (cuda_row_stats). Not here: the
 * embeddings' LayerNorm of inference (embedding.cu), the backward (layernorm_backward.cu),
 * the plain LayerNorm-free ops (elementwise.cu).
 */
#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/ops.cuh"
#include "nlu/cuda/train_ops.cuh"

template <typename S>
__global__ void bias_residual_layernorm_kernel(S *h, const S *x, const float *bias, const float *w,
                                               const float *b, int H, float eps)
{
    extern __shared__ float row[];
    __shared__ float red[32];
    const size_t r = blockIdx.x;
    for (int i = threadIdx.x; i < H; i += blockDim.x)
        row[i] = to_f(h[r * H + i]) + to_f(x[r * H + i]) + (bias ? bias[i] : 0.0f);
    __syncthreads();
    cuda_normalize_row(h + r * H, row, w, b, H, eps, red);
}

enum { LN_VEC_BYTES = 16 };

/* The same with V = 16 / sizeof(S) adjacent values per thread, H / V threads (rounded up to
 * a warp) per row: one 128-bit load of h and of x and one store per thread, the values in
 * registers. The kernel above, with 2-byte accesses through shared memory, ran at 40% of
 * memory bandwidth at batch 256 (72 us per call on 256 x 128 x 768 halves, H200,
 * 2026-11-26). */
template <typename S>
__global__ void bias_residual_layernorm_vec_kernel(S *h, const S *x, const float *bias,
                                                   const float *w, const float *b, int H, float eps)
{
    constexpr int V = LN_VEC_BYTES / sizeof(S);
    __shared__ float red[32];
    const size_t at = (size_t)blockIdx.x * H + threadIdx.x * V;
    const int c = threadIdx.x * V, on = c < H;
    alignas(LN_VEC_BYTES) S hv[V], xv[V];
    float v[V], acc = 0.0f;
    if (on) {
        *reinterpret_cast<uint4 *>(hv) = *reinterpret_cast<const uint4 *>(h + at);
        *reinterpret_cast<uint4 *>(xv) = *reinterpret_cast<const uint4 *>(x + at);
#pragma unroll
        for (int k = 0; k < V; k++) {
            v[k] = to_f(hv[k]) + to_f(xv[k]) + (bias ? bias[c + k] : 0.0f);
            acc += v[k];
        }
    }
    const float mean = block_sum(acc, red) / (float)H;
    acc = 0.0f;
    if (on)
#pragma unroll
        for (int k = 0; k < V; k++)
            acc += (v[k] - mean) * (v[k] - mean);
    const float rstd = rsqrtf(block_sum(acc, red) / (float)H + eps);
    if (!on)
        return;
#pragma unroll
    for (int k = 0; k < V; k++)
        hv[k] = from_f<S>((v[k] - mean) * rstd * w[c + k] + b[c + k]);
    *reinterpret_cast<uint4 *>(h + at) = *reinterpret_cast<const uint4 *>(hv);
}

template <typename S>
void cuda_bias_residual_layernorm(S *h, const S *x, const float *bias, const float *w,
                                  const float *b, int M, int H, float eps, cudaStream_t stream)
{
    constexpr int V = LN_VEC_BYTES / sizeof(S);
    const int threads = (H / V + 31) / 32 * 32;
    if (M <= 0)
        return;
    if (H % V == 0 && threads <= 1024 && (uintptr_t)h % LN_VEC_BYTES == 0 &&
        (uintptr_t)x % LN_VEC_BYTES == 0)
        bias_residual_layernorm_vec_kernel<S><<<M, threads, 0, stream>>>(h, x, bias, w, b, H, eps);
    else
        bias_residual_layernorm_kernel<S>
                <<<M, CUDA_ROW_THREADS, H * sizeof(float), stream>>>(h, x, bias, w, b, H, eps);
}

#define INSTANTIATE(S)                                                                          \
    template void cuda_bias_residual_layernorm<S>(S *, const S *, const float *, const float *, \
                                                  const float *, int, int, float, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)

/* ---- training: FP32 rows ------------------------------------------------------------ */

static __global__ void layernorm_kernel(float *out, const float *inp, const float *w,
                                        const float *b, int C, float eps)
{
    __shared__ float red[32];
    const size_t r = blockIdx.x;
    const float *x = inp + r * C;
    float mean, rstd;
    cuda_row_stats(x, C, eps, red, &mean, &rstd);
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        out[r * C + c] = (x[c] - mean) * rstd * w[c] + b[c];
}

void cuda_layernorm(float *out, const float *inp, const float *w, const float *b, int M, int C,
                    float eps, cudaStream_t s)
{
    if (M > 0)
        layernorm_kernel<<<M, CUDA_ROW_THREADS, 0, s>>>(out, inp, w, b, C, eps);
}
