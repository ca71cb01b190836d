/* gelu.c — the exact GELU of BERT, x * Phi(x) with Phi the normal CDF (erf form, not the
 * tanh approximation).
 *
 * The fast version evaluates Phi with cpu_normal_cdf (kernels.h) so the loop vectorizes, in
 * blocks spread over the OpenMP threads; the reference calls double libm erfc.
 */
#include <math.h>

#include "nlu/cpu/ops.h"
#include "nlu/cpu/kernels.h"

/* Elements per parallel work item: big enough to amortize the scheduling, small enough to
 * spread an FFN activation over the threads. */
enum { GELU_BLOCK = 4096 };
/* Elements worth a thread of their own (about 30 us of work). */
enum { GELU_GRAIN = 32768 };

CPU_SIMD static void gelu_block(float *out, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = inp[i] * cpu_normal_cdf(inp[i]);
}

// out (n) = gelu(inp (n))
void cpu_gelu(float *out, const float *inp, size_t n)
{
    long blocks = (long)((n + GELU_BLOCK - 1) / GELU_BLOCK);
    int threads = cpu_threads_for(n, GELU_GRAIN);
    CPU_PARALLEL_FOR(threads)
    for (long k = 0; k < blocks; k++) {
        size_t at = (size_t)k * GELU_BLOCK;
        gelu_block(out + at, inp + at, n - at < GELU_BLOCK ? n - at : GELU_BLOCK);
    }
}

void cpu_gelu_ref(float *out, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double x = inp[i];
        out[i] = (float)(x * 0.5 * erfc(-x / sqrt(2.0)));
    }
}
