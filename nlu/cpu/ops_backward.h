/* ops_backward.h — the CPU operators of training: the backward of each forward op in
 * nlu/cpu/ops.h, the training-only forward pieces (dropout, attention that keeps its
 * probabilities, the embedding sum LayerNorm reads), and softmax cross-entropy.
 *
 * Conventions as in ops.h: free functions over flat FP32 row-major arrays, shapes in the
 * comments (letters of nlu/model/model.h; M any row count, C any row width), no allocation, no
 * failure. Parameter gradients (dw, db, dword...) are ADDED to, because the caller
 * accumulates them over micro-batches; activation gradients (dinp) are overwritten unless
 * the op says otherwise. A plain reference cpu_<op>_ref (naive loops, double) stands beside
 * each op whose fast version differs from it; tests/nlu/cpu/test_ops_backward.c holds both to
 * finite differences.
 *
 * Determinism: no op depends on thread scheduling. Sums across rows are cut into fixed
 * chunks whose partial sums are added in chunk order, and dropout masks are a hash of
 * (key, element index), not a stream drawn in some thread's order. Only OpenBLAS's own
 * blocking (fixed for a given thread count) can change results between thread counts.
 */
#ifndef NLU_CPU_OPS_BACKWARD_H
#define NLU_CPU_OPS_BACKWARD_H

#include <stddef.h>
#include <stdint.h>

/* matmul_backward.c — the backward of cpu_matmul (out = inp · w^T + bias):
 * dinp (M, IC) = dout (M, OC) · w (OC, IC), added to dinp when accumulate is nonzero (a
 * residual branch meets another there); dw (OC, IC) += dout^T · inp (M, IC);
 * dbias (OC) += the column sums of dout. dinp and dbias may be NULL. */
void cpu_matmul_backward(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
                         const float *w, int M, int IC, int OC, int accumulate);
void cpu_matmul_backward_ref(float *dinp, float *dw, float *dbias, const float *dout,
                             const float *inp, const float *w, int M, int IC, int OC,
                             int accumulate);

/* layernorm_backward.c — the backward of out = LN(inp) · w + b over rows of inp (M, C)
 * (for the residual variant, inp is the sum x + res, which the caller keeps). Mean and
 * variance are recomputed from inp exactly as cpu_layernorm computes them.
 * dinp (M, C) = d out/d inp applied to dout (M, C), overwritten; dinp may be dout.
 * dw (C) += sum over rows of dout * xhat; db (C) += sum over rows of dout.
 * scratch holds cpu_layernorm_backward_scratch(M, C) floats. */
size_t cpu_layernorm_backward_scratch(int M, int C);
void cpu_layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                            const float *w, int M, int C, float eps, float *scratch);
void cpu_layernorm_backward_ref(float *dinp, float *dw, float *db, const float *dout,
                                const float *inp, const float *w, int M, int C, float eps);

/* gelu_backward.c — dinp (n) = dout (n) * gelu'(inp (n)) for the erf GELU,
 * gelu'(x) = Phi(x) + x phi(x). dinp may be dout. */
void cpu_gelu_backward(float *dinp, const float *inp, const float *dout, size_t n);
void cpu_gelu_backward_ref(float *dinp, const float *inp, const float *dout, size_t n);

/* dropout.c — inverted dropout with a counter-based mask: element i of the tensor named by
 * `key` is kept when cpu_dropout_bits(key, i) >= cpu_dropout_threshold(p), and a kept
 * element is scaled by 1 / (1 - p). The mask is a pure function of (key, i), so the
 * backward pass regenerates it instead of storing it, and no thread order enters it. */

/* The key of one tensor's mask: a hash of the step's seed and the tensor's number. */
uint64_t cpu_dropout_key(uint64_t seed, uint64_t tensor);

/* 32 random bits for element i: two rounds of the lowbias32 integer hash (Chris Wellons,
 * "Hash Prospector", 2018), key mixed in before each round. Inline so attention can draw
 * the mask of its probabilities inside its own loops, and host-and-device under nvcc so
 * the GPU trainer (nlu/cuda/dropout.cu, attention_backward.cu) draws the very same masks. */
#ifdef __CUDACC__
#define CPU_HOST_DEVICE __host__ __device__
#else
#define CPU_HOST_DEVICE
#endif
CPU_HOST_DEVICE static inline uint32_t cpu_dropout_mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}
CPU_HOST_DEVICE static inline uint32_t cpu_dropout_bits(uint64_t key, uint64_t i)
{
    uint32_t x = cpu_dropout_mix32((uint32_t)i ^ (uint32_t)key);
    return cpu_dropout_mix32(x ^ ((uint32_t)(i >> 32) + (uint32_t)(key >> 32)));
}
/* Elements whose bits are below this are dropped: round(p * 2^32), p in [0, 1). */
uint32_t cpu_dropout_threshold(float p);

/* out (n) = res (n) + mask(key, first + i) * inp (n) / (1 - p); res may be NULL (then
 * out = the dropped inp), out may be inp or res. p = 0 passes inp through unmasked. Being
 * linear with the same mask, the call on d out (res NULL) is also the backward. */
void cpu_dropout(float *out, const float *inp, const float *res, size_t n, float p, uint64_t key,
                 uint64_t first);

/* softmax_xent.c — softmax cross-entropy per row of logits (M, C) against labels (M),
 * where a label of -1 means the row is not scored:
 * loss (M) = -log softmax(logits)[label] (0 for unscored rows);
 * dlogits (M, C) = scale * (softmax(logits) - onehot(label)) (0 for unscored rows).
 * Labels must be -1 or in [0, C). */
void cpu_softmax_xent(float *dlogits, float *loss, const float *logits, const int *labels, int M,
                      int C, float scale);
void cpu_softmax_xent_ref(float *dlogits, float *loss, const float *logits, const int *labels,
                          int M, int C, float scale);

/* attention_backward.c — self-attention for training over packed sequences (see
 * cpu_attention in ops.h for the layout of qkv (N, 3H), out (N, H) and len (B)).
 * The training forward also keeps the softmax probabilities in probs, NH * sum(T^2) floats
 * (cpu_attention_probs_size): for each sequence in order, for each head, a (T, T) block
 * of rows = queries. Dropout with probability p (key as in dropout.c, the element index
 * being the offset into probs) applies to the probabilities before they weight V; probs
 * keeps them undropped. scratch holds cpu_attention_train_scratch(Tmax, D, threads)
 * floats, for the forward and for the backward. */
size_t cpu_attention_probs_size(const int *len, int B, int NH);
size_t cpu_attention_train_scratch(int t_max, int D, int threads);
void cpu_attention_train(float *out, float *probs, const float *qkv, const int *len, int B, int NH,
                         int D, float p, uint64_t key, float *scratch, int threads);
void cpu_attention_train_ref(float *out, const float *qkv, const int *len, int B, int NH, int D,
                             float p, uint64_t key);
/* dqkv (N, 3H) = the gradient of the forward above with respect to qkv, given dout (N, H)
 * and the forward's qkv and probs; overwritten. */
void cpu_attention_backward(float *dqkv, const float *dout, const float *qkv, const float *probs,
                            const int *len, int B, int NH, int D, float p, uint64_t key,
                            float *scratch, int threads);
/* The reference recomputes the probabilities in double. */
void cpu_attention_backward_ref(float *dqkv, const float *dout, const float *qkv, const int *len,
                                int B, int NH, int D, float p, uint64_t key);

/* embedding_backward.c — out (N, H) = word (V, H)[ids] + pos (P, H)[position] + type (TT, H)[0],
 * the sum cpu_embedding normalizes; training keeps it as the LayerNorm's input. */
void cpu_embedding_sum(float *out, const int *ids, const int *len, int B, const float *word,
                       const float *pos, const float *type, int H);
/* The backward of that sum: dword rows at ids, dpos rows at positions and dtype row 0 get
 * dsum (N, H) added. Only the rows the batch uses are touched (a vocabulary is big and the
 * caller accumulates). Tokens with id pad_id add nothing to dword, as torch's
 * nn.Embedding(padding_idx) and so Hugging Face BERT behave; pad_id -1 skips none. */
void cpu_embedding_backward(float *dword, float *dpos, float *dtype, const float *dsum,
                            const int *ids, const int *len, int B, int H, int pad_id);
void cpu_embedding_backward_ref(float *dword, float *dpos, float *dtype, const float *dsum,
                                const int *ids, const int *len, int B, int H, int pad_id);

#endif
