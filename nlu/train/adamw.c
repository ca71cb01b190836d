/* adamw.c — the AdamW update (Loshchilov and Hutter, "Decoupled Weight Decay
 * Regularization", 2019) over a flat parameter array, in the order of operations of
 * torch.optim.AdamW, so a torch run and a parley run of the same steps agree to float
 * rounding.
 *
 * Per element: p *= 1 - lr wd (where decay applies); m = b1 m + (1 - b1) g;
 * v = b2 v + (1 - b2) g^2; p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
 * The bias corrections are taken in double, as torch takes them in Python floats. Elements
 * are independent, so blocks of them run on the OpenMP threads. This file does not schedule
 * the learning rate or clip gradients (the training driver does).
 */
#include <math.h>

#include "nlu/train/bert_train.h"
#include "nlu/cpu/ops.h"
#include "nlu/cpu/kernels.h"

/* Elements per parallel work item, and elements worth a thread of their own. */
enum { ADAMW_BLOCK = 1 << 14, ADAMW_GRAIN = 1 << 15 };

typedef struct adamw_coef {
    float b1, b2, one_minus_b1, one_minus_b2, decay, step_size, bc2_sqrt, eps;
} adamw_coef;

CPU_SIMD static void adamw_block(float *p, const float *g, float *m, float *v,
                                 const unsigned char *decay, size_t n, const adamw_coef *k)
{
    for (size_t i = 0; i < n; i++) {
        float pi = decay[i] ? p[i] * k->decay : p[i];
        float mi = m[i] * k->b1 + k->one_minus_b1 * g[i];
        float vi = v[i] * k->b2 + k->one_minus_b2 * g[i] * g[i];
        m[i] = mi;
        v[i] = vi;
        p[i] = pi - k->step_size * (mi / (sqrtf(vi) / k->bc2_sqrt + k->eps));
    }
}

void adamw_step(float *params, const float *grads, float *m, float *v, const unsigned char *decay,
                size_t n, long t, const adamw_params *p)
{
    const double b1 = p->beta1, b2 = p->beta2;
    const adamw_coef k = {
        .b1 = p->beta1,
        .b2 = p->beta2,
        .one_minus_b1 = (float)(1.0 - b1),
        .one_minus_b2 = (float)(1.0 - b2),
        .decay = (float)(1.0 - (double)p->lr * p->weight_decay),
        .step_size = (float)(p->lr / (1.0 - pow(b1, (double)t))),
        .bc2_sqrt = (float)sqrt(1.0 - pow(b2, (double)t)),
        .eps = p->eps,
    };
    long blocks = (long)((n + ADAMW_BLOCK - 1) / ADAMW_BLOCK);
    int threads = cpu_threads_for(n, ADAMW_GRAIN);
    CPU_PARALLEL_FOR(threads)
    for (long b = 0; b < blocks; b++) {
        size_t at = (size_t)b * ADAMW_BLOCK;
        adamw_block(params + at, grads + at, m + at, v + at, decay + at,
                    n - at < ADAMW_BLOCK ? n - at : ADAMW_BLOCK, &k);
    }
}
