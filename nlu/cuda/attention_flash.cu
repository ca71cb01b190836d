/* attention_flash.cu — multi-head attention in one tensor-core kernel per layer for FP16 and
 * BF16 storage, flash-style: the scores never leave the chip.
 *
 * A block of four warps takes 64 query rows of one head of one sequence, each warp 16 of them,
 * held as mma.sync m16n8k16 A fragments in registers. Keys and values come through shared
 * memory 64 at a time (32 for heads of 128), rows padded by 16 bytes so that the fragment
 * loads of a warp hit 32 different banks. For each tile a warp computes its 16 x 64 scores
 * into FP32 accumulators, masks keys at or past the sequence's length, keeps each row's
 * running maximum and sum (online softmax, base 2 with the scale folded in), rescales its
 * output accumulators, and feeds the probabilities straight back as the A operand of P V:
 * the accumulator layout of two adjacent 8-key tiles is the A layout of one 16-key step, so
 * nothing is stored between the two products. Query rows past the length get zeros, as in
 * attention.cu and attention_gemm.cu. The QKV bias must already be added.
 *
 * Fragment layouts are PTX's for mma.m16n8k16 (g = lane / 4, t = lane % 4): A holds rows g
 * and g + 8, columns 2t, 2t + 1 and 2t + 8, 2t + 9; B columns g, rows 2t, 2t + 1 and
 * 2t + 8, 2t + 9; C rows g and g + 8, columns 2t, 2t + 1.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nlu/cuda/ops.cuh"

enum { FLASH_WARPS = 4, FLASH_ROWS = 16 * FLASH_WARPS };

/* Keys a tile: shared memory stays under the 48 KB a block gets without opting in. */
template <int D>
struct flash_tile {
    static constexpr int keys = D > 64 ? 32 : 64;
};

/* Two values as one 32-bit operand register, the lower column in the low half. */
template <typename S>
__device__ __forceinline__ uint32_t pack_pair(S lo, S hi)
{
    uint16_t a, b;
    memcpy(&a, &lo, 2);
    memcpy(&b, &hi, 2);
    return a | (uint32_t)b << 16;
}

template <typename S>
__device__ __forceinline__ uint32_t pack_floats(float lo, float hi)
{
    return pack_pair(from_f<S>(lo), from_f<S>(hi));
}

/* Two adjacent values of shared memory (an even offset) as one operand register. */
template <typename S>
__device__ __forceinline__ uint32_t load_pair(const S *p)
{
    return *reinterpret_cast<const uint32_t *>(p);
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

/* dst (n, D + 8) = rows r0 .. r0 + n - 1 of the sequence's block `which` (0 queries, 1 keys,
 * 2 values) in 16-byte words; rows at or past `valid` become zeros and are not read. */
template <typename S, int D>
__device__ __forceinline__ void stage(S *dst, const S *seq, int which, int H, int r0, int n,
                                      int valid)
{
    constexpr int W = D / 8, LD = D + 8;
    for (int i = threadIdx.x; i < n * W; i += blockDim.x) {
        const int r = i / W, c = i % W;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r0 + r < valid)
            v = *reinterpret_cast<const uint4 *>(seq + (size_t)(r0 + r) * 3 * H + which * H +
                                                 c * 8);
        *reinterpret_cast<uint4 *>(dst + r * LD + c * 8) = v;
    }
}

template <typename S, int D>
__global__ void __launch_bounds__(FLASH_WARPS * 32)
        attention_flash_kernel(S *out, const S *qkv, const int *len, int T, int NH,
                               float scale_log2)
{
    constexpr int BK = flash_tile<D>::keys, LD = D + 8;
    __shared__ __align__(16) S q_s[FLASH_ROWS * LD], k_s[BK * LD], v_s[BK * LD];
    const int b = blockIdx.z, h = blockIdx.y, q0 = blockIdx.x * FLASH_ROWS;
    const int L = len[b], H = NH * D, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const S *seq = qkv + (size_t)b * T * 3 * H + h * D;
    S *o_seq = out + (size_t)b * T * H + h * D;
    if (q0 >= L) { // padding rows only
        for (int i = threadIdx.x; i < FLASH_ROWS * (D / 8); i += blockDim.x)
            if (q0 + i / (D / 8) < T)
                *reinterpret_cast<uint4 *>(o_seq + (size_t)(q0 + i / (D / 8)) * H +
                                           i % (D / 8) * 8) = make_uint4(0, 0, 0, 0);
        return;
    }
    stage<S, D>(q_s, seq, 0, H, q0, FLASH_ROWS, L);
    __syncthreads();
    uint32_t qa[D / 16][4];
    const S *qw = q_s + warp * 16 * LD;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        qa[kk][0] = load_pair(qw + g * LD + kk * 16 + 2 * t);
        qa[kk][1] = load_pair(qw + (g + 8) * LD + kk * 16 + 2 * t);
        qa[kk][2] = load_pair(qw + g * LD + kk * 16 + 8 + 2 * t);
        qa[kk][3] = load_pair(qw + (g + 8) * LD + kk * 16 + 8 + 2 * t);
    }
    float o[D / 8][4] = {};
    float m[2] = { -INFINITY, -INFINITY }, l[2] = { 0.0f, 0.0f }; // rows g and g + 8
    for (int k0 = 0; k0 < L; k0 += BK) {
        __syncthreads(); // the last tile has been read
        stage<S, D>(k_s, seq, 1, H, k0, BK, L);
        stage<S, D>(v_s, seq, 2, H, k0, BK, L);
        __syncthreads();
        float s[BK / 8][4];
#pragma unroll
        for (int j = 0; j < BK / 8; j++) {
            s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
            const S *kr = k_s + (j * 8 + g) * LD + 2 * t;
#pragma unroll
            for (int kk = 0; kk < D / 16; kk++)
                mma_16816<S>(s[j], qa[kk], load_pair(kr + kk * 16), load_pair(kr + kk * 16 + 8));
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
            const S *vr = v_s + (kk * 16 + 2 * t) * LD + g;
#pragma unroll
            for (int dn = 0; dn < D / 8; dn++)
                mma_16816<S>(o[dn], pa, pack_pair(vr[dn * 8], vr[LD + dn * 8]),
                             pack_pair(vr[8 * LD + dn * 8], vr[9 * LD + dn * 8]));
        }
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

/* The kernel for heads of D, or NULL where there is none. */
template <typename S>
static void (*flash_kernel(int D))(S *, const S *, const int *, int, int, float)
{
    switch (D) {
    case 16: return attention_flash_kernel<S, 16>;
    case 32: return attention_flash_kernel<S, 32>;
    case 64: return attention_flash_kernel<S, 64>;
    case 128: return attention_flash_kernel<S, 128>;
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
        dim3 grid((unsigned)((T + FLASH_ROWS - 1) / FLASH_ROWS), (unsigned)NH, (unsigned)B);
        flash_kernel<S>(D)<<<grid, FLASH_WARPS * 32, 0, stream>>>(
                out, qkv, len, T, NH, 1.4426950408889634f / sqrtf((float)D));
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
