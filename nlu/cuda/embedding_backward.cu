/* embedding_backward.cu — the embedding sum that training keeps as the LayerNorm's input, and
 * its backward: segment sums of the sum's gradient into the word, position and token type
 * tables. The GPU twin of nlu/cpu/embedding_backward.c.
 *
 * One block per token (the sum) or per table row (the backward). The host groups the tokens
 * by table row (train_batch.c), so each row is summed by one block, in token order, without
 * atomics. The LayerNorm that follows the sum is layernorm.cu's.
 */
#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/train_ops.cuh"

static __global__ void embedding_sum_kernel(float *out, const int *ids, const int *pos,
                                            const float *word, const float *pos_emb,
                                            const float *type, int H)
{
    const size_t t = blockIdx.x;
    const float *w = word + (size_t)ids[t] * H, *p = pos_emb + (size_t)pos[t] * H;
    for (int c = threadIdx.x; c < H; c += blockDim.x)
        out[t * H + c] = w[c] + p[c] + type[c];
}

void cuda_embedding_sum(float *out, const int *ids, const int *pos, const float *word,
                        const float *pos_emb, const float *type, int N, int H, cudaStream_t s)
{
    if (N > 0)
        embedding_sum_kernel<<<N, CUDA_ROW_THREADS, 0, s>>>(out, ids, pos, word, pos_emb, type, H);
}

static __global__ void segment_sum_kernel(float *table, const float *rows, const int *order,
                                          const int *seg_start, const int *seg_row, int H)
{
    const int k = blockIdx.x, a = seg_start[k], b = seg_start[k + 1];
    float *dst = table + (size_t)seg_row[k] * H;
    for (int c = threadIdx.x; c < H; c += blockDim.x) {
        float acc = 0.0f;
        for (int i = a; i < b; i++)
            acc += rows[(size_t)order[i] * H + c];
        dst[c] += acc;
    }
}

void cuda_segment_sum_add(float *table, const float *rows, const int *order, const int *seg_start,
                          const int *seg_row, int n_seg, int H, cudaStream_t s)
{
    if (n_seg > 0)
        segment_sum_kernel<<<n_seg, CUDA_ROW_THREADS, 0, s>>>(table, rows, order, seg_start,
                                                              seg_row, H);
}
