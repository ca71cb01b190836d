/* attention_gemm.cu — multi-head attention for big batches as two batched tensor-core GEMMs
 * around a masked softmax: scores = scale Q K^T (FP32, FP16 for FP16 storage), probs =
 * softmax(scores) over the keys before each sequence's length (FP32 math, stored in the
 * storage type), out = probs V. The softmax keeps a row of up to 512 keys in registers; longer
 * rows are read again.
 *
 * The fused kernel of attention.cu does the dot products on CUDA cores; past a few thousand
 * rows per batch the tensor cores win despite the round trip of the scores through memory.
 * cuBLAS reads Q, K and V in place inside the (M, 3H) QKV rows and writes each head's output
 * into its columns of out (M, H) through per-(sequence, head) pointer arrays, which a tiny
 * kernel fills on the device (once per batch: every layer uses the same buffers) so that a
 * captured graph needs no host work. The QKV bias must
 * already be added (cuda_bias_add on qkv). Query rows past a sequence's length get zeros, as
 * in attention.cu.
 */
#include <math.h>

#include "nlu/cuda/ops.cuh"

enum { SOFTMAX_WARPS = 4, SOFTMAX_MAX_PER_LANE = 16 };

// The scores' type: FP16 storage keeps them in FP16 (scaled in the GEMM, so under a few tens),
// halving their trip through memory; BF16's 8-bit mantissa would cost the softmax percents,
// so BF16 and FP32 keep them in FP32.
template <typename S>
struct score_type {
    typedef float type;
};
template <>
struct score_type<__half> {
    typedef __half type;
};

// ptrs (6, B*NH): q, k, v, scores, probs and out of (b, h) at row b * NH + h
template <typename S>
__global__ void attention_pointers(const void **ptrs, S *out, const S *qkv, float *scores, S *probs,
                                   int B, int T, int NH, int D)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x, n = B * NH;
    if (i >= n)
        return;
    const int b = i / NH, h = i % NH, H = NH * D;
    const S *seq = qkv + (size_t)b * T * 3 * H + h * D;
    ptrs[i] = seq;
    ptrs[n + i] = seq + H;
    ptrs[2 * n + i] = seq + 2 * H;
    ptrs[3 * n + i] = (typename score_type<S>::type *)scores + (size_t)i * T * T;
    ptrs[4 * n + i] = probs + (size_t)i * T * T;
    ptrs[5 * n + i] = out + (size_t)b * T * H + h * D;
}

// probs (B*NH*T, T) = masked softmax of scores, one warp per row, for rows of any
// length: the scores are read three times (maximum, sum, output)
template <typename S>
__global__ void masked_softmax(S *probs, const typename score_type<S>::type *scores, const int *len,
                               int NH, int T, size_t rows)
{
    const size_t r = (size_t)blockIdx.x * SOFTMAX_WARPS + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (r >= rows)
        return;
    const int q = (int)(r % T), L = len[r / T / NH];
    const typename score_type<S>::type *s = scores + r * T;
    S *p = probs + r * T;
    if (q >= L) {
        for (int j = lane; j < T; j += 32)
            p[j] = from_f<S>(0.0f);
        return;
    }
    float mx = -INFINITY, sum = 0.0f;
    for (int j = lane; j < L; j += 32)
        mx = fmaxf(mx, to_f(s[j]));
    mx = warp_max(mx);
    for (int j = lane; j < L; j += 32)
        sum += expf(to_f(s[j]) - mx);
    const float inv = 1.0f / warp_sum(sum);
    for (int j = lane; j < T; j += 32)
        p[j] = from_f<S>(j < L ? expf(to_f(s[j]) - mx) * inv : 0.0f);
}

// The same for rows of at most 32 * NI keys, read once: lane l keeps the scores l, l + 32, ...
// and their exponentials in registers. At batch 256 the kernel above took 152 us a layer
// (FP32 scores in, 2 TB/s; H100, 2026-11-26); this one and the FP16 scores took 4 to 6% off
// the whole forward there.
template <typename S, int NI>
__global__ void masked_softmax_regs(S *probs, const typename score_type<S>::type *scores,
                                    const int *len, int NH, int T, size_t rows)
{
    const size_t r = (size_t)blockIdx.x * SOFTMAX_WARPS + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (r >= rows)
        return;
    const int n = len[r / T / NH], q = (int)(r % T), L = q < n ? n : 0; // padding rows: none
    const typename score_type<S>::type *s = scores + r * T;
    S *p = probs + r * T;
    float e[NI], mx = -INFINITY, sum = 0.0f;
#pragma unroll
    for (int i = 0; i < NI; i++) {
        const int j = lane + 32 * i;
        e[i] = j < L ? to_f(s[j]) : -INFINITY;
        mx = fmaxf(mx, e[i]);
    }
    mx = warp_max(mx);
#pragma unroll
    for (int i = 0; i < NI; i++) {
        e[i] = lane + 32 * i < L ? expf(e[i] - mx) : 0.0f;
        sum += e[i];
    }
    const float inv = L ? 1.0f / warp_sum(sum) : 0.0f;
#pragma unroll
    for (int i = 0; i < NI; i++)
        if (lane + 32 * i < T)
            p[lane + 32 * i] = from_f<S>(e[i] * inv);
}

template <typename S>
void cuda_attention_pointers(const void **ptrs, S *out, const S *qkv, float *scores, S *probs,
                             int B, int T, int NH, int D, cudaStream_t stream)
{
    const int n = B * NH;
    attention_pointers<S>
            <<<(n + 127) / 128, 128, 0, stream>>>(ptrs, out, qkv, scores, probs, B, T, NH, D);
}

template <typename S>
parley_status cuda_attention_gemm(cublasHandle_t blas, const void **ptrs, float *scores, S *probs,
                                  const int *len, int B, int T, int NH, int D, cudaStream_t stream)
{
    const int n = B * NH, H = NH * D;
    const cudaDataType_t t = cuda_type<S>::value;
    const cublasComputeType_t ct =
            t == CUDA_R_32F ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
    const float one = 1.0f, zero = 0.0f, scale = 1.0f / sqrtf((float)D);
    // scores (T_q, T_k) row-major = scale Q K^T: column-major (T_k, T_q) = K^T-as-stored^T · Q^T
    parley_status st = cublas_check(
            cublasGemmBatchedEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, T, T, D, &scale, ptrs + n, t, 3 * H,
                                ptrs, t, 3 * H, &zero, (void *const *)(ptrs + 3 * n),
                                cuda_type<typename score_type<S>::type>::value, T, n, ct,
                                CUBLAS_GEMM_DEFAULT),
            "attention scores (cublasGemmBatchedEx)");
    if (st != PARLEY_OK)
        return st;
    const size_t rows = (size_t)n * T;
    const int per_lane = (T + 31) / 32;
    auto softmax = per_lane <= 1                      ? masked_softmax_regs<S, 1>
                   : per_lane <= 2                    ? masked_softmax_regs<S, 2>
                   : per_lane <= 4                    ? masked_softmax_regs<S, 4>
                   : per_lane <= 8                    ? masked_softmax_regs<S, 8>
                   : per_lane <= SOFTMAX_MAX_PER_LANE ? masked_softmax_regs<S, SOFTMAX_MAX_PER_LANE>
                                                      : masked_softmax<S>;
    softmax<<<(unsigned)((rows + SOFTMAX_WARPS - 1) / SOFTMAX_WARPS), SOFTMAX_WARPS * 32, 0,
              stream>>>(probs, (const typename score_type<S>::type *)scores, len, NH, T, rows);
    // out (T_q, D) row-major, rows H apart = probs V: column-major (D, T_q) = V^T · probs^T
    return cublas_check(cublasGemmBatchedEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, D, T, T, &one,
                                            ptrs + 2 * n, t, 3 * H, ptrs + 4 * n, t, T, &zero,
                                            (void *const *)(ptrs + 5 * n), t, H, n, ct,
                                            CUBLAS_GEMM_DEFAULT),
                        "attention output (cublasGemmBatchedEx)");
}

#define INSTANTIATE(S)                                                                         \
    template void cuda_attention_pointers<S>(const void **, S *, const S *, float *, S *, int, \
                                             int, int, int, cudaStream_t);                     \
    template parley_status cuda_attention_gemm<S>(cublasHandle_t, const void **, float *, S *, \
                                                  const int *, int, int, int, int, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
