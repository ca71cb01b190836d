/* bert_step.h — what one training step of the joint model takes and gives, shared by the CPU
 * trainer (nlu/train/bert_train.h) and the GPU's (nlu/cuda/cuda_train.h): the labels, the
 * loss, the dropout sites and their mask keys, the check of a step's batch and labels,
 * AdamW's settings and the sparse weights' momentum; and the same for a masked-LM
 * pretraining step: its head's layout, its loss and the check of its targets. The steps themselves
 * are each trainer's; this is their common contract, so neither trainer's folder includes the
 * other's.
 *
 * The batch is packed as in bert.h (no padding). Labels: an intent per sequence and a slot
 * tag per token, where -1 means "not scored" ([CLS], [SEP] and every piece after a word's
 * first).
 */
#ifndef NLU_BERT_STEP_H
#define NLU_BERT_STEP_H

#include <stdint.h>

#include "nlu/bert.h"

typedef struct bert_labels {
    const int *intent; /* (B) intent ids */
    const int *slot;   /* (N) slot tag ids, -1 = not scored */
    float slot_weight; /* weight of the slot loss (1.0 in JointBERT) */
    /* The batch's sparse features (bert.h), required when the model has them, ignored
     * otherwise: their logits join the encoder's before the loss, and the sparse weights
     * get their gradients (no dropout on them). */
    const bert_sparse_batch *sparse;
    const float *intent_weight; /* (n_intents) each intent's weight in the loss; NULL: 1 */
} bert_labels;

typedef struct bert_loss {
    float total;        /* what the gradients are of */
    float intent;       /* mean intent cross-entropy */
    float slot;         /* mean slot cross-entropy over scored tokens (0 when none) */
    int intent_correct; /* sequences whose argmax intent is right */
    int slot_scored, slot_correct;
} bert_loss;

/* The dropout sites of a step. A site's mask is keyed by bert_dropout_key(seed, layer,
 * site) (layer -1 for the sites outside the layers), so the GPU trainer (nlu/cuda/) draws
 * the CPU's masks. */
typedef enum bert_drop_site {
    BERT_DROP_EMB,
    BERT_DROP_SLOT_HEAD,
    BERT_DROP_INTENT_HEAD, /* outside the layers */
    BERT_DROP_ATTN_PROBS,
    BERT_DROP_ATTN_OUT,
    BERT_DROP_FFN_OUT, /* in each layer */
} bert_drop_site;
uint64_t bert_dropout_key(uint64_t seed, int layer, bert_drop_site site);

/* PARLEY_OK when b is a valid batch for a model of config c and dropout a valid rate;
 * otherwise PARLEY_ERR_INVALID_ARG naming the sequence, token and value at fault. */
parley_status bert_step_check_batch(const bert_config *c, const bert_batch *b, float dropout);

/* PARLEY_OK when b, y and dropout are a valid step for a model of config c; otherwise
 * PARLEY_ERR_INVALID_ARG naming the sequence, token and value at fault. bert_train_step
 * checks this itself; other backends call it first. */
parley_status bert_train_check(const bert_config *c, const bert_batch *b, const bert_labels *y,
                               float dropout);

/* AdamW's settings for one update (adamw_step in nlu/train/, the GPU trainer's fused update). */
typedef struct adamw_params {
    float lr, beta1, beta2, eps, weight_decay;
} adamw_params;

/* Masked-language-model pretraining (BERT's MLM objective, without next-sentence
 * prediction). The head is Hugging Face's cls.predictions: t = LayerNorm(GELU(dense(h)))
 * on the last hidden state h of each masked position, logits = t · word_emb^T + bias (the
 * decoder shares the word embedding table, so its gradient adds to word_emb's). The head's
 * parameters live in their own flat array (laid out by bert_mlm_point; nlu/train/bert_mlm.c names,
 * initializes and saves it); the model's pooler and joint heads take no part and get no gradient.
 */
typedef struct bert_mlm_head {
    float *dense_w; /* (H, H) cls.predictions.transform.dense */
    float *dense_b; /* (H) */
    float *ln_w;    /* (H) cls.predictions.transform.LayerNorm */
    float *ln_b;    /* (H) */
    float *bias;    /* (V) cls.predictions.bias, the decoder's */
} bert_mlm_head;

typedef struct bert_mlm_loss {
    float loss;  /* mean cross-entropy over the masked positions (0 when none) */
    int masked;  /* positions predicted */
    int correct; /* of them, those whose argmax is the original piece */
} bert_mlm_loss;

/* Floats in a head's array, and the pointer layout over it. */
size_t bert_mlm_param_count(const bert_config *c);
void bert_mlm_point(bert_mlm_head *h, const bert_config *c, float *params);

/* PARLEY_OK when b is a valid batch for a model of config c, dropout a valid rate and
 * target (N) a masked-LM target per token (-1: not predicted, else a piece id), with the
 * count of predicted tokens in *masked; otherwise PARLEY_ERR_INVALID_ARG naming the
 * position at fault. */
parley_status bert_mlm_check(const bert_config *c, const bert_batch *b, const int *target,
                             float dropout, int *masked);

/* The sparse weights learn by SGD with this momentum beside the encoder's AdamW, on either
 * trainer (nlu/train/sparse_train.h says why). */
#define BERT_SPARSE_MOMENTUM 0.9f

#endif
