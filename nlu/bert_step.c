/* bert_step.c — the parts of a training step both trainers share (bert_step.h): the keys of
 * the dropout masks, so the GPU trainer (nlu/cuda/) draws the CPU's (nlu/train/bert_train.c),
 * and the checks of a step's batch and labels, so both refuse the same input with the same
 * detail. The steps' math is each trainer's own.
 */
#include <math.h>
#include <stdint.h>

#include "nlu/bert_step.h"
#include "nlu/cpu/ops_backward.h"
#include "sdk/base/error.h"

/* The tensor part of a mask's key: the sites outside the layers are 0..2, then each layer
 * numbers its three. */
enum { DROP_LAYER0 = BERT_DROP_ATTN_PROBS, DROP_PER_LAYER = 3 };

uint64_t bert_dropout_key(uint64_t seed, int layer, bert_drop_site site)
{
    if (layer < 0)
        return cpu_dropout_key(seed, (uint64_t)site);
    return cpu_dropout_key(seed, DROP_LAYER0 + (uint64_t)layer * DROP_PER_LAYER +
                                         (uint64_t)(site - BERT_DROP_ATTN_PROBS));
}

parley_status bert_step_check_batch(const bert_config *c, const bert_batch *b, float dropout)
{
    int n_tokens;
    if (b->n_seq < 1 || !b->len || !b->ids)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "bert_train_step: a batch needs at least one "
                       "sequence, its lengths and ids (%d sequences)",
                       b->n_seq);
    if (!(dropout >= 0.0f && dropout < 1.0f))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "bert_train_step: dropout %g must be in [0, 1)",
                       dropout);
    return bert_check_pieces(c, b, "bert_train_step", &n_tokens);
}

/* Checks the joint labels (and sparse features) of a batch bert_step_check_batch passed. */
static parley_status check_labels(const bert_config *c, const bert_batch *b, const bert_labels *y)
{
    parley_status st;
    int n_tok = 0;
    for (int s = 0; s < b->n_seq; s++)
        n_tok += b->len[s]; /* bert_step_check_batch has bounded them */
    if ((c->sparse_sent || c->sparse_word) &&
        (st = bert_sparse_check(c, y->sparse, b->n_seq, n_tok)) != PARLEY_OK)
        return pl_wrap(st, "bert_train_step");
    if (!y->intent || !y->slot || !isfinite(y->slot_weight))
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "bert_train_step: the labels need intents, slot "
                       "tags and a finite slot weight (%g)",
                       y->slot_weight);
    size_t n = 0;
    for (int s = 0; s < b->n_seq; s++) {
        if (y->intent[s] < 0 || y->intent[s] >= c->n_intents)
            return pl_fail(PARLEY_ERR_INVALID_ARG,
                           "bert_train_step: sequence %d has intent "
                           "label %d; the model has intents 0 to %d",
                           s, y->intent[s], c->n_intents - 1);
        for (int t = 0; t < b->len[s]; t++) {
            const int tag = y->slot[n + (size_t)t];
            if (tag < -1 || tag >= c->n_slots)
                return pl_fail(PARLEY_ERR_INVALID_ARG,
                               "bert_train_step: token %d of sequence %d "
                               "has slot label %d; the model has tags 0 to %d (-1: not scored)",
                               t, s, tag, c->n_slots - 1);
        }
        n += (size_t)b->len[s];
    }
    return PARLEY_OK;
}

parley_status bert_train_check(const bert_config *c, const bert_batch *b, const bert_labels *y,
                               float dropout)
{
    parley_status st;
    if (!c || !b || !y)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "bert_train_check: NULL config, batch or labels");
    if ((st = bert_step_check_batch(c, b, dropout)) != PARLEY_OK)
        return st;
    return check_labels(c, b, y);
}

size_t bert_mlm_param_count(const bert_config *c)
{
    const size_t H = (size_t)c->hidden;
    return H * H + 3 * H + (size_t)c->vocab_size;
}

void bert_mlm_point(bert_mlm_head *h, const bert_config *c, float *params)
{
    const size_t H = (size_t)c->hidden;
    h->dense_w = params;
    h->dense_b = h->dense_w + H * H;
    h->ln_w = h->dense_b + H;
    h->ln_b = h->ln_w + H;
    h->bias = h->ln_b + H;
}

parley_status bert_mlm_check(const bert_config *c, const bert_batch *b, const int *target,
                             float dropout, int *masked)
{
    parley_status st;
    if ((st = bert_step_check_batch(c, b, dropout)) != PARLEY_OK)
        return st;
    size_t n = 0;
    for (int s = 0; s < b->n_seq; s++)
        n += (size_t)b->len[s];
    *masked = 0;
    for (size_t i = 0; i < n; i++) {
        if (target[i] < -1 || target[i] >= c->vocab_size)
            return pl_fail(PARLEY_ERR_INVALID_ARG,
                           "bert_mlm_step: token %zu of the batch has target %d; the vocabulary "
                           "has ids 0 to %d (-1: not masked)",
                           i, target[i], c->vocab_size - 1);
        *masked += target[i] >= 0;
    }
    return PARLEY_OK;
}
