/* attention.cu — fused multi-head self-attention: the QKV bias, scaled dot products with the
 * padding mask, an FP32 softmax and the weighted sum of values, in one kernel.
 *
 * A block takes ATT_ROWS query rows of one head of one sequence. It stages that sequence's
 * keys and values (bias added) in shared memory once, keys with rows padded to D + 1 so that
 * lanes reading different keys hit different banks. Each warp then takes one query row at a
 * time: lanes compute the scores of keys lane, lane + 32, ..., the warp reduces max and sum,
 * and lanes produce the output dimensions lane, lane + 32, .... Keys at or past the
 * sequence's length are never read; query rows past it are written as zeros. Sequences up
 * to what shared memory holds (cuda_attention_smem) are supported; the caller checks.
 */
#include <math.h>

#include "nlu/cuda/ops.cuh"

enum { ATT_WARPS = 4, ATT_THREADS = ATT_WARPS * 32, ATT_ROWS = 32 };

static __host__ __device__ size_t kv_bytes(int T, int D, size_t elem)
{
    return ((size_t)T * (2 * D + 1) * elem + 15) & ~(size_t)15;
}

template <typename S>
size_t cuda_attention_smem(int T, int D)
{
    return kv_bytes(T, D, sizeof(S)) + (size_t)ATT_WARPS * (D + T) * sizeof(float);
}

template <typename S>
__global__ void __launch_bounds__(ATT_THREADS)
        attention_kernel(S *out, const S *qkv, const float *bias, const int *len, int T, int NH,
                         int D, float scale)
{
    extern __shared__ __align__(16) unsigned char smem[];
    const int b = blockIdx.z, h = blockIdx.y, r0 = blockIdx.x * ATT_ROWS;
    const int L = len[b], H = NH * D, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    S *K = (S *)smem;                                                  // (L, D + 1)
    S *V = K + (size_t)T * (D + 1);                                    // (L, D)
    float *q = (float *)(smem + kv_bytes(T, D, sizeof(S))) + warp * D; // (D) per warp
    float *p = (float *)(smem + kv_bytes(T, D, sizeof(S))) + ATT_WARPS * D + warp * T;
    const S *seq = qkv + (size_t)b * T * 3 * H;
    const float *bq = bias + h * D, *bk = bias + H + h * D, *bv = bias + 2 * H + h * D;

    if (r0 < L)
        for (int i = threadIdx.x; i < L * D; i += blockDim.x) {
            const int j = i / D, d = i % D;
            const S *row = seq + (size_t)j * 3 * H + h * D;
            K[j * (D + 1) + d] = from_f<S>(to_f(row[H + d]) + bk[d]);
            V[j * D + d] = from_f<S>(to_f(row[2 * H + d]) + bv[d]);
        }
    __syncthreads();

    for (int r = r0 + warp; r < r0 + ATT_ROWS && r < T; r += ATT_WARPS) {
        S *o = out + ((size_t)b * T + r) * H + h * D;
        if (r >= L) {
            for (int d = lane; d < D; d += 32)
                o[d] = from_f<S>(0.0f);
            continue;
        }
        const S *row = seq + (size_t)r * 3 * H + h * D;
        for (int d = lane; d < D; d += 32)
            q[d] = to_f(row[d]) + bq[d];
        __syncwarp();
        float mx = -INFINITY;
        for (int j = lane; j < L; j += 32) {
            const S *k = K + j * (D + 1);
            float s = 0.0f;
            for (int d = 0; d < D; d++)
                s += q[d] * to_f(k[d]);
            s *= scale;
            p[j] = s;
            mx = fmaxf(mx, s);
        }
        mx = warp_max(mx);
        float sum = 0.0f;
        for (int j = lane; j < L; j += 32) {
            const float e = expf(p[j] - mx);
            p[j] = e;
            sum += e;
        }
        const float inv = 1.0f / warp_sum(sum);
        __syncwarp();
        for (int d = lane; d < D; d += 32) {
            float acc = 0.0f;
            for (int j = 0; j < L; j++)
                acc += p[j] * to_f(V[j * D + d]);
            o[d] = from_f<S>(acc * inv);
        }
        __syncwarp();
    }
}

template <typename S>
parley_status cuda_attention_prepare(size_t bytes)
{
    return cuda_check(cudaFuncSetAttribute(attention_kernel<S>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes),
                      "attention: setting its shared memory size");
}

template <typename S>
void cuda_attention(S *out, const S *qkv, const float *qkv_bias, const int *len, int B, int T,
                    int NH, int D, cudaStream_t stream)
{
    dim3 grid((unsigned)((T + ATT_ROWS - 1) / ATT_ROWS), (unsigned)NH, (unsigned)B);
    attention_kernel<S><<<grid, ATT_THREADS, cuda_attention_smem<S>(T, D), stream>>>(
            out, qkv, qkv_bias, len, T, NH, D, 1.0f / sqrtf((float)D));
}

#define INSTANTIATE(S)                                                                         \
    template size_t cuda_attention_smem<S>(int, int);                                          \
    template parley_status cuda_attention_prepare<S>(size_t);                                  \
    template void cuda_attention<S>(S *, const S *, const float *, const int *, int, int, int, \
                                    int, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
