/* elementwise.cu — the one-value-at-a-time kernels of inference: bias + GELU after the
 * feed-forward input GEMM, bias + tanh of the pooler, plain bias adds (the heads' logits, the
 * QKV rows before attention_gemm.cu), and the conversion of the FP32 parameters to the
 * storage type at upload. The trainer uses them too (train.cu): the bias adds and tanh on
 * FP32 rows, the conversion for its BF16 weights and GEMM operands.
 *
 * Not here: anything that reduces over a row (layernorm.cu, attention*.cu); training's plain
 * GELU and the backward kernels (gelu.cu, gelu_backward.cu, pooler.cu).
 */
#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/ops.cuh"

enum {
    EW_THREADS = 256,
    EW_MAX_BLOCKS = 65535,
    EW_VEC_BYTES = 16,    /* one 128-bit load and store per thread and row */
    EW_VEC_BLOCKS = 2048, /* blocks of a vectorized launch: ~16 per multiprocessor */
};

/* Row-wise kernels on a 2-D grid: x blocks over the n columns, y blocks striding over the M
 * rows, so the bias index is the column with no division (a 64-bit modulo per value made
 * these kernels compute-bound, 3x slower than memory at batch 256 on the H100) and small
 * batches still spread over the whole GPU. */
static dim3 row_grid(int M, int n)
{
    return dim3((unsigned)((n + EW_THREADS - 1) / EW_THREADS),
                (unsigned)(M < EW_MAX_BLOCKS ? (M > 0 ? M : 1) : EW_MAX_BLOCKS));
}

/* What each row-wise kernel does to value + bias. */
struct op_gelu {
    __device__ float operator()(float v) const { return cuda_gelu_value(v); }
};
struct op_tanh {
    __device__ float operator()(float v) const { return tanhf(v); }
};
struct op_none {
    __device__ float operator()(float v) const { return v; }
};

// x (M, n) = op(x + bias (n)), one value per thread and row
template <typename S, typename Op>
__global__ void bias_map_kernel(S *x, const float *bias, int M, int n, Op op)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < n)
        for (int r = blockIdx.y; r < M; r += gridDim.y) {
            S *p = x + (size_t)r * n + c;
            *p = from_f<S>(op(to_f(*p) + bias[c]));
        }
}

/* The same with V = 16 / sizeof(S) adjacent values per thread, read and written as one
 * 128-bit word, and the thread's V biases held in registers over all its rows: one value per
 * thread in blocks of one row each ran at 40% of memory bandwidth at batch 256 (bias + GELU
 * 218 us on 256 x 128 x 3072 halves, H200, 2026-11-26). Needs x 16-byte aligned and n a
 * multiple of V; the values and the arithmetic are the scalar kernel's. */
template <typename S, typename Op>
__global__ void bias_map_vec_kernel(S *x, const float *bias, int M, int n, Op op)
{
    constexpr int V = EW_VEC_BYTES / sizeof(S);
    const int c = (blockIdx.x * blockDim.x + threadIdx.x) * V;
    if (c >= n)
        return;
    float bv[V];
#pragma unroll
    for (int k = 0; k < V; k++)
        bv[k] = bias[c + k];
    for (int r = blockIdx.y; r < M; r += gridDim.y) {
        uint4 *p = reinterpret_cast<uint4 *>(x + (size_t)r * n + c);
        alignas(EW_VEC_BYTES) S v[V];
        *reinterpret_cast<uint4 *>(v) = *p;
#pragma unroll
        for (int k = 0; k < V; k++)
            v[k] = from_f<S>(op(to_f(v[k]) + bv[k]));
        *p = *reinterpret_cast<const uint4 *>(v);
    }
}

/* x = op(x + bias) on the vectorized kernel where x's alignment and n allow, else the
 * scalar one. */
template <typename S, typename Op>
static void bias_map(S *x, const float *bias, int M, int n, Op op, cudaStream_t stream)
{
    constexpr int V = EW_VEC_BYTES / sizeof(S);
    if (M <= 0 || n <= 0)
        return;
    if (n % V || (uintptr_t)x % EW_VEC_BYTES) {
        bias_map_kernel<S><<<row_grid(M, n), EW_THREADS, 0, stream>>>(x, bias, M, n, op);
        return;
    }
    const int cols = (n / V + EW_THREADS - 1) / EW_THREADS;
    const int rows = EW_VEC_BLOCKS / cols > 1 ? EW_VEC_BLOCKS / cols : 1;
    bias_map_vec_kernel<S>
            <<<dim3((unsigned)cols, (unsigned)(M < rows ? M : rows)), EW_THREADS, 0, stream>>>(
                    x, bias, M, n, op);
}

template <typename S>
__global__ void convert_kernel(S *out, const float *in, size_t total)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = from_f<S>(in[i]);
}

template <typename S>
void cuda_bias_gelu(S *x, const float *bias, int M, int n, cudaStream_t stream)
{
    bias_map(x, bias, M, n, op_gelu(), stream);
}

template <typename S>
void cuda_bias_tanh(S *x, const float *bias, int M, int n, cudaStream_t stream)
{
    bias_map(x, bias, M, n, op_tanh(), stream);
}

template <typename S>
void cuda_bias_add(S *x, const float *bias, int M, int n, cudaStream_t stream)
{
    bias_map(x, bias, M, n, op_none(), stream);
}

template <typename S>
void cuda_convert(S *out, const float *in, size_t n, cudaStream_t stream)
{
    size_t blocks = (n + EW_THREADS - 1) / EW_THREADS;
    convert_kernel<S>
            <<<(unsigned)(blocks < EW_MAX_BLOCKS * 8 ? (blocks ? blocks : 1) : EW_MAX_BLOCKS * 8),
               EW_THREADS, 0, stream>>>(out, in, n);
}

#define INSTANTIATE(S)                                                           \
    template void cuda_bias_gelu<S>(S *, const float *, int, int, cudaStream_t); \
    template void cuda_bias_tanh<S>(S *, const float *, int, int, cudaStream_t); \
    template void cuda_bias_add<S>(S *, const float *, int, int, cudaStream_t);  \
    template void cuda_convert<S>(S *, const float *, size_t, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
