/* matmul.c — fully connected layers: OpenBLAS SGEMM, and the naive loops it is checked against.
 *
 * The weight is stored as nn.Linear stores it, (OC, IC), so the GEMM multiplies by its
 * transpose. The bias is copied into every output row first and the GEMM adds onto it
 * (beta = 1): OpenBLAS makes a pass over C for beta = 0 anyway, so the bias costs nothing
 * extra. This file does not thread anything itself; OpenBLAS's own pool does.
 */
#include <cblas.h>
#include <string.h>

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

void cpu_matmul_ref(float *out, const float *inp, const float *w, const float *bias, int M,
                    int IC, int OC)
{
    for (int i = 0; i < M; i++)
        for (int o = 0; o < OC; o++) {
            double acc = bias ? bias[o] : 0.0;
            for (int k = 0; k < IC; k++)
                acc += (double)inp[(size_t)i * IC + k] * w[(size_t)o * IC + k];
            out[(size_t)i * OC + o] = (float)acc;
        }
}
