/* common.cuh — what every CUDA file of parley shares: the storage types and their
 * conversions, block-wide reductions, the one place CUDA and cuBLAS errors become
 * parley_status (errors.cu), and the device, stream and cuBLAS set-up (context.cu).
 *
 * Kernels are templates on the storage type S (float, __half or __nv_bfloat16); they read
 * S, compute in float and write S. Biases, LayerNorm weights and embeddings stay in float.
 */
#ifndef NLU_CUDA_COMMON_CUH
#define NLU_CUDA_COMMON_CUH

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

extern "C" {
#include "sdk/base/error.h"
}

/* The errors.cu boundary: each returns PARLEY_OK for success, else PARLEY_ERR_DEVICE with a
 * detail message naming `what` and the library's own error name. */
parley_status cuda_check(cudaError_t e, const char *what);
parley_status cublas_check(cublasStatus_t s, const char *what);

/* Bytes of the workspace cuda_context_open gives the cuBLAS handle; cuBLASLt calls on the
 * same stream may use it too. */
static const size_t CUDA_BLAS_WORKSPACE = 32u << 20;

/* context.cu: makes `device` current, fills *prop, and creates *stream (non-blocking) and
 * *blas on it with a workspace of its own (*blas_ws). On failure what was made is left in
 * the out parameters for cuda_context_close, which takes NULLs too. */
parley_status cuda_context_open(int device, cudaDeviceProp *prop, cudaStream_t *stream,
                                cublasHandle_t *blas, void **blas_ws);
void cuda_context_close(cudaStream_t stream, cublasHandle_t blas, void *blas_ws);

__device__ __forceinline__ float to_f(float x)
{
    return x;
}
__device__ __forceinline__ float to_f(__half x)
{
    return __half2float(x);
}
__device__ __forceinline__ float to_f(__nv_bfloat16 x)
{
    return __bfloat162float(x);
}

template <typename S>
__device__ __forceinline__ S from_f(float x);
template <>
__device__ __forceinline__ float from_f<float>(float x)
{
    return x;
}
template <>
__device__ __forceinline__ __half from_f<__half>(float x)
{
    return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x)
{
    return __float2bfloat16_rn(x);
}

/* The cuBLAS data type of a storage type. */
template <typename S>
struct cuda_type;
template <>
struct cuda_type<float> {
    static constexpr cudaDataType_t value = CUDA_R_32F;
};
template <>
struct cuda_type<__half> {
    static constexpr cudaDataType_t value = CUDA_R_16F;
};
template <>
struct cuda_type<__nv_bfloat16> {
    static constexpr cudaDataType_t value = CUDA_R_16BF;
};

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* The sum of v over the block (blockDim.x a multiple of 32, at most 1024), returned to every
 * thread. `red` is 32 floats of shared memory; the call synchronizes the block. */
__device__ __forceinline__ float block_sum(float v, float *red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = warp_sum(v);
    __syncthreads(); /* red may still be read by a previous call */
    if (lane == 0)
        red[warp] = v;
    __syncthreads();
    v = lane < warps ? red[lane] : 0.0f;
    return warp_sum(v);
}

#endif
