/* errors.cu — the one boundary where CUDA runtime and cuBLAS errors become parley_status.
 *
 * Every CUDA or cuBLAS call in nlu/cuda/ goes through cuda_check or cublas_check; nothing
 * else looks at cudaError_t or cublasStatus_t.
 */
#include "nlu/cuda/common.cuh"

parley_status cuda_check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return PARLEY_OK;
    return pl_fail(PARLEY_ERR_DEVICE, "cuda: %s: %s (%s)", what, cudaGetErrorString(e),
                   cudaGetErrorName(e));
}

parley_status cublas_check(cublasStatus_t s, const char *what)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return PARLEY_OK;
    return pl_fail(PARLEY_ERR_DEVICE, "cublas: %s: %s (%s)", what, cublasGetStatusString(s),
                   cublasGetStatusName(s));
}
