/* softmax_xent.c — softmax cross-entropy of classifier logits, loss and logit gradient in
 * one pass, with rows that are not scored (label -1: [CLS], [SEP], later word pieces).
 *
 * loss = log(sum exp(x - max)) + max - x[label], computed with the row maximum subtracted
 * so no exponential overflows. The per-row losses are returned, not summed, so the caller
 * adds them in a fixed order. Rows run in parallel. This file does not pick the scale (the
 * mean over rows and the slot weight are nlu/train/bert_train.c's business).
 */
#include <math.h>

#include "nlu/cpu/ops.h"
#include "nlu/cpu/ops_backward.h"
#include "nlu/cpu/kernels.h"

/* Rows per parallel work item (a row of a few dozen logits is too little work alone), and
 * logits worth a thread of their own. */
enum { XENT_ROWS = 64, XENT_GRAIN = 16384 };

CPU_SIMD static void xent_row(float *dx, float *loss, const float *x, int label, int C, float scale)
{
    if (label < 0) {
        *loss = 0.0f;
        for (int c = 0; c < C; c++)
            dx[c] = 0.0f;
        return;
    }
    float m = cpu_lanes_max(x, C);
    for (int c = 0; c < C; c++)
        dx[c] = cpu_expf(x[c] - m);
    float sum = (float)cpu_lanes_sum(dx, C, 0.0, 0);
    *loss = logf(sum) + m - x[label];
    float k = scale / sum;
    for (int c = 0; c < C; c++)
        dx[c] *= k;
    dx[label] -= scale;
}

// dlogits (M, C), loss (M) <- logits (M, C), labels (M)
void cpu_softmax_xent(float *dlogits, float *loss, const float *logits, const int *labels, int M,
                      int C, float scale)
{
    if (M <= 0)
        return;
    const int chunks = (M + XENT_ROWS - 1) / XENT_ROWS;
    int threads = cpu_threads_for((size_t)M * C, XENT_GRAIN);
    threads = chunks < threads ? chunks : threads;
    CPU_PARALLEL_FOR(threads)
    for (int k = 0; k < chunks; k++) {
        int end = (k + 1) * XENT_ROWS < M ? (k + 1) * XENT_ROWS : M;
        for (int i = k * XENT_ROWS; i < end; i++)
            xent_row(dlogits + (size_t)i * C, loss + i, logits + (size_t)i * C, labels[i], C,
                     scale);
    }
}

void cpu_softmax_xent_ref(float *dlogits, float *loss, const float *logits, const int *labels,
                          int M, int C, float scale)
{
    for (int i = 0; i < M; i++) {
        const float *x = logits + (size_t)i * C;
        float *dx = dlogits + (size_t)i * C;
        double m = x[0], sum = 0;
        for (int c = 1; c < C; c++)
            m = x[c] > m ? x[c] : m;
        for (int c = 0; c < C; c++)
            sum += exp(x[c] - m);
        loss[i] = labels[i] < 0 ? 0.0f : (float)(log(sum) + m - x[labels[i]]);
        for (int c = 0; c < C; c++)
            dx[c] = labels[i] < 0 ? 0.0f
                                  : (float)(scale * (exp(x[c] - m) / sum - (c == labels[i])));
    }
}
