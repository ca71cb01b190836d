/* bert_sparse.c — the sparse features of a packed batch (bert.h): rows per sequence and per
 * token from the featurizer (nlu/sparse/sparse.c), their logits added to the encoder's, and the
 * gradients of the sparse weights.
 *
 * Inference (batch.c) and training (train/bert_train.c, train/train.c) both go through
 * here, so which token a word's features land on is written once.
 */
#include <string.h>

#include "nlu/bert.h"
#include "sdk/base/error.h"

parley_status bert_sparse_rows(const bert_model *m, const char *text, const wp_tokens *tk,
                               bert_sparse_batch *x)
{
    parley_status st;
    sf_rows words = { 0 };
    int n_words = 0, len = bert_seq_len(&m->cfg, tk), prev = -1;
    if ((st = sf_featurize(m->sparse, text, strlen(text), &x->sent, &words, &n_words)) != PARLEY_OK)
        goto done;
    if (n_words != tk->n_words) {
        st = pl_fail(PARLEY_ERR_INTERNAL,
                     "sparse features: \"%s\" has %d words for the featurizer, %d for the "
                     "tokenizer",
                     text, n_words, tk->n_words);
        goto done;
    }
    if ((st = sf_rows_add_empty(&x->tok)) != PARLEY_OK) /* [CLS] */
        goto done;
    for (int p = 0; p < len - 2 && st == PARLEY_OK; p++) {
        int w = tk->pieces[p].word;
        st = w != prev ? sf_rows_append(&x->tok, &words, w, 1) : sf_rows_add_empty(&x->tok);
        prev = w;
    }
    if (st == PARLEY_OK)
        st = sf_rows_add_empty(&x->tok); /* [SEP] */
done:
    sf_rows_free(&words);
    return st;
}

parley_status bert_sparse_check(const bert_config *c, const bert_sparse_batch *x, int B, int N)
{
    parley_status st;
    if (!x)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "the model has sparse features and the batch none");
    if ((st = sf_rows_check(&x->sent, B, c->sparse_sent, "sentence features")) != PARLEY_OK ||
        (st = sf_rows_check(&x->tok, N, c->sparse_word, "word features")) != PARLEY_OK)
        return st;
    return PARLEY_OK;
}

void bert_sparse_logits(const bert_model *m, const bert_sparse_batch *x, float *intent_logits,
                        float *slot_logits)
{
    const bert_config *c = &m->cfg;
    if (c->intent_sparse_only)
        memset(intent_logits, 0, (size_t)x->sent.n_rows * (size_t)c->n_intents * sizeof(float));
    for (int b = 0; b < x->sent.n_rows; b++)
        sf_rows_gemv(&x->sent, b, m->w.sparse_intent_w, c->n_intents, c->sparse_sent,
                     intent_logits + (size_t)b * c->n_intents);
    for (int t = 0; t < x->tok.n_rows; t++)
        sf_rows_gemv(&x->tok, t, m->w.sparse_slot_w, c->n_slots, c->sparse_word,
                     slot_logits + (size_t)t * c->n_slots);
}

void bert_sparse_backward(const bert_model *m, const bert_sparse_batch *x, const float *d_intent,
                          const float *d_slot, bert_weights *g)
{
    const bert_config *c = &m->cfg;
    for (int b = 0; b < x->sent.n_rows; b++)
        sf_rows_outer(&x->sent, b, d_intent + (size_t)b * c->n_intents, c->n_intents,
                      c->sparse_sent, g->sparse_intent_w);
    for (int t = 0; t < x->tok.n_rows; t++)
        sf_rows_outer(&x->tok, t, d_slot + (size_t)t * c->n_slots, c->n_slots, c->sparse_word,
                      g->sparse_slot_w);
}

void bert_sparse_batch_free(bert_sparse_batch *x)
{
    sf_rows_free(&x->sent);
    sf_rows_free(&x->tok);
}
