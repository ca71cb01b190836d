/* test_sparse_prefit.c — the sparse pre-fit (nlu/train/sparse_train.h) on a set whose answer
 * is known: three intents, each with four sentence features of its own, and one tagged word
 * per example whose word feature says its tag.
 *
 * The fit must learn every intent and tag, leave the encoder's parameters as they were, and
 * honour the intent weights: an intent weighted 0 contributes no gradient, so its own
 * features keep zero weights and its examples are not learned; with half of the examples
 * lookup variants of the other half, all is learned still. Cross-fitting on the written
 * examples alone keeps a held-out example's features out of the fits.
 */
#include <stdlib.h>
#include <string.h>

#include "nlu/train/sparse_train.h"
#include "tests/check.h"
#include "tests/nlu/random_model.h"

enum { N = 24, NI = 3, NS = 3, FS = 13, FW = 2, TOK = 3 };

typedef struct toy {
    bert_sparse_batch rows;
    size_t off[N + 1];
    int intent[N], slot[N * TOK];
} toy;

static void toy_make(toy *t)
{
    memset(t, 0, sizeof *t);
    for (int e = 0; e < N; e++) {
        const int y = e % NI, own = y * 4 + (e / NI) % 4, shared = 12, w = e % 2;
        const int index[2] = { own, shared };
        const float value[2] = { 0.9f, 0.4f };
        const float one = 1.0f;
        t->intent[e] = y;
        t->off[e] = (size_t)e * TOK;
        CHECK(sf_rows_push(&t->rows.sent, index, value, 2) == PARLEY_OK, "sentence row");
        /* [CLS], the word, [SEP]: only the word is tagged (tag 1 + its feature). */
        CHECK(sf_rows_add_empty(&t->rows.tok) == PARLEY_OK &&
                      sf_rows_push(&t->rows.tok, &w, &one, 1) == PARLEY_OK &&
                      sf_rows_add_empty(&t->rows.tok) == PARLEY_OK,
              "token rows");
        t->slot[e * TOK] = t->slot[e * TOK + 2] = -1;
        t->slot[e * TOK + 1] = 1 + w;
    }
    t->off[N] = (size_t)N * TOK;
}

static bert_model *toy_model(void)
{
    bert_model *m = test_random_model((test_shape){ 20, 8, 1, 2, 16, 8, NI, NS }, 0.1);
    if (!m)
        return NULL;
    bert_config c = { 0 };
    bert_model *s = NULL;
    CHECK(bert_config_copy(&c, &m->cfg) == PARLEY_OK, "config copy");
    c.sparse_sent = FS;
    c.sparse_word = FW;
    CHECK(bert_model_alloc(&c, NULL, &s) == PARLEY_OK, "a model with sparse features: %s",
          parley_errmsg());
    bert_config_clear(&c);
    if (s) {
        memcpy(s->params, m->params, m->n_params * sizeof *m->params);
        memset(s->w.sparse_intent_w, 0, (s->n_params - m->n_params) * sizeof *s->params);
    }
    bert_model_free(m);
    return s;
}

/* Examples of intent `only` (or all, only < 0) whose sparse argmax is right. */
static int intents_right(const bert_model *m, const toy *t, int only)
{
    int right = 0;
    for (int e = 0; e < N; e++) {
        float z[NI] = { 0 };
        if (only >= 0 && t->intent[e] != only)
            continue;
        sf_rows_gemv(&t->rows.sent, e, m->w.sparse_intent_w, NI, FS, z);
        int best = 0;
        for (int i = 1; i < NI; i++)
            best = z[i] > z[best] ? i : best;
        right += best == t->intent[e];
    }
    return right;
}

static void test_fit(const float *class_weight, const int *source, const char *what)
{
    toy t;
    toy_make(&t);
    bert_model *m = toy_model();
    if (!m)
        return;
    const size_t dense = (size_t)(m->w.sparse_intent_w - m->params);
    float *before = malloc(dense * sizeof *before);
    memcpy(before, m->params, dense * sizeof *before);
    sparse_prefit_set set = { N, 0, source, t.off, t.intent, t.slot, &t.rows };
    sparse_prefit_params p = { .epochs = 30,
                               .batch = 5,
                               .lr = 1.0f,
                               .slot_lr = 1.0f,
                               .slot_weight = 1.0f,
                               .seed = 3,
                               .class_weight = class_weight };
    double loss = -1;
    CHECK(train_sparse_prefit(m, &set, &p, &loss) == PARLEY_OK, "%s: prefit: %s", what,
          parley_errmsg());
    CHECK(!memcmp(before, m->params, dense * sizeof *before), "%s: the encoder is untouched", what);
    if (!class_weight) {
        CHECK(loss >= 0 && loss < 0.1, "%s: final loss %g", what, loss);
        CHECK(intents_right(m, &t, -1) == N, "%s: every intent learned (%d of %d)", what,
              intents_right(m, &t, -1), N);
    } else {
        CHECK(intents_right(m, &t, 0) == N / NI && intents_right(m, &t, 1) == N / NI,
              "%s: the weighted intents learned", what);
        CHECK(intents_right(m, &t, 2) == 0, "%s: the intent weighted 0 is not learned (%d)", what,
              intents_right(m, &t, 2));
        int zero = 1;
        for (int i = 0; i < NI; i++)
            for (int f = 8; f < 12; f++)
                zero &= m->w.sparse_intent_w[i * FS + f] == 0.0f;
        CHECK(zero, "%s: intent 2's own features got no weight", what);
    }
    int tags = 0;
    for (int e = 0; e < N; e++) {
        float z[NS] = { 0 };
        sf_rows_gemv(&t.rows.tok, e * TOK + 1, m->w.sparse_slot_w, NS, FW, z);
        int best = 0;
        for (int i = 1; i < NS; i++)
            best = z[i] > z[best] ? i : best;
        tags += best == t.slot[e * TOK + 1];
    }
    CHECK(tags == N, "%s: every tag learned (%d of %d)", what, tags, N);
    free(before);
    bert_model_free(m);
    bert_sparse_batch_free(&t.rows);
}

/* U moves at lr and S at slot_lr: each rate moves its own map only. */
static void test_rates(void)
{
    toy t;
    toy_make(&t);
    sparse_prefit_set set = { N, 0, NULL, t.off, t.intent, t.slot, &t.rows };
    for (int which = 0; which < 2; which++) {
        bert_model *m = toy_model();
        if (!m)
            break;
        const size_t n_u = (size_t)NI * FS, n_s = (size_t)NS * FW;
        sparse_prefit_params p = { .epochs = 5,
                                   .batch = 5,
                                   .lr = which ? 1.0f : 0.0f,
                                   .slot_lr = which ? 0.0f : 1.0f,
                                   .slot_weight = 1.0f,
                                   .seed = 3 };
        CHECK(train_sparse_prefit(m, &set, &p, NULL) == PARLEY_OK, "prefit: %s", parley_errmsg());
        int u_moved = 0, s_moved = 0;
        for (size_t i = 0; i < n_u; i++)
            u_moved |= m->w.sparse_intent_w[i] != 0.0f;
        for (size_t i = 0; i < n_s; i++)
            s_moved |= m->w.sparse_slot_w[i] != 0.0f;
        CHECK(u_moved == which && s_moved == !which, "lr %g, slot_lr %g: U %s, S %s", (double)p.lr,
              (double)p.slot_lr, u_moved ? "moved" : "still", s_moved ? "moved" : "still");
        bert_model_free(m);
    }
    bert_sparse_batch_free(&t.rows);
}

/* The training step's update: U at sparse_lr (left alone when the intent is the sparse
 * features' alone), S at slot_lr; one SGD step from zero momentum moves a weight by -lr * g. */
static void test_update(void)
{
    for (int sparse_only = 0; sparse_only < 2; sparse_only++) {
        bert_model *m = toy_model();
        if (!m)
            break;
        m->cfg.intent_sparse_only = sparse_only;
        const size_t n = m->n_params;
        float *g = malloc(n * sizeof *g), *mom = calloc(n, sizeof *mom),
              *vel = calloc(n, sizeof *vel);
        unsigned char *decay = calloc(n, 1);
        for (size_t i = 0; i < n; i++)
            g[i] = 1.0f;
        const adamw_params ap = { 0.0f, 0.9f, 0.999f, 1e-8f, 0.0f };
        train_sparse_update(m, g, mom, vel, decay, 1, &ap, 0.5f, 2.0f);
        const float u = m->w.sparse_intent_w[0], s = m->w.sparse_slot_w[NS * FW - 1];
        CHECK(u == (sparse_only ? 0.0f : -0.5f) && s == -2.0f,
              "intent_sparse_only %d: U moved to %g, S to %g", sparse_only, (double)u, (double)s);
        free(g);
        free(mom);
        free(vel);
        free(decay);
        bert_model_free(m);
    }
}

/* Cross-fitting with variants that hold a held-out example's values. Written example e
 * (of 12, intent e % 3) has one sentence feature of its own, e; its variant (example 12 + e)
 * holds feature (e + 3) % 12, the feature of another written example of its intent, as a
 * variant drawn from the data's own values may. Fitting on the variants, a held-out example's
 * feature is learned through another's variant whenever the two are in different folds;
 * fitting on the written examples alone (crossfit_written), never: its logits stay 0. */
static void test_crossfit_written(void)
{
    enum { W = 12 };
    bert_sparse_batch rows = { 0 };
    size_t off[2 * W + 1];
    int intent[2 * W], slot[2 * W * TOK], source[2 * W];
    for (int e = 0; e < 2 * W; e++) {
        const int f = e < W ? e : (e - W + 3) % W, w = 0;
        const float one = 1.0f;
        intent[e] = e % 3;
        source[e] = e < W ? e : e - W;
        off[e] = (size_t)e * TOK;
        slot[e * TOK] = slot[e * TOK + 1] = slot[e * TOK + 2] = -1;
        CHECK(sf_rows_push(&rows.sent, &f, &one, 1) == PARLEY_OK &&
                      sf_rows_add_empty(&rows.tok) == PARLEY_OK &&
                      sf_rows_push(&rows.tok, &w, &one, 1) == PARLEY_OK &&
                      sf_rows_add_empty(&rows.tok) == PARLEY_OK,
              "rows of example %d", e);
    }
    off[2 * W] = (size_t)2 * W * TOK;
    bert_model *m = toy_model();
    const sparse_prefit_params p = {
        .epochs = 20, .batch = 4, .lr = 1.0f, .slot_lr = 1.0f, .slot_weight = 1.0f, .seed = 5
    };
    for (int written_only = 0; m && written_only < 2; written_only++) {
        sparse_prefit_set set = { 2 * W, written_only, source, off, intent, slot, &rows };
        float z[2 * W * NI];
        CHECK(train_sparse_crossfit(m, &set, &p, 3, z) == PARLEY_OK, "cross-fit: %s",
              parley_errmsg());
        int leaked = 0, zero = 1;
        for (int e = 0; e < W; e++) {
            leaked += z[e * NI + intent[e]] > 0.1f;
            for (int i = 0; i < NI; i++)
                zero &= z[e * NI + i] == 0.0f;
        }
        if (written_only)
            CHECK(zero, "written examples alone: no held-out feature learned");
        else
            CHECK(leaked > 0, "with the variants a held-out feature is learned (%d)", leaked);
    }
    bert_model_free(m);
    bert_sparse_batch_free(&rows);
}

int main(void)
{
    test_fit(NULL, NULL, "unweighted");
    const float w[NI] = { 1.0f, 0.5f, 0.0f };
    test_fit(w, NULL, "intent 2 weighted 0");
    /* The second half made from the first by lookup substitution: each pair shares one
     * example's weight in the intent loss, and all is still learned. */
    int source[N];
    for (int e = 0; e < N; e++)
        source[e] = e < N / 2 ? e : e - N / 2;
    test_fit(NULL, source, "half of them variants");
    test_rates();
    test_update();
    test_crossfit_written();
    return check_done();
}
