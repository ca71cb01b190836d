/* sparse_train.c — the sparse features in training (sparse_train.h): learning the
 * featurizer from the training set, swapping it into the model, and the rows of a batch.
 *
 * What the features are is nlu/sparse.c's; how their logits join the encoder's is
 * nlu/bert_sparse.c's; this file only connects them to the training data.
 */
#include <string.h>

#include "nlu/train/sparse_train.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

/* A featurizer learned from ds (NULL in *out when it has no feature at all). */
static parley_status learn(const ds_dataset *ds, sf_featurizer **out)
{
    parley_status st = PARLEY_OK;
    const char **texts = pl_malloc(((size_t)ds->n_examples + 1) * sizeof *texts);
    sf_table *tables = pl_calloc((size_t)ds->n_lookups + (size_t)ds->n_regexes + 1, sizeof *tables);
    *out = NULL;
    if (!texts || !tables) {
        st = pl_nomem("%s: learning the sparse features", ds->source);
        goto done;
    }
    for (int i = 0; i < ds->n_examples; i++)
        texts[i] = ds->examples[i].text;
    const ds_values *from[2] = { ds->lookups, ds->regexes };
    const int count[2] = { ds->n_lookups, ds->n_regexes };
    for (int k = 0, at = 0; k < 2; k++)
        for (int i = 0; i < count[k]; i++, at++)
            tables[at] = (sf_table){ from[k][i].name, from[k][i].n,
                                     (const char *const *)from[k][i].values };
    sf_build_params p = { .n_lookups = ds->n_lookups,
                          .lookups = tables,
                          .n_regexes = ds->n_regexes,
                          .regexes = tables + ds->n_lookups };
    if ((st = sf_build(texts, ds->n_examples, &p, out)) != PARLEY_OK) {
        pl_wrap(st, "%s: learning the sparse features", ds->source);
        goto done;
    }
    if (!sf_sentence_size(*out) && !sf_word_size(*out)) {
        sf_free(*out);
        *out = NULL;
    }
done:
    pl_free(texts);
    pl_free(tables);
    return st;
}

parley_status train_sparse_setup(bert_model **m, const ds_dataset *ds, int on)
{
    parley_status st;
    sf_featurizer *sf = NULL;
    bert_config cfg = { 0 };
    bert_model *old = *m, *fresh = NULL;
    if (!on && !old->cfg.sparse_sent && !old->cfg.sparse_word)
        return PARLEY_OK;
    if (on && (st = learn(ds, &sf)) != PARLEY_OK)
        return st;
    if ((st = bert_config_copy(&cfg, &old->cfg)) != PARLEY_OK)
        goto fail;
    cfg.sparse_sent = sf_sentence_size(sf);
    cfg.sparse_word = sf_word_size(sf);
    /* The sparse weights are the last parameters (model.h), so everything else is a common
     * prefix of both layouts. */
    const size_t dense = (size_t)(old->w.sparse_intent_w - old->params);
    st = bert_model_alloc(&cfg, old->vocab, &fresh);
    old->vocab = NULL; /* owned by the new model, or freed */
    if (st != PARLEY_OK)
        goto fail;
    memcpy(fresh->params, old->params, dense * sizeof *old->params);
    st = bert_model_set_sparse(fresh, sf);
    sf = NULL; /* the model's, or freed */
    if (st != PARLEY_OK)
        goto fail;
    bert_model_free(old);
    *m = fresh;
    fresh = NULL;
fail:
    sf_free(sf);
    bert_model_free(fresh);
    bert_config_clear(&cfg);
    return st;
}

parley_status train_sparse_batch(const bert_sparse_batch *set, const size_t *off, const int *ex,
                                 int nb, bert_sparse_batch *x)
{
    parley_status st = PARLEY_OK;
    x->sent.n_rows = x->tok.n_rows = 0; /* keeps the arrays for the next batch */
    for (int j = 0; j < nb && st == PARLEY_OK; j++) {
        int e = ex[j];
        if ((st = sf_rows_append(&x->sent, &set->sent, e, 1)) == PARLEY_OK)
            st = sf_rows_append(&x->tok, &set->tok, (int)off[e], (int)(off[e + 1] - off[e]));
    }
    return st;
}

void train_sparse_adamw(bert_model *m, const float *grads, float *mom, float *vel,
                        const unsigned char *decay, long t, const adamw_params *p, float sparse_lr)
{
    const size_t dense = (size_t)(m->w.sparse_intent_w - m->params), n = m->n_params - dense;
    adamw_params ps = *p;
    ps.lr = sparse_lr;
    adamw_step(m->params, grads, mom, vel, decay, dense, t, p);
    adamw_step(m->params + dense, grads + dense, mom + dense, vel + dense, decay + dense, n, t,
               &ps);
}
