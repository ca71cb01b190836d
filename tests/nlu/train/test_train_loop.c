/* test_train_loop.c — the training driver (nlu/train/train.c) on the tiny synthetic set in
 * tests/nlu/train/tiny/ (argv[1]).
 *
 * A tiny model must learn the training set perfectly (intent and every tag: sentence
 * accuracy 1), and the saved directory must work through the public API. A seed gives
 * byte-identical files; a run stopped mid-epoch or at an epoch's end and resumed ends with
 * exactly the files of an uninterrupted run. Debris of a crashed checkpoint write does not
 * break a resume. Few examples with slots keep the intent to the sparse features when they
 * read it well enough. --init keeps or replaces the heads as the labels demand. Dev labels the
 * training set lacks count as wrong. Bad settings and bad data fail with clear errors, and
 * every allocation failure during a run fails cleanly, leaving loadable files behind.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parley/parley.h"
#include "nlu/cuda/cuda_bert.h"
#include "nlu/train/train.h"
#include "tests/check.h"
#include "tests/fault.h"
#include "tests/nlu/train/train_test.h"

static tiny_files files;

/* A tiny model: trains in well under a second on one thread. */
static parley_train_params tiny(const char *out, int epochs)
{
    parley_train_params p = parley_train_params_default();
    p.data = files.data;
    p.out = out;
    p.shape.layers = 2;
    p.shape.hidden = 64;
    p.shape.heads = 2;
    p.shape.intermediate = 128;
    p.shape.max_positions = 32;
    p.epochs = epochs;
    p.batch = 8;
    p.lr = 3e-3f;
    p.augment = 0; /* the data's own values would add variants: test_augment's subject */
    p.threads = 1;
    return p;
}

static parley_train_scores score(const char *model_dir, const char *set)
{
    parley_train_scores s = { -1, -1, -1 };
    bert_model *m = NULL;
    ds_dataset *ds = NULL;
    mt_report *r = NULL;
    CHECK(bert_model_load(model_dir, &m) == PARLEY_OK, "load %s: %s", model_dir, parley_errmsg());
    CHECK(ds_load(set, &ds) == PARLEY_OK, "load %s: %s", set, parley_errmsg());
    if (m && ds && train_evaluate(m, ds, &r, NULL) == PARLEY_OK)
        s = (parley_train_scores){ r->intent_accuracy, r->slots.f1, r->sentence_accuracy };
    mt_report_free(r);
    ds_free(ds);
    bert_model_free(m);
    return s;
}

/* ---- learning ---------------------------------------------------------------------------- */

static void test_fit(void)
{
    path o = path_in(files.tmp, "fit");
    const char *out = o.s;
    parley_train_params p = tiny(out, 40);
    parley_train_result res;
    train_seen s = { 0 };
    p.progress = train_watch;
    p.user_data = &s;
    parley_status st = parley_train_run(&p, &res);
    CHECK(st == PARLEY_OK, "train: %s", parley_errmsg());
    CHECK(s.starts == 1 && s.learned && !s.replaced, "start event");
    CHECK(s.epochs == 40 && s.last_epoch == 40 && s.steps == s.steps_total &&
                  s.steps_total == 40 * 5,
          "%d epochs, %d of %ld steps", s.epochs, s.steps, s.steps_total);
    /* The sparse pre-fit has fitted most of the loss before the first step; the steps lower
     * it further. */
    CHECK(s.first_loss < 0.1 && s.last_loss < s.first_loss, "loss %g -> %g", (double)s.first_loss,
          (double)s.last_loss);
    CHECK(s.last_eta == 0, "ETA at the end: %g", s.last_eta);
    CHECK(!res.stopped && res.epochs_done == 40 && res.best_epoch == 40 && !res.has_dev, "result");
    CHECK(!exists(path_in(out, "train_state").s), "the state is removed when the run completes");
    parley_train_scores sc = score(out, files.data);
    CHECK(sc.intent_accuracy == 1 && sc.slot_f1 == 1 && sc.sentence_accuracy == 1,
          "training set: intent %g, slot F1 %g, sentence %g", sc.intent_accuracy, sc.slot_f1,
          sc.sentence_accuracy);

    /* The directory works through the public API and agrees with the scoring. */
    parley_nlu *nlu = NULL;
    parley_nlu_result *r = NULL;
    CHECK(parley_nlu_open(out, NULL, &nlu) == PARLEY_OK, "open: %s", parley_errmsg());
    if (nlu && parley_nlu_parse(nlu, "weather in new york tomorrow", &r) == PARLEY_OK) {
        CHECK(!strcmp(r->intent, "get_weather"), "intent %s", r->intent);
        CHECK(r->n_slots == 2 && !strcmp(r->slots[0].slot, "city") &&
                      !strcmp(r->slots[0].value, "new york") && !strcmp(r->slots[1].slot, "date"),
              "slots: %d", r->n_slots);
    }
    parley_nlu_result_free(r);
    parley_nlu_close(nlu);

    /* Dev: the "greet" example has a label the training set lacks: always wrong. */
    score(out, files.dev);
    parley_train_scores d = score(out, files.dev);
    CHECK(d.intent_accuracy <= 5.0 / 6 + 1e-9 && d.sentence_accuracy <= 5.0 / 6 + 1e-9,
          "unknown dev intent: %g", d.intent_accuracy);
}

static void test_dev_and_best(void)
{
    path o = path_in(files.tmp, "dev");
    const char *out = o.s;
    parley_train_params p = tiny(out, 6);
    parley_train_result res;
    train_seen s = { 0 };
    p.dev = files.dev;
    p.progress = train_watch;
    p.user_data = &s;
    CHECK(parley_train_run(&p, &res) == PARLEY_OK, "train: %s", parley_errmsg());
    CHECK(s.dev_epochs == 6 && res.has_dev && res.best_epoch >= 1 && res.best_epoch <= 6,
          "dev each epoch");
    /* The directory holds the best epoch: scoring it again gives the best scores. */
    parley_train_scores d = score(out, files.dev);
    CHECK(d.sentence_accuracy == res.best.sentence_accuracy && d.slot_f1 == res.best.slot_f1 &&
                  d.intent_accuracy == res.best.intent_accuracy,
          "saved model scores %g, best %g", d.sentence_accuracy, res.best.sentence_accuracy);
    /* Its confidences are calibrated on dev: a fitted temperature in config.json. */
    bert_config c;
    CHECK(bert_config_load(path_in(out, "config.json").s, 0, &c) == PARLEY_OK &&
                  c.intent_temperature >= BERT_MIN_TEMPERATURE &&
                  c.intent_temperature <= BERT_MAX_TEMPERATURE && c.intent_temperature != 1,
          "a temperature fitted on dev: %g", (double)c.intent_temperature);
    bert_config_clear(&c);
}

/* ---- reproducibility --------------------------------------------------------------------- */

static void test_determinism(void)
{
    path pa = path_in(files.tmp, "det_a"), pb = path_in(files.tmp, "det_b"),
         pc = path_in(files.tmp, "det_c");
    const char *a = pa.s, *b = pb.s, *c = pc.s;
    parley_train_params p = tiny(a, 2); /* no dev: the last epoch is saved */
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "a: %s", parley_errmsg());
    p.out = b;
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "b: %s", parley_errmsg());
    CHECK(same_model_files(a, b), "same seed, different files");
    bert_config cfg;
    CHECK(bert_config_load(path_in(a, "config.json").s, 0, &cfg) == PARLEY_OK &&
                  cfg.intent_sparse_only && cfg.intent_temperature > 0,
          "without dev, a few-shot model (its intent the sparse features') is calibrated by "
          "cross-fitting: %g",
          (double)cfg.intent_temperature);
    /* ... and keeps each intent to its slot types: play_music's artist, not get_weather's city */
    int music = -1, city = -1, artist = -1;
    for (int i = 0; i < cfg.n_intents; i++)
        music = strcmp(cfg.intent_labels[i], "play_music") ? music : i;
    for (int t = 0; t < cfg.n_slots; t++) {
        city = strcmp(cfg.slot_labels[t], "B-city") ? city : t;
        artist = strcmp(cfg.slot_labels[t], "B-artist") ? artist : t;
    }
    const unsigned char *tags = music >= 0 ? bert_slot_tags_of(&cfg, music) : NULL;
    CHECK(tags && city >= 0 && artist >= 0 && tags[artist] && !tags[city],
          "the few-shot model's slot types per intent");
    bert_config_clear(&cfg);
    p.out = c;
    p.seed = 7;
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "c: %s", parley_errmsg());
    CHECK(!same_model_files(a, c), "another seed, same files");
}

/* Runs 3 epochs straight into `whole`, then again into `parts`, stopped after step
 * `stop_at` and resumed; the files must be identical. Without dev the last epoch is
 * compared, so every step counts; with dev, the best epoch's bookkeeping. */
static void check_resume(const char *whole, const char *parts, int stop_at, int with_dev,
                         const char *set)
{
    parley_train_params p = tiny(whole, 3);
    parley_train_result res;
    p.data = set;
    p.dev = with_dev ? files.dev : NULL;
    p.dropout = 0.2f;
    p.word_dropout = 0.15f;
    p.augment = 2;
    p.warmup_steps = 4;
    CHECK(parley_train_run(&p, &res) == PARLEY_OK, "whole: %s", parley_errmsg());
    long total = res.steps_done;

    train_seen s = { .stop_at_step = stop_at };
    p.out = parts;
    p.progress = train_watch;
    p.user_data = &s;
    CHECK(parley_train_run(&p, &res) == PARLEY_OK, "part 1: %s", parley_errmsg());
    CHECK(res.stopped && res.steps_done == stop_at, "stopped at %ld, wanted %d", res.steps_done,
          stop_at);
    path ps = path_in(parts, "train_state");
    const char *state = ps.s;
    CHECK(exists(path_in(state, "latest").s), "no training state after a stop");
    /* The checkpoint is a model directory in its own right. */
    char name[32];
    snprintf(name, sizeof name, "step-%09d", stop_at);
    path pc = path_in(state, name);
    const char *ckpt = pc.s;
    bert_model *m = NULL;
    CHECK(bert_model_load(ckpt, &m) == PARLEY_OK, "checkpoint %s: %s", ckpt, parley_errmsg());
    bert_model_free(m);

    /* Debris of a crashed later save must not matter: a half-written checkpoint directory
     * and a temporary file. */
    snprintf(name, sizeof name, "step-%09d", stop_at + 1);
    path pj = path_in(state, name);
    const char *junk = pj.s;
    mkdir(junk, 0777);
    FILE *f = fopen(path_in(junk, "model.safetensors").s, "wb");
    if (f) {
        fputs("garbage", f);
        fclose(f);
    }
    f = fopen(path_in(state, ".latest.tmp-abc123").s, "wb");
    if (f)
        fclose(f);

    /* Resume takes the stored settings; different ones here must be ignored. */
    parley_train_params r = parley_train_params_default();
    r.data = set;
    r.dev = p.dev;
    r.out = parts;
    r.resume = 1;
    r.threads = 1;
    r.lr = 0.5f;
    r.augment = 0;
    r.word_dropout = 0;
    train_seen s2 = { 0 };
    r.progress = train_watch;
    r.user_data = &s2;
    CHECK(parley_train_run(&r, &res) == PARLEY_OK, "resume: %s", parley_errmsg());
    CHECK(!res.stopped && res.steps_done == total && s2.steps == total - stop_at,
          "resumed %d steps", s2.steps);
    CHECK(same_model_files(whole, parts),
          "stopped at %d and resumed: files differ from an uninterrupted run", stop_at);
    CHECK(!exists(state), "the state is removed when the run completes");
}

static void test_resume(void)
{
    /* 40 examples in batches of 8: 5 steps an epoch. */
    check_resume(path_in(files.tmp, "res_whole").s, path_in(files.tmp, "res_mid").s, 7, 0,
                 files.data);
    check_resume(path_in(files.tmp, "res_whole2").s, path_in(files.tmp, "res_end").s, 10, 0,
                 files.data);
    check_resume(path_in(files.tmp, "res_whole3").s, path_in(files.tmp, "res_dev").s, 7, 1,
                 files.data);
    /* With lookup variants, which a resumed run must make again from its stored setting. */
    check_resume(path_in(files.tmp, "res_whole4").s, path_in(files.tmp, "res_aug").s, 2, 0,
                 files.lookup);
}

/* ---- augmentation -------------------------------------------------------------------------- */

/* Lookup variants join the training set (the five city examples get up to 3 each); none
 * are made without --augment; without a lookup table the data's own values are drawn;
 * lower-case copies join it where slot values have capitals; a word dropout changes the
 * model. */
static void test_augment(void)
{
    path o = path_in(files.tmp, "aug/missing/parents");
    const char *out = o.s;
    parley_train_params p = tiny(out, 1);
    train_seen s = { 0 };
    p.data = files.lookup;
    p.augment = 3;
    p.progress = train_watch;
    p.user_data = &s;
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "augment: %s", parley_errmsg());
    CHECK(s.n_augmented >= 5 && s.n_augmented <= 15 && s.n_builtin > 0 &&
                  s.n_train == 8 + s.n_augmented + s.n_builtin,
          "%d examples, %d variants, %d built-in replies", s.n_train, s.n_augmented, s.n_builtin);
    CHECK(exists(path_in(out, "model.safetensors").s),
          "the output directory's parents are created");
    p.augment = 0;
    s = (train_seen){ 0 };
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "no augment: %s", parley_errmsg());
    CHECK(s.n_augmented == 0 && s.n_train == 8 + s.n_builtin,
          "%d examples, %d variants without --augment", s.n_train, s.n_augmented);
    p.builtin = PARLEY_SWITCH_OFF;
    s = (train_seen){ 0 };
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK && s.n_builtin == 0 && s.n_train == 8,
          "--builtin off: %d examples, %d built-in replies", s.n_train, s.n_builtin);
    p.builtin = PARLEY_SWITCH_AUTO;
    /* Without lookup tables the variants draw from the data's own values (tiny: 10
     * examples per intent, 4 intents, slots tagged): 3 asked for, 4 when sized. */
    p.data = files.data;
    for (int sized = 0; sized < 2; sized++) {
        p.augment = sized ? -1 : 3;
        s = (train_seen){ 0 };
        CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "no lookups: %s", parley_errmsg());
        CHECK(s.n_augmented > 40 && s.n_augmented <= (sized ? 4 : 3) * 40 &&
                      s.n_train == 40 + s.n_augmented,
              "%d variants of the data's own values (augment %d)", s.n_augmented, p.augment);
    }
    p.augment = 0;

    /* Lower-case copies of the two examples with capitals in a slot value ("Hi Bob" has
     * them outside any), reported apart. */
    path caps = path_in(files.tmp, "caps.yaml");
    FILE *f = fopen(caps.s, "w");
    if (f) {
        fputs("nlu:\n- intent: go\n  examples: |\n    - to [Rome](city)\n"
              "    - fly to [New York](city) now\n    - to [paris](city)\n"
              "- intent: greet\n  examples: |\n    - Hi Bob\n    - hello\n",
              f);
        fclose(f);
    }
    p.data = caps.s;
    p.builtin = PARLEY_SWITCH_OFF;
    s = (train_seen){ 0 };
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK && s.n_lowercase == 2 && s.n_train == 7,
          "capitals: %d examples, %d lower-case copies: %s", s.n_train, s.n_lowercase,
          parley_errmsg());
    p.builtin = PARLEY_SWITCH_AUTO;
    p.data = files.data;

    path w0 = path_in(files.tmp, "wd0"), w1 = path_in(files.tmp, "wd1");
    p = tiny(w0.s, 1);
    p.word_dropout = 0;
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "word dropout 0: %s", parley_errmsg());
    p.out = w1.s;
    p.word_dropout = 0.3f;
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "word dropout 0.3: %s", parley_errmsg());
    CHECK(!same_model_files(w0.s, w1.s), "word dropout changed nothing");
}

/* Writes 2 intents of 65 examples each, every one tagging a slot, into dir/name: with
 * `separable` the intents say different words (the sparse features alone tell them apart),
 * else the same words and an intent drawn at random (nothing tells them apart). */
static path two_intents(const char *dir, const char *name, int separable)
{
    path f = path_in(dir, name);
    FILE *out = fopen(f.s, "w");
    CHECK(out != NULL, "cannot write %s", f.s);
    if (!out)
        return f;
    uint64_t x = 12345;
    fputs("version: \"3.1\"\nnlu:\n", out);
    for (int intent = 0; intent < 2; intent++) {
        fprintf(out, "  - intent: i%d\n    examples: |\n", intent);
        for (int k = 0; k < 130; k++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            const int mine = separable ? k % 2 == intent : (int)(x >> 63) == intent;
            if (!mine)
                continue;
            if (separable && intent == 0)
                fprintf(out, "      - play song %d by [band%d](artist)\n", k, k);
            else if (separable)
                fprintf(out, "      - weather forecast %d in [town%d](city)\n", k, k);
            else
                fprintf(out, "      - item %d for [place%d](place)\n", k, k);
        }
    }
    CHECK(fclose(out) == 0, "writing %s", f.s);
    return f;
}

/* Few examples that tag slots, 65 per intent: the count gives the encoder the intent, and
 * the sparse features take it back when, cross-fitted, they read it well enough. */
static void test_sparse_intent_check(void)
{
    for (int separable = 0; separable < 2; separable++) {
        path data = two_intents(files.tmp, separable ? "apart.yaml" : "alike.yaml", separable);
        path out = path_in(files.tmp, separable ? "apart" : "alike");
        parley_train_params p = tiny(out.s, 1);
        p.data = data.s;
        CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "%s: %s", data.s, parley_errmsg());
        bert_config cfg;
        CHECK(bert_config_load(path_in(out.s, "config.json").s, 0, &cfg) == PARLEY_OK &&
                      cfg.intent_sparse_only == separable,
              "%s: intent_sparse_only %d", data.s, cfg.intent_sparse_only);
        bert_config_clear(&cfg);
    }
}

/* ---- --init ------------------------------------------------------------------------------ */

static void test_init(void)
{
    path pb = path_in(files.tmp, "fit"), ps = path_in(files.tmp, "init_same"),
         po = path_in(files.tmp, "init_other");
    const char *base = pb.s, *same = ps.s, *other = po.s;
    parley_train_params p = tiny(same, 1);
    train_seen s = { 0 };
    p.init = base;
    p.shape = (parley_train_shape){ 0 }; /* ignored with init */
    p.progress = train_watch;
    p.user_data = &s;
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "init, same labels: %s", parley_errmsg());
    CHECK(s.starts == 1 && !s.replaced && !s.learned, "heads kept");

    /* Other labels (dev has "greet"): new heads, the encoder carried over. With a learning
     * rate of almost nothing, the encoder must come out as it went in. */
    p.data = files.dev;
    p.out = other;
    p.lr = 1e-12f;
    memset(&s, 0, sizeof s);
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "init, other labels: %s", parley_errmsg());
    CHECK(s.replaced, "heads replaced");
    bert_model *a = NULL, *b = NULL;
    CHECK(bert_model_load(base, &a) == PARLEY_OK && bert_model_load(other, &b) == PARLEY_OK,
          "load");
    if (a && b) {
        CHECK(b->cfg.n_intents == 5 && a->cfg.n_intents == 4, "labels %d, %d", a->cfg.n_intents,
              b->cfg.n_intents);
        size_t enc = (size_t)(a->w.intent_w - a->params);
        CHECK(enc == (size_t)(b->w.intent_w - b->params), "encoder sizes");
        size_t worst = 0;
        CHECK(check_close(b->params, a->params, enc, 0, 1e-6, &worst) <= 1,
              "encoder changed at %zu", worst);
    }
    bert_model_free(a);
    bert_model_free(b);
}

/* ---- errors ------------------------------------------------------------------------------ */

static void test_errors(void)
{
    path o = path_in(files.tmp, "err");
    const char *out = o.s;
    parley_train_params p = tiny(out, 1);
    p.epochs = 0; /* PARLEY_AUTO sizes the epochs to the data */
    CHECK(parley_train_run(&p, NULL) == PARLEY_ERR_INVALID_ARG, "epochs 0");
    p = tiny(out, 1);
    p.word_dropout = 1;
    CHECK(parley_train_run(&p, NULL) == PARLEY_ERR_INVALID_ARG, "word dropout 1");
    p = tiny(out, 1);
    p.batch = -2; /* PARLEY_AUTO sizes the batch to the data */
    CHECK(parley_train_run(&p, NULL) == PARLEY_ERR_INVALID_ARG, "batch -2");
    p = tiny(out, 1);
    p.device = "cuda:0";
    if (cuda_device_count() == 0) { /* no CUDA in the build, or no device: a clear refusal */
        parley_status st = parley_train_run(&p, NULL);
        CHECK((st == PARLEY_ERR_NOT_BUILT || st == PARLEY_ERR_DEVICE) &&
                      strstr(parley_errmsg(), "cuda:0"),
              "cuda without a device: %s: %s", parley_status_str(st), parley_errmsg());
    }
    p = tiny(out, 1);
    p.device = "tpu";
    CHECK(parley_train_run(&p, NULL) == PARLEY_ERR_INVALID_ARG && strstr(parley_errmsg(), "tpu"),
          "unknown device");
    p = tiny(out, 1);
    p.precision = "fp16";
    CHECK(parley_train_run(&p, NULL) != PARLEY_OK, "fp16 training");
    p = tiny(out, 1);
    p.precision = "int3";
    CHECK(parley_train_run(&p, NULL) == PARLEY_ERR_INVALID_ARG, "unknown precision");
    p = tiny(out, 1);
    p.data = NULL;
    CHECK(parley_train_run(&p, NULL) == PARLEY_ERR_INVALID_ARG, "no data");
    p = tiny(out, 1);
    p.shape.heads = 3;
    CHECK(parley_train_run(&p, NULL) != PARLEY_OK, "heads must divide hidden");
    p = tiny(out, 1);
    p.resume = 1;
    CHECK(parley_train_run(&p, NULL) == PARLEY_ERR_NOT_FOUND, "resume without a state: %s",
          parley_errmsg());
    p = tiny(out, 1);
    p.data = files.bad;
    parley_status st = parley_train_run(&p, NULL);
    CHECK(st == PARLEY_ERR_FORMAT && strstr(parley_errmsg(), "bad.yaml:4:"), "bad data: %s: %s",
          parley_status_str(st), parley_errmsg());
    p = tiny(out, 1);
    path none = path_in(files.tmp, "nothing-here");
    p.init = none.s;
    CHECK(parley_train_run(&p, NULL) != PARLEY_OK && strstr(parley_errmsg(), "--init"),
          "missing init: %s", parley_errmsg());

    /* A resumed run must see the data it started with. */
    train_seen s = { .stop_at_step = 2 };
    p = tiny(out, 2);
    p.progress = train_watch;
    p.user_data = &s;
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "stop: %s", parley_errmsg());
    p.progress = NULL;
    p.resume = 1;
    p.data = files.dev;
    CHECK(parley_train_run(&p, NULL) == PARLEY_ERR_CONFIG &&
                  strstr(parley_errmsg(), "training set"),
          "resume on other data: %s", parley_errmsg());
}

/* ---- allocation failures ----------------------------------------------------------------- */

/* Every allocation of a short run (2 epochs with dev, so saves and a state switch happen)
 * fails in turn (every 11th; all with PARLEY_TEST_FULL=1, which is slow because each save
 * syncs to disk): each failure must be clean, and what is on disk must stay loadable. */
static void test_alloc_failures(void)
{
    path o = path_in(files.tmp, "alloc");
    const char *out = o.s;
    parley_train_params p = tiny(out, 2);
    p.dev = files.dev;
    p.shape.layers = 1;
    p.shape.hidden = 8;
    p.shape.intermediate = 16;
    p.batch = 20;
    int ok = 0, stride = getenv("PARLEY_TEST_FULL") ? 1 : 11;
    long fail_at;
    for (fail_at = 1; fail_at < 1000000 && !ok; fail_at += stride) {
        fault_on(fail_at);
        parley_status st = parley_train_run(&p, NULL);
        fault_off();
        if (st == PARLEY_OK) {
            ok = 1;
            break;
        }
        CHECK(st == PARLEY_ERR_NOMEM, "allocation %ld: %s: %s", fail_at, parley_status_str(st),
              parley_errmsg());
        bert_model *m = NULL;
        if (exists(path_in(out, "config.json").s))
            CHECK(bert_model_load(out, &m) == PARLEY_OK,
                  "allocation %ld: the model left is broken: %s", fail_at, parley_errmsg());
        bert_model_free(m);
        CHECK(count_tmp(out, 2) == 0, "allocation %ld: temporary files left behind", fail_at);
    }
    CHECK(ok, "never succeeded");
}

int main(int argc, char **argv)
{
    int rc = train_test_start(argc, argv, "train", &files);
    if (rc != 0)
        return rc;
    test_fit();
    test_dev_and_best();
    test_determinism();
    test_resume();
    test_augment();
    test_sparse_intent_check();
    test_init();
    test_errors();
    test_alloc_failures();
    rm_tree(files.tmp);
    return check_done();
}
