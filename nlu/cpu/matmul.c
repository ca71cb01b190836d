/* matmul.c — fully connected layers: OpenBLAS SGEMM, and the naive loops it is checked against.
 *
 * The weight is stored as nn.Linear stores it, (OC, IC), so the GEMM multiplies by its
 * transpose. The bias is copied into every output row first and the GEMM adds onto it
 * (beta = 1): OpenBLAS makes a pass over C for beta = 0 anyway, so the bias costs nothing
 * extra. This file does not thread anything itself; OpenBLAS's own pool does.
 */
#include <cblas.h>
#include <string.h>
#include <strings.h>

#include "nlu/cpu/ops.h"

// out (M, OC) = inp (M, IC) · w (OC, IC)^T + bias (OC)
void cpu_matmul(float *out, const float *inp, const float *w, const float *bias, int M, int IC,
                int OC)
{
    if (bias)
        for (int i = 0; i < M; i++)
            memcpy(out + (size_t)i * OC, bias, (size_t)OC * sizeof *bias);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, OC, IC, 1.0f, inp, IC, w, IC,
                bias ? 1.0f : 0.0f, out, OC);
}

void cpu_matmul_ref(float *out, const float *inp, const float *w, const float *bias, int M, int IC,
                    int OC)
{
    for (int i = 0; i < M; i++)
        for (int o = 0; o < OC; o++) {
            double acc = bias ? bias[o] : 0.0;
            for (int k = 0; k < IC; k++)
                acc += (double)inp[(size_t)i * IC + k] * w[(size_t)o * IC + k];
            out[(size_t)i * OC + o] = (float)acc;
        }
}

/* OpenBLAS picks its kernels once, when it is loaded, from the CPU's family and model. A
 * release older than the CPU does not know the model and falls back to its oldest x86-64
 * kernels (Prescott: SSE3): OpenBLAS 0.3.21 (Debian 12) on a Sapphire Rapids core runs the
 * BERT GEMMs 2-3x slower than its AVX-512 kernels do. The only cure is the environment
 * variable OPENBLAS_CORETYPE, read at load time, so this names what to set it to. Kernels
 * of the AVX2 generation or later are right already (an AMD EPYC with AVX-512 gets Zen's or
 * Haswell's): only a CPU with AVX2 running older ones needs a change. */
const char *cpu_blas_better_core(void)
{
    static const char *const modern[] = { "Haswell", "Zen", "SkylakeX", "Cooperlake",
                                          "SapphireRapids" };
    const char *core = openblas_get_corename();
    if (!core)
        return NULL;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        return NULL;
    for (size_t i = 0; i < sizeof modern / sizeof *modern; i++)
        if (!strcasecmp(core, modern[i]))
            return NULL;
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") ? "SkylakeX"
                                                                                   : "Haswell";
}
