/* test_cuda_train.c — the GPU trainer (nlu/cuda/cuda_train.h) against the CPU trainer.
 *
 * On small random models (head sizes 16 and 48) and batches of mixed lengths: the loss and
 * every parameter gradient of one step, without and with dropout (the GPU draws the CPU's
 * masks), in FP32 (within 1e-3 of the largest gradient) and BF16 (within 5e-2); then three
 * full steps (clipping and AdamW) in FP32, whose losses and weights must follow the CPU's.
 * The same with sparse features (random rows whose features repeat across rows, the intent
 * the encoder's and the sparse features' or theirs alone): their weights' gradients and SGD
 * steps too. Training runs on the tiny synthetic set (argv[1]) must learn it perfectly, as
 * the CPU does: without sparse features on "cuda:0", and with them (the trainer's default)
 * on "auto", which must pick the GPU. The masked-LM pretraining step likewise: the loss and
 * the gradients of the model and the head in FP32 and BF16, with and without dropout, its
 * scoring, and three clipped AdamW steps against the CPU's; and a pretraining run on the
 * GPU must learn a templated text (held-out masked-LM accuracy), as the CPU's test asks.
 * Bad batches and FP16 get clear errors. Exits 77 without a GPU.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/train/bert_train.h"
#include "nlu/cuda/cuda_train.h"
#include "nlu/train/sparse_train.h"
#include "nlu/train/train.h"
#include "nlu/train/train_util.h"
#include "tests/check.h"
#include "tests/nlu/random_model.h"

static float max_abs(const float *x, size_t n)
{
    float m = 0;
    for (size_t i = 0; i < n; i++)
        m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
    return m;
}

typedef struct batch {
    int B, N, *len, *ids, *intent, *slot;
    bert_sparse_batch *sparse; /* NULL: none */
} batch;

/* A random batch of B sequences with lengths len; every third piece is not scored. */
static batch make_batch(const bert_config *c, int B, const int *len, unsigned seed)
{
    batch b = { B,    0,   malloc((size_t)B * sizeof(int)), NULL, malloc((size_t)B * sizeof(int)),
                NULL, NULL };
    for (int i = 0; i < B; i++)
        b.N += len[i];
    memcpy(b.len, len, (size_t)B * sizeof(int));
    b.ids = malloc((size_t)b.N * sizeof(int));
    b.slot = malloc((size_t)b.N * sizeof(int));
    srand(seed);
    for (int i = 0; i < B; i++)
        b.intent[i] = rand() % c->n_intents;
    for (int i = 0; i < b.N; i++) {
        b.ids[i] = rand() % c->vocab_size;
        b.slot[i] = i % 3 == 2 ? -1 : rand() % c->n_slots;
    }
    return b;
}

/* Gives b random sparse rows for a model of config c: a sentence row per sequence and a
 * row per token, each of 0 to 4 increasing features from the first few (so that rows share
 * features) with values in (0, 1]. */
static void add_sparse(const bert_config *c, batch *b, unsigned seed)
{
    b->sparse = calloc(1, sizeof *b->sparse);
    srand(seed);
    for (int i = 0; b->sparse && i < b->B + b->N; i++) {
        sf_rows *r = i < b->B ? &b->sparse->sent : &b->sparse->tok;
        const int n_feat = i < b->B ? c->sparse_sent : c->sparse_word, k = rand() % 5;
        int idx[4], n = 0;
        float val[4];
        for (int f = rand() % 3; n < k && f < n_feat; f += 1 + rand() % 4) {
            idx[n] = f;
            val[n++] = (float)(rand() % 1000 + 1) / 1000.0f;
        }
        CHECK(sf_rows_push(r, idx, val, n) == PARLEY_OK, "sparse rows: %s", parley_errmsg());
    }
}

static void free_batch(batch *b)
{
    free(b->len), free(b->ids), free(b->intent), free(b->slot);
    if (b->sparse)
        bert_sparse_batch_free(b->sparse);
    free(b->sparse);
}

/* One step's loss and gradients, CPU against GPU; intent_weight (NI) may be NULL. */
static void compare_grads(const bert_model *m, cuda_trainer *g, cuda_precision prec,
                          const batch *bt, float dropout, const float *intent_weight,
                          const char *what)
{
    const size_t n = m->n_params;
    float *gc = calloc(n, sizeof *gc), *gg = malloc(n * sizeof *gg);
    bert_batch b = { bt->B, bt->len, bt->ids };
    bert_labels y = { bt->intent, bt->slot, 1.5f, bt->sparse, intent_weight };
    bert_loss lc, lg;
    CHECK(bert_train_step(m, &b, &y, dropout, 7, gc, &lc, NULL, NULL) == PARLEY_OK, "%s: cpu: %s",
          what, parley_errmsg());
    parley_status st = cuda_trainer_grads(g, &b, &y, dropout, 7, &lg, gg);
    CHECK(st == PARLEY_OK, "%s: gpu: %s", what, parley_errmsg());
    if (st == PARLEY_OK) {
        const double rtol = prec == CUDA_PREC_FP32 ? 1e-3 : 5e-2;
        size_t at = 0;
        CHECK(fabs(lg.total - lc.total) <= rtol * fabs(lc.total) + 1e-6 &&
                      lg.slot_scored == lc.slot_scored,
              "%s %s: loss gpu %g cpu %g", what, cuda_precision_name(prec), lg.total, lc.total);
        double worst = check_close(gg, gc, n, 0, rtol * max_abs(gc, n), &at);
        CHECK(worst <= 1, "%s %s: gradient %zu: gpu %g cpu %g", what, cuda_precision_name(prec), at,
              gg[at], gc[at]);
    }
    free(gc), free(gg);
}

/* Three steps with clipping and AdamW (and the sparse weights' SGD), FP32: the losses and
 * the weights follow the CPU's. */
static void compare_steps(bert_model *m, const batch *bt)
{
    const float sparse_lr = 0.5f, slot_lr = 0.3f;
    const size_t n = m->n_params;
    float *start = malloc(n * sizeof *start), *gc = malloc(n * sizeof *gc);
    float *mc = calloc(n, sizeof *mc), *vc = calloc(n, sizeof *vc), *pg = malloc(n * sizeof *pg);
    unsigned char *decay = malloc(n);
    memcpy(start, m->params, n * sizeof *start);
    bert_decay_mask(&m->cfg, decay);
    cuda_trainer *g = NULL;
    CHECK(cuda_trainer_open(m, decay, 0, CUDA_PREC_FP32, &g) == PARLEY_OK, "open: %s",
          parley_errmsg());
    bert_batch b = { bt->B, bt->len, bt->ids };
    bert_labels y = { bt->intent, bt->slot, 1.0f, bt->sparse, NULL };
    adamw_params ap = { 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f };
    for (long t = 1; g && t <= 3; t++) {
        bert_loss lc, lg;
        memset(gc, 0, n * sizeof *gc);
        CHECK(bert_train_step(m, &b, &y, 0.1f, (uint64_t)t, gc, &lc, NULL, NULL) == PARLEY_OK,
              "cpu step");
        train_clip_grads(gc, n, 0.5f);
        if (bt->sparse)
            train_sparse_update(m, gc, mc, vc, decay, t, &ap, sparse_lr, slot_lr);
        else
            adamw_step(m->params, gc, mc, vc, decay, n, t, &ap);
        CHECK(cuda_trainer_step(g, &b, &y, 0.1f, (uint64_t)t, 0.5f, &ap, sparse_lr, slot_lr, t,
                                &lg) == PARLEY_OK,
              "gpu step: %s", parley_errmsg());
        CHECK(fabs(lg.total - lc.total) <= 1e-3 * fabs(lc.total), "step %ld: loss gpu %g cpu %g", t,
              lg.total, lc.total);
    }
    if (g && cuda_trainer_download(g, pg, NULL, NULL) == PARLEY_OK) {
        size_t at = 0;
        /* AdamW moves a weight by about lr a step whatever its gradient's size, so a tiny
         * gradient rounded differently may move it differently: 3 steps of lr bound that. */
        double worst = check_close(pg, m->params, n, 0, 3e-3 * 0.1, &at);
        CHECK(worst <= 1, "weights after 3 steps: %zu: gpu %g cpu %g (start %g)", at, pg[at],
              m->params[at], start[at]);
    }
    cuda_trainer_close(g);
    memcpy(m->params, start, n * sizeof *start);
    free(start), free(gc), free(mc), free(vc), free(pg), free(decay);
}

/* m with FS sentence and FW word features of random weights (the intent theirs alone with
 * intent_only); NULL on failure. */
static bert_model *with_sparse(const bert_model *m, int FS, int FW, int intent_only)
{
    bert_config c = { 0 };
    bert_model *s = NULL;
    CHECK(bert_config_copy(&c, &m->cfg) == PARLEY_OK, "config copy");
    c.sparse_sent = FS, c.sparse_word = FW, c.intent_sparse_only = intent_only;
    CHECK(bert_model_alloc(&c, NULL, &s) == PARLEY_OK, "a model with sparse features: %s",
          parley_errmsg());
    bert_config_clear(&c);
    if (s) {
        memcpy(s->params, m->params, m->n_params * sizeof *m->params);
        for (size_t i = m->n_params; i < s->n_params; i++)
            s->params[i] = 0.4f * ((float)rand() / (float)RAND_MAX - 0.5f);
    }
    return s;
}

/* The sparse features' logits, gradients and steps on the GPU against the CPU's, with the
 * intent the encoder's and theirs and with it theirs alone. */
static void test_sparse(const bert_model *m)
{
    int mixed[] = { 7, 1, 20, 3, 13 };
    for (int only = 0; only <= 1; only++) {
        bert_model *s = with_sparse(m, 11, 23, only);
        if (!s)
            continue;
        unsigned char *decay = malloc(s->n_params);
        bert_decay_mask(&s->cfg, decay);
        batch bt = make_batch(&s->cfg, 5, mixed, 31u + (unsigned)only);
        add_sparse(&s->cfg, &bt, 7u + (unsigned)only);
        for (int p = CUDA_PREC_BF16; p <= CUDA_PREC_FP32; p++) {
            cuda_trainer *g = NULL;
            if (cuda_trainer_open(s, decay, 0, (cuda_precision)p, &g) != PARLEY_OK) {
                CHECK(0, "open %s: %s", cuda_precision_name((cuda_precision)p), parley_errmsg());
                continue;
            }
            compare_grads(s, g, (cuda_precision)p, &bt, 0.0f, NULL,
                          only ? "sparse, intent theirs alone" : "sparse");
            compare_grads(s, g, (cuda_precision)p, &bt, 0.2f, NULL,
                          only ? "sparse dropout, intent theirs alone" : "sparse dropout");
            cuda_trainer_close(g);
        }
        compare_steps(s, &bt);
        free_batch(&bt);
        free(decay);
        bert_model_free(s);
    }
}

/* The masked-LM step on the GPU against bert_mlm_step_ws: loss, gradients (model and head)
 * and scoring in each precision, then three steps in FP32. m is left as it came. */
static void test_mlm(bert_model *m)
{
    const bert_config *c = &m->cfg;
    const size_t n = m->n_params, nh = bert_mlm_param_count(c),
                 n_enc = (size_t)(m->w.pool_w - m->params);
    float *head = malloc(nh * sizeof *head), *start = malloc((n + nh) * sizeof *start);
    float *gc = malloc((n + nh) * sizeof *gc), *gg = malloc((n + nh) * sizeof *gg);
    float *mc = calloc(n + nh, sizeof *mc), *vc = calloc(n + nh, sizeof *vc);
    unsigned char *decay = malloc(n + nh);
    bert_mlm_init(c, head, 5);
    bert_mlm_head h;
    bert_mlm_point(&h, c, head);
    for (int i = 0; i < c->hidden; i++) /* biases and LayerNorm off their start, to be seen */
        h.dense_b[i] = 0.02f * (float)(i % 7 - 3), h.ln_w[i] = 1.0f + 0.01f * (float)(i % 5),
        h.ln_b[i] = 0.01f * (float)(i % 3);
    for (int v = 0; v < c->vocab_size; v++)
        h.bias[v] = 0.01f * (float)(v % 5 - 2);
    bert_decay_mask(c, decay);
    bert_mlm_decay_mask(c, decay + n);
    memcpy(start, m->params, n * sizeof *start);
    memcpy(start + n, head, nh * sizeof *start);
    int mixed[] = { 7, 1, 20, 3, 13 };
    batch bt = make_batch(c, 5, mixed, 77);
    int *target = malloc((size_t)bt.N * sizeof *target);
    const int masked = bert_mlm_mask(bt.ids, target, bt.len, bt.B, 3, c->vocab_size, 0.3f, 99);
    CHECK(masked > 0, "masked %d", masked);
    bert_batch b = { bt.B, bt.len, bt.ids };
    bert_train_ws ws = { 0 };
    for (int p = CUDA_PREC_BF16; p <= CUDA_PREC_FP32; p++) {
        const char *prec = cuda_precision_name((cuda_precision)p);
        const double rtol = p == CUDA_PREC_FP32 ? 1e-3 : 5e-2;
        cuda_trainer *g = NULL;
        if (cuda_trainer_open_mlm(m, head, decay, 0, (cuda_precision)p, &g) != PARLEY_OK) {
            CHECK(0, "open mlm %s: %s", prec, parley_errmsg());
            continue;
        }
        for (int k = 0; k < 3; k++) {
            const float dropout = k == 1 ? 0.2f : 0.0f;
            const int backward = k < 2;
            bert_mlm_loss lc, lg;
            memset(gc, 0, (n + nh) * sizeof *gc);
            CHECK(bert_mlm_step_ws(&ws, m, head, &b, target, dropout, 7, backward ? gc : NULL,
                                   backward ? gc + n : NULL, &lc) == PARLEY_OK,
                  "mlm cpu: %s", parley_errmsg());
            parley_status st = cuda_trainer_mlm(g, &b, target, dropout, 7, backward, &lg,
                                                backward ? gg : NULL, backward ? gg + n : NULL);
            CHECK(st == PARLEY_OK, "mlm gpu %s: %s", prec, parley_errmsg());
            if (st != PARLEY_OK)
                continue;
            CHECK(lg.masked == lc.masked && fabs(lg.loss - lc.loss) <= rtol * fabs(lc.loss),
                  "mlm %s case %d: loss gpu %g cpu %g over %d / %d", prec, k, lg.loss, lc.loss,
                  lg.masked, lc.masked);
            if (!backward)
                continue;
            size_t at = 0;
            double worst = check_close(gg, gc, n, 0, rtol * max_abs(gc, n), &at);
            CHECK(worst <= 1, "mlm %s case %d: gradient %zu: gpu %g cpu %g", prec, k, at, gg[at],
                  gc[at]);
            worst = check_close(gg + n, gc + n, nh, 0, rtol * max_abs(gc + n, nh), &at);
            CHECK(worst <= 1, "mlm %s case %d: head gradient %zu: gpu %g cpu %g", prec, k, at,
                  gg[n + at], gc[n + at]);
        }
        cuda_trainer_close(g);
    }
    /* three steps in FP32: clipping over both, AdamW of the encoder and the head */
    cuda_trainer *g = NULL;
    CHECK(cuda_trainer_open_mlm(m, head, decay, 0, CUDA_PREC_FP32, &g) == PARLEY_OK,
          "open mlm fp32: %s", parley_errmsg());
    adamw_params ap = { 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f };
    for (long t = 1; g && t <= 3; t++) {
        bert_mlm_loss lc, lg;
        memset(gc, 0, (n + nh) * sizeof *gc);
        CHECK(bert_mlm_step_ws(&ws, m, head, &b, target, 0.1f, (uint64_t)t, gc, gc + n, &lc) ==
                      PARLEY_OK,
              "mlm cpu step");
        train_clip_grads(gc, n + nh, 0.5f);
        adamw_step(m->params, gc, mc, vc, decay, n_enc, t, &ap);
        adamw_step(head, gc + n, mc + n, vc + n, decay + n, nh, t, &ap);
        CHECK(cuda_trainer_mlm_step(g, &b, target, 0.1f, (uint64_t)t, 0.5f, &ap, t, &lg) ==
                      PARLEY_OK,
              "mlm gpu step: %s", parley_errmsg());
        CHECK(fabs(lg.loss - lc.loss) <= 1e-3 * fabs(lc.loss), "mlm step %ld: loss gpu %g cpu %g",
              t, lg.loss, lc.loss);
    }
    if (g && cuda_trainer_download(g, gg, NULL, NULL) == PARLEY_OK &&
        cuda_trainer_download_head(g, gg + n) == PARLEY_OK) {
        size_t at = 0;
        double worst = check_close(gg, m->params, n, 0, 3e-3 * 0.1, &at);
        CHECK(worst <= 1, "mlm weights after 3 steps: %zu: gpu %g cpu %g (start %g)", at, gg[at],
              m->params[at], start[at]);
        worst = check_close(gg + n, head, nh, 0, 3e-3 * 0.1, &at);
        CHECK(worst <= 1, "mlm head after 3 steps: %zu: gpu %g cpu %g (start %g)", at, gg[n + at],
              head[at], start[n + at]);
    } else {
        CHECK(0, "downloading after the mlm steps: %s", parley_errmsg());
    }
    cuda_trainer_close(g);
    memcpy(m->params, start, n * sizeof *start);
    bert_train_ws_free(&ws);
    free_batch(&bt);
    free(head), free(start), free(gc), free(gg), free(mc), free(vc), free(decay), free(target);
}

static void test_model(int H, int NH, int P, float scale)
{
    test_seed(42);
    bert_model *m = test_random_model((test_shape){ 97, H, 2, NH, 2 * H + 8, P, 5, 7 }, scale);
    CHECK(m != NULL, "model");
    if (!m)
        return;
    unsigned char *decay = malloc(m->n_params);
    bert_decay_mask(&m->cfg, decay);
    int one[] = { 9 }, mixed[] = { 7, 1, 20, 3, 13 }, full[] = { P, P - 1, 2 };
    for (int p = CUDA_PREC_BF16; p <= CUDA_PREC_FP32; p++) {
        cuda_trainer *g = NULL;
        if (cuda_trainer_open(m, decay, 0, (cuda_precision)p, &g) != PARLEY_OK) {
            CHECK(0, "open %s: %s", cuda_precision_name((cuda_precision)p), parley_errmsg());
            continue;
        }
        char what[64];
        for (int k = 0; k < 3; k++) {
            const int *len = k == 0 ? one : k == 1 ? mixed : full, B = k == 0 ? 1 : k == 1 ? 5 : 3;
            batch bt = make_batch(&m->cfg, B, len, 10u + (unsigned)k);
            snprintf(what, sizeof what, "H%d NH%d batch %d", H, NH, k);
            compare_grads(m, g, (cuda_precision)p, &bt, 0.0f, NULL, what);
            snprintf(what, sizeof what, "H%d NH%d batch %d dropout", H, NH, k);
            compare_grads(m, g, (cuda_precision)p, &bt, 0.2f, NULL, what);
            float weight[64];
            for (int i = 0; i < m->cfg.n_intents && i < 64; i++)
                weight[i] = 0.25f + 0.5f * (float)(i % 3);
            snprintf(what, sizeof what, "H%d NH%d batch %d intent weights", H, NH, k);
            compare_grads(m, g, (cuda_precision)p, &bt, 0.0f, weight, what);
            free_batch(&bt);
        }
        int bad_len[] = { 3, P + 1 }, ids[256] = { 0 }, intent[2] = { 0 }, slot[256] = { 0 };
        bert_batch b = { 2, bad_len, ids };
        bert_labels y = { intent, slot, 1.0f, NULL, NULL };
        bert_loss l;
        CHECK(cuda_trainer_grads(g, &b, &y, 0, 1, &l, NULL) == PARLEY_ERR_INVALID_ARG &&
                      strstr(parley_errmsg(), "sequence 1"),
              "too long a sequence: %s", parley_errmsg());
        cuda_trainer_close(g);
    }
    batch bt = make_batch(&m->cfg, 5, mixed, 99);
    compare_steps(m, &bt);
    free_batch(&bt);
    test_sparse(m);
    test_mlm(m);
    cuda_trainer *g = NULL;
    CHECK(cuda_trainer_open(m, decay, 0, CUDA_PREC_FP16, &g) == PARLEY_ERR_INVALID_ARG,
          "fp16 is refused");
    free(decay);
    bert_model_free(m);
}

typedef struct started {
    char device[128];
} started;

static int on_start(const parley_train_progress *pr, void *user)
{
    started *s = user;
    if (pr->event == PARLEY_TRAIN_START)
        snprintf(s->device, sizeof s->device, "%s", pr->device);
    return 0;
}

/* The whole loop on device `device` learns the tiny set perfectly, with or without sparse
 * features, and ran on the GPU. */
static void test_train_run(const char *data_dir, const char *device, parley_switch sparse)
{
    char data[512], out[] = "/tmp/parley-test-cuda-train-XXXXXX";
    snprintf(data, sizeof data, "%s/nlu.yaml", data_dir);
    if (!mkdtemp(out)) {
        CHECK(0, "mkdtemp");
        return;
    }
    started s = { "" };
    parley_train_params p = parley_train_params_default();
    p.data = data;
    p.out = out;
    p.shape = (parley_train_shape){ 2, 64, 2, 128, 32 };
    p.epochs = 40, p.batch = 8, p.lr = 3e-3f, p.device = device, p.sparse = sparse;
    p.progress = on_start, p.user_data = &s;
    const char *what = sparse == PARLEY_SWITCH_OFF ? "without sparse features" : "sparse features";
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "train on %s, %s: %s", device, what,
          parley_errmsg());
    CHECK(strstr(s.device, "cuda:0") != NULL, "train on %s, %s: ran on '%s'", device, what,
          s.device);
    bert_model *m = NULL;
    ds_dataset *ds = NULL;
    mt_report *r = NULL;
    if (bert_model_load(out, &m) == PARLEY_OK && ds_load(data, &ds) == PARLEY_OK &&
        train_evaluate(m, ds, &r, NULL) == PARLEY_OK)
        CHECK(r->intent_accuracy == 1 && r->sentence_accuracy == 1,
              "training set after GPU training, %s: intent %g, sentence %g", what,
              r->intent_accuracy, r->sentence_accuracy);
    else
        CHECK(0, "scoring the GPU-trained model, %s: %s", what, parley_errmsg());
    mt_report_free(r);
    ds_free(ds);
    bert_model_free(m);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
    CHECK(system(cmd) == 0, "cleaning up");
}

typedef struct pretrain_seen {
    char device[128];
    double first_acc, last_acc;
    int epochs;
} pretrain_seen;

static int on_pretrain(const parley_train_progress *pr, void *user)
{
    pretrain_seen *s = user;
    if (pr->event == PARLEY_TRAIN_START)
        snprintf(s->device, sizeof s->device, "%s", pr->device);
    if (pr->event == PARLEY_TRAIN_EPOCH && pr->has_mlm) {
        if (!s->epochs++)
            s->first_acc = pr->mlm_accuracy;
        s->last_acc = pr->mlm_accuracy;
    }
    return 0;
}

/* parley_pretrain_run on the GPU learns a templated text: its held-out masked-LM accuracy
 * climbs as tests/nlu/train/test_pretrain.c asks of the CPU. */
static void test_pretrain_run(void)
{
    char dir[] = "/tmp/parley-test-cuda-pretrain-XXXXXX", text[600], out[600], cmd[700];
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    snprintf(text, sizeof text, "%s/text.txt", dir);
    snprintf(out, sizeof out, "%s/model", dir);
    FILE *f = fopen(text, "w");
    static const char *const what[] = { "jazz", "rock", "the news", "some blues", "adele" },
                             *const when[] = { "now", "tonight", "at noon", "tomorrow" };
    for (int i = 0; f && i < 5; i++)
        for (int k = 0; k < 4; k++) {
            fprintf(f, "play %s %s please\n", what[i], when[k]);
            fprintf(f, "wake me up %s with %s\n", when[k], what[i]);
        }
    if (f)
        fclose(f);
    const char *texts[] = { text };
    pretrain_seen s = { "", 0, 0, 0 };
    parley_pretrain_params p = parley_pretrain_params_default();
    p.text = texts;
    p.n_text = 1;
    p.train.out = out;
    p.train.shape = (parley_train_shape){ 2, 64, 2, 128, 32 };
    p.train.epochs = 30, p.train.batch = 16, p.train.lr = 3e-3f, p.train.device = "cuda:0";
    p.train.progress = on_pretrain, p.train.user_data = &s;
    p.holdout = 0.2f, p.mask_prob = 0.25f;
    parley_pretrain_result res;
    CHECK(parley_pretrain_run(&p, &res) == PARLEY_OK, "pretrain on cuda:0: %s", parley_errmsg());
    CHECK(strstr(s.device, "cuda:0") != NULL, "pretrained on '%s'", s.device);
    printf("gpu held-out masked-LM accuracy: %.3f after epoch 1, %.3f after %d\n", s.first_acc,
           s.last_acc, s.epochs);
    CHECK(s.epochs == 30 && s.last_acc >= 0.5 && s.last_acc > s.first_acc + 0.2,
          "gpu pretraining: held-out masked-LM accuracy %g after epoch 1, %g after %d", s.first_acc,
          s.last_acc, s.epochs);
    bert_model *m = NULL;
    CHECK(bert_model_load(out, &m) == PARLEY_OK, "loading the GPU-pretrained model: %s",
          parley_errmsg());
    bert_model_free(m);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "cleaning up");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_cuda_train DATA_DIR (tests/nlu/train/tiny)\n");
        return 2;
    }
    if (cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    test_model(64, 4, 64, 0.08f);  /* D = 16 */
    test_model(96, 2, 128, 0.05f); /* D = 48 */
    test_train_run(argv[1], "cuda:0", PARLEY_SWITCH_OFF);
    test_train_run(argv[1], "auto", PARLEY_SWITCH_AUTO);
    test_pretrain_run();
    return check_done();
}
