/* bert_train.h — one training step's math for the joint model: forward with saved
 * activations, the joint loss, and the backward pass into parameter gradients; plus AdamW.
 *
 * The batch is packed as in bert.h (no padding), with labels as nlu/bert_step.h says (the
 * types and checks the GPU trainer shares). Loss = mean intent cross-entropy +
 * slot_weight * mean slot cross-entropy over the scored tokens. Dropout (on embeddings, attention
 * probabilities, attention output and FFN output, and before the heads, as in BERT) draws from a
 * counter-based RNG keyed by `seed`, so a step is reproducible for a given seed and thread count.
 */
#ifndef NLU_TRAIN_BERT_TRAIN_H
#define NLU_TRAIN_BERT_TRAIN_H

#include <stdint.h>

#include "nlu/bert.h"
#include "nlu/bert_step.h"

/* Forward + backward of one batch. grads (n_params, laid out like params) are ADDED to, so
 * callers zero them first or accumulate several micro-batches; only the word embedding rows
 * of the batch's ids are touched, and the [PAD] row gets nothing (as nn.Embedding with
 * padding_idx). intent_logits (B, NI) and slot_logits (N, NS) may be NULL; if given they
 * receive the logits. dropout is in [0, 1). Fails with PARLEY_ERR_INVALID_ARG on a bad
 * batch or label (the detail names the sequence, token and value; grads are untouched) and
 * PARLEY_ERR_NOMEM. The model is only read: threads may run steps on one model into their
 * own gradients. Scratch memory is allocated and freed in the call; a loop of steps should
 * use bert_train_step_ws. */
parley_status bert_train_step(const bert_model *m, const bert_batch *b, const bert_labels *y,
                              float dropout, uint64_t seed, float *grads, bert_loss *loss,
                              float *intent_logits, float *slot_logits);

/* Memory kept from one step to the next: the activation arena, grown when a batch needs more
 * (with a quarter to spare, so batches of varying length settle on one size). Zero-initialize
 * it, pass it to the steps of one thread (it is not synchronized), release it with
 * bert_train_ws_free. Reuse matters for speed: an arena of tens of MiB freed and allocated
 * anew every step is a fresh mapping whose page faults cost as much as the math (glibc maps
 * blocks above its 32 MiB dynamic threshold afresh each time). */
typedef struct bert_train_ws {
    float *block; /* owned */
    size_t cap;   /* floats in block */
} bert_train_ws;

/* bert_train_step with its arena taken from ws (allocated or grown there if needed). On
 * failure ws stays valid (possibly emptied). */
parley_status bert_train_step_ws(bert_train_ws *ws, const bert_model *m, const bert_batch *b,
                                 const bert_labels *y, float dropout, uint64_t seed, float *grads,
                                 bert_loss *loss, float *intent_logits, float *slot_logits);
/* Frees the arena and empties ws. NULL or an empty ws is a no-op. */
void bert_train_ws_free(bert_train_ws *ws);

/* BERT's initialization of the head: normal(0, 0.02) dense weight (from seed), zero biases,
 * LayerNorm weight 1. */
void bert_mlm_init(const bert_config *c, float *params, uint64_t seed);
/* decay (bert_mlm_param_count) as bert_decay_mask: 1 on the dense weight only. */
void bert_mlm_decay_mask(const bert_config *c, unsigned char *decay);
/* The head as a safetensors file with Hugging Face's names (cls.predictions.*, F32), written
 * atomically; and read back, every tensor checked for presence, shape and dtype, none
 * unexpected. params holds bert_mlm_param_count(c) floats. */
parley_status bert_mlm_save(const bert_config *c, const float *params, const char *path);
parley_status bert_mlm_load(const bert_config *c, const char *path, float *params);

/* BERT's masking of a packed batch (ids (N), lengths len (B)): every piece but each
 * sequence's first and last ([CLS], [SEP]) is chosen with chance prob; a chosen piece
 * becomes [MASK] (80%), a piece drawn uniformly from the vocabulary (10%) or stays (10%),
 * and its target is the original id. target (N) is -1 where nothing is predicted. Every
 * draw is a hash of (key, position), so a step's masking is reproducible. Returns how many
 * positions were chosen. */
int bert_mlm_mask(int *ids, int *target, const int *len, int B, int mask_id, int vocab_size,
                  float prob, uint64_t key);

/* One MLM step: forward with dropout as bert_train_step, the loss over the positions whose
 * target (N) is not -1, backward. Gradients are ADDED to grads (n_params, the model's
 * layout) and head_grads (bert_mlm_param_count); the [PAD] row of word_emb gets the
 * decoder's share only. With both gradient arrays NULL the step only scores (no backward).
 * A batch with no target gives loss 0 and no gradient. Errors as
 * bert_train_step (a target outside the vocabulary names its position). */
parley_status bert_mlm_step_ws(bert_train_ws *ws, const bert_model *m, const float *head_params,
                               const bert_batch *b, const int *target, float dropout, uint64_t seed,
                               float *grads, float *head_grads, bert_mlm_loss *loss);

/* One AdamW step (decoupled weight decay, bias-corrected moments, as torch.optim.AdamW) over
 * n parameters; t is the 1-based step number; m and v are the moment buffers (n each, zero
 * at t = 1); decay (n) is 1 where weight decay applies, 0 for biases and LayerNorm. */
void adamw_step(float *params, const float *grads, float *m, float *v, const unsigned char *decay,
                size_t n, long t, const adamw_params *p);

/* Fills decay (n_params) for a model's layout: 1 on weight matrices and embeddings, 0 on
 * biases and LayerNorm parameters. */
void bert_decay_mask(const bert_config *c, unsigned char *decay);

#endif
