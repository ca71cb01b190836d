/* mma.cuh — the tensor-core building blocks of the kernels that run on mma.sync (sm_80 and
 * later): the m16n8k16 product with FP32 accumulators, ldmatrix fragment loads from shared
 * memory, cp.async copies from global memory, and two floats packed as one 16-bit operand
 * register. attention_flash.cu and matmul_tc.cu use them; on an older architecture each
 * compiles to nothing (callers check cudaFuncAttributes' binaryVersion before launching).
 *
 * Fragment layouts are PTX's for mma.m16n8k16 (g = lane / 4, t = lane % 4): A holds rows g
 * and g + 8, columns 2t, 2t + 1 and 2t + 8, 2t + 9; B columns g, rows 2t, 2t + 1 and
 * 2t + 8, 2t + 9; C rows g and g + 8, columns 2t, 2t + 1. ldmatrix gives lane l row l / 4,
 * columns 2t, 2t + 1 of each 8 x 8 matrix (with .trans, rows 2t, 2t + 1 of column l / 4),
 * the matrices' rows addressed by lanes 0-7, 8-15, 16-23 and 24-31.
 */
#ifndef NLU_CUDA_MMA_CUH
#define NLU_CUDA_MMA_CUH

#include <stdint.h>
#include <string.h>

#include "nlu/cuda/common.cuh"

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

#endif
