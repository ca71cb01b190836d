/* sparse_train.c — the sparse features in training (sparse_train.h): learning the
 * featurizer from the training set, swapping it into the model, and the rows of a batch.
 *
 * What the features are is nlu/sparse/sparse.c's; how their logits join the encoder's is
 * nlu/bert_sparse.c's; this file only connects them to the training data.
 */
#include <string.h>

#include "nlu/cpu/ops_backward.h"
#include "nlu/train/defaults.h"
#include "nlu/train/sparse_train.h"
#include "nlu/train/train_util.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

/* A featurizer learned from ds, its word rows normalized by kind where the examples are
 * few, its lookup values matched within a typing slip (NULL in *out when it has no feature
 * at all). */
static parley_status learn(const ds_dataset *ds, int word_norm_by_kind, sf_featurizer **out)
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
                          .regexes = tables + ds->n_lookups,
                          .word_norm_by_kind = word_norm_by_kind,
                          .lookup_slips = 1 };
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

parley_status train_sparse_setup(bert_model **m, const ds_dataset *ds, int on,
                                 int word_norm_by_kind)
{
    parley_status st;
    sf_featurizer *sf = NULL;
    bert_config cfg = { 0 };
    bert_model *old = *m, *fresh = NULL;
    if (!on && !old->cfg.sparse_sent && !old->cfg.sparse_word)
        return PARLEY_OK;
    if (on && (st = learn(ds, word_norm_by_kind, &sf)) != PARLEY_OK)
        return st;
    if ((st = bert_config_copy(&cfg, &old->cfg)) != PARLEY_OK)
        goto fail;
    cfg.sparse_sent = sf_sentence_size(sf);
    cfg.sparse_word = sf_word_size(sf);
    /* The sparse weights are the last parameters (nlu/model/model.h), so everything else is a
     * common prefix of both layouts. */
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

/* SGD with momentum (torch.optim.SGD's, no dampening, no decay): v = mu v + g; w -= lr v. */
static void sgd_step(float *w, const float *g, float *v, size_t n, float lr)
{
    for (size_t i = 0; i < n; i++) {
        v[i] = BERT_SPARSE_MOMENTUM * v[i] + g[i];
        w[i] -= lr * v[i];
    }
}

void train_sparse_update(bert_model *m, const float *grads, float *mom, float *vel,
                         const unsigned char *decay, long t, const adamw_params *p, float sparse_lr,
                         float slot_lr)
{
    const size_t dense = (size_t)(m->w.sparse_intent_w - m->params), n = m->n_params - dense;
    /* U, then S (with whatever alignment lies between them, which has no gradient). */
    const size_t n_u = (size_t)(m->w.sparse_slot_w - m->w.sparse_intent_w);
    adamw_step(m->params, grads, mom, vel, decay, dense, t, p);
    /* An intent that is the sparse features' alone was fitted by the pre-fit: more passes
     * would only fit its few examples harder. */
    if (!m->cfg.intent_sparse_only)
        sgd_step(m->params + dense, grads + dense, mom + dense, n_u, sparse_lr);
    sgd_step(m->params + dense + n_u, grads + dense + n_u, mom + dense + n_u, n - n_u, slot_lr);
}

/* Softmax cross-entropy of the n logits in z against label y: their gradient times scale
 * into dz; returns the loss. */
static double xent(const float *z, float *dz, int n, int y, float scale)
{
    float loss;
    cpu_softmax_xent(dz, &loss, z, &y, 1, n, scale);
    return loss;
}

/* The weights a fit updates: the intent map U (NI, FS) and, unless NULL, the slot map S
 * (NS, FW) somewhere after U in the same array (as in the model, nlu/model/model.h). */
typedef struct fit_maps {
    const bert_config *c;
    float *u, *s;
} fit_maps;

/* SGD passes over the examples subset[0..n_sub) of set (train_sparse_prefit's loss). */
static parley_status fit(const fit_maps *w, const sparse_prefit_set *set, const float *share,
                         const int *subset, int n_sub, const sparse_prefit_params *p,
                         double *final_loss)
{
    const bert_config *c = w->c;
    const int NI = c->n_intents, NS = c->n_slots, wide = NI > NS ? NI : NS;
    /* Where S starts from U (the model may align it), and the weights updated. */
    const size_t n_u = w->s ? (size_t)(w->s - w->u) : (size_t)NI * (size_t)c->sparse_sent,
                 n = n_u + (w->s ? (size_t)NS * (size_t)c->sparse_word : 0);
    float *g = pl_malloc((n + 1) * sizeof *g), *mom = pl_calloc(n + 1, sizeof *mom),
          *row = pl_malloc(2 * (size_t)wide * sizeof *row), *drow = row + wide;
    int *perm = pl_malloc(((size_t)n_sub + 1) * sizeof *perm);
    parley_status st = PARLEY_OK;
    if (!g || !mom || !row || !perm) {
        st = pl_nomem("fitting the sparse features (%zu weights)", n);
        goto done;
    }
    const int steps_per_epoch = (n_sub + p->batch - 1) / p->batch;
    double epoch_loss = 0;
    for (int e = 0; e < p->epochs; e++) {
        train_shuffle(perm, n_sub, train_mix(p->seed, (uint64_t)e));
        epoch_loss = 0;
        for (int k = 0; k < steps_per_epoch; k++) {
            const int first = k * p->batch,
                      nb = n_sub - first < p->batch ? n_sub - first : p->batch;
            memset(g, 0, n * sizeof *g);
            for (int j = 0; j < nb; j++) {
                const int ex = subset[perm[first + j]], y = set->intent[ex];
                const float cw = (p->class_weight ? p->class_weight[y] : 1.0f) * share[ex];
                memset(row, 0, (size_t)NI * sizeof *row);
                sf_rows_gemv(&set->rows->sent, ex, w->u, NI, c->sparse_sent, row);
                epoch_loss += cw * xent(row, drow, NI, y, cw / (float)nb);
                sf_rows_outer(&set->rows->sent, ex, drow, NI, c->sparse_sent, g);
                int scored = 0;
                for (size_t tk = set->off[ex]; tk < set->off[ex + 1]; tk++)
                    scored += set->slot[tk] >= 0;
                for (size_t tk = set->off[ex]; tk < set->off[ex + 1] && w->s && c->sparse_word;
                     tk++) {
                    if (set->slot[tk] < 0)
                        continue;
                    const float sc = p->slot_weight / (float)(scored * nb);
                    memset(row, 0, (size_t)NS * sizeof *row);
                    sf_rows_gemv(&set->rows->tok, (int)tk, w->s, NS, c->sparse_word, row);
                    epoch_loss += p->slot_weight / scored * xent(row, drow, NS, set->slot[tk], sc);
                    sf_rows_outer(&set->rows->tok, (int)tk, drow, NS, c->sparse_word, g + n_u);
                }
            }
            sgd_step(w->u, g, mom, n_u, p->lr);
            sgd_step(w->u + n_u, g + n_u, mom + n_u, n - n_u, p->slot_lr);
        }
        epoch_loss /= n_sub;
    }
    if (final_loss)
        *final_loss = epoch_loss;
done:
    pl_free(g);
    pl_free(mom);
    pl_free(row);
    pl_free(perm);
    return st;
}

/* The written example example e stands for. */
static int source_of(const sparse_prefit_set *set, int e)
{
    return set->source ? set->source[e] : e;
}

/* Each example's share of the intent loss: 1 / (1 + the variants of its source), or 1 where
 * the fits take written examples alone (written_only). NULL when out of memory. */
static float *shares_of(const sparse_prefit_set *set, int written_only)
{
    float *share = pl_calloc((size_t)set->n + 1, sizeof *share);
    if (!share)
        return NULL;
    for (int e = 0; e < set->n; e++)
        share[source_of(set, e)] += written_only ? source_of(set, e) == e : 1.0f;
    for (int e = 0; e < set->n; e++)
        if (source_of(set, e) != e)
            share[e] = share[source_of(set, e)];
    for (int e = 0; e < set->n; e++)
        share[e] = 1.0f / share[e];
    return share;
}

parley_status train_sparse_prefit(bert_model *m, const sparse_prefit_set *set,
                                  const sparse_prefit_params *p, double *final_loss)
{
    parley_status st = PARLEY_OK;
    int *all = pl_malloc(((size_t)set->n + 1) * sizeof *all);
    float *share = shares_of(set, 0);
    if (!all || !share) {
        st = pl_nomem("fitting the sparse features");
        goto done;
    }
    for (int i = 0; i < set->n; i++)
        all[i] = i;
    const fit_maps w = { &m->cfg, m->w.sparse_intent_w, m->w.sparse_slot_w };
    st = fit(&w, set, share, all, set->n, p, final_loss);
done:
    pl_free(all);
    pl_free(share);
    return st;
}

/* train_sparse_crossfit for the intent map of config c (its n_intents and sparse_sent). */
static parley_status crossfit(const bert_config *c, const sparse_prefit_set *set,
                              const sparse_prefit_params *p, int folds, float *logits)
{
    const int NI = c->n_intents, n = set->n;
    const size_t n_u = (size_t)NI * (size_t)c->sparse_sent;
    int *fold = pl_malloc(((size_t)n + 1) * sizeof *fold),
        *seen = pl_calloc((size_t)NI + 1, sizeof *seen),
        *subset = pl_malloc(((size_t)n + 1) * sizeof *subset);
    float *u = pl_malloc((n_u + 1) * sizeof *u), *share = shares_of(set, set->crossfit_written);
    parley_status st = PARLEY_OK;
    if (!fold || !seen || !subset || !u || !share) {
        st = pl_nomem("cross-fitting the sparse features");
        goto done;
    }
    /* Each intent's written examples dealt round the folds in a seeded order, so every fold
     * holds out some of each intent that has at least `folds`; variants follow their
     * source. */
    train_shuffle(subset, n, train_mix(p->seed, (uint64_t)folds));
    for (int i = 0; i < n; i++)
        if (source_of(set, subset[i]) == subset[i])
            fold[subset[i]] = seen[set->intent[subset[i]]]++ % folds;
    for (int i = 0; i < n; i++)
        fold[i] = fold[source_of(set, i)];
    for (int f = 0; f < folds && st == PARLEY_OK; f++) {
        int n_sub = 0;
        for (int i = 0; i < n; i++)
            if (fold[i] != f && (!set->crossfit_written || source_of(set, i) == i))
                subset[n_sub++] = i;
        memset(u, 0, n_u * sizeof *u);
        const fit_maps w = { c, u, NULL };
        if ((st = fit(&w, set, share, subset, n_sub, p, NULL)) != PARLEY_OK)
            break;
        for (int i = 0; i < n; i++)
            if (fold[i] == f) {
                float *z = logits + (size_t)i * NI;
                memset(z, 0, (size_t)NI * sizeof *z);
                sf_rows_gemv(&set->rows->sent, i, u, NI, c->sparse_sent, z);
            }
    }
done:
    pl_free(fold);
    pl_free(seen);
    pl_free(subset);
    pl_free(u);
    pl_free(share);
    return st;
}

parley_status train_sparse_crossfit(const bert_model *m, const sparse_prefit_set *set,
                                    const sparse_prefit_params *p, int folds, float *logits)
{
    return crossfit(&m->cfg, set, p, folds, logits);
}

parley_status train_sparse_probe(const ds_dataset *ds, int word_norm_by_kind, int crossfit_written,
                                 const sparse_prefit_params *p, int folds, int *right, int *scored)
{
    const int n = ds->n_examples, NI = ds->n_intents;
    sf_featurizer *sf = NULL;
    bert_sparse_batch rows = { 0 };
    sf_rows words = { 0 };
    int n_words, *source = pl_malloc(((size_t)n + 1) * sizeof *source),
                 *intent = pl_malloc(((size_t)n + 1) * sizeof *intent);
    size_t *off = pl_calloc((size_t)n + 1, sizeof *off); /* no token rows: the intent alone */
    float *logits = pl_malloc(((size_t)n * (size_t)NI + 1) * sizeof *logits);
    parley_status st = PARLEY_OK;
    *right = *scored = 0;
    if (!source || !intent || !off || !logits) {
        st = pl_nomem("the sparse features' probe");
        goto done;
    }
    if ((st = learn(ds, word_norm_by_kind, &sf)) != PARLEY_OK || !sf || !sf_sentence_size(sf))
        goto done;
    for (int e = 0; e < n && st == PARLEY_OK; e++) {
        const ds_example *x = &ds->examples[e];
        source[e] = x->variant_of < 0 ? e : x->variant_of;
        intent[e] = x->intent;
        st = sf_featurize(sf, x->text, strlen(x->text), &rows.sent, &words, &n_words);
        sf_rows_free(&words);
    }
    const bert_config c = { .n_intents = NI, .sparse_sent = sf_sentence_size(sf) };
    const sparse_prefit_set set = { .n = n,
                                    .crossfit_written = crossfit_written,
                                    .source = source,
                                    .off = off,
                                    .intent = intent,
                                    .slot = intent, /* never read: no token rows */
                                    .rows = &rows };
    if (st != PARLEY_OK || (st = crossfit(&c, &set, p, folds, logits)) != PARLEY_OK)
        goto done;
    for (int e = 0; e < n; e++) {
        const float *z = logits + (size_t)e * (size_t)NI;
        int best = 0;
        for (int i = 1; i < NI; i++)
            best = z[i] > z[best] ? i : best;
        *scored += source[e] == e;
        *right += source[e] == e && best == intent[e];
    }
done:
    sf_free(sf);
    bert_sparse_batch_free(&rows);
    pl_free(source);
    pl_free(intent);
    pl_free(off);
    pl_free(logits);
    return st;
}
