/* layernorm.c — LayerNorm over rows, plain and with the residual add of a post-LN encoder
 * fused in (one pass less over the activations).
 *
 * Rows are independent, so they are spread over the OpenMP threads. Mean and variance are
 * taken in two passes (no E[x^2] - E[x]^2 cancellation) in double with cpu_lanes_sum
 * (kernels.h), which vectorizes; the reference does the same with plain loops.
 */
#include <math.h>

#include "nlu/cpu/ops.h"
#include "nlu/cpu/kernels.h"

/* Elements worth a thread of their own (some 30 us of work). */
enum { LN_GRAIN = 65536 };

// out (C) = LN(x (C) [+ res (C)]) · w (C) + b (C); out may be x
CPU_SIMD static void layernorm_row(float *out, const float *x, const float *res, const float *w,
                                   const float *b, int C, float eps)
{
    if (res) {
        for (int c = 0; c < C; c++)
            out[c] = x[c] + res[c];
        x = out;
    }
    double mean = cpu_lanes_sum(x, C, 0.0, 0) / C;
    double var = cpu_lanes_sum(x, C, mean, 1) / C;
    float rstd = (float)(1.0 / sqrt(var + eps));
    for (int c = 0; c < C; c++)
        out[c] = (float)((double)x[c] - mean) * rstd * w[c] + b[c];
}

static void layernorm_rows(float *out, const float *inp, const float *res, const float *w,
                           const float *b, int M, int C, float eps)
{
    int threads = cpu_threads_for((size_t)M * C, LN_GRAIN);
    CPU_PARALLEL_FOR(threads)
    for (int i = 0; i < M; i++) {
        size_t at = (size_t)i * C;
        layernorm_row(out + at, inp + at, res ? res + at : NULL, w, b, C, eps);
    }
}

// out (M, C) = LN(inp (M, C)) · w (C) + b (C)
void cpu_layernorm(float *out, const float *inp, const float *w, const float *b, int M, int C,
                   float eps)
{
    layernorm_rows(out, inp, NULL, w, b, M, C, eps);
}

// out (M, C) = LN(inp (M, C) + res (M, C)) · w (C) + b (C)
void cpu_residual_layernorm(float *out, const float *inp, const float *res, const float *w,
                            const float *b, int M, int C, float eps)
{
    layernorm_rows(out, inp, res, w, b, M, C, eps);
}

void cpu_layernorm_ref(float *out, const float *inp, const float *res, const float *w,
                       const float *b, int M, int C, float eps)
{
    for (int i = 0; i < M; i++) {
        const float *x = inp + (size_t)i * C;
        const float *r = res ? res + (size_t)i * C : NULL;
        double mean = 0, var = 0;
        for (int c = 0; c < C; c++)
            mean += (double)x[c] + (r ? r[c] : 0.0);
        mean /= C;
        for (int c = 0; c < C; c++) {
            double d = (double)x[c] + (r ? r[c] : 0.0) - mean;
            var += d * d;
        }
        var /= C;
        double rstd = 1.0 / sqrt(var + eps);
        for (int c = 0; c < C; c++) {
            double v = (double)x[c] + (r ? r[c] : 0.0);
            out[(size_t)i * C + c] = (float)((v - mean) * rstd * w[c] + b[c]);
        }
    }
}
