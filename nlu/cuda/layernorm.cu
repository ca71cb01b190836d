/* layernorm.cu — LayerNorm over rows: for inference, bias + residual + LayerNorm after each
 * sublayer of an encoder layer (a template on the storage type); for training, plain
 * LayerNorm over FP32 rows (cuda_layernorm, train_ops.cuh).
 *
 * One block per row. The inference kernel keeps the row, summed in float, in shared memory;
 * mean and variance take two passes over it (as the CPU reference does), then it is
 * normalized and written in the storage type (cuda_normalize_row). The training kernel takes
 * the same two passes over its row in global memory (cuda_row_stats). Not here: the
 * embeddings' LayerNorm of inference (embedding.cu), the backward (layernorm_backward.cu),
 * the plain LayerNorm-free ops (elementwise.cu).
 */
#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/ops.cuh"
#include "nlu/cuda/train_ops.cuh"

template <typename S>
__global__ void bias_residual_layernorm_kernel(S *h, const S *x, const float *bias, const float *w,
                                               const float *b, int H, float eps)
{
    extern __shared__ float row[];
    __shared__ float red[32];
    const size_t r = blockIdx.x;
    for (int i = threadIdx.x; i < H; i += blockDim.x)
        row[i] = to_f(h[r * H + i]) + to_f(x[r * H + i]) + (bias ? bias[i] : 0.0f);
    __syncthreads();
    cuda_normalize_row(h + r * H, row, w, b, H, eps, red);
}

template <typename S>
void cuda_bias_residual_layernorm(S *h, const S *x, const float *bias, const float *w,
                                  const float *b, int M, int H, float eps, cudaStream_t stream)
{
    bias_residual_layernorm_kernel<S>
            <<<M, CUDA_ROW_THREADS, H * sizeof(float), stream>>>(h, x, bias, w, b, H, eps);
}

#define INSTANTIATE(S)                                                                          \
    template void cuda_bias_residual_layernorm<S>(S *, const S *, const float *, const float *, \
                                                  const float *, int, int, float, cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)

/* ---- training: FP32 rows ------------------------------------------------------------ */

static __global__ void layernorm_kernel(float *out, const float *inp, const float *w,
                                        const float *b, int C, float eps)
{
    __shared__ float red[32];
    const size_t r = blockIdx.x;
    const float *x = inp + r * C;
    float mean, rstd;
    cuda_row_stats(x, C, eps, red, &mean, &rstd);
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        out[r * C + c] = (x[c] - mean) * rstd * w[c] + b[c];
}

void cuda_layernorm(float *out, const float *inp, const float *w, const float *b, int M, int C,
                    float eps, cudaStream_t s)
{
    if (M > 0)
        layernorm_kernel<<<M, CUDA_ROW_THREADS, 0, s>>>(out, inp, w, b, C, eps);
}
