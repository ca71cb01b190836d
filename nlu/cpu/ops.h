/* ops.h — the CPU operators of the BERT forward pass, one family per file in nlu/cpu/ (the
 * GPU twin of nlu/cpu/X.c is nlu/cuda/X.cu; the map opens nlu/cuda/ops.cuh).
 *
 * Every op is a free function op(out, inputs..., sizes) over flat FP32 arrays in row-major
 * order, with the shapes in comments (letters as in nlu/model/model.h; M is any row count, C any
 * row width). Each has a plain reference cpu_<op>_ref written as naive loops in double,
 * which tests/nlu/cpu/test_ops.c holds the fast version to. Ops never allocate, print or fail:
 * callers pass valid sizes and any scratch memory. The backward of each op,
 * cpu_<op>_backward in <op>_backward.c, and the ops only training needs are declared in
 * ops_backward.h.
 *
 * Threading: OpenBLAS threads the GEMMs with its own pool; the other ops use OpenMP with
 * cpu_threads() threads and never call BLAS inside a parallel region, so the two pools do
 * not oversubscribe the cores.
 */
#ifndef NLU_CPU_OPS_H
#define NLU_CPU_OPS_H

#include <stddef.h>

/* threads.c — the thread count of the OpenMP ops, shared by every calling thread (OpenMP's
 * own setting is per thread). 0 = one per core. Always 1 in a build without OpenMP. */
void cpu_set_threads(int n);
int cpu_threads(void);
/* The threads for an op of `work` units, `grain` being the work worth a thread of its own
 * when threads cost nothing to start (tens of microseconds on one core): between 1 and
 * cpu_threads(), and 1 unless the op is big enough to pay for its parallel region (see
 * threads.c: OpenMP's idle workers spin, taking cores from OpenBLAS's next GEMM). */
int cpu_threads_for(size_t work, size_t grain);

/* matmul.c — a fully connected layer in the nn.Linear layout (weight rows are outputs):
 * out (M, OC) = inp (M, IC) · w (OC, IC)^T + bias (OC). bias may be NULL. */
void cpu_matmul(float *out, const float *inp, const float *w, const float *bias, int M, int IC,
                int OC);
void cpu_matmul_ref(float *out, const float *inp, const float *w, const float *bias, int M, int IC,
                    int OC);
/* The OPENBLAS_CORETYPE value that would give this CPU faster GEMM kernels than the ones
 * OpenBLAS chose at load time (it falls back to SSE3 kernels on CPUs newer than itself), or
 * NULL when its choice is already right. Thread-safe. */
const char *cpu_blas_better_core(void);

/* layernorm.c — out (M, C) = (x - mean(x)) / sqrt(var(x) + eps) * w (C) + b (C) per row,
 * with x = inp (M, C), or x = inp + res (M, C) for the residual variant. out may be inp. */
void cpu_layernorm(float *out, const float *inp, const float *w, const float *b, int M, int C,
                   float eps);
void cpu_residual_layernorm(float *out, const float *inp, const float *res, const float *w,
                            const float *b, int M, int C, float eps);
/* res may be NULL here: one reference for both variants. */
void cpu_layernorm_ref(float *out, const float *inp, const float *res, const float *w,
                       const float *b, int M, int C, float eps);

/* gelu.c — out (n) = inp * Phi(inp), the exact (erf) GELU of BERT. out may be inp. */
void cpu_gelu(float *out, const float *inp, size_t n);
void cpu_gelu_ref(float *out, const float *inp, size_t n);

/* attention.c — multi-head self-attention over packed sequences. qkv (N, 3H) holds per token
 * the query, key and value rows, head h at columns h*D..h*D+D-1 of each; len (B) are the
 * sequence lengths, N = sum(len), H = NH * D. For each sequence and head:
 * out (T, D) = softmax(Q K^T / sqrt(D)) V over that sequence's T tokens only, written to
 * the head's columns of out (N, H). `threads` is the most threads the call may use (it uses
 * fewer for small batches); scratch holds cpu_attention_scratch(Tmax, D, threads) floats,
 * Tmax the longest sequence. */
size_t cpu_attention_scratch(int t_max, int D, int threads);
void cpu_attention(float *out, const float *qkv, const int *len, int B, int NH, int D,
                   float *scratch, int threads);
void cpu_attention_ref(float *out, const float *qkv, const int *len, int B, int NH, int D);

/* embedding.c — out (N, H) = LayerNorm(word (V, H)[ids] + pos (P, H)[position] + type (TT, H)[0])
 * with positions restarting at 0 in each sequence of len (B). ids (N) and len must be valid
 * (the caller checks them against V and P). */
void cpu_embedding(float *out, const int *ids, const int *len, int B, const float *word,
                   const float *pos, const float *type, const float *ln_w, const float *ln_b, int H,
                   float eps);
void cpu_embedding_ref(float *out, const int *ids, const int *len, int B, const float *word,
                       const float *pos, const float *type, const float *ln_w, const float *ln_b,
                       int H, float eps);

#endif
