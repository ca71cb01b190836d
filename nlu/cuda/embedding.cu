/* embedding.cu — BERT's input embeddings for inference: word + position + token type 0, then
 * LayerNorm, in one kernel, as cpu_embedding (nlu/cpu/embedding.c) computes them on packed
 * rows.
 *
 * Rows are padded (ops.cuh), so a row's position is its index in its sequence, r % T. One
 * block per row sums the three embeddings in float into shared memory, then normalizes the
 * row (cuda_normalize_row) and writes it in the storage type. Not here: training's embedding
 * sum, kept for the backward (embedding_backward.cu).
 */
#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/ops.cuh"

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
    cuda_normalize_row(out + r * H, row, w, b, H, eps, red);
}

template <typename S>
void cuda_embedding(S *out, const int *ids, int M, int T, const float *word, const float *pos,
                    const float *type, const float *w, const float *b, int H, float eps,
                    cudaStream_t stream)
{
    embedding_kernel<S><<<M, CUDA_ROW_THREADS, H * sizeof(float), stream>>>(out, ids, T, word, pos,
                                                                            type, w, b, H, eps);
}

#define INSTANTIATE(S)                                                                        \
    template void cuda_embedding<S>(S *, const int *, int, int, const float *, const float *, \
                                    const float *, const float *, const float *, int, float,  \
                                    cudaStream_t);
INSTANTIATE(float)
INSTANTIATE(__half)
INSTANTIATE(__nv_bfloat16)
