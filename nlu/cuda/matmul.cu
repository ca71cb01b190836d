/* matmul.cu — fully connected layers through cuBLAS: y = x · w^T in the nn.Linear layout,
 * tensor cores for FP16/BF16 storage with FP32 accumulation, pedantic FP32 otherwise.
 *
 * Row-major y (M, OC) is column-major y^T (OC, M) = w · x^T, so the call multiplies
 * w^T-as-stored (transposed back) by x^T-as-stored. Biases are not added here: the kernel
 * that follows each GEMM adds its bias (layernorm.cu, elementwise.cu, attention.cu). Not
 * here: training's GEMMs, FP32 out of BF16 or FP32 operands (train.cu: linear and
 * linear_backward).
 */
#include "nlu/cuda/ops.cuh"

template <typename S>
parley_status cuda_linear(cublasHandle_t h, void *y, int y_f32, const S *x, int ldx, const S *w,
                          int M, int IC, int OC)
{
    const float alpha = 1.0f, beta = 0.0f;
    const cudaDataType_t t = cuda_type<S>::value, yt = y_f32 ? CUDA_R_32F : t;
    const cublasComputeType_t ct =
            t == CUDA_R_32F ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
    return cublas_check(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, OC, M, IC, &alpha, w, t, IC, x, t,
                                     ldx, &beta, y, yt, OC, ct, CUBLAS_GEMM_DEFAULT),
                        "cublasGemmEx");
}

template parley_status cuda_linear<float>(cublasHandle_t, void *, int, const float *, int,
                                          const float *, int, int, int);
template parley_status cuda_linear<__half>(cublasHandle_t, void *, int, const __half *, int,
                                           const __half *, int, int, int);
template parley_status cuda_linear<__nv_bfloat16>(cublasHandle_t, void *, int,
                                                  const __nv_bfloat16 *, int, const __nv_bfloat16 *,
                                                  int, int, int);
