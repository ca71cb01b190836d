/* test_api.c — training, pretraining and scoring through the public API (parley/train.h)
 * alone, on the tiny set in tests/nlu/train/tiny/ (argv[1]).
 *
 * A training run reports START, every STEP and every EPOCH in order, with the counts, the
 * learning-rate schedule, losses, throughput, ETA and dev scores it promises. A stop asked
 * for by the callback (at the start, mid-epoch, or from another thread through an atomic
 * flag the callback returns) returns PARLEY_OK with `stopped` set and leaves a model that
 * parley_nlu_open() loads and a state that `resume` completes. parley_eval_run() scores the saved
 * model exactly as the trainer scored its best dev epoch and gets the known values on the training
 * set (a tiny model learns it perfectly); it calls on_example once per example, stops when asked,
 * and renders JSON and a table. Pretraining feeds training (new heads). Bad arguments fail with
 * clear errors, and every allocation failure of a scoring run is clean.
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "parley/parley.h"
#include "tests/check.h"
#include "tests/fault.h"
#include "tests/nlu/train/train_test.h"

enum { EPOCH_STEPS = 5 }; /* the tiny set's 40 examples in batches of 8 */

static tiny_files files;

/* A tiny model: a run of 40 epochs takes about a second on one thread. */
static parley_train_params tiny(const char *out, int epochs)
{
    parley_train_params p = parley_train_params_default();
    p.data = files.data;
    p.out = out;
    p.shape = (parley_train_shape){ 2, 64, 2, 128, 32 };
    p.epochs = epochs;
    p.batch = 8;
    p.lr = 3e-3f;
    p.augment = 0; /* counts and steps of the data as written */
    p.threads = 1;
    return p;
}

/* A model directory opened on the CPU with one thread, as the trainer scores. */
static parley_nlu *open_cpu(const char *dir)
{
    parley_nlu_params np = parley_nlu_params_default();
    parley_nlu *nlu = NULL;
    np.device = "cpu";
    np.threads = 1;
    CHECK(parley_nlu_open(dir, &np, &nlu) == PARLEY_OK, "open %s: %s", dir, parley_errmsg());
    return nlu;
}

/* ---- progress ---------------------------------------------------------------------------- */

/* Every event of a run, checked as it comes against what parley/train.h promises. */
typedef struct trace {
    const parley_train_params *p;
    int starts, steps, epochs, events;
    long last_step;
    float last_lr, last_loss;
    int best_epoch; /* the last epoch reported as saved */
    parley_train_scores best, dev[64];
    long stop_at;       /* > 0: stop after this step; -1: stop at the start */
    atomic_int *cancel; /* when set, returned: another thread may set it */
    atomic_int *seen;   /* when set, the steps so far, for another thread to watch */
} trace;

static void on_start(trace *t, const parley_train_progress *pr)
{
    const parley_train_shape *s = &pr->shape, *want = &t->p->shape;
    CHECK(t->events == 1 && pr->step == 0 && pr->steps == (long)t->p->epochs * EPOCH_STEPS &&
                  pr->epoch == 1 && pr->epochs == t->p->epochs,
          "start: event %d, step %ld of %ld, epoch %d of %d", t->events, pr->step, pr->steps,
          pr->epoch, pr->epochs);
    CHECK(pr->n_train == 40 && pr->n_dev == (t->p->dev ? 6 : 0) && pr->n_intents == 4 &&
                  pr->n_tags == 13 && pr->n_augmented == 0 && pr->n_truncated == 0,
          "start: %d train, %d dev, %d intents, %d tags", pr->n_train, pr->n_dev, pr->n_intents,
          pr->n_tags);
    CHECK(pr->vocab_learned && !pr->heads_replaced && pr->vocab_size > 40 && pr->n_params > 0,
          "start: vocabulary %d (learned %d), %zu parameters", pr->vocab_size, pr->vocab_learned,
          pr->n_params);
    CHECK(s->layers == want->layers && s->hidden == want->hidden && s->heads == want->heads &&
                  s->intermediate == want->intermediate && s->max_positions == want->max_positions,
          "start: shape L%d H%d", s->layers, s->hidden);
    CHECK(pr->device && !strcmp(pr->device, "cpu"), "start: device %s", pr->device);
    CHECK(pr->loss == 0 && pr->examples_per_s == 0 && pr->eta_s == 0, "start: no figures yet");
}

static void on_step(trace *t, const parley_train_progress *pr)
{
    long warmup = lround(0.1 * (double)pr->steps);
    CHECK(pr->step == t->last_step + 1 && pr->epoch == (int)((pr->step - 1) / EPOCH_STEPS) + 1,
          "step %ld after %ld, epoch %d", pr->step, t->last_step, pr->epoch);
    CHECK(isfinite(pr->loss) && pr->loss > 0 && pr->examples_per_s > 0 && pr->eta_s >= 0,
          "step %ld: loss %g, %g ex/s, ETA %g", pr->step, (double)pr->loss, pr->examples_per_s,
          pr->eta_s);
    CHECK(pr->step < pr->steps || pr->eta_s == 0, "ETA at the end: %g", pr->eta_s);
    /* Linear warmup from 0 to the peak, then linear decay toward 0. */
    CHECK(pr->lr <= t->p->lr && pr->lr >= 0, "step %ld: lr %g", pr->step, (double)pr->lr);
    if (t->steps && pr->step <= warmup + 1)
        CHECK(pr->lr > t->last_lr, "warmup: lr %g after %g", (double)pr->lr, (double)t->last_lr);
    if (t->steps && pr->step > warmup + 1)
        CHECK(pr->lr < t->last_lr, "decay: lr %g after %g", (double)pr->lr, (double)t->last_lr);
    t->last_step = pr->step;
    t->last_lr = pr->lr;
    t->last_loss = pr->loss;
    t->steps++;
}

static void on_epoch(trace *t, const parley_train_progress *pr)
{
    CHECK(pr->step == (long)pr->epoch * EPOCH_STEPS && pr->step == t->last_step,
          "epoch %d at step %ld", pr->epoch, pr->step);
    /* The epoch's loss is the mean its last step reported. */
    CHECK(pr->loss == t->last_loss, "epoch %d: loss %g, last step's %g", pr->epoch,
          (double)pr->loss, (double)t->last_loss);
    CHECK(!pr->has_mlm && pr->has_dev == (t->p->dev != NULL), "epoch %d: dev %d, mlm %d", pr->epoch,
          pr->has_dev, pr->has_mlm);
    if (pr->has_dev) {
        const parley_train_scores *d = &pr->dev;
        /* One dev example's intent is unknown to the training set: 5 of 6 at best. */
        CHECK(d->intent_accuracy >= 0 && d->intent_accuracy <= 5.0 / 6 + 1e-9 && d->slot_f1 >= 0 &&
                      d->slot_f1 <= 1 && d->sentence_accuracy >= 0 &&
                      d->sentence_accuracy <= d->intent_accuracy,
              "epoch %d: dev %g %g %g", pr->epoch, d->intent_accuracy, d->slot_f1,
              d->sentence_accuracy);
        if (pr->epoch < 64)
            t->dev[pr->epoch] = *d;
    } else {
        CHECK(pr->best, "epoch %d: without dev every epoch is saved", pr->epoch);
    }
    if (pr->best) {
        t->best_epoch = pr->epoch;
        t->best = pr->dev;
    }
    t->epochs++;
}

static int on_progress(const parley_train_progress *pr, void *user_data)
{
    trace *t = user_data;
    t->events++;
    switch (pr->event) {
    case PARLEY_TRAIN_START:
        t->starts++;
        if (!t->p->resume)
            on_start(t, pr);
        t->last_step = pr->step;
        if (t->stop_at < 0)
            return 1;
        break;
    case PARLEY_TRAIN_STEP: on_step(t, pr); break;
    case PARLEY_TRAIN_EPOCH: on_epoch(t, pr); break;
    }
    if (t->seen)
        atomic_store(t->seen, t->steps);
    if (t->cancel)
        return atomic_load(t->cancel);
    return pr->event == PARLEY_TRAIN_STEP && pr->step == t->stop_at;
}

/* With a dev set: the events, the result, and the saved model scored again by
 * parley_eval_run() exactly as the trainer scored its best epoch. */
static void test_progress_and_best(void)
{
    path o = path_in(files.tmp, "dev");
    parley_train_params p = tiny(o.s, 8);
    trace t = { .p = &p };
    parley_train_result res;
    p.dev = files.dev;
    p.progress = on_progress;
    p.user_data = &t;
    CHECK(parley_train_run(&p, &res) == PARLEY_OK, "train: %s", parley_errmsg());
    CHECK(t.starts == 1 && t.steps == 8 * EPOCH_STEPS && t.epochs == 8, "%d starts, %d steps",
          t.starts, t.steps);
    CHECK(!res.stopped && res.epochs_done == 8 && res.steps_done == 8 * EPOCH_STEPS &&
                  res.has_dev && res.wall_s > 0 && res.examples_per_s > 0,
          "result: %d epochs, %ld steps", res.epochs_done, res.steps_done);
    CHECK(res.best_epoch == t.best_epoch &&
                  res.best.sentence_accuracy == t.best.sentence_accuracy &&
                  res.best.slot_f1 == t.best.slot_f1 &&
                  res.best.intent_accuracy == t.best.intent_accuracy,
          "best epoch %d, reported %d", res.best_epoch, t.best_epoch);
    for (int e = 1; e <= 8; e++) /* kept by dev sentence accuracy */
        CHECK(t.dev[e].sentence_accuracy <= res.best.sentence_accuracy, "epoch %d beats the best",
              e);
    CHECK(t.dev[res.best_epoch].slot_f1 == res.best.slot_f1, "the best epoch's scores");
    CHECK(!exists(path_in(o.s, "train_state").s), "state left after a completed run");

    parley_nlu *nlu = open_cpu(o.s);
    parley_eval_report *r = NULL;
    if (nlu)
        CHECK(parley_eval_run(nlu, files.dev, NULL, &r) == PARLEY_OK, "eval: %s", parley_errmsg());
    if (r) {
        CHECK(r->n_examples == 6 && r->n_intents == 5 && r->n_slot_types == 6 && !r->stopped &&
                      r->n_truncated == 0,
              "dev: %ld examples, %d intents, %d slot types", r->n_examples, r->n_intents,
              r->n_slot_types);
        CHECK(r->intent_accuracy == res.best.intent_accuracy && r->slot_f1 == res.best.slot_f1 &&
                      r->sentence_accuracy == res.best.sentence_accuracy,
              "eval %g %g %g, trainer %g %g %g", r->intent_accuracy, r->slot_f1,
              r->sentence_accuracy, res.best.intent_accuracy, res.best.slot_f1,
              res.best.sentence_accuracy);
    }
    parley_eval_report_free(r);
    parley_nlu_close(nlu);
}

/* ---- stopping and resuming --------------------------------------------------------------- */

/* Continues the stopped run in `out` to its end, step `steps` (steps_left in this call). */
static void resume(const char *out, long steps, long steps_left)
{
    parley_train_params p = parley_train_params_default();
    trace t = { .p = &p };
    parley_train_result res;
    p.data = files.data;
    p.out = out;
    p.threads = 1;
    p.resume = 1;
    p.lr = 3e-3f; /* not read by a resumed run: the bound of the trace's checks */
    p.progress = on_progress;
    p.user_data = &t;
    CHECK(parley_train_run(&p, &res) == PARLEY_OK, "resume %s: %s", out, parley_errmsg());
    CHECK(!res.stopped && t.steps == steps_left && res.steps_done == steps,
          "resumed %d steps of %ld left", t.steps, steps_left);
    CHECK(!exists(path_in(out, "train_state").s), "state left after the resumed run");
}

/* Stops from the callback at the start and mid-epoch: the model and the checkpoint load,
 * resume completes, and the training set comes out perfect. */
static void test_stop_and_resume(void)
{
    path o = path_in(files.tmp, "stop"), s0 = path_in(files.tmp, "stop0");
    parley_train_params p = tiny(s0.s, 2);
    trace t = { .p = &p, .stop_at = -1 };
    parley_train_result res;
    p.progress = on_progress;
    p.user_data = &t;
    CHECK(parley_train_run(&p, &res) == PARLEY_OK, "stop at start: %s", parley_errmsg());
    CHECK(res.stopped && res.steps_done == 0 && t.steps == 0 &&
                  exists(path_in(s0.s, "train_state/latest").s) &&
                  !exists(path_in(s0.s, "config.json").s),
          "stop at start: %ld steps", res.steps_done);
    resume(s0.s, 2 * EPOCH_STEPS, 2 * EPOCH_STEPS);
    CHECK(exists(path_in(s0.s, "model.safetensors").s), "stopped at the start and resumed");

    p = tiny(o.s, 40);
    t = (trace){ .p = &p, .stop_at = 7 };
    p.progress = on_progress;
    p.user_data = &t;
    CHECK(parley_train_run(&p, &res) == PARLEY_OK, "stop: %s", parley_errmsg());
    CHECK(res.stopped && res.steps_done == 7 && res.epochs_done == 1 && res.best_epoch == 1 &&
                  t.steps == 7 && t.epochs == 1,
          "stopped at %ld (epoch %d)", res.steps_done, res.epochs_done);
    /* Epoch 1 is in the output directory (no dev: the latest epoch), step 7 in the state. */
    parley_nlu *a = open_cpu(o.s), *b = open_cpu(path_in(o.s, "train_state/step-000000007").s);
    CHECK(a && b && parley_nlu_intent_count(a) == 4, "the stopped run's models");
    parley_nlu_close(a);
    parley_nlu_close(b);
    resume(o.s, 40 * EPOCH_STEPS, 40 * EPOCH_STEPS - 7);

    parley_nlu *nlu = open_cpu(o.s);
    parley_eval_report *r = NULL;
    if (nlu)
        CHECK(parley_eval_run(nlu, files.data, NULL, &r) == PARLEY_OK, "eval: %s", parley_errmsg());
    if (r)
        CHECK(r->n_examples == 40 && r->n_intents == 4 && r->n_slot_types == 6 &&
                      r->intent_accuracy == 1 && r->slot_precision == 1 && r->slot_recall == 1 &&
                      r->slot_f1 == 1 && r->sentence_accuracy == 1 && r->tag_accuracy == 1,
              "training set: %ld examples, intent %g, slot F1 %g, sentence %g", r->n_examples,
              r->intent_accuracy, r->slot_f1, r->sentence_accuracy);
    parley_eval_report_free(r);
    parley_nlu_close(nlu);
}

typedef struct worker {
    parley_train_params p;
    parley_train_result res;
    parley_status st;
    atomic_int done;
} worker;

static void *train_thread(void *arg)
{
    worker *w = arg;
    w->st = parley_train_run(&w->p, &w->res);
    atomic_store(&w->done, 1);
    return NULL;
}

/* The documented way to stop from another thread: an atomic flag the callback returns. */
static void test_cancel_from_thread(void)
{
    path o = path_in(files.tmp, "thread");
    atomic_int cancel = 0, seen = 0;
    worker w = { .p = tiny(o.s, 40) };
    trace t = { .p = &w.p, .cancel = &cancel, .seen = &seen };
    pthread_t th;
    w.p.progress = on_progress;
    w.p.user_data = &t;
    if (pthread_create(&th, NULL, train_thread, &w) != 0) {
        CHECK(0, "pthread_create");
        return;
    }
    while (atomic_load(&seen) < 3 && !atomic_load(&w.done))
        sched_yield();
    atomic_store(&cancel, 1);
    pthread_join(th, NULL);
    CHECK(w.st == PARLEY_OK && w.res.stopped && w.res.steps_done >= 3 &&
                  w.res.steps_done < 40 * EPOCH_STEPS,
          "cancelled: %s, stopped %d at %ld", parley_status_str(w.st), w.res.stopped,
          w.res.steps_done);
    CHECK(exists(path_in(o.s, "train_state/latest").s), "no state after a cancel");
}

/* ---- scoring ------------------------------------------------------------------------------ */

typedef struct examples {
    int calls, stop_after, bad;
} examples;

static int on_example(const parley_eval_example *ex, void *user_data)
{
    examples *e = user_data;
    const parley_nlu_result *r = ex->parse;
    int tags_ok = 1;
    for (int w = 0; w < r->n_words; w++)
        tags_ok &= ex->gold_tags[w] != NULL && r->tags[w] != NULL;
    e->bad += ex->index != e->calls || !ex->gold_intent || !r->text || !tags_ok;
    e->calls++;
    return e->stop_after && e->calls == e->stop_after;
}

static double json_number(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* Batches, the example callback and its stop, and the texts, on the model of "dev". */
static void test_eval(void)
{
    path o = path_in(files.tmp, "dev");
    parley_nlu *nlu = open_cpu(o.s);
    parley_eval_report *whole = NULL, *r = NULL;
    parley_eval_params ep = parley_eval_params_default();
    examples e = { 0 };
    if (!nlu)
        return;
    CHECK(ep.batch == 32 && !ep.on_example, "defaults");
    CHECK(parley_eval_run(nlu, files.dev, NULL, &whole) == PARLEY_OK, "eval: %s", parley_errmsg());
    if (!whole)
        goto done;
    for (int batch = 1; batch <= 7; batch += 3) {
        ep.batch = batch;
        ep.on_example = on_example;
        ep.user_data = &e;
        e = (examples){ 0 };
        CHECK(parley_eval_run(nlu, files.dev, &ep, &r) == PARLEY_OK, "batch %d: %s", batch,
              parley_errmsg());
        CHECK(r && !r->stopped && r->n_examples == 6 && e.calls == 6 && !e.bad &&
                      r->sentence_accuracy == whole->sentence_accuracy &&
                      r->slot_f1 == whole->slot_f1 && r->tag_accuracy == whole->tag_accuracy,
              "batch %d: %d calls, %d bad", batch, e.calls, e.bad);
        parley_eval_report_free(r);
        r = NULL;
    }
    e = (examples){ .stop_after = 4 };
    CHECK(parley_eval_run(nlu, files.dev, &ep, &r) == PARLEY_OK, "stop: %s", parley_errmsg());
    CHECK(r && r->stopped && r->n_examples == 4 && e.calls == 4, "stopped after %d examples",
          e.calls);
    parley_eval_report_free(r);

    const char *json = NULL, *table = NULL;
    CHECK(parley_eval_report_json(whole, -1, &json) == PARLEY_OK, "json: %s", parley_errmsg());
    cJSON *j = json ? cJSON_Parse(json) : NULL;
    CHECK(j && json_number(j, "examples", NULL) == 6 &&
                  json_number(j, "intent_accuracy", NULL) == whole->intent_accuracy &&
                  json_number(j, "slots", "f1") == whole->slot_f1 &&
                  json_number(cJSON_GetObjectItem(j, "intents"), "greet", "support") == 1,
          "json: %s", json ? json : "(none)");
    const cJSON *conf = cJSON_GetObjectItem(j, "intent_confusions");
    CHECK(cJSON_GetArraySize(conf) >= 1, "the unknown intent is a confusion");
    cJSON_Delete(j);
    CHECK(parley_eval_report_json(whole, 0, &json) == PARLEY_OK && json &&
                  strstr(json, "\"intent_confusions\":\t[]"),
          "json without confusions: %s", json ? json : "(none)");
    CHECK(parley_eval_report_table(whole, 3, &table) == PARLEY_OK && table &&
                  strstr(table, "intent accuracy") && strstr(table, "greet"),
          "table: %s", table ? table : "(none)");
done:
    parley_eval_report_free(whole);
    parley_nlu_close(nlu);
}

typedef struct eval_ctx {
    parley_nlu *nlu;
} eval_ctx;

/* One scoring run with both texts rendered: everything it allocates is freed. */
static parley_status eval_once(void *ctx)
{
    eval_ctx *c = ctx;
    parley_eval_params ep = { .batch = 4 };
    parley_eval_report *r = NULL;
    const char *text;
    parley_status st = parley_eval_run(c->nlu, files.dev, &ep, &r);
    if (st == PARLEY_OK && (st = parley_eval_report_json(r, -1, &text)) == PARLEY_OK)
        st = parley_eval_report_table(r, -1, &text);
    parley_eval_report_free(r);
    return st;
}

static void test_eval_alloc_failures(void)
{
    path o = path_in(files.tmp, "dev");
    eval_ctx c = { open_cpu(o.s) };
    if (!c.nlu)
        return;
    long n = fault_sweep("parley_eval_run", eval_once, &c);
    CHECK(n > 20, "only %ld allocations swept", n);
    parley_nlu_close(c.nlu);
}

/* ---- pretraining ------------------------------------------------------------------------- */

/* The record of what t just trained is up to date, and stays so when the default encoder
 * comes or goes unless the model would start from it (or did). */
static void check_record(const parley_train_params *t, const char *encoder, size_t i, int env_moves)
{
    parley_train_verdict v = PARLEY_TRAIN_NEW, moved = PARLEY_TRAIN_NEW;
    CHECK(parley_train_record_compare(t, &v) == PARLEY_OK && v == PARLEY_TRAIN_UP_TO_DATE,
          "case %zu: record verdict %d: %s", i, (int)v, parley_errmsg());
    const char *env = getenv("PARLEY_ENCODER");
    setenv("PARLEY_ENCODER", env && !strcmp(env, encoder) ? "none" : encoder, 1);
    CHECK(parley_train_record_compare(t, &moved) == PARLEY_OK &&
                  moved == (env_moves ? PARLEY_TRAIN_CHANGED : PARLEY_TRAIN_UP_TO_DATE),
          "case %zu: with the default encoder %s, verdict %d", i,
          env && !strcmp(env, encoder) ? "gone" : "built", (int)moved);
}

/* A new model of few examples with no shape given starts from the default encoder
 * ($PARLEY_ENCODER here) and learns no vocabulary; a shape, --init none or PARLEY_ENCODER=none
 * start from random weights. The training record names the encoder it started from. */
static void test_default_encoder(const char *encoder, const char *out)
{
    static const struct {
        const char *env, *init;
        int shape, want_encoder;
    } cases[] = {
        { NULL, NULL, 0, 1 },   { NULL, "none", 0, 0 }, { NULL, NULL, 1, 0 },
        { "none", NULL, 0, 0 }, { "", NULL, 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        setenv("PARLEY_ENCODER", cases[i].env ? cases[i].env : encoder, 1);
        parley_train_params t = tiny(out, 1);
        train_seen s = { 0 };
        if (!cases[i].shape)
            t.shape =
                    (parley_train_shape){ PARLEY_AUTO, PARLEY_AUTO, PARLEY_AUTO, PARLEY_AUTO, 32 };
        t.init = cases[i].init;
        t.progress = train_watch;
        t.user_data = &s;
        CHECK(parley_train_run(&t, NULL) == PARLEY_OK, "case %zu: %s", i, parley_errmsg());
        CHECK(s.replaced == cases[i].want_encoder && s.learned == !cases[i].want_encoder,
              "case %zu: from the default encoder %d, vocabulary learned %d", i, s.replaced,
              s.learned);
        check_record(&t, encoder, i, !cases[i].shape && !cases[i].init);
    }
    setenv("PARLEY_ENCODER", "none", 1); /* as meson.build runs the tests */
}

/* Writes dir/background/ (a JointBERT folder of text[0..n), every word O, labelled
 * out_of_scope) as tools/encoder.sh does. */
static void write_sentences(const char *dir, const char *const *text, int n)
{
    path folder = path_in(dir, "background");
    mkdir(folder.s, 0755);
    FILE *in = fopen(path_in(folder.s, "seq.in").s, "w"),
         *out = fopen(path_in(folder.s, "seq.out").s, "w"),
         *label = fopen(path_in(folder.s, "label").s, "w");
    for (int i = 0; in && out && label && i < n; i++) {
        fprintf(in, "%s\n", text[i]);
        for (const char *w = text[i]; *w; w++)
            if (w == text[i] || w[-1] == ' ')
                fprintf(out, "%sO", w == text[i] ? "" : " ");
        fprintf(out, "\n");
        fprintf(label, "out_of_scope\n");
    }
    CHECK(in && out && label, "writing %s", folder.s);
    for (FILE **f = (FILE *[]){ in, out, label }, **end = f + 3; f < end; f++)
        if (*f)
            fclose(*f);
}

/* The first n (up to 6) of a few plain background sentences. */
static void write_background(const char *dir, int n)
{
    static const char *const text[] = {
        "she painted the old fence", "the river froze early",  "a treaty ended the long war",
        "he studied ancient coins",  "the orchestra tuned up", "they sailed round the cape"
    };
    write_sentences(dir, text, n);
}

/* Whether the model in dir answers `intent`. */
static int model_has_intent(const char *dir, const char *intent)
{
    size_t len;
    char *cfg = read_all(path_in(dir, "config.json").s, &len), quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", intent);
    int has = cfg && strstr(cfg, quoted) != NULL;
    free(cfg);
    return has;
}

/* Small data whose intent the encoder reads gets the background sentences beside the
 * default encoder as its out-of-scope intent (all of them when fewer than the sized count,
 * or as many as asked, or none), or as more examples of its nlu_fallback intent; none when
 * the sparse features alone read the intent (the tiny set's 10 examples per intent). The
 * record changes with them wherever the run could add them. */
static void test_background(const char *encoder, const char *out)
{
    static const struct {
        int background;
        parley_switch intent_encoder;
        int want;
    } cases[] = { { PARLEY_AUTO, PARLEY_SWITCH_ON, 6 },
                  { 4, PARLEY_SWITCH_ON, 4 },
                  { 0, PARLEY_SWITCH_ON, 0 },
                  { PARLEY_AUTO, PARLEY_SWITCH_AUTO, 0 } };
    write_background(encoder, 6);
    setenv("PARLEY_ENCODER", encoder, 1);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        parley_train_params t = tiny(out, 1);
        train_seen s = { 0 };
        t.background = cases[i].background;
        t.intent_encoder = cases[i].intent_encoder;
        t.progress = train_watch;
        t.user_data = &s;
        CHECK(parley_train_run(&t, NULL) == PARLEY_OK, "case %zu: %s", i, parley_errmsg());
        CHECK(s.n_background == cases[i].want && s.n_train == 40 + cases[i].want &&
                      model_has_intent(out, "out_of_scope") == (cases[i].want > 0),
              "case %zu: %d background sentences of %d examples", i, s.n_background, s.n_train);
        parley_train_verdict v = PARLEY_TRAIN_NEW;
        path moved = path_in(encoder, "background.moved");
        rename(path_in(encoder, "background").s, moved.s);
        CHECK(parley_train_record_compare(&t, &v) == PARLEY_OK &&
                      v == (cases[i].background ? PARLEY_TRAIN_CHANGED : PARLEY_TRAIN_UP_TO_DATE),
              "case %zu: without the background, verdict %d", i, (int)v);
        rename(moved.s, path_in(encoder, "background").s);
    }
    /* A broken background folder is an error that names it, not a model without them. */
    path label = path_in(encoder, "background/label"), hidden = path_in(encoder, "label.hidden");
    parley_train_params broken = tiny(out, 1);
    broken.intent_encoder = PARLEY_SWITCH_ON;
    rename(label.s, hidden.s);
    CHECK(parley_train_run(&broken, NULL) != PARLEY_OK &&
                  strstr(parley_errmsg(), "background sentences") &&
                  strstr(parley_errmsg(), "background/label"),
          "a broken background: %s", parley_errmsg());
    rename(hidden.s, label.s);
    /* A stopped run resumes with the same sentences (the data's checksum would differ). */
    parley_train_params t = tiny(out, 2);
    parley_train_result res;
    train_seen s = { .stop_at_step = 1 };
    t.intent_encoder = PARLEY_SWITCH_ON;
    t.progress = train_watch;
    t.user_data = &s;
    CHECK(parley_train_run(&t, &res) == PARLEY_OK && res.stopped, "stop: %s", parley_errmsg());
    t.resume = 1;
    s = (train_seen){ 0 };
    CHECK(parley_train_run(&t, &res) == PARLEY_OK && !res.stopped && s.n_background == 6 &&
                  model_has_intent(out, "out_of_scope"),
          "resume: %s", parley_errmsg());
    /* Data with an nlu_fallback intent of its own gets them there. */
    path data = path_in(files.tmp, "fallback.yaml");
    size_t len;
    char *yaml = read_all(files.data, &len);
    FILE *f = fopen(data.s, "w");
    if (yaml && f)
        fprintf(f, "%s- intent: nlu_fallback\n  examples: |\n    - tell me a joke\n", yaml);
    if (f)
        fclose(f);
    free(yaml);
    t = tiny(out, 1);
    s = (train_seen){ 0 };
    t.data = data.s;
    t.intent_encoder = PARLEY_SWITCH_ON;
    t.progress = train_watch;
    t.user_data = &s;
    CHECK(parley_train_run(&t, NULL) == PARLEY_OK, "nlu_fallback: %s", parley_errmsg());
    CHECK(s.n_background == 6 && model_has_intent(out, "nlu_fallback") &&
                  !model_has_intent(out, "out_of_scope"),
          "nlu_fallback: %d background sentences", s.n_background);
    /* Few examples whose intents share no word between examples (the sparse features,
     * cross-fitted, read few of them) go to the encoder, and the background with it; with
     * random weights (--init none) they stay the sparse features'. */
    path odd = path_in(files.tmp, "odd.yaml");
    if ((f = fopen(odd.s, "w"))) {
        fprintf(f, "nlu:\n- intent: greet\n  examples: |\n    - hello\n    - good morning\n"
                   "    - howdy partner\n    - hey there\n    - greetings\n    - hiya\n"
                   "- intent: leave\n  examples: |\n    - goodbye\n    - see you later\n"
                   "    - farewell\n    - cya\n    - take care\n    - so long\n"
                   "- intent: travel\n  examples: |\n    - to [paris](city)\n"
                   "    - [london](city) please\n    - fly me over to [rome](city)\n"
                   "    - a ticket for [oslo](city)\n    - [madrid](city) tomorrow\n"
                   "    - going [north](city)\n");
        fclose(f);
    }
    for (int none = 0; none < 2; none++) {
        t = tiny(out, 1);
        s = (train_seen){ 0 };
        t.data = odd.s;
        t.shape = (parley_train_shape){ PARLEY_AUTO, PARLEY_AUTO, PARLEY_AUTO, PARLEY_AUTO,
                                        32 }; /* a start from the default encoder */
        t.init = none ? "none" : NULL;
        t.progress = train_watch;
        t.user_data = &s;
        CHECK(parley_train_run(&t, NULL) == PARLEY_OK, "odd data: %s", parley_errmsg());
        CHECK(s.n_background == (none ? 0 : 6) && model_has_intent(out, "out_of_scope") == !none,
              "odd data, %s: %d background sentences", none ? "random weights" : "encoder",
              s.n_background);
    }
    setenv("PARLEY_ENCODER", "none", 1); /* as meson.build runs the tests */
}

/* The background sentences teach the intent only: their words are not annotated, so a
 * word the bot tags (here its cities) that they hold as plain words is not learned as "O".
 * Trained on them as O, the tiny model (24 epochs: fewer leave "paris" at a sentence's start
 * untagged either way) tags "paris" O in both sentences below. */
static void test_background_untagged(const char *encoder, const char *out)
{
    static const char *const text[] = {
        "paris",
        "paris london",
        "london paris",
        "tokyo paris",
        "paris tokyo",
        "london",
        "tokyo",
        "paris paris",
        "london tokyo",
        "tokyo london",
        "paris and london",
        "tokyo and paris",
        "london and tokyo",
    };
    path saved = path_in(encoder, "background.saved");
    rename(path_in(encoder, "background").s, saved.s);
    write_sentences(encoder, text, (int)(sizeof text / sizeof *text));
    setenv("PARLEY_ENCODER", encoder, 1);
    parley_train_params t = tiny(out, 24);
    t.intent_encoder = PARLEY_SWITCH_ON;
    CHECK(parley_train_run(&t, NULL) == PARLEY_OK, "train: %s", parley_errmsg());
    parley_nlu *nlu = open_cpu(out);
    for (const char *const *u = (const char *const[]){ "in paris", "paris tomorrow", NULL }; *u;
         u++) {
        parley_nlu_result *r = NULL;
        CHECK(nlu && parley_nlu_parse(nlu, *u, &r) == PARLEY_OK && r->n_slots >= 1 &&
                      !strcmp(r->slots[0].slot, "city") && !strcmp(r->slots[0].value, "paris"),
              "\"%s\": %d slots, the first %s", *u, r ? r->n_slots : -1,
              r && r->n_slots ? r->slots[0].slot : "none");
        parley_nlu_result_free(r);
    }
    parley_nlu_close(nlu);
    rm_tree(path_in(encoder, "background").s);
    rename(saved.s, path_in(encoder, "background").s);
    setenv("PARLEY_ENCODER", "none", 1); /* as meson.build runs the tests */
}

static void test_pretrain(void)
{
    static const char *const what[] = { "play some", "weather in", "set an alarm for",
                                        "book a table for" };
    static const char *const tail[] = { "jazz", "paris",  "seven", "two",
                                        "rock", "london", "nine",  "four" };
    path text = path_in(files.tmp, "text.txt"), pre = path_in(files.tmp, "pre"),
         tuned = path_in(files.tmp, "tuned"), stopped = path_in(files.tmp, "pre_stop");
    FILE *f = fopen(text.s, "w");
    if (!f) {
        CHECK(0, "writing %s", text.s);
        return;
    }
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 8; k++)
            fprintf(f, "%s %s\n", what[i], tail[k]);
    fclose(f);
    const char *text_files[] = { text.s };
    parley_pretrain_params p = parley_pretrain_params_default();
    parley_pretrain_result res;
    train_seen s = { 0 };
    CHECK(p.train.epochs == 10 && p.train.batch == 64 && p.holdout > 0 && p.mask_prob > 0,
          "pretraining defaults");
    p.text = text_files;
    p.n_text = 1;
    p.holdout = 0.25f;
    p.train.out = pre.s;
    p.train.shape = (parley_train_shape){ 1, 32, 2, 64, 16 };
    p.train.epochs = 2;
    p.train.batch = 8;
    p.train.threads = 1;
    p.train.progress = train_watch;
    p.train.user_data = &s;
    CHECK(parley_pretrain_run(&p, &res) == PARLEY_OK, "pretrain: %s", parley_errmsg());
    CHECK(!res.stopped && res.epochs_done == 2 && res.n_train == 24 && res.n_holdout == 8 &&
                  s.n_train == 24 && s.n_dev == 8 && s.mlm_epochs == 2 && res.mlm_accuracy >= 0 &&
                  res.mlm_loss > 0 && s.last_mlm_loss == res.mlm_loss,
          "pretrain: %d + %d lines, %d epochs with held-out scores", res.n_train, res.n_holdout,
          s.mlm_epochs);
    CHECK(exists(path_in(pre.s, "mlm_head.safetensors").s), "no MLM head");
    CHECK(!strcmp(s.device, "cpu"), "pretraining on %s", s.device);

    parley_train_params t = tiny(tuned.s, 1);
    t.init = pre.s;
    t.lr = PARLEY_AUTO; /* the default with init */
    s = (train_seen){ 0 };
    t.progress = train_watch;
    t.user_data = &s;
    CHECK(parley_train_run(&t, NULL) == PARLEY_OK, "fine-tune: %s", parley_errmsg());
    CHECK(s.replaced && !s.learned && s.starts == 1, "fine-tuning replaces the heads");
    CHECK(parley_train_default_lr(1) < parley_train_default_lr(0), "default rates");
    test_default_encoder(pre.s, tuned.s);
    test_background(pre.s, tuned.s);
    test_background_untagged(pre.s, tuned.s);

    s = (train_seen){ .stop_at_step = 1 };
    p.train.out = stopped.s;
    CHECK(parley_pretrain_run(&p, &res) == PARLEY_OK && res.stopped && res.steps_done == 1,
          "pretrain stop: %s", parley_errmsg());
    CHECK(exists(path_in(p.train.out, "model.safetensors").s), "a stopped pretraining saves");
}

/* ---- bad arguments ----------------------------------------------------------------------- */

/* st is want and the detail names needle. */
static void expect(parley_status st, parley_status want, const char *needle, const char *what)
{
    CHECK(st == want && strstr(parley_errmsg(), needle), "%s: %s: %s", what, parley_status_str(st),
          parley_errmsg());
}

static void test_bad_arguments(void)
{
    path o = path_in(files.tmp, "bad"), m = path_in(files.tmp, "dev"),
         missing = path_in(files.tmp, "missing.yaml");
    parley_train_params p = tiny(o.s, 1);
    expect(parley_train_run(NULL, NULL), PARLEY_ERR_INVALID_ARG, "params", "NULL params");
    p.out = NULL;
    expect(parley_train_run(&p, NULL), PARLEY_ERR_INVALID_ARG, "required", "no out");
    p = tiny(o.s, 0); /* PARLEY_AUTO sizes the epochs to the data; 0 is an error */
    expect(parley_train_run(&p, NULL), PARLEY_ERR_INVALID_ARG, "epochs", "epochs 0");
    p = tiny(o.s, 1);
    p.device = "tpu";
    expect(parley_train_run(&p, NULL), PARLEY_ERR_INVALID_ARG, "tpu", "device");
    p = tiny(o.s, 1);
    p.data = missing.s;
    expect(parley_train_run(&p, NULL), PARLEY_ERR_NOT_FOUND, "missing.yaml", "missing data");
    p.data = files.bad;
    expect(parley_train_run(&p, NULL), PARLEY_ERR_FORMAT, "bad.yaml:4:", "bad data");
    p.data = files.data;
    p.resume = 1;
    expect(parley_train_run(&p, NULL), PARLEY_ERR_NOT_FOUND, "no training state", "resume");
    CHECK(!exists(path_in(o.s, "config.json").s), "a failed run wrote a model");

    parley_pretrain_params pp = parley_pretrain_params_default();
    expect(parley_pretrain_run(NULL, NULL), PARLEY_ERR_INVALID_ARG, "params", "NULL params");
    pp.train.out = o.s;
    expect(parley_pretrain_run(&pp, NULL), PARLEY_ERR_INVALID_ARG, "text", "no text");

    parley_nlu *nlu = open_cpu(m.s);
    parley_eval_report *r = (parley_eval_report *)&r; /* must be reset to NULL on failure */
    parley_eval_params ep = { .batch = -1 };
    expect(parley_eval_run(NULL, files.dev, NULL, &r), PARLEY_ERR_INVALID_ARG, "NULL", "no model");
    CHECK(r == NULL, "*out is NULL after a failure");
    expect(parley_eval_run(nlu, NULL, NULL, &r), PARLEY_ERR_INVALID_ARG, "NULL", "no data");
    expect(parley_eval_run(nlu, files.dev, NULL, NULL), PARLEY_ERR_INVALID_ARG, "out", "no out");
    expect(parley_eval_run(nlu, files.dev, &ep, &r), PARLEY_ERR_INVALID_ARG, "batch", "batch -1");
    expect(parley_eval_run(nlu, files.bad, NULL, &r), PARLEY_ERR_FORMAT, "bad.yaml:4:", "bad data");
    expect(parley_eval_run(nlu, path_in(files.tmp, "none.yaml").s, NULL, &r), PARLEY_ERR_NOT_FOUND,
           "none.yaml", "missing data");
    CHECK(r == NULL, "no report after failures");
    const char *text = "x";
    expect(parley_eval_report_json(NULL, 0, &text), PARLEY_ERR_INVALID_ARG, "NULL", "json");
    expect(parley_eval_report_table(NULL, 0, &text), PARLEY_ERR_INVALID_ARG, "NULL", "table");
    parley_eval_report_free(NULL);
    parley_nlu_close(nlu);
}

/* The command that trains a model again as it was made: the options given, the data as
 * recorded or as named (then forced when it is another file), and nothing that was left to
 * the data; a model without a record has none. */
static void test_record_command(void)
{
    path out = path_in(files.tmp, "command model");
    parley_train_params p = tiny(out.s, 1);
    p.seed = 123456789; /* past a float's 24 bits */
    p.warmup_fraction = 0.2f;
    char cmd[4096], want[9000], real[4096];
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "train: %s", parley_errmsg());
    CHECK(realpath(files.data, real) != NULL, "realpath %s", files.data);
    snprintf(want, sizeof want,
             "parley train --data %s --out '%s' --layers 2 --hidden 64 --heads 2 "
             "--intermediate 128 --max-positions 32 --epochs 1 --batch 8 --augment 0 --lr 0.003 "
             "--seed 123456789 --warmup 0.2",
             real, out.s);
    CHECK(parley_train_record_command(out.s, NULL, cmd, sizeof cmd) == PARLEY_OK &&
                  !strcmp(cmd, want),
          "the command:\n  got:  %s\n  want: %s", cmd, want);
    CHECK(parley_train_record_command(out.s, files.dev, cmd, sizeof cmd) == PARLEY_OK &&
                  strstr(cmd, files.dev) && strlen(cmd) > 8 &&
                  !strcmp(cmd + strlen(cmd) - 8, " --force"),
          "other data is forced: %s", cmd);
    CHECK(parley_train_record_command(out.s, NULL, cmd, 16) == PARLEY_ERR_INVALID_ARG &&
                  strstr(parley_errmsg(), "bytes"),
          "a small buffer: %s", parley_errmsg());
    CHECK(parley_train_record_command(files.tmp, NULL, cmd, sizeof cmd) == PARLEY_ERR_NOT_FOUND,
          "no record: %s", parley_errmsg());
}

int main(int argc, char **argv)
{
    int rc = train_test_start(argc, argv, "api", &files);
    if (rc != 0)
        return rc;
    test_progress_and_best();
    test_stop_and_resume();
    test_cancel_from_thread();
    test_eval();
    test_eval_alloc_failures();
    test_pretrain();
    test_bad_arguments();
    test_record_command();
    rm_tree(files.tmp);
    return check_done();
}
