/* precision.c — the names of the GPU storage precisions (cuda_bert.h), in plain C so that a
 * build without CUDA parses and reports them the same way.
 */
#include <string.h>

#include "nlu/cuda/cuda_bert.h"
#include "sdk/pl_error.h"

static const char *const names[] = { [CUDA_PREC_FP16] = "fp16", [CUDA_PREC_BF16] = "bf16",
                                     [CUDA_PREC_FP32] = "fp32" };

parley_status cuda_precision_parse(const char *s, cuda_precision *out)
{
    if (!s) {
        *out = CUDA_PREC_FP16;
        return PARLEY_OK;
    }
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
        if (!strcmp(s, names[i])) {
            *out = (cuda_precision)i;
            return PARLEY_OK;
        }
    return pl_fail(PARLEY_ERR_INVALID_ARG, "precision \"%s\": expected fp16, bf16 or fp32", s);
}

const char *cuda_precision_name(cuda_precision p)
{
    return p >= 0 && p < (int)(sizeof names / sizeof *names) ? names[p] : "?";
}
