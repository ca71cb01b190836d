/* layernorm_backward.cu — the backward of LayerNorm over FP32 rows, the GPU twin of
 * nlu/cpu/layernorm_backward.c.
 *
 * One block per row recomputes the row's mean and 1/std as the forward does (cuda_row_stats)
 * and writes the input gradient and the row's dout * xhat; the w and b gradients are then
 * column sums in a fixed order (matmul_backward.cu). This file does not compute the forward
 * (layernorm.cu).
 */
#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/train_ops.cuh"

/* dinp = rstd (g - mean(g) - xhat mean(g xhat)) with g = dout w; gx (M, C) = dout xhat for
 * the dw sum. Each thread reads dout[c] before it writes dinp[c], so they may alias. */
static __global__ void layernorm_backward_kernel(float *dinp, float *gx, const float *dout,
                                                 const float *inp, const float *w, int C, float eps)
{
    __shared__ float red[32];
    const size_t r = blockIdx.x;
    const float *x = inp + r * C, *dy = dout + r * C;
    float mean, rstd, sg = 0.0f, sgx = 0.0f;
    cuda_row_stats(x, C, eps, red, &mean, &rstd);
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        const float xh = (x[c] - mean) * rstd, g = dy[c] * w[c];
        sg += g;
        sgx += g * xh;
    }
    sg = block_sum(sg, red) / (float)C;
    sgx = block_sum(sgx, red) / (float)C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        const float xh = (x[c] - mean) * rstd, d = dy[c];
        gx[r * C + c] = d * xh;
        dinp[r * C + c] = rstd * (d * w[c] - sg - xh * sgx);
    }
}

void cuda_layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                             const float *w, int M, int C, float eps, float *scratch,
                             cudaStream_t s)
{
    if (M < 1)
        return;
    float *gx = scratch, *col = scratch + (size_t)M * C;
    cuda_col_sum_add(db, dout, M, C, col, s); /* before dinp may overwrite dout */
    layernorm_backward_kernel<<<M, CUDA_ROW_THREADS, 0, s>>>(dinp, gx, dout, inp, w, C, eps);
    cuda_col_sum_add(dw, gx, M, C, col, s);
}
