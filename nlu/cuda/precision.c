/* precision.c — the names of GPU devices and storage precisions (cuda_bert.h), in plain C
 * so that a build without CUDA parses and reports them the same way.
 */
#include <stdlib.h>
#include <string.h>

#include "nlu/cuda/cuda_bert.h"
#include "sdk/base/error.h"

static const char *const names[] = {
    [CUDA_PREC_FP16] = "fp16", [CUDA_PREC_BF16] = "bf16", [CUDA_PREC_FP32] = "fp32"
};

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

parley_status cuda_device_parse(const char *device, int *gpu)
{
    char *end;
    if (!device || !*device || !strcmp(device, "auto")) {
        *gpu = CUDA_DEVICE_AUTO;
        return PARLEY_OK;
    }
    if (!strcmp(device, "cpu")) {
        *gpu = CUDA_DEVICE_CPU;
        return PARLEY_OK;
    }
    if (!strcmp(device, "cuda")) {
        *gpu = 0;
        return PARLEY_OK;
    }
    if (!strncmp(device, "cuda:", 5) && device[5] >= '0' && device[5] <= '9') {
        long n = strtol(device + 5, &end, 10);
        if (!*end && n < 1024) {
            *gpu = (int)n;
            return PARLEY_OK;
        }
    }
    return pl_fail(PARLEY_ERR_INVALID_ARG, "device \"%s\": expected auto, cpu or cuda:N", device);
}
