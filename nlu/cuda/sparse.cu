/* sparse.cu — the sparse features in GPU training: their logits added to the encoder's, the
 * gradients of their weights, and the SGD-with-momentum step they learn by. Twins of
 * sf_rows_gemv and sf_rows_outer (nlu/sparse/sparse_rows.c, as nlu/bert_sparse.c applies
 * them) and of the sparse part of train_sparse_update (nlu/train/sparse_train.c).
 *
 * A map W (n_out, n_feat) is read and written a column at a time: a feature's weights are
 * n_feat apart. Logits get one block per row, its threads over the outputs, entries added in
 * the row's order. Gradients get one block per feature that the batch holds (entries
 * grouped by feature on the host, train_batch.h), each thread summing one weight's entries
 * in row order: the CPU's order, without atomics.
 */
#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/train_ops.cuh"

extern "C" {
#include "nlu/bert_step.h"
}

enum { SPARSE_THREADS = 128 };

static __global__ void sparse_logits_kernel(float *out, int n_out, const float *W, int n_feat,
                                            const int *start, const int *index, const float *value)
{
    const int r = blockIdx.x;
    for (int o = threadIdx.x; o < n_out; o += blockDim.x) {
        float acc = out[(size_t)r * n_out + o];
        for (int k = start[r]; k < start[r + 1]; k++)
            acc += W[(size_t)o * n_feat + index[k]] * value[k];
        out[(size_t)r * n_out + o] = acc;
    }
}

void cuda_sparse_logits(float *out, int n_out, const float *W, int n_feat,
                        const cuda_sparse_rows *x, cudaStream_t s)
{
    if (x->rows && n_out)
        sparse_logits_kernel<<<x->rows, SPARSE_THREADS, 0, s>>>(out, n_out, W, n_feat, x->start,
                                                                x->index, x->value);
}

static __global__ void sparse_outer_kernel(float *dW, int n_out, int n_feat, const float *d,
                                           const int *order, const int *group_start,
                                           const int *feature, const int *entry_row,
                                           const float *value)
{
    const int gi = blockIdx.x;
    const size_t f = (size_t)feature[gi];
    for (int o = threadIdx.x; o < n_out; o += blockDim.x) {
        float acc = dW[(size_t)o * n_feat + f];
        for (int j = group_start[gi]; j < group_start[gi + 1]; j++) {
            const int e = order[j];
            acc += d[(size_t)entry_row[e] * n_out + o] * value[e];
        }
        dW[(size_t)o * n_feat + f] = acc;
    }
}

void cuda_sparse_outer(float *dW, int n_out, int n_feat, const float *d, const cuda_sparse_rows *x,
                       cudaStream_t s)
{
    if (x->groups && n_out)
        sparse_outer_kernel<<<x->groups, SPARSE_THREADS, 0, s>>>(
                dW, n_out, n_feat, d, x->order, x->group_start, x->feature, x->entry_row, x->value);
}

static __global__ void sgd_kernel(float *w, const float *g, float *v, size_t n, float gscale,
                                  float lr)
{
    CUDA_GRID_STRIDE (i, n) {
        const float vi = BERT_SPARSE_MOMENTUM * v[i] + g[i] * gscale;
        v[i] = vi;
        w[i] -= lr * vi;
    }
}

void cuda_sparse_sgd(float *w, const float *g, float *v, size_t n, float gscale, float lr,
                     cudaStream_t s)
{
    if (n)
        sgd_kernel<<<cuda_ew_blocks(n), CUDA_EW_THREADS, 0, s>>>(w, g, v, n, gscale, lr);
}
