/* matmul_tc.cu — fully connected layers of few rows on mma.sync tensor cores, with what
 * follows the GEMM in the same kernel: y = x · w^T + bias, the same through the erf GELU, or
 * FP32 partial products over slices of the inner dimension (split-K) that the LayerNorm
 * kernel then sums with the bias and the residual (layernorm.cu). FP16 and BF16 storage on
 * sm_80 and later.
 *
 * It exists for small batches: there a BERT layer is a chain of short kernels whose count,
 * not their work, sets the time, and cuBLAS gives the bias + GELU a kernel of its own and its
 * split-K products a reduction kernel of its own. bert.cu takes it where its blocks fit in one
 * wave on the GPU's multiprocessors, cuBLAS elsewhere.
 *
 * A block of four warps computes a 64 x 64 tile of y, each warp 32 x 32 (two m16 by four n8
 * mma tiles). x (M, K) and w (N, K) are both contiguous along K, so both reach the tensor
 * cores through ldmatrix without transposing. The inner dimension comes 32 at a time through
 * four shared-memory buffers filled by cp.async, three slices in flight while one is used
 * (at batch 1 a block does little work per slice, so the copies' latency must be hidden),
 * each row padded by 16 bytes so that ldmatrix reads without bank conflicts. Rows of x past M are
 * read as zeros and not written. Block z of a split takes K's slice z and writes its own FP32 (M,
 * N) plane. Fragment layouts: mma.cuh.
 */
#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/mma.cuh"
#include "nlu/cuda/ops.cuh"

enum {
    TC_BM = CUDA_TC_TILE,
    TC_BN = CUDA_TC_TILE,
    TC_BK = CUDA_TC_K,
    TC_LD = TC_BK + 8,
    TC_STAGES = 4,
    TC_THREADS = 128
};

/* Starts copying rows r0 .. r0 + TC_BM - 1, columns k0 .. k0 + TC_BK - 1 of src (rows ld
 * apart) into dst (TC_BM, TC_LD); rows at or past `rows` become zeros. */
template <typename S>
__device__ __forceinline__ void tc_stage(S *dst, const S *src, int ld, int r0, int rows, int k0)
{
    constexpr int W = TC_BK / 8;
    for (int i = threadIdx.x; i < TC_BM * W; i += TC_THREADS) {
        const int r = i / W, c = i % W;
        const bool ok = r0 + r < rows;
        copy16_async(dst + r * TC_LD + c * 8, src + (size_t)(ok ? r0 + r : 0) * ld + k0 + c * 8,
                     ok);
    }
}

template <typename S, cuda_tc_epilogue E>
__global__ void __launch_bounds__(TC_THREADS)
        linear_tc_kernel(void *y, const S *x, const S *w, const float *bias, int M, int N, int K,
                         int k_slice)
{
    __shared__ __align__(16) S xs[TC_STAGES][TC_BM * TC_LD], ws[TC_STAGES][TC_BN * TC_LD];
    const int n0 = blockIdx.x * TC_BN, m0 = blockIdx.y * TC_BM, kb = blockIdx.z * k_slice;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32, tiles = k_slice / TC_BK;
    float c[2][4][4] = {};
    // TC_STAGES - 1 slices in flight; a group is committed each time, empty past the end, so
    // that waiting for all but TC_STAGES - 2 groups always means this slice has landed
#pragma unroll
    for (int i = 0; i < TC_STAGES - 1; i++) {
        if (i < tiles) {
            tc_stage(xs[i], x, K, m0, M, kb + i * TC_BK);
            tc_stage(ws[i], w, K, n0, N, kb + i * TC_BK);
        }
        copy_commit();
    }
    for (int i = 0; i < tiles; i++) {
        copy_wait<TC_STAGES - 2>();
        __syncthreads(); // slice i is in; the buffer refilled below was read last iteration
        const int next = i + TC_STAGES - 1;
        if (next < tiles) {
            tc_stage(xs[next % TC_STAGES], x, K, m0, M, kb + next * TC_BK);
            tc_stage(ws[next % TC_STAGES], w, K, n0, N, kb + next * TC_BK);
        }
        copy_commit();
        const S *xa = xs[i % TC_STAGES], *wb = ws[i % TC_STAGES];
#pragma unroll
        for (int kk = 0; kk < TC_BK; kk += 16) {
            uint32_t a[2][4], b[4][2];
#pragma unroll
            for (int mi = 0; mi < 2; mi++)
                ldmatrix_x4<false>(a[mi], xa + (wm + mi * 16 + (lane & 15)) * TC_LD + kk +
                                                  (lane >> 4) * 8);
#pragma unroll
            for (int nj = 0; nj < 4; nj += 2) { // two n8 tiles: lanes 16-31 the second
                uint32_t r[4];
                ldmatrix_x4<false>(r, wb + (wn + nj * 8 + (lane & 7) + (lane >> 4) * 8) * TC_LD +
                                              kk + (lane >> 3 & 1) * 8);
                b[nj][0] = r[0], b[nj][1] = r[1], b[nj + 1][0] = r[2], b[nj + 1][1] = r[3];
            }
#pragma unroll
            for (int mi = 0; mi < 2; mi++)
#pragma unroll
                for (int nj = 0; nj < 4; nj++)
                    mma_16816<S>(c[mi][nj], a[mi], b[nj][0], b[nj][1]);
        }
    }
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int row = m0 + wm + mi * 16 + g + 8 * h;
            if (row >= M)
                continue;
#pragma unroll
            for (int nj = 0; nj < 4; nj++) {
                const int col = n0 + wn + nj * 8 + 2 * t;
                float v0 = c[mi][nj][2 * h], v1 = c[mi][nj][2 * h + 1];
                if constexpr (E == CUDA_TC_PARTIAL) {
                    float *out = (float *)y + ((size_t)blockIdx.z * M + row) * N + col;
                    *reinterpret_cast<float2 *>(out) = make_float2(v0, v1);
                } else {
                    v0 += bias[col], v1 += bias[col + 1];
                    if constexpr (E == CUDA_TC_BIAS_GELU)
                        v0 = cuda_gelu_value(v0), v1 = cuda_gelu_value(v1);
                    *reinterpret_cast<uint32_t *>((S *)y + (size_t)row * N + col) =
                            pack_floats<S>(v0, v1);
                }
            }
        }
}

template <typename S>
bool cuda_linear_tc_supported(void)
{
    if constexpr (sizeof(S) != 2) {
        return false;
    } else {
        // Built for an architecture without mma.sync (below sm_80), the kernel is empty.
        cudaFuncAttributes a;
        if (cudaFuncGetAttributes(&a, linear_tc_kernel<S, CUDA_TC_BIAS>) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        return a.ptxVersion >= 80 && a.binaryVersion >= 80;
    }
}

template <typename S>
parley_status cuda_linear_tc(void *y, const S *x, const S *w, const float *bias, int M, int K,
                             int N, cuda_tc_epilogue e, int splits, cudaStream_t stream)
{
    const bool aligned = (uintptr_t)x % 16 == 0 && (uintptr_t)w % 16 == 0 && (uintptr_t)y % 8 == 0;
    if (sizeof(S) != 2 || M <= 0 || N % TC_BN || splits < 1 || K % (TC_BK * splits) ||
        (splits > 1 && e != CUDA_TC_PARTIAL) || (e != CUDA_TC_PARTIAL && !bias) || !aligned)
        return PARLEY_ERR_UNSUPPORTED;
    if constexpr (sizeof(S) == 2) {
        const dim3 grid((unsigned)(N / TC_BN), (unsigned)((M + TC_BM - 1) / TC_BM),
                        (unsigned)splits);
        const auto kernel = e == CUDA_TC_PARTIAL     ? linear_tc_kernel<S, CUDA_TC_PARTIAL>
                            : e == CUDA_TC_BIAS_GELU ? linear_tc_kernel<S, CUDA_TC_BIAS_GELU>
                                                     : linear_tc_kernel<S, CUDA_TC_BIAS>;
        kernel<<<grid, TC_THREADS, 0, stream>>>(y, x, w, bias, M, N, K, K / splits);
    } else {
        (void)stream;
    }
    return PARLEY_OK;
}

#define INSTANTIATE(S)                                                                         \
    template bool cuda_linear_tc_supported<S>(void);                                           \
    template parley_status cuda_linear_tc<S>(void *, const S *, const S *, const float *, int, \
                                             int, int, cuda_tc_epilogue, int, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
