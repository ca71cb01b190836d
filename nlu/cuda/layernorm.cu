/* layernorm.cu — LayerNorm over rows: for inference, the fused kernels of embeddings +
 * LayerNorm and of bias + residual + LayerNorm after each sublayer of an encoder layer
 * (templates on the storage type); for training, plain LayerNorm over FP32 rows
 * (cuda_layernorm, train_ops.cuh).
 *
 * One block per row. The inference kernels keep the row, summed in float, in shared memory;
 * mean and variance take two passes over it (as the CPU reference does), then it is
 * normalized and written in the storage type. The training kernel takes the same two passes
 * over its row in global memory (cuda_row_stats). Not here: the backward
 * (layernorm_backward.cu), the plain LayerNorm-free ops (elementwise.cu).
 */
#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/ops.cuh"
#include "nlu/cuda/train_ops.cuh"

enum { LN_THREADS = 256 };

// normalizes x (H, shared) into out with w, b; every thread of the block takes part
template <typename S>
__device__ void normalize_row(S *out, const float *x, const float *w, const float *b, int H,
                              float eps, float *red)
{
    float s = 0.0f;
    for (int i = threadIdx.x; i < H; i += blockDim.x)
        s += x[i];
    const float mean = block_sum(s, red) / H;
    float v = 0.0f;
    for (int i = threadIdx.x; i < H; i += blockDim.x) {
        float d = x[i] - mean;
        v += d * d;
    }
    const float rstd = rsqrtf(block_sum(v, red) / H + eps);
    for (int i = threadIdx.x; i < H; i += blockDim.x)
        out[i] = from_f<S>((x[i] - mean) * rstd * w[i] + b[i]);
}

template <typename S>
__global__ void embedding_kernel(S *out, const int *ids, int T, const float *word, const float *pos,
                                 const float *type, const float *w, const float *b, int H,
                                 float eps)
{
    extern __shared__ float row[];
    __shared__ float red[32];
    const size_t r = blockIdx.x;
    const int t = (int)(r % T), id = ids[r];
    for (int i = threadIdx.x; i < H; i += blockDim.x)
        row[i] = word[(size_t)id * H + i] + pos[(size_t)t * H + i] + type[i];
    __syncthreads();
    normalize_row(out + r * H, row, w, b, H, eps, red);
}

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
    normalize_row(h + r * H, row, w, b, H, eps, red);
}

template <typename S>
void cuda_embedding(S *out, const int *ids, int M, int T, const float *word, const float *pos,
                    const float *type, const float *w, const float *b, int H, float eps,
                    cudaStream_t stream)
{
    embedding_kernel<S><<<M, LN_THREADS, H * sizeof(float), stream>>>(out, ids, T, word, pos, type,
                                                                      w, b, H, eps);
}

template <typename S>
void cuda_bias_residual_layernorm(S *h, const S *x, const float *bias, const float *w,
                                  const float *b, int M, int H, float eps, cudaStream_t stream)
{
    bias_residual_layernorm_kernel<S>
            <<<M, LN_THREADS, H * sizeof(float), stream>>>(h, x, bias, w, b, H, eps);
}

#define INSTANTIATE(S)                                                                          \
    template void cuda_embedding<S>(S *, const int *, int, int, const float *, const float *,   \
                                    const float *, const float *, const float *, int, float,    \
                                    cudaStream_t);                                              \
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
