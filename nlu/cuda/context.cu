/* context.cu — what every GPU object of parley sets up first and tears down last: the
 * device made current, a non-blocking stream, and a cuBLAS handle on that stream with a
 * workspace of its own (so no cuBLAS call allocates while a CUDA graph is captured).
 */
#include "nlu/cuda/common.cuh"

parley_status cuda_context_open(int device, cudaDeviceProp *prop, cudaStream_t *stream,
                                cublasHandle_t *blas, void **blas_ws)
{
    parley_status st = cuda_check(cudaSetDevice(device), "selecting the device");
    if (st == PARLEY_OK)
        st = cuda_check(cudaGetDeviceProperties(prop, device), "reading device properties");
    if (st == PARLEY_OK)
        st = cuda_check(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking),
                        "creating a stream");
    if (st == PARLEY_OK)
        st = cublas_check(cublasCreate(blas), "cublasCreate");
    if (st == PARLEY_OK)
        st = cublas_check(cublasSetStream(*blas, *stream), "cublasSetStream");
    if (st == PARLEY_OK)
        st = cuda_check(cudaMalloc(blas_ws, CUDA_BLAS_WORKSPACE), "allocating cuBLAS workspace");
    if (st == PARLEY_OK)
        st = cublas_check(cublasSetWorkspace(*blas, *blas_ws, CUDA_BLAS_WORKSPACE),
                          "cublasSetWorkspace");
    return st;
}

void cuda_context_close(cudaStream_t stream, cublasHandle_t blas, void *blas_ws)
{
    if (blas)
        cublasDestroy(blas);
    cudaFree(blas_ws);
    if (stream)
        cudaStreamDestroy(stream);
}
