/* gelu_backward.c — the backward of the exact (erf) GELU: d/dx x Phi(x) = Phi(x) + x phi(x),
 * phi the standard normal density.
 *
 * Like gelu.c, the fast version uses the vectorizable cpu_normal_cdf and cpu_expf of
 * kernels.h, in blocks spread over the OpenMP threads; the reference uses double libm.
 * This file does not compute the forward.
 */
#include <math.h>

#include "nlu/cpu/ops.h"
#include "nlu/cpu/ops_backward.h"
#include "nlu/cpu/kernels.h"

/* Elements per parallel work item, and elements worth a thread of their own, as in gelu.c. */
enum { GELU_BLOCK = 4096, GELU_GRAIN = 32768 };

CPU_SIMD static void gelu_backward_block(float *dinp, const float *inp, const float *dout, size_t n)
{
    const float inv_sqrt_2pi = 0.39894228040143268f;
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float pdf = inv_sqrt_2pi * cpu_expf(-0.5f * x * x);
        dinp[i] = dout[i] * (cpu_normal_cdf(x) + x * pdf);
    }
}

// dinp (n) = dout (n) * gelu'(inp (n))
void cpu_gelu_backward(float *dinp, const float *inp, const float *dout, size_t n)
{
    long blocks = (long)((n + GELU_BLOCK - 1) / GELU_BLOCK);
    int threads = cpu_threads_for(n, GELU_GRAIN);
    CPU_PARALLEL_FOR(threads)
    for (long k = 0; k < blocks; k++) {
        size_t at = (size_t)k * GELU_BLOCK;
        gelu_backward_block(dinp + at, inp + at, dout + at,
                            n - at < GELU_BLOCK ? n - at : GELU_BLOCK);
    }
}

void cpu_gelu_backward_ref(float *dinp, const float *inp, const float *dout, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double x = inp[i];
        double d = 0.5 * erfc(-x / sqrt(2.0)) + x * exp(-0.5 * x * x) / sqrt(2.0 * M_PI);
        dinp[i] = (float)(dout[i] * d);
    }
}
