/* cuda_train.h — training the joint model on an NVIDIA GPU, seen from C: the GPU twin of
 * bert_train_step + gradient clipping + adamw_step (nlu/train/bert_train.h,
 * nlu/train/train_util.h), taking the labels and giving the loss they take and give
 * (nlu/bert_step.h).
 *
 * A trainer holds on the device the FP32 master weights, their gradients, the AdamW moments
 * and the weight-decay mask, and in BF16 mode a BF16 copy of the weights that the GEMMs
 * read (refreshed by every AdamW update). A model with sparse features trains them there
 * too, as the CPU trainer does: their logits join the encoder's before the loss (in FP32),
 * and they learn by SGD with momentum (kept in the first moment's room) at their own rates,
 * beside the AdamW of the encoder and heads (nlu/train/sparse_train.h). A trainer opened with
 * a masked-LM head (cuda_trainer_open_mlm) holds it after the model's parameters and takes
 * pretraining steps too (bert_mlm_step_ws's math, nlu/train/bert_train.h). Activations and every
 * sum stay FP32; in BF16 mode the operands of each GEMM are rounded to BF16 and multiplied on the
 * tensor cores with FP32 accumulation (as torch.autocast(dtype=bfloat16) does), so no loss scaling
 * is needed. FP32 mode runs the GEMMs in pedantic FP32 (no TF32) and exists to check the GPU
 * against the CPU trainer. A step is one copy of the batch in, the forward pass, the loss,
 * the backward pass, the global gradient norm (per-block partial sums copied out and added
 * in double on the host), one fused clip + AdamW kernel over the encoder and heads, and the
 * clipped SGD of the sparse weights.
 *
 * The math follows bert_train.c op for op, including its dropout masks (the same counter
 * hash of (seed, tensor, element)), so FP32 steps agree with the CPU's to float rounding.
 * Every reduction runs in a fixed order (no atomics), so a step is reproducible on one GPU.
 *
 * Threading: a trainer is not thread-safe; one thread drives it. In a build without CUDA
 * every function answers PARLEY_ERR_NOT_BUILT.
 */
#ifndef NLU_CUDA_TRAIN_H
#define NLU_CUDA_TRAIN_H

#ifdef __cplusplus
extern "C" {
#endif

#include "nlu/bert_step.h"
#include "nlu/cuda/cuda_bert.h"

typedef struct cuda_trainer cuda_trainer;

/* Uploads m's parameters (and the decay mask, n_params) to device `device`; prec is
 * CUDA_PREC_BF16 or CUDA_PREC_FP32 (FP16 would need loss scaling and is refused). The moments
 * start at zero. m is only read; on success *out belongs to the caller. */
parley_status cuda_trainer_open(const bert_model *m, const unsigned char *decay, int device,
                                cuda_precision prec, cuda_trainer **out);

/* The same with a masked-LM head (bert_mlm_param_count floats, laid out as bert_mlm_point
 * says) after the model's parameters, and decay covering both (n_params, then the head's),
 * for cuda_trainer_mlm and cuda_trainer_mlm_step. head is only read. */
parley_status cuda_trainer_open_mlm(const bert_model *m, const float *head,
                                    const unsigned char *decay, int device, cuda_precision prec,
                                    cuda_trainer **out);

/* Replaces the AdamW moments (n_params each), for a resumed run. */
parley_status cuda_trainer_set_moments(cuda_trainer *g, const float *adam_m, const float *adam_v);

/* Forward and backward of one batch into the device's gradients, which are zeroed first;
 * the batch, labels, dropout and seed as bert_train_step (errors too). grads (n_params, may
 * be NULL) receives a copy of the gradients: for tests. */
parley_status cuda_trainer_grads(cuda_trainer *g, const bert_batch *b, const bert_labels *y,
                                 float dropout, uint64_t seed, bert_loss *loss, float *grads);

/* One training step: cuda_trainer_grads, then clipping to the global norm `clip` (0 = off,
 * as train_clip_grads), AdamW step t (1-based) with *p of the encoder and heads, and for a
 * model with sparse features the SGD of the intent map at sparse_lr (none where the intent
 * is the sparse features' alone) and of the slot map at slot_lr: train_sparse_update's
 * arithmetic. */
parley_status cuda_trainer_step(cuda_trainer *g, const bert_batch *b, const bert_labels *y,
                                float dropout, uint64_t seed, float clip, const adamw_params *p,
                                float sparse_lr, float slot_lr, long t, bert_loss *loss);

/* The masked-LM loss of a batch with targets target (N; -1: not predicted), dropout and seed
 * as bert_mlm_step_ws (errors too), and with `backward` the gradients of the model and head
 * into the device's, which are zeroed first; grads (n_params) and head_grads
 * (bert_mlm_param_count), each may be NULL, receive copies of them: for tests. A batch with
 * nothing masked gives loss 0 and zero gradients. The trainer must have a head. */
parley_status cuda_trainer_mlm(cuda_trainer *g, const bert_batch *b, const int *target,
                               float dropout, uint64_t seed, int backward, bert_mlm_loss *loss,
                               float *grads, float *head_grads);

/* One pretraining step, as nlu/train/pretrain.c takes it on the CPU: cuda_trainer_mlm with
 * its gradients, clipping to the global norm `clip` of all of them (0 = off) and AdamW step t
 * (1-based) with *p of the encoder (the weights before the pooler) and the head. */
parley_status cuda_trainer_mlm_step(cuda_trainer *g, const bert_batch *b, const int *target,
                                    float dropout, uint64_t seed, float clip, const adamw_params *p,
                                    long t, bert_mlm_loss *loss);

/* Copies the master weights into params (n_params) and, when not NULL, the moments. */
parley_status cuda_trainer_download(cuda_trainer *g, float *params, float *adam_m, float *adam_v);

/* Copies the masked-LM head (bert_mlm_param_count floats) into head. */
parley_status cuda_trainer_download_head(cuda_trainer *g, float *head);

/* A line naming the device and precision ("NVIDIA H100 80GB HBM3 (cuda:0), bf16"). */
const char *cuda_trainer_describe(const cuda_trainer *g);

/* NULL is a no-op. */
void cuda_trainer_close(cuda_trainer *g);

#ifdef __cplusplus
}
#endif

#endif
