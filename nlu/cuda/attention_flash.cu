/* attention_flash.cu — multi-head attention in one tensor-core kernel per layer for FP16 and
 * BF16 storage, flash-style: the scores never leave the chip.
 *
 * A block of one or four warps takes 16 query rows a warp of one head of one sequence, held
 * as mma.sync m16n8k16 A fragments in registers (one warp a block where four would leave the
 * GPU's multiprocessors idle: a batch of one sequence). Keys and values come through shared
 * memory 64 at a time (16 for heads of 128), copied with cp.async into two buffers so that
 * the next tile loads while this one is used, rows padded by 16 bytes so that ldmatrix reads
 * them without bank conflicts (values transposed on the way). For each tile a warp computes
 * its 16 x 64 scores into FP32 accumulators, masks keys at or past the sequence's length,
 * keeps each row's running maximum and sum (online softmax, base 2 with the scale folded in),
 * rescales its output accumulators, and feeds the probabilities straight back as the A operand
 * of P V: the accumulator layout of two adjacent 8-key tiles is the A layout of one 16-key
 * step, so nothing is stored between the two products. Query rows past the length get zeros,
 * as in attention.cu and attention_gemm.cu. The QKV bias must already be added.
 *
 * Fragment layouts are PTX's for mma.m16n8k16 (g = lane / 4, t = lane % 4): A holds rows g
 * and g + 8, columns 2t, 2t + 1 and 2t + 8, 2t + 9; B columns g, rows 2t, 2t + 1 and
 * 2t + 8, 2t + 9; C rows g and g + 8, columns 2t, 2t + 1. ldmatrix gives lane l row l / 4,
 * columns 2t, 2t + 1 of each 8 x 8 matrix (with .trans, rows 2t, 2t + 1 of column l / 4),
 * the matrices' rows addressed by lanes 0-7, 8-15, 16-23 and 24-31.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nlu/cuda/ops.cuh"

/* Keys a tile: two buffers of keys and values and the queries stay under the 48 KB of shared
 * memory a block gets without opting in. */
template <int D>
struct flash_tile {
    static constexpr int keys = D > 64 ? 16 : 64;
};

/* Two values as one 32-bit operand register, the lower column in the low half. */
template <typename S>
__device__ __forceinline__ uint32_t pack_floats(float lo, float hi)
{
    const S a = from_f<S>(lo), b = from_f<S>(hi);
    uint16_t x, y;
    memcpy(&x, &a, 2);
    memcpy(&y, &b, 2);
    return x | (uint32_t)y << 16;
}

/* c (16 x 8, FP32) += a (16 x 16) · b (16 x 8) on the tensor cores. */
template <typename S>
__device__ __forceinline__ void mma_16816(float c[4], const uint32_t a[4], uint32_t b0,
                                          uint32_t b1);

template <>
__device__ __forceinline__ void mma_16816<__half>(float c[4], const uint32_t a[4], uint32_t b0,
                                                  uint32_t b1)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float c[4], const uint32_t a[4],
                                                         uint32_t b0, uint32_t b1)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

/* r = four (x4) or two (x2) 8 x 8 matrices of 16-bit values from shared memory, each lane
 * naming one matrix row (lanes 0-7 the first matrix's, 8-15 the second's, ...); TRANS
 * transposes each matrix on the way. */
template <bool TRANS>
__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void *row)
{
#if __CUDA_ARCH__ >= 800
    const unsigned a = (unsigned)__cvta_generic_to_shared(row);
    if (TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(a));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(a));
#endif
}

__device__ __forceinline__ void ldmatrix_x2(uint32_t r[2], const void *row)
{
#if __CUDA_ARCH__ >= 800
    const unsigned a = (unsigned)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(a));
#endif
}

/* 16 bytes from global to shared memory without passing through registers; zeros where
 * !valid (nothing is read then). */
__device__ __forceinline__ void copy16_async(void *dst, const void *src, bool valid)
{
#if __CUDA_ARCH__ >= 800
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src),
                 "r"(valid ? 16 : 0));
#endif
}

__device__ __forceinline__ void copy_commit()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;");
#endif
}

/* Waits until at most N of this thread's committed copy groups are still in flight. */
template <int N>
__device__ __forceinline__ void copy_wait()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N));
#endif
}

/* Starts copying rows r0 .. r0 + n - 1 of the sequence's block `which` (0 queries, 1 keys,
 * 2 values) into dst (n, D + 8); rows at or past `valid` become zeros. */
template <typename S, int D, int THREADS>
__device__ __forceinline__ void stage(S *dst, const S *seq, int which, int H, int r0, int n,
                                      int valid)
{
    constexpr int W = D / 8, LD = D + 8;
    for (int i = threadIdx.x; i < n * W; i += THREADS) {
        const int r = i / W, c = i % W;
        const bool ok = r0 + r < valid;
        copy16_async(dst + r * LD + c * 8,
                     seq + (size_t)(ok ? r0 + r : 0) * 3 * H + which * H + c * 8, ok);
    }
}

template <typename S, int D, int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
        attention_flash_kernel(S *out, const S *qkv, const int *len, int T, int NH,
                               float scale_log2)
{
    constexpr int BK = flash_tile<D>::keys, LD = D + 8, ROWS = 16 * WARPS, THREADS = 32 * WARPS;
    __shared__ __align__(16) S q_s[ROWS * LD], kv_s[2][2][BK * LD]; // [buffer][keys, values]
    const int b = blockIdx.z, h = blockIdx.y, q0 = blockIdx.x * ROWS;
    const int L = len[b], H = NH * D, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const S *seq = qkv + (size_t)b * T * 3 * H + h * D;
    S *o_seq = out + (size_t)b * T * H + h * D;
    if (q0 >= L) { // padding rows only
        for (int i = threadIdx.x; i < ROWS * (D / 8); i += THREADS)
            if (q0 + i / (D / 8) < T)
                *reinterpret_cast<uint4 *>(o_seq + (size_t)(q0 + i / (D / 8)) * H +
                                           i % (D / 8) * 8) = make_uint4(0, 0, 0, 0);
        return;
    }
    stage<S, D, THREADS>(q_s, seq, 0, H, q0, ROWS, L);
    stage<S, D, THREADS>(kv_s[0][0], seq, 1, H, 0, BK, L);
    stage<S, D, THREADS>(kv_s[0][1], seq, 2, H, 0, BK, L);
    copy_commit();
    uint32_t qa[D / 16][4];
    float o[D / 8][4] = {};
    float m[2] = { -INFINITY, -INFINITY }, l[2] = { 0.0f, 0.0f }; // rows g and g + 8
    const int tiles = (L + BK - 1) / BK;
    for (int i = 0; i < tiles; i++) {
        const int k0 = i * BK;
        if (i + 1 < tiles) { // the next tile into the other buffer, read two iterations ago
            stage<S, D, THREADS>(kv_s[(i + 1) & 1][0], seq, 1, H, k0 + BK, BK, L);
            stage<S, D, THREADS>(kv_s[(i + 1) & 1][1], seq, 2, H, k0 + BK, BK, L);
            copy_commit();
            copy_wait<1>();
        } else {
            copy_wait<0>();
        }
        __syncthreads();
        if (i == 0) {
            const S *qr =
                    q_s + (warp * 16 + (lane & 7) + (lane >> 3 & 1) * 8) * LD + (lane >> 4) * 8;
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++)
                ldmatrix_x4<false>(qa[kk], qr + kk * 16);
        }
        const S *k_s = kv_s[i & 1][0], *v_s = kv_s[i & 1][1];
        float s[BK / 8][4];
#pragma unroll
        for (int j = 0; j < BK / 8; j++) {
            s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
            const S *kr = k_s + (j * 8 + (lane & 7)) * LD;
#pragma unroll
            for (int kk = 0; kk + 1 < D / 16; kk += 2) {
                uint32_t r[4];
                ldmatrix_x4<false>(r, kr + kk * 16 + (lane >> 3) * 8);
                mma_16816<S>(s[j], qa[kk], r[0], r[1]);
                mma_16816<S>(s[j], qa[kk + 1], r[2], r[3]);
            }
            if constexpr (D / 16 % 2) {
                uint32_t r[2];
                ldmatrix_x2(r, kr + D - 16 + (lane >> 3 & 1) * 8);
                mma_16816<S>(s[j], qa[D / 16 - 1], r[0], r[1]);
            }
        }
        // Every tile starts at a key before L, so each row's maximum is finite.
        float mx[2] = { -INFINITY, -INFINITY };
#pragma unroll
        for (int j = 0; j < BK / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float x = k0 + j * 8 + 2 * t + (e & 1) < L ? s[j][e] * scale_log2 : -INFINITY;
                s[j][e] = x;
                mx[e >> 1] = fmaxf(mx[e >> 1], x);
            }
        float corr[2];
#pragma unroll
        for (int r = 0; r < 2; r++) {
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
            mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
            const float mn = fmaxf(m[r], mx[r]);
            corr[r] = exp2f(m[r] - mn);
            m[r] = mn;
            l[r] *= corr[r];
        }
#pragma unroll
        for (int dn = 0; dn < D / 8; dn++) {
            o[dn][0] *= corr[0], o[dn][1] *= corr[0];
            o[dn][2] *= corr[1], o[dn][3] *= corr[1];
        }
#pragma unroll
        for (int j = 0; j < BK / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                s[j][e] = exp2f(s[j][e] - m[e >> 1]);
                l[e >> 1] += s[j][e];
            }
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            const uint32_t pa[4] = { pack_floats<S>(s[2 * kk][0], s[2 * kk][1]),
                                     pack_floats<S>(s[2 * kk][2], s[2 * kk][3]),
                                     pack_floats<S>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                     pack_floats<S>(s[2 * kk + 1][2], s[2 * kk + 1][3]) };
            const S *vr = v_s + (kk * 16 + (lane & 7) + (lane >> 3 & 1) * 8) * LD + (lane >> 4) * 8;
#pragma unroll
            for (int dn = 0; dn < D / 8; dn += 2) {
                uint32_t r[4];
                ldmatrix_x4<true>(r, vr + dn * 8);
                mma_16816<S>(o[dn], pa, r[0], r[1]);
                mma_16816<S>(o[dn + 1], pa, r[2], r[3]);
            }
        }
        __syncthreads(); // this buffer is refilled by the next iteration's prefetch but one
    }
#pragma unroll
    for (int r = 0; r < 2; r++) {
        l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
        l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
        const int q = q0 + warp * 16 + g + 8 * r;
        if (q >= T)
            continue;
        const float inv = q < L ? 1.0f / l[r] : 0.0f;
        S *orow = o_seq + (size_t)q * H + 2 * t;
#pragma unroll
        for (int dn = 0; dn < D / 8; dn++)
            *reinterpret_cast<uint32_t *>(orow + dn * 8) =
                    pack_floats<S>(o[dn][2 * r] * inv, o[dn][2 * r + 1] * inv);
    }
}

/* Four warps a block where that gives every multiprocessor a block, else one. */
template <typename S, int D>
static void launch(S *out, const S *qkv, const int *len, int B, int T, int NH, cudaStream_t stream)
{
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    const float scale_log2 = 1.4426950408889634f / sqrtf((float)D);
    if ((long)B * NH * ((T + 63) / 64) >= sms) {
        dim3 grid((unsigned)((T + 63) / 64), (unsigned)NH, (unsigned)B);
        attention_flash_kernel<S, D, 4><<<grid, 128, 0, stream>>>(out, qkv, len, T, NH, scale_log2);
    } else {
        dim3 grid((unsigned)((T + 15) / 16), (unsigned)NH, (unsigned)B);
        attention_flash_kernel<S, D, 1><<<grid, 32, 0, stream>>>(out, qkv, len, T, NH, scale_log2);
    }
}

/* The four-warp kernel for heads of D, or NULL where there is none. */
template <typename S>
static void (*flash_kernel(int D))(S *, const S *, const int *, int, int, float)
{
    switch (D) {
    case 16: return attention_flash_kernel<S, 16, 4>;
    case 32: return attention_flash_kernel<S, 32, 4>;
    case 64: return attention_flash_kernel<S, 64, 4>;
    case 128: return attention_flash_kernel<S, 128, 4>;
    default: return NULL;
    }
}

template <typename S>
bool cuda_attention_flash_supported(int D)
{
    if constexpr (sizeof(S) != 2) {
        (void)D;
        return false;
    } else {
        // Built for an architecture without mma.sync (below sm_80), the kernel is empty.
        cudaFuncAttributes a;
        const auto k = flash_kernel<S>(D);
        if (!k || cudaFuncGetAttributes(&a, k) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        return a.ptxVersion >= 80 && a.binaryVersion >= 80;
    }
}

template <typename S>
void cuda_attention_flash(S *out, const S *qkv, const int *len, int B, int T, int NH, int D,
                          cudaStream_t stream)
{
    if constexpr (sizeof(S) == 2) {
        switch (D) {
        case 16: launch<S, 16>(out, qkv, len, B, T, NH, stream); break;
        case 32: launch<S, 32>(out, qkv, len, B, T, NH, stream); break;
        case 64: launch<S, 64>(out, qkv, len, B, T, NH, stream); break;
        case 128: launch<S, 128>(out, qkv, len, B, T, NH, stream); break;
        }
    } else {
        (void)out, (void)qkv, (void)len, (void)B, (void)T, (void)NH, (void)D, (void)stream;
    }
}

#define INSTANTIATE(S)                                                                     \
    template bool cuda_attention_flash_supported<S>(int);                                  \
    template void cuda_attention_flash<S>(S *, const S *, const int *, int, int, int, int, \
                                          cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
