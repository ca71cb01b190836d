/* attention.c — multi-head self-attention over packed variable-length sequences.
 *
 * Each (sequence, head) pair is one work item for the OpenMP threads, so attention costs
 * sum(T^2), not B * Tmax^2 as a padded batch would, and no mask is needed. The kernel is
 * C with GCC vector types rather than BLAS: BLAS must not be called from inside the parallel
 * region (OpenBLAS's own pool would oversubscribe the cores), and SGEMM calls per item from
 * one thread measured slower than this kernel on one core (bench/RESULTS.md, "CPU
 * attention kernel"). The keys are transposed into scratch so that both products run along
 * contiguous memory. The softmax is FP32 with the row maximum subtracted.
 */
#include <math.h>

#include "nlu/cpu/ops.h"
#include "nlu/cpu/kernels.h"

/* The products run on register tiles of QB queries by CPU_TW keys (scores) or CPU_TW value
 * columns (outputs), held in cpu_vtile vectors (kernels.h); each loaded key or value vector
 * is used QB times. Vector types, because GCC kept the tile of plain nested loops in memory;
 * QB = 8 measured fastest of the shapes tried (bench/RESULTS.md). Keys and values are copied
 * into zero-padded scratch first so that tiles never run past the data. */
enum { QB = 8 };

size_t cpu_attention_scratch(int t_max, int D, int threads)
{
    const size_t tp = (size_t)cpu_round_up(t_max, CPU_TW), dp = (size_t)cpu_round_up(D, CPU_TW);
    // per thread: kt (D, Tp), vp (T, Dp), q (QB, D), s (QB, Tp)
    return (size_t)threads * ((size_t)D * tp + (size_t)t_max * dp + QB * (size_t)D + QB * tp);
}

// s (QB, Tp) = q (QB, D) kt (D, Tp)
CPU_INLINE void scores_tile(float *s, const float *q, const float *kt, int D, int tp)
{
    for (int j0 = 0; j0 < tp; j0 += CPU_TW) {
        cpu_vtile acc[QB] = { 0 };
        for (int d = 0; d < D; d++) {
            cpu_vtile k;
            memcpy(&k, kt + (size_t)d * tp + j0, sizeof k);
            for (int r = 0; r < QB; r++)
                acc[r] += q[r * D + d] * k;
        }
        for (int r = 0; r < QB; r++)
            memcpy(s + r * tp + j0, &acc[r], sizeof acc[r]);
    }
}

// out rows (nq, D), stride H = s (QB, Tp) vp (T, Dp), row r scaled by inv[r]
CPU_INLINE void values_tile(float *out, size_t H, int nq, const float *s, const float *vp, int T,
                            int D, int tp, int dp, const float *inv)
{
    for (int d0 = 0; d0 < dp; d0 += CPU_TW) {
        cpu_vtile acc[QB] = { 0 };
        for (int j = 0; j < T; j++) {
            cpu_vtile v;
            memcpy(&v, vp + (size_t)j * dp + d0, sizeof v);
            for (int r = 0; r < QB; r++)
                acc[r] += s[r * tp + j] * v;
        }
        int nd = D - d0 < CPU_TW ? D - d0 : CPU_TW;
        for (int r = 0; r < nq; r++)
            for (int d = 0; d < nd; d++)
                out[r * H + d0 + d] = acc[r][d] * inv[r];
    }
}

// out (T, H) columns h*D.. of one sequence = softmax(Q K^T / sqrt(D)) V
// qkv (T, 3H) of the sequence; work: see cpu_attention_scratch
CPU_SIMD static void attention_head(float *out, const float *qkv, int T, int H, int D, int h,
                                    float *work)
{
    const size_t H3 = 3 * (size_t)H;
    const int tp = cpu_round_up(T, CPU_TW), dp = cpu_round_up(D, CPU_TW);
    const float *q = qkv + (size_t)h * D, *k = qkv + H + (size_t)h * D, *v = k + H;
    float *kt = work, *vp = kt + (size_t)D * tp, *qb = vp + (size_t)T * dp, *s = qb + QB * D;
    const float scale = 1.0f / sqrtf((float)D);

    for (int d = 0; d < D; d++)
        for (int j = 0; j < tp; j++)
            kt[(size_t)d * tp + j] = j < T ? k[j * H3 + d] : 0.0f;
    for (int j = 0; j < T; j++)
        for (int d = 0; d < dp; d++)
            vp[(size_t)j * dp + d] = d < D ? v[j * H3 + d] : 0.0f;

    for (int i0 = 0; i0 < T; i0 += QB) {
        int nq = T - i0 < QB ? T - i0 : QB;
        for (int r = 0; r < QB; r++)
            for (int d = 0; d < D; d++)
                qb[r * D + d] = r < nq ? q[(i0 + r) * H3 + d] * scale : 0.0f;
        scores_tile(s, qb, kt, D, tp);
        /* exp(s - max) over the real keys (the padding columns are never read); 1 / sum is
         * applied to the outputs. */
        float inv[QB];
        for (int r = 0; r < QB; r++) {
            float *sr = s + r * tp;
            float m = cpu_lanes_max(sr, T);
            for (int j = 0; j < T; j++)
                sr[j] = cpu_expf(sr[j] - m);
            inv[r] = (float)(1.0 / cpu_lanes_sum(sr, T, 0.0, 0));
        }
        values_tile(out + (size_t)i0 * H + (size_t)h * D, H, nq, s, vp, T, D, tp, dp, inv);
    }
}

// out (N, H) <- qkv (N, 3H), len (B)
void cpu_attention(float *out, const float *qkv, const int *len, int B, int NH, int D,
                   float *scratch, int threads)
{
    const int H = NH * D;
    int t_max;
    threads = cpu_attention_threads(len, B, NH, D, threads, &t_max);
    const size_t per_thread = cpu_attention_scratch(t_max, D, 1);
    /* Item b * NH + h; a sequence's first token is found by summing the lengths before it,
     * which costs nothing next to the T^2 D work of the item. */
    const int items = B * NH;
    CPU_PARALLEL_FOR_DYNAMIC(threads)
    for (int it = 0; it < items; it++) {
        int b = it / NH, h = it % NH;
        size_t start = 0;
        for (int p = 0; p < b; p++)
            start += (size_t)len[p];
        attention_head(out + start * H, qkv + start * 3 * H, len[b], H, D, h,
                       scratch + (size_t)cpu_thread_id() * per_thread);
    }
}

void cpu_attention_ref(float *out, const float *qkv, const int *len, int B, int NH, int D)
{
    const size_t H = (size_t)NH * D, H3 = 3 * H;
    size_t start = 0;
    for (int b = 0; b < B; b++) {
        const int T = len[b];
        for (int h = 0; h < NH; h++)
            for (int i = 0; i < T; i++) {
                const float *q = qkv + (start + i) * H3 + h * D;
                double m = -INFINITY, sum = 0, p[T];
                for (int j = 0; j < T; j++) {
                    const float *k = qkv + (start + j) * H3 + H + h * D;
                    double dot = 0;
                    for (int d = 0; d < D; d++)
                        dot += (double)q[d] * k[d];
                    p[j] = dot / sqrt((double)D);
                    m = p[j] > m ? p[j] : m;
                }
                for (int j = 0; j < T; j++)
                    sum += p[j] = exp(p[j] - m);
                for (int d = 0; d < D; d++) {
                    double o = 0;
                    for (int j = 0; j < T; j++)
                        o += p[j] * qkv[(start + j) * H3 + 2 * H + h * D + d];
                    out[(start + i) * H + h * D + d] = (float)(o / sum);
                }
            }
        start += (size_t)T;
    }
}
