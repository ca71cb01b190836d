/* elementwise.cu — the one-value-at-a-time kernels: bias + GELU after the feed-forward input
 * GEMM, bias + tanh of the pooler, bias of the heads' logits, and the conversion of the FP32
 * parameters to the storage type at upload, and plain bias adds (logits, QKV rows).
 *
 * Grid-stride loops over M * n values; the bias index is the column. Not here: anything
 * that reduces over a row (layernorm.cu, attention.cu).
 */
#include "nlu/cuda/ops.cuh"

enum { EW_THREADS = 256 };

static unsigned ew_blocks(size_t n)
{
    size_t b = (n + EW_THREADS - 1) / EW_THREADS;
    return (unsigned)(b < 65535 * 8 ? (b ? b : 1) : 65535 * 8);
}

template <typename S>
__global__ void bias_gelu_kernel(S *x, const float *bias, size_t total, int n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = to_f(x[i]) + bias[i % n];
        x[i] = from_f<S>(0.5f * v * (1.0f + erff(v * 0.70710678118654752f)));
    }
}

template <typename S>
__global__ void bias_tanh_kernel(S *x, const float *bias, size_t total, int n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = from_f<S>(tanhf(to_f(x[i]) + bias[i % n]));
}

template <typename S>
__global__ void bias_add_kernel(S *x, const float *bias, size_t total, int n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = from_f<S>(to_f(x[i]) + bias[i % n]);
}

template <typename S>
__global__ void convert_kernel(S *out, const float *in, size_t total)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = from_f<S>(in[i]);
}

template <typename S>
void cu_bias_gelu(S *x, const float *bias, int M, int n, cudaStream_t stream)
{
    size_t total = (size_t)M * n;
    bias_gelu_kernel<S><<<ew_blocks(total), EW_THREADS, 0, stream>>>(x, bias, total, n);
}

template <typename S>
void cu_bias_tanh(S *x, const float *bias, int M, int n, cudaStream_t stream)
{
    size_t total = (size_t)M * n;
    bias_tanh_kernel<S><<<ew_blocks(total), EW_THREADS, 0, stream>>>(x, bias, total, n);
}

template <typename S>
void cu_bias_add(S *x, const float *bias, int M, int n, cudaStream_t stream)
{
    size_t total = (size_t)M * n;
    bias_add_kernel<S><<<ew_blocks(total), EW_THREADS, 0, stream>>>(x, bias, total, n);
}

template <typename S>
void cu_convert(S *out, const float *in, size_t n, cudaStream_t stream)
{
    convert_kernel<S><<<ew_blocks(n), EW_THREADS, 0, stream>>>(out, in, n);
}

#define INSTANTIATE(S)                                                            \
    template void cu_bias_gelu<S>(S *, const float *, int, int, cudaStream_t);    \
    template void cu_bias_tanh<S>(S *, const float *, int, int, cudaStream_t);    \
    template void cu_bias_add<S>(S *, const float *, int, int, cudaStream_t);     \
    template void cu_convert<S>(S *, const float *, size_t, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
