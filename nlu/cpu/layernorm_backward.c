/* layernorm_backward.c — the backward of LayerNorm over rows.
 *
 * With xhat = (x - mean) * rstd and g = dout * w, the input gradient of a row is
 * rstd * (g - mean(g) - xhat * mean(g * xhat)); w and b get sum(dout * xhat) and sum(dout)
 * over the rows. Mean and rstd are recomputed from the kept input the way layernorm.c
 * computes them (cpu_lanes_sum in double), which costs two passes over a row and saves
 * storing them.
 * Rows run in parallel in fixed chunks; each chunk sums its rows' w and b gradients into
 * its own slot of scratch, and the slots are added in chunk order afterwards, so the
 * result is the same for any thread count. This file does not compute the forward.
 */
#include <math.h>

#include "nlu/cpu/ops.h"
#include "nlu/cpu/ops_backward.h"
#include "nlu/cpu/kernels.h"

/* Rows per chunk of the w and b sums, and elements worth a thread of their own. */
enum { LN_ROWS = 32, LN_GRAIN = 16384 };

size_t cpu_layernorm_backward_scratch(int M, int C)
{
    // per chunk: dw (C), db (C)
    return (size_t)((M + LN_ROWS - 1) / LN_ROWS) * 2 * (size_t)C;
}

// dinp (C) <- one row; dw, db (C) += the row's terms. dinp may be dout.
CPU_SIMD static void ln_backward_row(float *dinp, float *dw, float *db, const float *dout,
                                     const float *x, const float *w, int C, float eps)
{
    /* xhat exactly as layernorm_row forms it: double statistics, float rstd. */
    const double mean = cpu_lanes_sum(x, C, 0.0, 0) / C;
    const double var = cpu_lanes_sum(x, C, mean, 1) / C;
    const float rstd = (float)(1.0 / sqrt(var + eps));
    float lg[CPU_LANES] = { 0 }, lgx[CPU_LANES] = { 0 };
    int c = 0;
    for (; c + CPU_LANES <= C; c += CPU_LANES)
        for (int j = 0; j < CPU_LANES; j++) {
            float g = dout[c + j] * w[c + j];
            lg[j] += g;
            lgx[j] += g * ((float)((double)x[c + j] - mean) * rstd);
        }
    for (; c < C; c++) {
        float g = dout[c] * w[c];
        lg[0] += g;
        lgx[0] += g * ((float)((double)x[c] - mean) * rstd);
    }
    float sg = 0, sgx = 0;
    for (int j = 0; j < CPU_LANES; j++) {
        sg += lg[j];
        sgx += lgx[j];
    }
    const float mg = sg / (float)C, mgx = sgx / (float)C;
    for (c = 0; c < C; c++) {
        float xhat = (float)((double)x[c] - mean) * rstd, d = dout[c];
        dw[c] += d * xhat;
        db[c] += d;
        dinp[c] = rstd * (d * w[c] - mg - xhat * mgx);
    }
}

// dw (C) += sum of the chunks' partial sums, in chunk order
CPU_SIMD static void add_partials(float *dw, float *db, const float *part, int chunks, int C)
{
    for (int k = 0; k < chunks; k++) {
        const float *pw = part + (size_t)k * 2 * C, *pb = pw + C;
        for (int c = 0; c < C; c++) {
            dw[c] += pw[c];
            db[c] += pb[c];
        }
    }
}

// dinp (M, C) <- dout (M, C), inp (M, C), w (C); dw, db (C) +=
void cpu_layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                            const float *w, int M, int C, float eps, float *scratch)
{
    if (M <= 0)
        return;
    const int chunks = (M + LN_ROWS - 1) / LN_ROWS;
    int threads = cpu_threads_for((size_t)M * C, LN_GRAIN);
    threads = chunks < threads ? chunks : threads;
    CPU_PARALLEL_FOR(threads)
    for (int k = 0; k < chunks; k++) {
        float *pw = scratch + (size_t)k * 2 * C, *pb = pw + C;
        for (int c = 0; c < C; c++)
            pw[c] = pb[c] = 0.0f;
        int end = (k + 1) * LN_ROWS < M ? (k + 1) * LN_ROWS : M;
        for (int i = k * LN_ROWS; i < end; i++) {
            size_t at = (size_t)i * C;
            ln_backward_row(dinp + at, pw, pb, dout + at, inp + at, w, C, eps);
        }
    }
    add_partials(dw, db, scratch, chunks, C);
}

void cpu_layernorm_backward_ref(float *dinp, float *dw, float *db, const float *dout,
                                const float *inp, const float *w, int M, int C, float eps)
{
    double aw[C], ab[C]; /* w and b gradients, summed in double before the one rounding */
    for (int c = 0; c < C; c++)
        aw[c] = ab[c] = 0;
    for (int i = 0; i < M; i++) {
        const float *x = inp + (size_t)i * C, *d = dout + (size_t)i * C;
        double mean = 0, var = 0, mg = 0, mgx = 0, xhat[C];
        for (int c = 0; c < C; c++)
            mean += x[c];
        mean /= C;
        for (int c = 0; c < C; c++)
            var += (x[c] - mean) * (x[c] - mean);
        var /= C;
        double rstd = 1.0 / sqrt(var + eps);
        for (int c = 0; c < C; c++) {
            xhat[c] = (x[c] - mean) * rstd;
            aw[c] += d[c] * xhat[c];
            ab[c] += d[c];
            mg += (double)d[c] * w[c];
            mgx += (double)d[c] * w[c] * xhat[c];
        }
        mg /= C;
        mgx /= C;
        for (int c = 0; c < C; c++)
            dinp[(size_t)i * C + c] = (float)(rstd * ((double)d[c] * w[c] - mg - xhat[c] * mgx));
    }
    for (int c = 0; c < C; c++) {
        dw[c] = (float)(dw[c] + aw[c]);
        db[c] = (float)(db[c] + ab[c]);
    }
}
