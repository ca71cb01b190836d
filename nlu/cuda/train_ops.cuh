/* train_ops.cuh — the CUDA kernels of training, one launcher per op, each the GPU twin of
 * an op of nlu/cpu/ops.h or ops_backward.h that bert_train.c composes (the GEMMs are cuBLAS
 * calls in train.cu; bias adds, the pooler's tanh and BF16 conversion are ops.cuh's). Each
 * group below names its file; the map of nlu/cuda/ against nlu/cpu/ opens ops.cuh.
 *
 * Unlike inference (ops.cuh), training works on packed rows as the CPU does: N tokens of B
 * sequences one after another, no padding, activations and gradients in FP32. Every
 * launcher enqueues on `stream` and returns without waiting. Sums across rows run in a
 * fixed order (per-chunk partial sums, then the chunks in order; segment sums for the
 * embedding tables) so that no result depends on scheduling.
 */
#ifndef NLU_CUDA_TRAIN_OPS_CUH
#define NLU_CUDA_TRAIN_OPS_CUH

#include <stdint.h>

#include "nlu/cuda/common.cuh"

/* matmul_backward.cu — rows per partial sum of cuda_col_sum_add: scratch for an (M, C) sum holds
 * cuda_col_sum_scratch(M, C) floats. */
enum { CUDA_COL_ROWS = 64 };
size_t cuda_col_sum_scratch(int M, int C);

// out (C) += the column sums of x (M, C)
void cuda_col_sum_add(float *out, const float *x, int M, int C, float *scratch, cudaStream_t s);

// embedding_backward.cu — out (N, H) = word[ids] + pos_emb[pos] + type[0] (pos (N): each
// token's position)
void cuda_embedding_sum(float *out, const int *ids, const int *pos, const float *word,
                        const float *pos_emb, const float *type, int N, int H, cudaStream_t s);

/* table rows seg_row[k] (H each) += the sum, in order, of rows[order[seg_start[k] ..
 * seg_start[k+1])] for k < n_seg: the embedding backward, with the tokens grouped by id
 * (or by position) on the host, so every table row is one thread block's and the order of
 * the terms is fixed. */
void cuda_segment_sum_add(float *table, const float *rows, const int *order, const int *seg_start,
                          const int *seg_row, int n_seg, int H, cudaStream_t s);

// layernorm.cu — out (M, C) = LayerNorm(inp) * w + b, per row
void cuda_layernorm(float *out, const float *inp, const float *w, const float *b, int M, int C,
                    float eps, cudaStream_t s);

/* layernorm_backward.cu — the backward of cuda_layernorm: dinp (M, C) overwritten (may be dout);
 * dw, db (C) added to. scratch holds M * C + cuda_col_sum_scratch(M, C) floats. */
void cuda_layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                             const float *w, int M, int C, float eps, float *scratch,
                             cudaStream_t s);

// gelu.cu, gelu_backward.cu — out (n) = gelu(inp) with erf; dinp (n) = dout * gelu'(inp)
// (dinp may be dout)
void cuda_gelu(float *out, const float *inp, size_t n, cudaStream_t s);
void cuda_gelu_backward(float *dinp, const float *inp, const float *dout, size_t n, cudaStream_t s);

// pooler.cu — d (n) *= 1 - y^2 where y is tanh's output (the forward is cuda_bias_tanh of
// ops.cuh)
void cuda_tanh_backward(float *d, const float *y, size_t n, cudaStream_t s);

/* dropout.cu — out (n) = res + mask(key, i) * inp / (1 - p), the mask as cpu_dropout's (res may be
 * NULL, out may alias inp or res); p = 0 copies or adds unmasked. */
void cuda_dropout(float *out, const float *inp, const float *res, size_t n, float p, uint64_t key,
                  cudaStream_t s);

// pooler.cu — dst (n, H) = src rows rows[0..n); scatter-add: dst rows rows[i] += src (n, H)
// row i instead
void cuda_gather_rows(float *dst, const float *src, const int *rows, int n, int H, cudaStream_t s);
void cuda_scatter_add_rows(float *dst, const float *src, const int *rows, int n, int H,
                           cudaStream_t s);

/* softmax_xent.cu — per row of logits (M, C) with label (M; -1 = not scored): loss (M) = -log
 * softmax[label] (0 unscored), dlogits = scale * (softmax - onehot) (0 unscored), both times
 * class_weight[label] when class_weight (C, on the device) is not NULL; best (M) = the argmax
 * (first on ties). */
void cuda_softmax_xent(float *dlogits, float *loss, int *best, const float *logits,
                       const int *labels, int M, int C, float scale, const float *class_weight,
                       cudaStream_t s);

/* attention_backward.cu — attention over packed sequences (see cpu_attention_train): seq (3B on the
 * device) holds each sequence's first token, length, and the offset of its probabilities block (NH
 * blocks of T x T, heads in order); probs keeps the undropped softmax, dropout p on the
 * probabilities with key, element index = offset into probs. */
void cuda_attention_train(float *out, float *probs, const float *qkv, const int *seq, int B, int NH,
                          int D, float p, uint64_t key, cudaStream_t s);
/* dqkv (N, 3H) overwritten; ds is scratch of probs' size. */
void cuda_attention_backward(float *dqkv, float *ds, const float *dout, const float *qkv,
                             const float *probs, const int *seq, int B, int NH, int D, float p,
                             uint64_t key, cudaStream_t s);

/* adamw.cu — the sum of squares of g (n) as CUDA_NORM_BLOCKS partial sums in part, each over a
 * fixed stride of elements. */
enum { CUDA_NORM_BLOCKS = 1024 };
void cuda_sumsq_partials(float *part, const float *g, size_t n, cudaStream_t s);

/* Clip + AdamW over n parameters, the arithmetic of adamw.c with g scaled by gscale first;
 * p16 (may be NULL) receives the updated weights in BF16. */
typedef struct cuda_adamw_coef {
    float gscale, b1, b2, one_minus_b1, one_minus_b2, decay, step_size, bc2_sqrt, eps;
} cuda_adamw_coef;
void cuda_adamw(float *p, __nv_bfloat16 *p16, const float *g, float *m, float *v,
                const unsigned char *decay, size_t n, cuda_adamw_coef k, cudaStream_t s);

/* sparse.cu — one kind of a batch's sparse rows on the device (train_batch.h): rows as
 * start (rows + 1), index and value (per entry); the entries grouped by feature (groups of
 * them: group k is entries order[group_start[k] .. group_start[k + 1]) of feature
 * feature[k]), and each entry's row. */
typedef struct cuda_sparse_rows {
    int rows, groups;
    const int *start, *index, *order, *group_start, *feature, *entry_row;
    const float *value;
} cuda_sparse_rows;
// out (rows, n_out) += W (n_out, n_feat) · x per row, as sf_rows_gemv
void cuda_sparse_logits(float *out, int n_out, const float *W, int n_feat,
                        const cuda_sparse_rows *x, cudaStream_t s);
// dW (n_out, n_feat) += d (rows, n_out) outer x, as sf_rows_outer over the rows in order
void cuda_sparse_outer(float *dW, int n_out, int n_feat, const float *d, const cuda_sparse_rows *x,
                       cudaStream_t s);
/* SGD with momentum BERT_SPARSE_MOMENTUM over n weights, g scaled by gscale (the clip)
 * first: v = momentum v + g gscale; w -= lr v. */
void cuda_sparse_sgd(float *w, const float *g, float *v, size_t n, float gscale, float lr,
                     cudaStream_t s);

#endif
