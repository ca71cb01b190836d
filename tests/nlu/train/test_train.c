/* test_train.c — bert_train_step's contract beyond the math (which test_train_grads.py holds
 * to torch autograd): reproducible dropout, accumulation into the caller's gradients, the
 * training forward against bert_forward, input checks, clean allocation failure, and the
 * weight decay mask. (The training driver's tests are test_train_loop.c.)
 */
#include <stdlib.h>
#include <string.h>

#include "nlu/train/bert_train.h"
#include "nlu/cpu/ops.h"
#include "tests/check.h"
#include "tests/nlu/random_model.h"
#include "tests/fault.h"

enum { V = 40, H = 32, L = 2, NH = 4, I = 64, P = 20, NI = 5, NS = 7, B = 3, N = 17 };

/* Weights of order 0.5 and LayerNorm gains around 1: logits of order 1, gradients that are
 * not tiny, so differences show. */
static bert_model *random_model(void)
{
    bert_model *m = test_random_model((test_shape){ V, H, L, NH, I, P, NI, NS }, 0.5);
    if (!m)
        exit(1);
    return m;
}

static const int lens[B] = { 6, 2, 9 };
static int ids[N], intents[B], slots[N];

static void make_batch(void)
{
    for (int i = 0; i < N; i++) {
        ids[i] = 1 + (int)(test_urand() * (V - 1));
        slots[i] = i % 4 == 0 ? -1 : (int)(test_urand() * NS);
    }
    for (int s = 0; s < B; s++)
        intents[s] = (int)(test_urand() * NI);
}

static double max_abs(const float *a, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fabs(a[i]) > m ? fabs(a[i]) : m;
    return m;
}

static double max_diff(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fabs((double)a[i] - b[i]) > m ? fabs((double)a[i] - b[i]) : m;
    return m;
}

/* One step into zeroed gradients. */
static parley_status step(const bert_model *m, float dropout, uint64_t seed, float *g,
                          bert_loss *loss, float *il, float *sl)
{
    bert_batch b = { B, lens, ids };
    bert_labels y = { intents, slots, 0.7f, NULL, NULL };
    memset(g, 0, m->n_params * sizeof *g);
    return bert_train_step(m, &b, &y, dropout, seed, g, loss, il, sl);
}

static void test_dropout_determinism(const bert_model *m)
{
    const size_t n = m->n_params;
    float *g1 = malloc(n * sizeof *g1), *g2 = malloc(n * sizeof *g2), *g3 = malloc(n * sizeof *g3);
    float il1[B * NI], il2[B * NI], sl1[N * NS], sl2[N * NS];
    bert_loss l1, l2, l3;
    CHECK(step(m, 0.1f, 7, g1, &l1, il1, sl1) == PARLEY_OK, "step: %s", parley_errmsg());
    CHECK(step(m, 0.1f, 7, g2, &l2, il2, sl2) == PARLEY_OK, "step: %s", parley_errmsg());
    CHECK(!memcmp(g1, g2, n * sizeof *g1) && !memcmp(&l1, &l2, sizeof l1) &&
                  !memcmp(il1, il2, sizeof il1) && !memcmp(sl1, sl2, sizeof sl1),
          "the same seed gives bit-identical gradients, loss and logits");
    CHECK(step(m, 0.1f, 8, g3, &l3, il2, sl2) == PARLEY_OK, "step: %s", parley_errmsg());
    double d = max_diff(g1, g3, n);
    printf("another seed: max |g - g'| %.3g (max |g| %.3g), loss %.6f vs %.6f\n", d, max_abs(g1, n),
           l1.total, l3.total);
    CHECK(d > 1e-3 * max_abs(g1, n) && l1.total != l3.total, "another seed gives other gradients");
    CHECK(memcmp(il1, il2, sizeof il1) && memcmp(sl1, sl2, sizeof sl1),
          "another seed gives other logits");
    free(g1), free(g2), free(g3);
}

static void test_against_forward(const bert_model *m)
{
    float *g = malloc(m->n_params * sizeof *g);
    float il[B * NI], sl[N * NS], fil[B * NI], fsl[N * NS];
    bert_loss loss;
    bert_batch b = { B, lens, ids };
    CHECK(step(m, 0.0f, 1, g, &loss, il, sl) == PARLEY_OK, "step: %s", parley_errmsg());
    CHECK(bert_forward(m, &b, fil, fsl) == PARLEY_OK, "forward: %s", parley_errmsg());
    double di = max_diff(il, fil, B * NI), ds = max_diff(sl, fsl, N * NS);
    printf("training forward vs bert_forward: max |diff| intent %.3g slot %.3g\n", di, ds);
    CHECK(di <= 1e-5 * max_abs(fil, B * NI) + 1e-6 && ds <= 1e-5 * max_abs(fsl, N * NS) + 1e-6,
          "without dropout the logits are bert_forward's");
    /* The loss parts and counts, recomputed from the logits in double. */
    double intent = 0, slot = 0;
    int scored = 0;
    for (int s = 0; s < B; s++) {
        double z = 0;
        for (int k = 0; k < NI; k++)
            z += exp(il[s * NI + k]);
        intent += log(z) - il[s * NI + intents[s]];
    }
    for (int t = 0; t < N; t++) {
        if (slots[t] < 0)
            continue;
        double z = 0;
        for (int k = 0; k < NS; k++)
            z += exp(sl[t * NS + k]);
        slot += log(z) - sl[t * NS + slots[t]];
        scored++;
    }
    intent /= B;
    slot /= scored;
    CHECK(loss.slot_scored == scored && fabs(loss.intent - intent) < 1e-5 * intent &&
                  fabs(loss.slot - slot) < 1e-5 * slot &&
                  fabs(loss.total - (intent + 0.7 * slot)) < 1e-5 * loss.total,
          "loss %g = %g + 0.7 * %g (want %g, %g)", loss.total, loss.intent, loss.slot, intent,
          slot);
    free(g);
}

static void test_accumulation(const bert_model *m)
{
    const size_t n = m->n_params;
    float *g1 = malloc(n * sizeof *g1), *g2 = malloc(n * sizeof *g2);
    bert_loss loss;
    bert_batch b = { B, lens, ids };
    bert_labels y = { intents, slots, 0.7f, NULL, NULL };
    CHECK(step(m, 0.1f, 3, g1, &loss, NULL, NULL) == PARLEY_OK, "step: %s", parley_errmsg());
    memcpy(g2, g1, n * sizeof *g2);
    CHECK(bert_train_step(m, &b, &y, 0.1f, 3, g2, &loss, NULL, NULL) == PARLEY_OK, "step: %s",
          parley_errmsg());
    double worst = 0;
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs(g2[i] - 2.0 * g1[i]));
    CHECK(worst <= 1e-5 * max_abs(g1, n), "a second step adds onto the gradients (%.3g)", worst);
    /* Rows of the word table that no token uses get nothing. */
    int used[V] = { 0 }, untouched = 1;
    for (int i = 0; i < N; i++)
        used[ids[i]] = 1;
    bert_weights gw;
    bert_weights_point(&gw, &m->cfg, g1);
    for (int v = 0; v < V; v++)
        for (int k = 0; k < H && !used[v]; k++)
            untouched = untouched && gw.word_emb[(size_t)v * H + k] == 0.0f;
    CHECK(untouched, "unused vocabulary rows have zero gradient");
    free(g1), free(g2);
}

/* A workspace reused across batches of different sizes gives what fresh memory gives. */
static void test_workspace(const bert_model *m)
{
    const size_t n = m->n_params;
    float *g1 = malloc(n * sizeof *g1), *g2 = malloc(n * sizeof *g2);
    bert_loss l1, l2;
    bert_train_ws ws = { 0 };
    bert_labels y = { intents, slots, 0.7f, NULL, NULL };
    int same = 1;
    for (int k = 0; k < 4; k++) {
        /* 1, 2, 3 sequences, then 1 again: the arena grows, then is reused as it is. */
        bert_batch b = { k % 3 + 1, lens, ids };
        memset(g1, 0, n * sizeof *g1);
        memset(g2, 0, n * sizeof *g2);
        parley_status s1 = bert_train_step(m, &b, &y, 0.1f, 9, g1, &l1, NULL, NULL);
        parley_status s2 = bert_train_step_ws(&ws, m, &b, &y, 0.1f, 9, g2, &l2, NULL, NULL);
        same = same && s1 == PARLEY_OK && s2 == PARLEY_OK && !memcmp(g1, g2, n * sizeof *g1) &&
               l1.total == l2.total;
    }
    CHECK(same && ws.block && ws.cap > 0, "steps in a reused workspace match fresh ones");
    bert_train_ws_free(&ws);
    CHECK(!ws.block && !ws.cap, "bert_train_ws_free empties the workspace");
    bert_train_ws_free(&ws);
    bert_train_ws_free(NULL);
    free(g1), free(g2);
}

static void test_threads(const bert_model *m)
{
    const size_t n = m->n_params;
    float *g1 = malloc(n * sizeof *g1), *g2 = malloc(n * sizeof *g2);
    bert_loss loss;
    bert_set_threads(1);
    CHECK(step(m, 0.1f, 5, g1, &loss, NULL, NULL) == PARLEY_OK, "step: %s", parley_errmsg());
    bert_set_threads(2);
    CHECK(step(m, 0.1f, 5, g2, &loss, NULL, NULL) == PARLEY_OK, "step: %s", parley_errmsg());
    bert_set_threads(0);
    /* Only OpenBLAS's blocking may differ between thread counts. */
    double d = max_diff(g1, g2, n);
    printf("1 vs 2 threads: max |diff| %.3g (%s)\n", d, d == 0 ? "identical" : "BLAS rounding");
    CHECK(d <= 1e-5 * max_abs(g1, n), "thread counts agree to rounding");
    free(g1), free(g2);
}

static void test_bad_input(const bert_model *m)
{
    float *g = calloc(m->n_params, sizeof *g);
    bert_loss loss;
    int bad_len[B] = { 6, 0, 11 }, long_len[B] = { 6, 2, P + 1 };
    struct {
        const char *what, *needle;
        const int *len, *ids, *intent, *slot;
        float dropout;
    } cases[] = {
        { "intent out of range", "intent label 5", lens, ids, NULL, slots, 0 },
        { "slot below -1", "slot label -2", lens, ids, intents, NULL, 0 },
        { "slot out of range", "slot label 7", lens, ids, intents, NULL, 0 },
        { "id out of range", "id 40", lens, NULL, intents, slots, 0 },
        { "empty sequence", "0 tokens", bad_len, ids, intents, slots, 0 },
        { "too long", "21 tokens", long_len, ids, intents, slots, 0 },
        { "dropout 1", "dropout 1", lens, ids, intents, slots, 1.0f },
    };
    int bad_intent[B] = { 0, NI, 1 }, bad_slot[N], bad_ids[N];
    memcpy(bad_ids, ids, sizeof ids);
    bad_ids[12] = V;
    cases[0].intent = bad_intent;
    cases[3].ids = bad_ids;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        memcpy(bad_slot, slots, sizeof slots);
        bad_slot[5] = k == 1 ? -2 : NS;
        bert_batch b = { B, cases[k].len, cases[k].ids };
        bert_labels y = { cases[k].intent, cases[k].slot ? cases[k].slot : bad_slot, 1.0f, NULL,
                          NULL };
        parley_status st = bert_train_step(m, &b, &y, cases[k].dropout, 1, g, &loss, NULL, NULL);
        CHECK(st == PARLEY_ERR_INVALID_ARG && strstr(parley_errmsg(), cases[k].needle),
              "%s: %s: %s", cases[k].what, parley_status_str(st), parley_errmsg());
    }
    CHECK(max_abs(g, m->n_params) == 0, "failed steps leave the gradients alone");
    bert_batch empty = { 0, lens, ids };
    bert_labels y = { intents, slots, 1.0f, NULL, NULL };
    CHECK(bert_train_step(m, &empty, &y, 0, 1, g, &loss, NULL, NULL) == PARLEY_ERR_INVALID_ARG,
          "an empty batch");
    CHECK(bert_train_step(m, &empty, &y, 0, 1, NULL, &loss, NULL, NULL) == PARLEY_ERR_INVALID_ARG,
          "no gradients");
    free(g);
}

/* Fails the Nth allocation for N = 1, 2, ... until a step needs fewer than N; the same with
 * a workspace, which must stay usable after a failure. */
static void test_alloc_failures(const bert_model *m)
{
    float *g = calloc(m->n_params, sizeof *g);
    bert_loss loss;
    int clean = 1, completed = 0;
    long fail_at;
    for (fail_at = 1; fail_at < 1000 && !completed; fail_at++) {
        fault_on(fail_at);
        parley_status st = step(m, 0.1f, 1, g, &loss, NULL, NULL);
        fault_off();
        if (st == PARLEY_OK)
            completed = 1;
        else if (st != PARLEY_ERR_NOMEM || !strstr(parley_errmsg(), "activations"))
            clean = 0;
    }
    CHECK(completed && clean && fail_at > 2,
          "every allocation failure is PARLEY_ERR_NOMEM (%ld runs)", fail_at - 1);
    bert_train_ws ws = { 0 };
    bert_batch small = { 1, lens, ids }, full = { B, lens, ids };
    bert_labels y = { intents, slots, 1.0f, NULL, NULL };
    CHECK(bert_train_step_ws(&ws, m, &small, &y, 0.1f, 1, g, &loss, NULL, NULL) == PARLEY_OK,
          "a small batch: %s", parley_errmsg());
    fault_on(1);
    parley_status st = bert_train_step_ws(&ws, m, &full, &y, 0.1f, 1, g, &loss, NULL, NULL);
    fault_off();
    CHECK(st == PARLEY_ERR_NOMEM && !ws.block && !ws.cap, "growing the workspace fails cleanly");
    CHECK(bert_train_step_ws(&ws, m, &full, &y, 0.1f, 1, g, &loss, NULL, NULL) == PARLEY_OK,
          "the workspace works after a failure: %s", parley_errmsg());
    bert_train_ws_free(&ws);
    free(g);
}

static void test_decay_mask(const bert_model *m)
{
    unsigned char *decay = malloc(m->n_params);
    memset(decay, 2, m->n_params);
    bert_decay_mask(&m->cfg, decay);
    const bert_weights *w = &m->w;
    /* The matrices and tables decay, nothing else does; boundaries as the model lays out. */
    const float *matrices[][2] = {
        { w->word_emb, w->emb_ln_w },     { w->qkv_w, w->qkv_b },
        { w->attn_out_w, w->attn_out_b }, { w->ffn_in_w, w->ffn_in_b },
        { w->ffn_out_w, w->ffn_out_b },   { w->pool_w, w->pool_b },
        { w->intent_w, w->intent_b },     { w->slot_w, w->slot_b },
    };
    size_t want_ones = 0, ones = 0, bad = 0;
    for (size_t k = 0; k < sizeof matrices / sizeof *matrices; k++) {
        size_t at = (size_t)(matrices[k][0] - m->params),
               end = (size_t)(matrices[k][1] - m->params);
        for (size_t i = at; i < end; i++)
            bad += decay[i] != 1;
        want_ones += end - at;
    }
    for (size_t i = 0; i < m->n_params; i++) {
        ones += decay[i] == 1;
        bad += decay[i] > 1;
    }
    CHECK(!bad && ones == want_ones, "decay mask: %zu of %zu set, %zu wrong", ones, want_ones, bad);
    free(decay);
}

int main(void)
{
    test_seed(0x853c49e6748fea9bull);
    bert_model *m = random_model();
    make_batch();
    test_dropout_determinism(m);
    test_against_forward(m);
    test_accumulation(m);
    test_workspace(m);
    test_threads(m);
    test_bad_input(m);
    test_alloc_failures(m);
    test_decay_mask(m);
    bert_model_free(m);
    return check_done();
}
