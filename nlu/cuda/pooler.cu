/* pooler.cu — the pooler's pieces of training that nlu/train/bert_train.c writes as plain
 * loops: the gather of each sequence's first token into the pooler's input, the scatter-add
 * of their gradient back, and the backward of the pooler's tanh.
 *
 * Rows get one block each; the tanh backward is a grid-stride loop. The pooler's GEMM is
 * train.cu's, its bias + tanh forward elementwise.cu's (cuda_bias_tanh).
 */
#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/train_ops.cuh"

static __global__ void tanh_backward_kernel(float *d, const float *y, size_t n)
{
    CUDA_GRID_STRIDE (i, n)
        d[i] *= 1.0f - y[i] * y[i];
}

void cuda_tanh_backward(float *d, const float *y, size_t n, cudaStream_t s)
{
    if (n)
        tanh_backward_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, s>>>(d, y, n);
}

static __global__ void gather_rows_kernel(float *dst, const float *src, const int *rows, int H,
                                          int add)
{
    const size_t i = blockIdx.x, r = (size_t)rows[i];
    for (int c = threadIdx.x; c < H; c += blockDim.x) {
        if (add)
            dst[r * H + c] += src[i * H + c];
        else
            dst[i * H + c] = src[r * H + c];
    }
}

void cuda_gather_rows(float *dst, const float *src, const int *rows, int n, int H, cudaStream_t s)
{
    if (n > 0)
        gather_rows_kernel<<<n, CUDA_ROW_THREADS, 0, s>>>(dst, src, rows, H, 0);
}

void cuda_scatter_add_rows(float *dst, const float *src, const int *rows, int n, int H,
                           cudaStream_t s)
{
    if (n > 0)
        gather_rows_kernel<<<n, CUDA_ROW_THREADS, 0, s>>>(dst, src, rows, H, 1);
}
