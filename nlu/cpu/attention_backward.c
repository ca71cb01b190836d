/* attention_backward.c — self-attention for training: a forward that keeps its softmax
 * probabilities and applies dropout to them, and the backward into q, k and v.
 *
 * Work is split as in attention.c: one (sequence, head) pair per work item, real tokens
 * only, no BLAS inside the parallel region, and the products run on register tiles of QB
 * rows by CPU_TW columns (GCC vector extensions): fixed-size loops the compiler unrolls and
 * keeps in vector registers, each loaded element of the right operand used QB times.
 * Operands are first copied into zero-padded scratch (columns to a multiple of CPU_TW, rows to
 * a multiple of QB), so tiles never run past the data. Each item writes only its own head's
 * columns, so items never share an output and the result does not depend on scheduling.
 *
 * Math of one item, T tokens, scale = 1/sqrt(D), M the dropout mask scaled by 1/(1-p):
 *   forward   S = scale Q K^T, P = softmax(S) (kept), O = (P * M) V
 *   backward  dP = (dO V^T) * M, dS = scale P * (dP - rowsum(dP * P)),
 *             dQ = dS K, dK = dS^T Q, dV = (P * M)^T dO
 * The inference forward (attention.c) needs neither the probabilities nor dropout and
 * stays separate.
 */
#include <math.h>
#include <string.h>

#include "nlu/cpu/ops.h"
#include "nlu/cpu/ops_backward.h"
#include "nlu/cpu/kernels.h"

/* Rows per register tile (kernels.h: the tiles' columns). */
enum { QB = 4 };

size_t cpu_attention_probs_size(const int *len, int B, int NH)
{
    size_t n = 0;
    for (int b = 0; b < B; b++)
        n += (size_t)len[b] * (size_t)len[b];
    return n * (size_t)NH;
}

size_t cpu_attention_train_scratch(int t_max, int D, int threads)
{
    const size_t t = (size_t)t_max, tp = (size_t)cpu_round_up(t_max, CPU_TW);
    const size_t tq = (size_t)cpu_round_up(t_max, QB), dp = (size_t)cpu_round_up(D, CPU_TW);
    // per thread, the backward's (the forward needs less): vt (D, tp), kp and qp (T, dp),
    // dop (tq, dp), ds (tq, tp), wb (T, tp), a tile (QB, dp)
    return (size_t)threads * ((size_t)D * tp + 2 * t * dp + tq * dp + tq * tp + t * tp + QB * dp);
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

// c (QB, n) = a (QB, K) b (K, n), element (r, k) of a at a[r * ar + k * ak] (ak = 1 for a
// row-major a, ar = 1 to multiply by the transpose of a (K, QB)); rows of b and c ldb, ldc
// apart; n a multiple of CPU_TW. Forced inline, so each constant stride gets its own loop.
CPU_INLINE void tile_mm(float *c, int ldc, const float *a, size_t ar, size_t ak, const float *b,
                        int ldb, int K, int n)
{
    for (int j0 = 0; j0 < n; j0 += CPU_TW) {
        cpu_vtile acc[QB] = { 0 };
        for (int k = 0; k < K; k++) {
            cpu_vtile bk;
            memcpy(&bk, b + (size_t)k * ldb + j0, sizeof bk);
            for (int r = 0; r < QB; r++)
                acc[r] += a[r * ar + k * ak] * bk;
        }
        for (int r = 0; r < QB; r++)
            memcpy(c + (size_t)r * ldc + j0, &acc[r], sizeof acc[r]);
    }
}

CPU_INLINE void pad_rows(float *dst, int ld, const float *src, size_t ld_src, int real, int rows,
                         int cols, float scale)
{
    for (int i = 0; i < rows; i++)
        for (int d = 0; d < ld; d++)
            dst[(size_t)i * ld + d] = i < real && d < cols ? src[i * ld_src + d] * scale : 0.0f;
}

// dst (cols, ld) = the transpose of src (real, cols) rows ld_src apart, zero from column real on
CPU_INLINE void pad_transpose(float *dst, int ld, const float *src, size_t ld_src, int real,
                              int cols)
{
    for (int d = 0; d < cols; d++)
        for (int j = 0; j < ld; j++)
            dst[(size_t)d * ld + j] = j < real ? src[j * ld_src + d] : 0.0f;
}

// dst (T) = src (T) * the mask times 1/(1-p) of the probabilities at offsets first ..
// first+T-1; dst may be src
CPU_INLINE void drop_row(float *dst, const float *src, int T, uint64_t key, uint64_t first,
                         uint32_t threshold, float keep)
{
    for (int j = 0; j < T; j++)
        dst[j] = cpu_dropout_bits(key, first + (uint64_t)j) >= threshold ? src[j] * keep : 0.0f;
}

// out (T, H) head h columns, P (T, T) <- qkv (T, 3H) of one sequence
CPU_SIMD static void train_head(float *out, float *P, const float *qkv, int T, int H, int D, int h,
                                float p, uint64_t key, uint64_t first, float *work)
{
    const size_t H3 = 3 * (size_t)H;
    const int tp = cpu_round_up(T, CPU_TW), dp = cpu_round_up(D, CPU_TW);
    const float *q = qkv + (size_t)h * D, *k = q + H, *v = k + H;
    float *kt = work, *vp = kt + (size_t)D * tp, *qb = vp + (size_t)T * dp;
    float *s = qb + (size_t)QB * D, *o = s + (size_t)QB * tp;
    const float scale = 1.0f / sqrtf((float)D), keep = 1.0f / (1.0f - p);
    const uint32_t threshold = cpu_dropout_threshold(p);
    pad_transpose(kt, tp, k, H3, T, D);
    pad_rows(vp, dp, v, H3, T, T, D, 1.0f);
    for (int i0 = 0; i0 < T; i0 += QB) {
        const int nq = T - i0 < QB ? T - i0 : QB;
        // s (QB, tp) = scale Q[i0 ..] K^T; rows past the sequence are zero and unused
        pad_rows(qb, D, q + i0 * H3, H3, nq, QB, D, scale);
        tile_mm(s, tp, qb, D, 1, kt, tp, D, tp);
        for (int r = 0; r < nq; r++) {
            float *sr = s + (size_t)r * tp, *pr = P + (size_t)(i0 + r) * T;
            const float m = cpu_lanes_max(sr, T);
            for (int j = 0; j < T; j++)
                sr[j] = cpu_expf(sr[j] - m);
            const float inv = (float)(1.0 / cpu_lanes_sum(sr, T, 0.0, 0));
            for (int j = 0; j < T; j++)
                pr[j] = sr[j] *= inv;
            if (p > 0.0f)
                drop_row(sr, sr, T, key, first + (uint64_t)(i0 + r) * T, threshold, keep);
        }
        // o (QB, dp) = (P * M)[i0 ..] V
        tile_mm(o, dp, s, tp, 1, vp, dp, T, dp);
        for (int r = 0; r < nq; r++)
            memcpy(out + (size_t)(i0 + r) * H + (size_t)h * D, o + (size_t)r * dp,
                   (size_t)D * sizeof *o);
    }
}

void cpu_attention_train(float *out, float *probs, const float *qkv, const int *len, int B, int NH,
                         int D, float p, uint64_t key, float *scratch, int threads)
{
    const int H = NH * D, items = B * NH;
    int t_max;
    threads = cpu_attention_threads(len, B, NH, D, threads, &t_max);
    const size_t per_thread = cpu_attention_train_scratch(t_max, D, 1);
    CPU_PARALLEL_FOR_DYNAMIC(threads)
    for (int it = 0; it < items; it++) {
        size_t tok, prob;
        item_offsets(len, NH, it / NH, it % NH, &tok, &prob);
        train_head(out + tok * H, probs + prob, qkv + tok * 3 * H, len[it / NH], H, D, it % NH, p,
                   key, prob, scratch + (size_t)cpu_thread_id() * per_thread);
    }
}

// dqkv (T, 3H) head h columns <- dout (T, H), qkv (T, 3H), P (T, T) of one sequence
CPU_SIMD static void backward_head(float *dqkv, const float *dout, const float *qkv, const float *P,
                                   int T, int H, int D, int h, float p, uint64_t key,
                                   uint64_t first, float *work)
{
    const size_t H3 = 3 * (size_t)H;
    const int tp = cpu_round_up(T, CPU_TW), tq = cpu_round_up(T, QB), dp = cpu_round_up(D, CPU_TW);
    const float *q = qkv + (size_t)h * D, *k = q + H, *v = k + H;
    float *dq = dqkv + (size_t)h * D, *dk = dq + H, *dv = dk + H;
    float *vt = work, *kp = vt + (size_t)D * tp, *qp = kp + (size_t)T * dp;
    float *dop = qp + (size_t)T * dp, *ds = dop + (size_t)tq * dp, *wb = ds + (size_t)tq * tp;
    float *o = wb + (size_t)T * tp;
    const float scale = 1.0f / sqrtf((float)D), keep = 1.0f / (1.0f - p);
    const uint32_t threshold = cpu_dropout_threshold(p);
    pad_transpose(vt, tp, v, H3, T, D);
    pad_rows(kp, dp, k, H3, T, T, D, 1.0f);
    pad_rows(qp, dp, q, H3, T, T, D, 1.0f);
    pad_rows(dop, dp, dout + (size_t)h * D, (size_t)H, T, tq, D, 1.0f);
    // wb (T, tp) = P * M, the weights V was taken with
    pad_rows(wb, tp, P, (size_t)T, T, T, T, 1.0f);
    for (int i = 0; i < T && p > 0.0f; i++)
        drop_row(wb + (size_t)i * tp, wb + (size_t)i * tp, T, key, first + (uint64_t)i * T,
                 threshold, keep);

    for (int i0 = 0; i0 < tq; i0 += QB) {
        // ds rows i0 .. (QB, tp) = dO V^T, then dS over it
        float *dsb = ds + (size_t)i0 * tp;
        tile_mm(dsb, tp, dop + (size_t)i0 * dp, dp, 1, vt, tp, D, tp);
        for (int r = 0; r < QB; r++) {
            const int i = i0 + r;
            float *dr = dsb + (size_t)r * tp;
            const float *pr = P + (size_t)i * T;
            if (i >= T) {
                memset(dr, 0, (size_t)tp * sizeof *dr);
                continue;
            }
            if (p > 0.0f)
                drop_row(dr, dr, T, key, first + (uint64_t)i * T, threshold, keep);
            float lane[CPU_LANES] = { 0 };
            int j = 0;
            for (; j + CPU_LANES <= T; j += CPU_LANES)
                for (int l = 0; l < CPU_LANES; l++)
                    lane[l] += dr[j + l] * pr[j + l];
            for (; j < T; j++)
                lane[0] += dr[j] * pr[j];
            float dot = 0.0f;
            for (int l = 0; l < CPU_LANES; l++)
                dot += lane[l];
            for (j = 0; j < T; j++)
                dr[j] = pr[j] * (dr[j] - dot) * scale;
            for (; j < tp; j++)
                dr[j] = 0.0f;
        }
        // dQ rows i0 .. = dS K
        tile_mm(o, dp, dsb, tp, 1, kp, dp, T, dp);
        for (int r = 0; r < QB && i0 + r < T; r++)
            memcpy(dq + (size_t)(i0 + r) * H3, o + (size_t)r * dp, (size_t)D * sizeof *o);
    }
    // dK rows j0 .. = dS^T Q; dV rows j0 .. = (P * M)^T dO
    for (int j0 = 0; j0 < T; j0 += QB) {
        const int nk = T - j0 < QB ? T - j0 : QB;
        tile_mm(o, dp, ds + j0, 1, tp, qp, dp, T, dp);
        for (int r = 0; r < nk; r++)
            memcpy(dk + (size_t)(j0 + r) * H3, o + (size_t)r * dp, (size_t)D * sizeof *o);
        tile_mm(o, dp, wb + j0, 1, tp, dop, dp, T, dp);
        for (int r = 0; r < nk; r++)
            memcpy(dv + (size_t)(j0 + r) * H3, o + (size_t)r * dp, (size_t)D * sizeof *o);
    }
}

void cpu_attention_backward(float *dqkv, const float *dout, const float *qkv, const float *probs,
                            const int *len, int B, int NH, int D, float p, uint64_t key,
                            float *scratch, int threads)
{
    const int H = NH * D, items = B * NH;
    int t_max;
    threads = cpu_attention_threads(len, B, NH, D, threads, &t_max);
    const size_t per_thread = cpu_attention_train_scratch(t_max, D, 1);
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

void cpu_attention_train_ref(float *out, const float *qkv, const int *len, int B, int NH, int D,
                             float p, uint64_t key)
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

void cpu_attention_backward_ref(float *dqkv, const float *dout, const float *qkv, const int *len,
                                int B, int NH, int D, float p, uint64_t key)
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
