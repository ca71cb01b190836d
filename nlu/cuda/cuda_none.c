/* cuda_none.c — cuda_bert.h in a build without CUDA: no devices, and every request for one
 * answers PARLEY_ERR_NOT_BUILT. Compiled only when CUDA is not found.
 */
#include "nlu/cuda/cuda_bert.h"
#include "sdk/pl_error.h"

int cuda_device_count(void)
{
    return 0;
}

parley_status cuda_bert_open(const bert_model *m, int device, cuda_precision prec,
                             cuda_bert **out)
{
    (void)m, (void)prec;
    *out = NULL;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "cuda:%d: this build of parley has no CUDA backend",
                   device);
}

parley_status cuda_bert_forward(cuda_bert *g, const bert_batch *b, float *intent_logits,
                                float *slot_logits)
{
    (void)g, (void)b, (void)intent_logits, (void)slot_logits;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "this build of parley has no CUDA backend");
}

void cuda_bert_set_attention(cuda_bert *g, cuda_attention mode)
{
    (void)g, (void)mode;
}

const char *cuda_bert_describe(const cuda_bert *g)
{
    (void)g;
    return "no CUDA backend";
}

void cuda_bert_close(cuda_bert *g)
{
    (void)g;
}
