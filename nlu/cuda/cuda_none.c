/* cuda_none.c — cuda_bert.h and cuda_train.h in a build without CUDA: no devices, and every
 * request for one answers PARLEY_ERR_NOT_BUILT. Compiled only when CUDA is not found.
 */
#include "nlu/cuda/cuda_bert.h"
#include "nlu/cuda/cuda_train.h"
#include "sdk/base/error.h"

int cuda_device_count(void)
{
    return 0;
}

parley_status cuda_bert_open(const bert_model *m, int device, cuda_precision prec, cuda_bert **out)
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

void cuda_bert_set_attention(cuda_bert *g, cuda_attention_mode mode)
{
    (void)g, (void)mode;
}

void cuda_bert_set_split_k(cuda_bert *g, int on)
{
    (void)g, (void)on;
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

parley_status cuda_trainer_open(const bert_model *m, const unsigned char *decay, int device,
                                cuda_precision prec, cuda_trainer **out)
{
    (void)m, (void)decay, (void)prec;
    *out = NULL;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "cuda:%d: this build of parley has no CUDA backend",
                   device);
}

parley_status cuda_trainer_open_mlm(const bert_model *m, const float *head,
                                    const unsigned char *decay, int device, cuda_precision prec,
                                    cuda_trainer **out)
{
    (void)head;
    return cuda_trainer_open(m, decay, device, prec, out);
}

parley_status cuda_trainer_mlm(cuda_trainer *g, const bert_batch *b, const int *target,
                               float dropout, uint64_t seed, int backward, bert_mlm_loss *loss,
                               float *grads, float *head_grads)
{
    (void)g, (void)b, (void)target, (void)dropout, (void)seed, (void)backward, (void)loss,
            (void)grads, (void)head_grads;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "this build of parley has no CUDA backend");
}

parley_status cuda_trainer_mlm_step(cuda_trainer *g, const bert_batch *b, const int *target,
                                    float dropout, uint64_t seed, float clip, const adamw_params *p,
                                    long t, bert_mlm_loss *loss)
{
    (void)g, (void)b, (void)target, (void)dropout, (void)seed, (void)clip, (void)p, (void)t,
            (void)loss;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "this build of parley has no CUDA backend");
}

parley_status cuda_trainer_download_head(cuda_trainer *g, float *head)
{
    (void)g, (void)head;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "this build of parley has no CUDA backend");
}

parley_status cuda_trainer_set_moments(cuda_trainer *g, const float *adam_m, const float *adam_v)
{
    (void)g, (void)adam_m, (void)adam_v;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "this build of parley has no CUDA backend");
}

parley_status cuda_trainer_grads(cuda_trainer *g, const bert_batch *b, const bert_labels *y,
                                 float dropout, uint64_t seed, bert_loss *loss, float *grads)
{
    (void)g, (void)b, (void)y, (void)dropout, (void)seed, (void)loss, (void)grads;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "this build of parley has no CUDA backend");
}

parley_status cuda_trainer_step(cuda_trainer *g, const bert_batch *b, const bert_labels *y,
                                float dropout, uint64_t seed, float clip, const adamw_params *p,
                                float sparse_lr, float slot_lr, long t, bert_loss *loss)
{
    (void)g, (void)b, (void)y, (void)dropout, (void)seed, (void)clip, (void)p, (void)sparse_lr,
            (void)slot_lr, (void)t, (void)loss;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "this build of parley has no CUDA backend");
}

parley_status cuda_trainer_download(cuda_trainer *g, float *params, float *adam_m, float *adam_v)
{
    (void)g, (void)params, (void)adam_m, (void)adam_v;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "this build of parley has no CUDA backend");
}

const char *cuda_trainer_describe(const cuda_trainer *g)
{
    (void)g;
    return "no CUDA backend";
}

void cuda_trainer_close(cuda_trainer *g)
{
    (void)g;
}
