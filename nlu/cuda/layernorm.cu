/* layernorm.cu — LayerNorm over rows: for inference, bias + residual + LayerNorm after each
 * sublayer of an encoder layer (a template on the storage type); for training, plain
 * LayerNorm over FP32 rows (cuda_layernorm, train_ops.cuh).
 *
 * The inference kernel gives a row one block, keeps it, summed in float, in shared memory;
 * mean and variance take two passes over it (as the CPU reference does), then it is
 * normalized and written in the storage type (cuda_normalize_row). Where the row splits into
 * 128-bit words, vectorized kernels do the same with the row in registers: one word per
 * thread of a block per row for a few rows, a warp per row (up to 8 words a lane) for many.
 * The vectorized block-per-row kernel also sums split-K partial products in place of x
 * (cuda_partials_residual_layernorm). The training kernel takes
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

enum { LN_VEC_BYTES = 16, LN_WARP_ROWS = 4, LN_WARP_MAX_WORDS = 8, LN_WARP_MIN_ROWS = 1024 };

/* The same with V = 16 / sizeof(S) adjacent values per thread, H / V threads (rounded up to
 * a warp) per row: one 128-bit load of h and of x and one store per thread, the values in
 * registers. The kernel above, with 2-byte accesses through shared memory, ran at 40% of
 * memory bandwidth at batch 256 (72 us per call on 256 x 128 x 768 halves, H200,
 * 2026-11-26). x may be NULL; the `splits` FP32 planes of part (M, H each), if any, are
 * added too (the split-K products of matmul_tc.cu). */
template <typename S>
__global__ void bias_residual_layernorm_vec_kernel(S *h, const S *x, const float *part, int splits,
                                                   const float *bias, const float *w,
                                                   const float *b, int M, int H, float eps)
{
    constexpr int V = LN_VEC_BYTES / sizeof(S);
    __shared__ float red[32];
    const size_t at = (size_t)blockIdx.x * H + threadIdx.x * V;
    const int c = threadIdx.x * V, on = c < H;
    alignas(LN_VEC_BYTES) S hv[V], xv[V];
    float v[V], acc = 0.0f;
    if (on) {
        *reinterpret_cast<uint4 *>(hv) = *reinterpret_cast<const uint4 *>(h + at);
#pragma unroll
        for (int k = 0; k < V; k++)
            v[k] = to_f(hv[k]) + (bias ? bias[c + k] : 0.0f);
        if (x) {
            *reinterpret_cast<uint4 *>(xv) = *reinterpret_cast<const uint4 *>(x + at);
#pragma unroll
            for (int k = 0; k < V; k++)
                v[k] += to_f(xv[k]);
        }
        for (int s = 0; s < splits; s++)
#pragma unroll
            for (int k = 0; k < V; k += 4) {
                const float4 p =
                        *reinterpret_cast<const float4 *>(part + (size_t)s * M * H + at + k);
                v[k] += p.x, v[k + 1] += p.y, v[k + 2] += p.z, v[k + 3] += p.w;
            }
#pragma unroll
        for (int k = 0; k < V; k++)
            acc += v[k];
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

/* The V floats of a from column c into v (a and c 16-byte aligned, V a multiple of 4); zeros
 * where a is NULL. */
template <int V>
__device__ __forceinline__ void load_floats(float *v, const float *a, int c)
{
#pragma unroll
    for (int k = 0; k < V; k += 4)
        *reinterpret_cast<float4 *>(v + k) =
                a ? *reinterpret_cast<const float4 *>(a + c + k) : make_float4(0, 0, 0, 0);
}

/* The same with one warp per row (LN_WARP_ROWS rows a block) and the row in registers: lane
 * l holds the 128-bit words l, l + 32, ... (NW of them) of h, x, the bias and the weights, and
 * the sums are warp shuffles, with no shared memory and no block barrier. For many rows
 * (LN_WARP_MIN_ROWS) only: the vectorized block-per-row kernel above ran at 1.5 TB/s at batch
 * 256 (99 us a call on 256 x 128 x 768 halves, H100, 2026-11-26), this one took 8% off the
 * whole forward there; but at batch 1 (128 rows, 32 blocks) it cost 5%, each lane's three
 * words in a row being slower than three warps of one word. */
template <typename S, int NW>
__global__ void bias_residual_layernorm_warp_kernel(S *h, const S *x, const float *bias,
                                                    const float *w, const float *b, int M, int H,
                                                    float eps)
{
    constexpr int V = LN_VEC_BYTES / sizeof(S);
    const int r = blockIdx.x * LN_WARP_ROWS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (r >= M)
        return;
    S *hr = h + (size_t)r * H;
    const S *xr = x + (size_t)r * H;
    float v[NW][V], acc = 0.0f;
#pragma unroll
    for (int i = 0; i < NW; i++) {
        const int c = (lane + 32 * i) * V;
        if (c >= H)
            continue;
        alignas(LN_VEC_BYTES) S hv[V], xv[V];
        alignas(LN_VEC_BYTES) float bv[V];
        *reinterpret_cast<uint4 *>(hv) = *reinterpret_cast<const uint4 *>(hr + c);
        *reinterpret_cast<uint4 *>(xv) = *reinterpret_cast<const uint4 *>(xr + c);
        load_floats<V>(bv, bias, c);
#pragma unroll
        for (int k = 0; k < V; k++) {
            v[i][k] = to_f(hv[k]) + to_f(xv[k]) + bv[k];
            acc += v[i][k];
        }
    }
    const float mean = warp_sum(acc) / (float)H;
    acc = 0.0f;
#pragma unroll
    for (int i = 0; i < NW; i++)
        if ((lane + 32 * i) * V < H)
#pragma unroll
            for (int k = 0; k < V; k++)
                acc += (v[i][k] - mean) * (v[i][k] - mean);
    const float rstd = rsqrtf(warp_sum(acc) / (float)H + eps);
#pragma unroll
    for (int i = 0; i < NW; i++) {
        const int c = (lane + 32 * i) * V;
        if (c >= H)
            continue;
        alignas(LN_VEC_BYTES) S hv[V];
        alignas(LN_VEC_BYTES) float wv[V], bv[V];
        load_floats<V>(wv, w, c);
        load_floats<V>(bv, b, c);
#pragma unroll
        for (int k = 0; k < V; k++)
            hv[k] = from_f<S>((v[i][k] - mean) * rstd * wv[k] + bv[k]);
        *reinterpret_cast<uint4 *>(hr + c) = *reinterpret_cast<const uint4 *>(hv);
    }
}

static bool aligned(const void *p)
{
    return (uintptr_t)p % LN_VEC_BYTES == 0;
}

template <typename S>
void cuda_bias_residual_layernorm(S *h, const S *x, const float *bias, const float *w,
                                  const float *b, int M, int H, float eps, cudaStream_t stream)
{
    constexpr int V = LN_VEC_BYTES / sizeof(S);
    const int nw = (H / V + 31) / 32;
    if (M <= 0)
        return;
    if (M >= LN_WARP_MIN_ROWS && H % V == 0 && nw <= LN_WARP_MAX_WORDS && aligned(h) &&
        aligned(x) && aligned(bias) && aligned(w) && aligned(b)) {
        const unsigned blocks = (unsigned)((M + LN_WARP_ROWS - 1) / LN_WARP_ROWS);
        auto kernel = nw <= 1   ? bias_residual_layernorm_warp_kernel<S, 1>
                      : nw <= 2 ? bias_residual_layernorm_warp_kernel<S, 2>
                      : nw <= 3 ? bias_residual_layernorm_warp_kernel<S, 3>
                      : nw <= 4 ? bias_residual_layernorm_warp_kernel<S, 4>
                                : bias_residual_layernorm_warp_kernel<S, LN_WARP_MAX_WORDS>;
        kernel<<<blocks, LN_WARP_ROWS * 32, 0, stream>>>(h, x, bias, w, b, M, H, eps);
    } else if (H % V == 0 && H / V <= 1024 && aligned(h) && aligned(x)) {
        bias_residual_layernorm_vec_kernel<S>
                <<<M, (H / V + 31) / 32 * 32, 0, stream>>>(h, x, NULL, 0, bias, w, b, M, H, eps);
    } else {
        bias_residual_layernorm_kernel<S>
                <<<M, CUDA_ROW_THREADS, H * sizeof(float), stream>>>(h, x, bias, w, b, H, eps);
    }
}

template <typename S>
void cuda_partials_residual_layernorm(S *h, const float *part, int splits, const float *bias,
                                      const float *w, const float *b, int M, int H, float eps,
                                      cudaStream_t stream)
{
    constexpr int V = LN_VEC_BYTES / sizeof(S);
    if (M > 0)
        bias_residual_layernorm_vec_kernel<S><<<M, (H / V + 31) / 32 * 32, 0, stream>>>(
                h, NULL, part, splits, bias, w, b, M, H, eps);
}

#define INSTANTIATE(S)                                                                           \
    template void cuda_bias_residual_layernorm<S>(S *, const S *, const float *, const float *,  \
                                                  const float *, int, int, float, cudaStream_t); \
    template void cuda_partials_residual_layernorm<S>(S *, const float *, int, const float *,    \
                                                      const float *, const float *, int, int,    \
                                                      float, cudaStream_t);
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
