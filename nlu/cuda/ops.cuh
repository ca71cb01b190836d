/* ops.cuh — the CUDA kernels of the BERT forward pass, one launcher per op, each the GPU
 * twin of an op in nlu/cpu/ops.h (and checked against it by tests/nlu/cuda).
 *
 * Activations are padded: B sequences of T rows each, M = B * T rows, row b * T + t holding
 * token t of sequence b; len (B, on the device) gives each sequence's real length. Rows
 * past a sequence's length are computed like any other (their values are never used) except
 * by attention, which never looks at them as keys and writes zeros for them as queries.
 * Every launcher enqueues on `stream` and returns without waiting.
 *
 * nlu/cuda/ mirrors nlu/cpu/: the twin of nlu/cpu/X.c is nlu/cuda/X.cu, holding the
 * inference op (templates on the storage type, this header) and the training one (FP32,
 * train_ops.cuh) of that family where both exist:
 *   attention.c, _backward.c     attention.cu (fused), attention_gemm.cu, attention_flash.cu;
 *                                attention_backward.cu
 *   embedding.c, _backward.c     embedding.cu (with its LayerNorm); embedding_backward.cu
 *   layernorm.c, _backward.c     layernorm.cu (inference and training); layernorm_backward.cu
 *   gelu.c, _backward.c          gelu.cu (training; inference's bias + GELU is elementwise.cu's);
 *                                gelu_backward.cu
 *   matmul.c, _backward.c        matmul.cu (cuBLAS); matmul_backward.cu (the bias gradient's
 *                                column sums; training's GEMMs are train.cu's)
 *   dropout.c, softmax_xent.c    dropout.cu, softmax_xent.cu
 *   nlu/train/adamw.c            adamw.cu (with the gradient norm's partial sums)
 *   kernels.h                    kernels.cuh (launch shapes and device code the files share);
 *                                common.cuh (storage types, reductions, errors, context)
 *   ops.h, ops_backward.h        ops.cuh, train_ops.cuh
 *   threads.c                    no twin (the launch grid is the GPU's parallelism)
 * The GPU's own: elementwise.cu (bias + activation, conversion), pooler.cu (the pooler's
 * row gather and tanh backward, loops in bert_train.c), bert.cu (the model), train.cu and
 * train_batch.c (the trainer), context.cu, errors.cu, precision.c, cuda_none.c (no CUDA).
 */
#ifndef NLU_CUDA_OPS_CUH
#define NLU_CUDA_OPS_CUH

#include "nlu/cuda/common.cuh"

// embedding.cu — out (M, H) = LayerNorm(word[ids] + pos[t] + type[0]) with w, b (H)
template <typename S>
void cuda_embedding(S *out, const int *ids, int M, int T, const float *word, const float *pos,
                    const float *type, const float *w, const float *b, int H, float eps,
                    cudaStream_t stream);

// layernorm.cu — h (M, H) = LayerNorm(h + x + bias) with w, b (H); bias may be NULL
template <typename S>
void cuda_bias_residual_layernorm(S *h, const S *x, const float *bias, const float *w,
                                  const float *b, int M, int H, float eps, cudaStream_t stream);

/* h (M, H) = LayerNorm(h + bias + part[0] + ... + part[splits - 1]) with w, b (H), part
 * `splits` FP32 planes (M, H) (cuda_linear_split_k's partial products); H a multiple of
 * 16 / sizeof(S) and at most 1,024 times that, h and part 16-byte aligned. */
template <typename S>
void cuda_partials_residual_layernorm(S *h, const float *part, int splits, const float *bias,
                                      const float *w, const float *b, int M, int H, float eps,
                                      cudaStream_t stream);

// elementwise.cu — x (M, n) = gelu(x + bias (n)), GELU with erf
template <typename S>
void cuda_bias_gelu(S *x, const float *bias, int M, int n, cudaStream_t stream);

// x (M, n) = tanh(x + bias (n))
template <typename S>
void cuda_bias_tanh(S *x, const float *bias, int M, int n, cudaStream_t stream);

// x (M, n) += bias (n) (the heads' logits in float; the QKV rows before attention_gemm)
template <typename S>
void cuda_bias_add(S *x, const float *bias, int M, int n, cudaStream_t stream);

/* attention.cu — shared memory the attention kernel needs for sequences of T rows and heads of D;
 * the caller checks it against the device's limit (cuda_attention_prepare). */
template <typename S>
size_t cuda_attention_smem(int T, int D);
/* Lets the kernel use `bytes` of dynamic shared memory (once per device and type). */
template <typename S>
parley_status cuda_attention_prepare(size_t bytes);

// out (M, NH*D) = softmax(q k^T / sqrt(D), keys < len) v per sequence and head, with
// q, k, v = qkv (M, 3H) + qkv_bias (3H): query, key and value blocks of H = NH * D
template <typename S>
void cuda_attention(S *out, const S *qkv, const float *qkv_bias, const int *len, int B, int T,
                    int NH, int D, cudaStream_t stream);

/* The same attention as two batched cuBLAS GEMMs around a masked softmax (attention_gemm.cu),
 * faster on the H100 at every batch measured. qkv must already hold its bias. scores holds
 * B * NH * T * T floats, probs as many S, ptrs 6 * B * NH pointers, all scratch;
 * cuda_attention_pointers fills ptrs for out, qkv, scores and probs, once for any number of
 * cuda_attention_gemm calls on those buffers. */
template <typename S>
void cuda_attention_pointers(const void **ptrs, S *out, const S *qkv, float *scores, S *probs,
                             int B, int T, int NH, int D, cudaStream_t stream);
template <typename S>
parley_status cuda_attention_gemm(cublasHandle_t blas, const void **ptrs, float *scores, S *probs,
                                  const int *len, int B, int T, int NH, int D, cudaStream_t stream);

/* attention_flash.cu — the same attention in one kernel on mma.sync tensor cores, the scores
 * kept on chip, for FP16 and BF16 storage and heads of 16, 32, 64 or 128 on sm_80 and later;
 * cuda_attention_flash_supported says whether it runs here (false for FP32 storage, other
 * head sizes and builds for older architectures, where cuda_attention_flash does nothing).
 * qkv must already hold its bias. */
template <typename S>
bool cuda_attention_flash_supported(int D);
template <typename S>
void cuda_attention_flash(S *out, const S *qkv, const int *len, int B, int T, int NH, int D,
                          cudaStream_t stream);

// out (n) = (S) in (n): float parameters converted to the storage type
template <typename S>
void cuda_convert(S *out, const float *in, size_t n, cudaStream_t stream);

/* matmul.cu — y (M, OC) = x (M, IC) · w (OC, IC)^T in cuBLAS with FP32 accumulation; x rows ldx
 * apart (IC for a dense matrix). x and w of type S; y of type S or float (y_f32). FP32 storage uses
 * the pedantic FP32 compute type (no TF32). */
template <typename S>
parley_status cuda_linear(cublasHandle_t h, void *y, int y_f32, const S *x, int ldx, const S *w,
                          int M, int IC, int OC);

/* The same plus bias (OC) in one cuBLASLt call (its bias epilogue), bias of y's type, for
 * FP16 and BF16 storage; ws is ws_bytes of workspace the stream owns. PARLEY_ERR_UNSUPPORTED,
 * with nothing enqueued and no error message, for FP32 storage and where cuBLASLt offers no
 * algorithm (callers then take cuda_linear and cuda_bias_add). */
/* The same product with K cut into `splits` slices of IC / splits (a multiple of 8): y holds
 * `splits` FP32 planes (M, OC), plane s the product of slice s, for
 * cuda_partials_residual_layernorm to sum. One strided-batched cuBLAS call; it gives a
 * product of few rows more blocks than the GPU has multiprocessors, and leaves the sum to the
 * kernel that follows instead of a reduction kernel of its own. */
template <typename S>
parley_status cuda_linear_split_k(cublasHandle_t h, float *y, const S *x, int ldx, const S *w,
                                  int M, int IC, int OC, int splits);

template <typename S>
parley_status cuda_linear_bias(cublasLtHandle_t lt, void *ws, size_t ws_bytes, void *y, int y_f32,
                               const S *x, int ldx, const S *w, const void *bias, int M, int IC,
                               int OC, cudaStream_t stream);

#endif
