/* matmul_backward.c — the backward of a fully connected layer: two OpenBLAS SGEMMs and the
 * bias gradient as column sums, and the naive loops they are checked against.
 *
 * With the weight in the nn.Linear layout (OC, IC), d inp = d out · w needs no transpose
 * and d w = d out^T · inp reads d out transposed; beta = 1 in the second adds onto the
 * gradient the caller accumulates. The column sums run after the GEMMs, in their own
 * OpenMP region (never BLAS inside one): each work item owns a block of columns and adds
 * the rows in order, so the result does not depend on the thread count. This file does not
 * compute the forward (matmul.c).
 */
#include <cblas.h>

#include "nlu/cpu/ops.h"
#include "nlu/cpu/ops_backward.h"
#include "nlu/cpu/kernels.h"

/* Columns per work item of the bias sums: wide enough to vectorize, narrow enough that a
 * small OC still spreads over the threads; and additions worth a thread of their own. */
enum { COL_BLOCK = 64, COL_GRAIN = 1 << 16 };

// db (nc) += sum over M rows of dout (M, OC) columns c0 .. c0+nc-1
CPU_SIMD static void column_sums(float *db, const float *dout, int M, int OC, int nc)
{
    float acc[COL_BLOCK] = { 0 };
    for (int i = 0; i < M; i++) {
        const float *row = dout + (size_t)i * OC;
        for (int c = 0; c < nc; c++)
            acc[c] += row[c];
    }
    for (int c = 0; c < nc; c++)
        db[c] += acc[c];
}

void cpu_matmul_backward(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
                         const float *w, int M, int IC, int OC, int accumulate)
{
    if (M == 0)
        return;
    // dinp (M, IC) (+)= dout (M, OC) · w (OC, IC)
    if (dinp)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, IC, OC, 1.0f, dout, OC, w, IC,
                    accumulate ? 1.0f : 0.0f, dinp, IC);
    // dw (OC, IC) += dout^T (OC, M) · inp (M, IC)
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, M, 1.0f, dout, OC, inp, IC, 1.0f,
                dw, IC);
    if (!dbias)
        return;
    const int blocks = (OC + COL_BLOCK - 1) / COL_BLOCK;
    int threads = cpu_threads_for((size_t)M * OC, COL_GRAIN);
    threads = blocks < threads ? blocks : threads;
    CPU_PARALLEL_FOR(threads)
    for (int k = 0; k < blocks; k++) {
        int c0 = k * COL_BLOCK;
        column_sums(dbias + c0, dout + c0, M, OC, OC - c0 < COL_BLOCK ? OC - c0 : COL_BLOCK);
    }
}

void cpu_matmul_backward_ref(float *dinp, float *dw, float *dbias, const float *dout,
                             const float *inp, const float *w, int M, int IC, int OC,
                             int accumulate)
{
    for (int i = 0; dinp && i < M; i++)
        for (int k = 0; k < IC; k++) {
            double acc = accumulate ? dinp[(size_t)i * IC + k] : 0.0;
            for (int o = 0; o < OC; o++)
                acc += (double)dout[(size_t)i * OC + o] * w[(size_t)o * IC + k];
            dinp[(size_t)i * IC + k] = (float)acc;
        }
    for (int o = 0; o < OC; o++) {
        for (int k = 0; k < IC; k++) {
            double acc = 0;
            for (int i = 0; i < M; i++)
                acc += (double)dout[(size_t)i * OC + o] * inp[(size_t)i * IC + k];
            dw[(size_t)o * IC + k] = (float)(dw[(size_t)o * IC + k] + acc);
        }
        if (dbias) {
            double acc = 0;
            for (int i = 0; i < M; i++)
                acc += dout[(size_t)i * OC + o];
            dbias[o] = (float)(dbias[o] + acc);
        }
    }
}
