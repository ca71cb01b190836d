/* matmul_backward.cu — the column sums of training: the bias gradient of a fully connected
 * layer, as cpu_matmul_backward sums it (nlu/cpu/matmul_backward.c), and LayerNorm's w and b
 * gradients (layernorm_backward.cu).
 *
 * A sum over M rows runs in fixed chunks of CUDA_COL_ROWS rows, one thread per column and
 * chunk; the chunks' partial sums are then added in chunk order, so results never depend on
 * scheduling. The GEMMs of the backward are cuBLAS calls in train.cu (linear_backward), next
 * to the trainer's BF16 operand scratch.
 */
#include "nlu/cuda/train_ops.cuh"

enum { COL_THREADS = 128 };

size_t cuda_col_sum_scratch(int M, int C)
{
    return (size_t)((M + CUDA_COL_ROWS - 1) / CUDA_COL_ROWS) * (size_t)C;
}

// part (chunks, C): chunk k's sum of rows k*CUDA_COL_ROWS ..
static __global__ void col_partial_kernel(float *part, const float *x, int M, int C)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x, k = blockIdx.y;
    if (c >= C)
        return;
    const int r1 = min(M, (k + 1) * CUDA_COL_ROWS);
    float acc = 0.0f;
    for (int r = k * CUDA_COL_ROWS; r < r1; r++)
        acc += x[(size_t)r * C + c];
    part[(size_t)k * C + c] = acc;
}

static __global__ void col_finish_kernel(float *out, const float *part, int chunks, int C)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C)
        return;
    float acc = 0.0f;
    for (int k = 0; k < chunks; k++)
        acc += part[(size_t)k * C + c];
    out[c] += acc;
}

void cuda_col_sum_add(float *out, const float *x, int M, int C, float *scratch, cudaStream_t s)
{
    const int chunks = (M + CUDA_COL_ROWS - 1) / CUDA_COL_ROWS,
              cb = (C + COL_THREADS - 1) / COL_THREADS;
    if (M < 1)
        return;
    col_partial_kernel<<<dim3(cb, chunks), COL_THREADS, 0, s>>>(scratch, x, M, C);
    col_finish_kernel<<<cb, COL_THREADS, 0, s>>>(out, scratch, chunks, C);
}
