/* matmul.cu — fully connected layers through cuBLAS: y = x · w^T in the nn.Linear layout,
 * tensor cores for FP16/BF16 storage with FP32 accumulation, pedantic FP32 otherwise.
 *
 * Row-major y (M, OC) is column-major y^T (OC, M) = w · x^T, so the call multiplies
 * w^T-as-stored (transposed back) by x^T-as-stored. cuda_linear adds no bias: the kernel
 * that follows the GEMM adds it (layernorm.cu, elementwise.cu, attention.cu). Where nothing
 * but the bias follows, cuda_linear_bias adds it in cuBLASLt's epilogue instead, one launch
 * fewer. For few rows, cuda_linear_split_k cuts the inner dimension into slices whose FP32
 * products the LayerNorm kernel that follows sums (layernorm.cu). Not here: training's GEMMs, FP32
 * out of BF16 or FP32 operands (train.cu: linear and linear_backward).
 */
#include <stdint.h>

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

template <typename S>
parley_status cuda_linear_split_k(cublasHandle_t h, float *y, const S *x, int ldx, const S *w,
                                  int M, int IC, int OC, int splits)
{
    const float alpha = 1.0f, beta = 0.0f;
    const cudaDataType_t t = cuda_type<S>::value;
    const cublasComputeType_t ct =
            t == CUDA_R_32F ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
    const int kc = IC / splits;
    // slice s: y_s^T (OC, M) = w[:, s kc ..]^T-as-stored · x[:, s kc ..]^T, as in cuda_linear
    return cublas_check(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, OC, M, kc, &alpha,
                                                   w, t, IC, kc, x, t, ldx, kc, &beta, y,
                                                   CUDA_R_32F, OC, (long long)M * OC, splits, ct,
                                                   CUBLAS_GEMM_DEFAULT),
                        "cublasGemmStridedBatchedEx (split K)");
}

/* The largest power of two up to 256 that divides the address: what cuBLASLt's heuristic must
 * assume of each operand (it assumes 256 unless told). */
static uint32_t alignment(const void *p)
{
    uint32_t a = 256;
    while (a > 1 && (uintptr_t)p % a)
        a >>= 1;
    return a;
}

template <typename S>
parley_status cuda_linear_bias(cublasLtHandle_t lt, void *ws, size_t ws_bytes, void *y, int y_f32,
                               const S *x, int ldx, const S *w, const void *bias, int M, int IC,
                               int OC, cudaStream_t stream)
{
    const cudaDataType_t t = cuda_type<S>::value, yt = y_f32 ? CUDA_R_32F : t;
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    const uint64_t ws_max = ws_bytes;
    const uint32_t align_w = alignment(w), align_x = alignment(x), align_y = alignment(y);
    const float alpha = 1.0f, beta = 0.0f;
    // FP32 storage keeps cuda_linear's pedantic FP32 (the reference precision); biases are
    // kept to addresses that the epilogue's vector loads surely take
    if (t == CUDA_R_32F || alignment(bias) < 16)
        return PARLEY_ERR_UNSUPPORTED;
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t lw = NULL, lx = NULL, ly = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t best = {};
    int found = 0;
    // the same column-major view as cuda_linear: y^T (OC, M) = w^T-as-stored^T · x^T
    cublasStatus_t s = cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                           sizeof epilogue);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                           sizeof bias);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutCreate(&lw, t, IC, OC, IC);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutCreate(&lx, t, IC, M, ldx);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutCreate(&ly, yt, OC, M, OC);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulPreferenceCreate(&pref);
    const struct {
        cublasLtMatmulPreferenceAttributes_t attr;
        const void *value;
        size_t size;
    } prefs[] = {
        { CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_max, sizeof ws_max },
        { CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_w, sizeof align_w },
        { CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_x, sizeof align_x },
        { CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_y, sizeof align_y },
        { CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_y, sizeof align_y },
    };
    for (const auto &p : prefs)
        if (s == CUBLAS_STATUS_SUCCESS)
            s = cublasLtMatmulPreferenceSetAttribute(pref, p.attr, p.value, p.size);
    if (s == CUBLAS_STATUS_SUCCESS &&
        cublasLtMatmulAlgoGetHeuristic(lt, op, lw, lx, ly, ly, pref, 1, &best, &found) !=
                CUBLAS_STATUS_SUCCESS)
        found = 0; // no algorithm for this shape, alignment or epilogue
    if (s == CUBLAS_STATUS_SUCCESS && found)
        s = cublasLtMatmul(lt, op, &alpha, w, lw, x, lx, &beta, y, ly, y, ly, &best.algo, ws,
                           ws_bytes, stream);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(ly);
    cublasLtMatrixLayoutDestroy(lx);
    cublasLtMatrixLayoutDestroy(lw);
    cublasLtMatmulDescDestroy(op);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || (s == CUBLAS_STATUS_SUCCESS && !found))
        return PARLEY_ERR_UNSUPPORTED;
    return cublas_check(s, "cublasLtMatmul with a bias epilogue");
}

template parley_status cuda_linear<float>(cublasHandle_t, void *, int, const float *, int,
                                          const float *, int, int, int);
template parley_status cuda_linear<__half>(cublasHandle_t, void *, int, const __half *, int,
                                           const __half *, int, int, int);
template parley_status cuda_linear<__nv_bfloat16>(cublasHandle_t, void *, int,
                                                  const __nv_bfloat16 *, int, const __nv_bfloat16 *,
                                                  int, int, int);

#define INSTANTIATE(S)                                                                            \
    template parley_status cuda_linear_split_k<S>(cublasHandle_t, float *, const S *, int,        \
                                                  const S *, int, int, int, int);                 \
    template parley_status cuda_linear_bias<S>(cublasLtHandle_t, void *, size_t, void *, int,     \
                                               const S *, int, const S *, const void *, int, int, \
                                               int, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
