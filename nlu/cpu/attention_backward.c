/* attention_backward.c — self-attention for training: a forward that keeps its softmax
 * probabilities and applies dropout to them, and the backward into q, k and v.
 *
 * Work is split as in attention.c: one (sequence, head) pair per work item, real tokens
 * only, plain C loops shaped for auto-vectorization, no BLAS inside the parallel region.
 * Every product is written as row updates (y += a * row) along contiguous memory; the one
 * product that would otherwise be a dot product per element (dP = dO V^T, like S = Q K^T
 * in the forward) first transposes V into scratch. Each item writes only its own head's
 * columns, so items never share an output and the result does not depend on scheduling.
 *
 * Math of one item, T tokens, scale = 1/sqrt(D), M the dropout mask scaled by 1/(1-p):
 *   forward   S = scale Q K^T, P = softmax(S) (kept), O = (P * M) V
 *   backward  dV = (P * M)^T dO, dP = (dO V^T) * M, dS = P * (dP - rowsum(dP * P)),
 *             dQ = scale dS K, dK = scale dS^T Q
 * The inference forward (attention.c) needs neither the probabilities nor dropout and
 * stays separate.
 */
#include <math.h>

#include "nlu/cpu/ops.h"
#include "nlu/cpu/ops_backward.h"
#include "nlu/cpu/kernels.h"

size_t cpu_attention_probs_size(const int *len, int B, int NH)
{
    size_t n = 0;
    for (int b = 0; b < B; b++)
        n += (size_t)len[b] * (size_t)len[b];
    return n * (size_t)NH;
}

size_t cpu_attention_train_scratch(int t_max, int D, int threads)
{
    // per thread: a transposed K or V (D, Tmax), two rows (Tmax), an accumulator (D)
    return (size_t)threads * ((size_t)D * t_max + 2 * (size_t)t_max + (size_t)D);
}

/* Where item (sequence b, head h) starts: its first token and its (T, T) block of probs. */
static void item_offsets(const int *len, int NH, int b, int h, size_t *token, size_t *prob)
{
    size_t t = 0, p = 0;
    for (int i = 0; i < b; i++) {
        t += (size_t)len[i];
        p += (size_t)len[i] * (size_t)len[i];
    }
    *token = t;
    *prob = p * (size_t)NH + (size_t)h * len[b] * len[b];
}

// mk (T) = the mask times 1/(1-p) of the probabilities at offsets first .. first+T-1
CPU_SIMD static void mask_row(float *mk, int T, uint64_t key, uint64_t first, uint32_t threshold,
                              float keep)
{
    for (int j = 0; j < T; j++)
        mk[j] = cpu_dropout_bits(key, first + (uint64_t)j) >= threshold ? keep : 0.0f;
}

// dst (D, T) = src (T, D) rows with stride ld
static void transpose(float *dst, const float *src, int T, int D, size_t ld)
{
    for (int j = 0; j < T; j++)
        for (int d = 0; d < D; d++)
            dst[(size_t)d * T + j] = src[j * ld + d];
}

// out (T, H) head h columns, P (T, T) <- qkv (T, 3H) of one sequence
CPU_SIMD static void train_head(float *out, float *P, const float *qkv, int T, int H, int D,
                                int h, float p, uint64_t key, uint64_t first, float *work)
{
    const size_t H3 = 3 * (size_t)H;
    const float *q = qkv + (size_t)h * D, *k = q + H, *v = k + H;
    float *kt = work, *pm = kt + (size_t)D * T, *acc = pm + 2 * (size_t)T;
    const float scale = 1.0f / sqrtf((float)D), keep = 1.0f / (1.0f - p);
    const uint32_t threshold = cpu_dropout_threshold(p);
    transpose(kt, k, T, D, H3);
    for (int i = 0; i < T; i++) {
        float *s = P + (size_t)i * T;
        for (int j = 0; j < T; j++)
            s[j] = 0.0f;
        for (int d = 0; d < D; d++) {
            const float a = q[i * H3 + d] * scale, *kd = kt + (size_t)d * T;
            for (int j = 0; j < T; j++)
                s[j] += a * kd[j];
        }
        const float m = cpu_lanes_max(s, T);
        for (int j = 0; j < T; j++)
            s[j] = cpu_expf(s[j] - m);
        const float inv = 1.0f / cpu_lanes_sum(s, T, 0.0f, 0);
        for (int j = 0; j < T; j++)
            s[j] *= inv;
        const float *w = s;
        if (p > 0.0f) {
            mask_row(pm, T, key, first + (uint64_t)i * T, threshold, keep);
            for (int j = 0; j < T; j++)
                pm[j] *= s[j];
            w = pm;
        }
        for (int d = 0; d < D; d++)
            acc[d] = 0.0f;
        for (int j = 0; j < T; j++) {
            const float a = w[j], *vj = v + j * H3;
            for (int d = 0; d < D; d++)
                acc[d] += a * vj[d];
        }
        for (int d = 0; d < D; d++)
            out[(size_t)i * H + (size_t)h * D + d] = acc[d];
    }
}

void cpu_attention_train(float *out, float *probs, const float *qkv, const int *len, int B,
                         int NH, int D, float p, uint64_t key, float *scratch, int threads)
{
    const int H = NH * D;
    int t_max = 0;
    for (int b = 0; b < B; b++)
        t_max = len[b] > t_max ? len[b] : t_max;
    const size_t per_thread = cpu_attention_train_scratch(t_max, D, 1);
    const int items = B * NH;
    threads = items < threads ? items : threads;
    CPU_PARALLEL_FOR_DYNAMIC(threads)
    for (int it = 0; it < items; it++) {
        size_t tok, prob;
        item_offsets(len, NH, it / NH, it % NH, &tok, &prob);
        train_head(out + tok * H, probs + prob, qkv + tok * 3 * H, len[it / NH], H, D, it % NH,
                   p, key, prob, scratch + (size_t)cpu_thread_id() * per_thread);
    }
}

// dqkv (T, 3H) head h columns <- dout (T, H), qkv (T, 3H), P (T, T) of one sequence
CPU_SIMD static void backward_head(float *dqkv, const float *dout, const float *qkv,
                                   const float *P, int T, int H, int D, int h, float p,
                                   uint64_t key, uint64_t first, float *work)
{
    const size_t H3 = 3 * (size_t)H;
    const float *q = qkv + (size_t)h * D, *k = q + H, *v = k + H;
    float *dq = dqkv + (size_t)h * D, *dk = dq + H, *dv = dk + H;
    float *vt = work, *dp = vt + (size_t)D * T, *pm = dp + T, *acc = pm + T;
    const float scale = 1.0f / sqrtf((float)D), keep = 1.0f / (1.0f - p);
    const uint32_t threshold = cpu_dropout_threshold(p);
    transpose(vt, v, T, D, H3);
    for (int j = 0; j < T; j++)
        for (int d = 0; d < D; d++)
            dk[j * H3 + d] = dv[j * H3 + d] = 0.0f;
    for (int i = 0; i < T; i++) {
        const float *pi = P + (size_t)i * T, *doi = dout + (size_t)i * H + (size_t)h * D;
        // dp (T) = dO[i] V^T
        for (int j = 0; j < T; j++)
            dp[j] = 0.0f;
        for (int d = 0; d < D; d++) {
            const float a = doi[d], *vd = vt + (size_t)d * T;
            for (int j = 0; j < T; j++)
                dp[j] += a * vd[j];
        }
        // the dropped probabilities weighted V: their mask gates dp too
        const float *w = pi;
        if (p > 0.0f) {
            mask_row(pm, T, key, first + (uint64_t)i * T, threshold, keep);
            for (int j = 0; j < T; j++) {
                dp[j] *= pm[j];
                pm[j] *= pi[j];
            }
            w = pm;
        }
        // dV[j] += w[j] dO[i]
        for (int j = 0; j < T; j++) {
            const float a = w[j];
            float *dvj = dv + j * H3;
            for (int d = 0; d < D; d++)
                dvj[d] += a * doi[d];
        }
        // dS[i] = P[i] * (dp - dp . P[i]), with the scale of S folded in
        float lane[CPU_LANES] = { 0 };
        int j = 0;
        for (; j + CPU_LANES <= T; j += CPU_LANES)
            for (int l = 0; l < CPU_LANES; l++)
                lane[l] += dp[j + l] * pi[j + l];
        for (; j < T; j++)
            lane[0] += dp[j] * pi[j];
        float dot = 0.0f;
        for (int l = 0; l < CPU_LANES; l++)
            dot += lane[l];
        for (j = 0; j < T; j++)
            dp[j] = pi[j] * (dp[j] - dot) * scale;
        // dQ[i] = dS[i] K; dK[j] += dS[i][j] Q[i]
        const float *qi = q + i * H3;
        for (int d = 0; d < D; d++)
            acc[d] = 0.0f;
        for (j = 0; j < T; j++) {
            const float a = dp[j], *kj = k + j * H3;
            float *dkj = dk + j * H3;
            for (int d = 0; d < D; d++) {
                acc[d] += a * kj[d];
                dkj[d] += a * qi[d];
            }
        }
        for (int d = 0; d < D; d++)
            dq[i * H3 + d] = acc[d];
    }
}

void cpu_attention_backward(float *dqkv, const float *dout, const float *qkv,
                            const float *probs, const int *len, int B, int NH, int D, float p,
                            uint64_t key, float *scratch, int threads)
{
    const int H = NH * D;
    int t_max = 0;
    for (int b = 0; b < B; b++)
        t_max = len[b] > t_max ? len[b] : t_max;
    const size_t per_thread = cpu_attention_train_scratch(t_max, D, 1);
    const int items = B * NH;
    threads = items < threads ? items : threads;
    CPU_PARALLEL_FOR_DYNAMIC(threads)
    for (int it = 0; it < items; it++) {
        size_t tok, prob;
        item_offsets(len, NH, it / NH, it % NH, &tok, &prob);
        backward_head(dqkv + tok * 3 * H, dout + tok * H, qkv + tok * 3 * H, probs + prob,
                      len[it / NH], H, D, it % NH, p, key, prob,
                      scratch + (size_t)cpu_thread_id() * per_thread);
    }
}

/* The references: for each item, the probabilities in double, then the formulas above
 * with the mask drawn by the same hash. */

// P (T, T) = softmax(scale Q K^T) of one item, in double
static void ref_probs(double *P, const float *qkv, int T, int H, int D, int h)
{
    const size_t H3 = 3 * (size_t)H;
    for (int i = 0; i < T; i++) {
        double m = -INFINITY, sum = 0;
        for (int j = 0; j < T; j++) {
            double dot = 0;
            for (int d = 0; d < D; d++)
                dot += (double)qkv[i * H3 + h * D + d] * qkv[j * H3 + H + h * D + d];
            P[i * T + j] = dot / sqrt((double)D);
            m = P[i * T + j] > m ? P[i * T + j] : m;
        }
        for (int j = 0; j < T; j++)
            sum += P[i * T + j] = exp(P[i * T + j] - m);
        for (int j = 0; j < T; j++)
            P[i * T + j] /= sum;
    }
}

// the mask times 1/(1-p) of the probability at offset i, in double
static double ref_mask(uint64_t key, uint64_t i, float p)
{
    if (p <= 0.0f)
        return 1.0;
    return cpu_dropout_bits(key, i) >= cpu_dropout_threshold(p) ? 1.0 / (1.0 - p) : 0.0;
}

void cpu_attention_train_ref(float *out, const float *qkv, const int *len, int B, int NH,
                             int D, float p, uint64_t key)
{
    const size_t H = (size_t)NH * D, H3 = 3 * H;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++) {
            const int T = len[b];
            size_t tok, prob;
            item_offsets(len, NH, b, h, &tok, &prob);
            double P[T * T];
            ref_probs(P, qkv + tok * H3, T, (int)H, D, h);
            for (int i = 0; i < T; i++)
                for (int d = 0; d < D; d++) {
                    double o = 0;
                    for (int j = 0; j < T; j++)
                        o += P[i * T + j] * ref_mask(key, prob + (size_t)i * T + j, p) *
                             qkv[(tok + j) * H3 + 2 * H + h * D + d];
                    out[(tok + i) * H + h * D + d] = (float)o;
                }
        }
}

void cpu_attention_backward_ref(float *dqkv, const float *dout, const float *qkv,
                                const int *len, int B, int NH, int D, float p, uint64_t key)
{
    const size_t H = (size_t)NH * D, H3 = 3 * H;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++) {
            const int T = len[b];
            size_t tok, prob;
            item_offsets(len, NH, b, h, &tok, &prob);
            const float *x = qkv + tok * H3, *dO = dout + tok * H;
            double P[T * T], M[T * T], dS[T * T];
            ref_probs(P, x, T, (int)H, D, h);
            for (int i = 0; i < T * T; i++)
                M[i] = ref_mask(key, prob + (size_t)i, p);
            for (int i = 0; i < T; i++) {
                double dP[T], dot = 0;
                for (int j = 0; j < T; j++) {
                    double s = 0;
                    for (int d = 0; d < D; d++)
                        s += (double)dO[i * H + h * D + d] * x[j * H3 + 2 * H + h * D + d];
                    dP[j] = s * M[i * T + j];
                    dot += dP[j] * P[i * T + j];
                }
                for (int j = 0; j < T; j++)
                    dS[i * T + j] = P[i * T + j] * (dP[j] - dot) / sqrt((double)D);
            }
            float *g = dqkv + tok * H3;
            for (int i = 0; i < T; i++)
                for (int d = 0; d < D; d++) {
                    double gq = 0, gk = 0, gv = 0;
                    for (int j = 0; j < T; j++) {
                        gq += dS[i * T + j] * x[j * H3 + H + h * D + d];
                        gk += dS[j * T + i] * x[j * H3 + h * D + d];
                        gv += P[j * T + i] * M[j * T + i] * dO[j * H + h * D + d];
                    }
                    g[i * H3 + h * D + d] = (float)gq;
                    g[i * H3 + H + h * D + d] = (float)gk;
                    g[i * H3 + 2 * H + h * D + d] = (float)gv;
                }
        }
}
