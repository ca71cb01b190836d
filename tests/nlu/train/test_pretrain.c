/* test_pretrain.c — the masked-language-model pretraining loop (nlu/train/pretrain.c) on a
 * synthetic text written here, and its hand-over to fine-tuning (train.c's init).
 *
 * A tiny encoder must learn to fill in the masked pieces of the held-out lines far better
 * after training than after its first epoch; the directory it writes loads as a model plus
 * an MLM head, with no temporary files left. Blank and repeated lines are dropped. A seed
 * gives byte-identical files, another seed other files. Continuing from a pretrained
 * directory with a learning rate of almost nothing scores the held-out lines exactly as
 * the run that made it (so the encoder and the head were both carried over); fine-tuning
 * from it replaces the placeholder heads and learns the tiny joint set perfectly. A stop
 * asked for mid-epoch leaves a loadable model. Bad settings and bad text fail with errors
 * that name the file and line, and every allocation failure fails cleanly.
 *
 * The same loop in memory on a training run's model (train_pretrain_model): on the text
 * above it learns the held-out pieces as the file-based run does, changes the encoder and
 * nothing after it (pooler, heads); inside parley_train_run (pretrain_epochs) its events
 * come first, marked as pretraining, the run then fits the tiny set, records the setting,
 * and ends with other weights than without it; a stop in it keeps nothing to resume.
 */
#include <stdlib.h>
#include <string.h>

#include "nlu/cuda/cuda_bert.h"
#include "nlu/train/bert_train.h"
#include "nlu/train/train.h"
#include "parley/parley.h"
#include "tests/check.h"
#include "tests/fault.h"
#include "tests/nlu/train/train_test.h"

static tiny_files files;
static char text[1024];
static const char *texts[1];

/* Writes the synthetic corpus: six templates over the tiny joint set's vocabulary, every
 * combination once, then two blank lines and a few repeats (which must be dropped).
 * Returns the number of distinct lines. */
static int write_text(const char *file)
{
    static const char *const cities[] = {
        "paris", "london", "tokyo", "new york", "berlin", "rome"
    };
    static const char *const days[] = { "today", "tomorrow", "tonight", "on monday" };
    static const char *const artists[] = { "miles davis", "pink floyd", "metallica", "bb king",
                                           "adele" };
    static const char *const genres[] = { "jazz", "rock", "blues", "pop" };
    static const char *const times[] = { "seven am", "noon", "six thirty", "nine pm", "eight" };
    FILE *f = fopen(file, "w");
    int n = 0;
    if (!f)
        return 0;
    for (int c = 0; c < 6; c++)
        for (int d = 0; d < 4; d++) {
            n += fprintf(f, "what is the weather in %s %s\n", cities[c], days[d]) > 0;
            n += fprintf(f, "is it raining in %s %s\n", cities[c], days[d]) > 0;
        }
    for (int a = 0; a < 5; a++)
        for (int g = 0; g < 4; g++) {
            n += fprintf(f, "play some %s by %s please\n", genres[g], artists[a]) > 0;
            n += fprintf(f, "put on %s music from %s\n", genres[g], artists[a]) > 0;
        }
    for (int t = 0; t < 5; t++)
        for (int d = 0; d < 4; d++) {
            n += fprintf(f, "wake me up at %s %s\n", times[t], days[d]) > 0;
            n += fprintf(f, "set an alarm for %s %s\n", times[t], days[d]) > 0;
        }
    fprintf(f, "\n  \t\r\nwake me up at noon today\r\nplay some jazz by adele please\n");
    fclose(f);
    return n;
}

/* A tiny encoder on one thread: 30 epochs in a few seconds. */
static parley_pretrain_params tiny(const char *out, int epochs)
{
    parley_pretrain_params p = parley_pretrain_params_default();
    p.text = texts;
    p.n_text = 1;
    p.train.out = out;
    p.train.shape.layers = 2;
    p.train.shape.hidden = 64;
    p.train.shape.heads = 2;
    p.train.shape.intermediate = 128;
    p.train.shape.max_positions = 32;
    p.train.epochs = epochs;
    p.train.batch = 16;
    p.train.lr = 3e-3f;
    p.train.threads = 1;
    p.holdout = 0.2f;
    p.mask_prob = 0.25f;
    return p;
}

static const char *const PRETRAIN_FILES[] = { "config.json", "model.safetensors", "vocab.txt",
                                              "mlm_head.safetensors" };

/* Returns what the run reported, for test_continue. */
static train_seen test_fit(int n_lines)
{
    path o = path_in(files.tmp, "fit");
    parley_pretrain_params p = tiny(o.s, 30);
    parley_pretrain_result res;
    train_seen s = { 0 };
    p.train.progress = train_watch;
    p.train.user_data = &s;
    CHECK(parley_pretrain_run(&p, &res) == PARLEY_OK, "pretrain: %s", parley_errmsg());
    CHECK(s.starts == 1 && s.learned, "start event");
    CHECK(s.n_train + s.n_dev == n_lines && s.n_dev == (int)(0.2 * n_lines),
          "%d + %d lines of %d distinct", s.n_train, s.n_dev, n_lines);
    CHECK(s.epochs == 30 && s.mlm_epochs == 30 && s.steps == s.steps_total &&
                  res.steps_done == s.steps_total && !res.stopped && res.epochs_done == 30,
          "%d epochs, %d of %ld steps", s.epochs, s.steps, s.steps_total);
    CHECK(res.n_train == s.n_train && res.n_holdout == s.n_dev &&
                  res.mlm_accuracy == s.last_mlm_acc && res.mlm_loss == s.last_mlm_loss,
          "result and last epoch agree");
    CHECK(s.last_loss < s.first_loss / 2, "training loss %g -> %g", (double)s.first_loss,
          (double)s.last_loss);
    /* Half the held-out lines' pieces are template words, predictable from context. */
    printf("held-out masked-LM accuracy: %.3f after epoch 1, %.3f after 30\n", s.first_mlm_acc,
           s.last_mlm_acc);
    CHECK(s.last_mlm_acc >= 0.5 && s.last_mlm_acc > s.first_mlm_acc + 0.2,
          "held-out masked-LM accuracy %g after epoch 1, %g "
          "after 30",
          s.first_mlm_acc, s.last_mlm_acc);

    bert_model *m = NULL;
    CHECK(bert_model_load(o.s, &m) == PARLEY_OK, "load: %s", parley_errmsg());
    if (m) {
        CHECK(m->cfg.n_intents == 1 && !strcmp(m->cfg.intent_labels[0], "none") &&
                      m->cfg.n_slots == 1 && !strcmp(m->cfg.slot_labels[0], "O"),
              "placeholder labels");
        CHECK(m->cfg.layers == 2 && m->cfg.hidden == 64, "shape");
        float *head = malloc(bert_mlm_param_count(&m->cfg) * sizeof *head);
        CHECK(head && bert_mlm_load(&m->cfg, path_in(o.s, "mlm_head.safetensors").s, head) ==
                              PARLEY_OK,
              "head: %s", parley_errmsg());
        free(head);
    }
    bert_model_free(m);
    CHECK(count_tmp(o.s, 0) == 0, "temporary files left behind");
    return s;
}

static void test_determinism(void)
{
    path a = path_in(files.tmp, "det_a"), b = path_in(files.tmp, "det_b"),
         c = path_in(files.tmp, "det_c");
    parley_pretrain_params p = tiny(a.s, 2);
    p.train.dropout = 0.2f;
    CHECK(parley_pretrain_run(&p, NULL) == PARLEY_OK, "a: %s", parley_errmsg());
    p.train.out = b.s;
    CHECK(parley_pretrain_run(&p, NULL) == PARLEY_OK, "b: %s", parley_errmsg());
    CHECK(same_files(a.s, b.s, PRETRAIN_FILES, 4), "same seed, different files");
    p.train.out = c.s;
    p.train.seed = 7;
    CHECK(parley_pretrain_run(&p, NULL) == PARLEY_OK, "c: %s", parley_errmsg());
    CHECK(!same_files(a.s, c.s, PRETRAIN_FILES, 4), "another seed, same files");
}

/* Continuing from "fit" with a learning rate of almost nothing: the same held-out split
 * and masks (same seed) must score exactly as fit's last epoch did. */
static void test_continue(const train_seen *fit)
{
    path base = path_in(files.tmp, "fit"), o = path_in(files.tmp, "more");
    parley_pretrain_params p = tiny(o.s, 1);
    train_seen s = { 0 };
    p.train.init = base.s;
    p.train.shape = (parley_train_shape){ 0 }; /* ignored with init */
    p.train.lr = 1e-12f;
    p.train.progress = train_watch;
    p.train.user_data = &s;
    CHECK(parley_pretrain_run(&p, NULL) == PARLEY_OK, "continue: %s", parley_errmsg());
    CHECK(!s.learned && s.epochs == 1, "init's vocabulary is kept");
    CHECK(s.last_mlm_acc == fit->last_mlm_acc && fabs(s.last_mlm_loss - fit->last_mlm_loss) < 1e-6,
          "held-out scores after continuing: %g / %g, before: %g / %g", s.last_mlm_acc,
          s.last_mlm_loss, fit->last_mlm_acc, fit->last_mlm_loss);
}

/* Fine-tuning the pretrained encoder on the tiny joint set: new heads, perfect fit. */
static void test_finetune(void)
{
    path base = path_in(files.tmp, "fit"), o = path_in(files.tmp, "tuned");
    parley_train_params p = parley_train_params_default();
    p.data = files.data;
    p.out = o.s;
    p.init = base.s;
    p.epochs = 40;
    p.batch = 8;
    p.lr = 3e-3f;
    p.threads = 1;
    parley_train_result res;
    CHECK(parley_train_run(&p, &res) == PARLEY_OK, "fine-tune: %s", parley_errmsg());
    bert_model *m = NULL;
    ds_dataset *ds = NULL;
    mt_report *r = NULL;
    CHECK(bert_model_load(o.s, &m) == PARLEY_OK && ds_load(files.data, &ds) == PARLEY_OK,
          "load: %s", parley_errmsg());
    CHECK(m && m->cfg.n_intents == 4, "heads replaced: %d intents", m ? m->cfg.n_intents : -1);
    if (m && ds && train_evaluate(m, ds, &r, NULL) == PARLEY_OK)
        CHECK(r->intent_accuracy == 1 && r->sentence_accuracy == 1,
              "training set: intent %g, sentence %g", r->intent_accuracy, r->sentence_accuracy);
    else
        CHECK(0, "evaluate: %s", parley_errmsg());
    mt_report_free(r);
    ds_free(ds);
    bert_model_free(m);
}

static void test_stop(void)
{
    path o = path_in(files.tmp, "stop");
    parley_pretrain_params p = tiny(o.s, 3);
    parley_pretrain_result res;
    train_seen s = { .stop_at_step = 5 };
    p.train.progress = train_watch;
    p.train.user_data = &s;
    CHECK(parley_pretrain_run(&p, &res) == PARLEY_OK, "stop: %s", parley_errmsg());
    CHECK(res.stopped && res.steps_done == 5 && res.epochs_done == 0 && s.epochs == 0,
          "stopped after %ld steps", res.steps_done);
    bert_model *m = NULL;
    CHECK(bert_model_load(o.s, &m) == PARLEY_OK, "the model so far is saved: %s", parley_errmsg());
    bert_model_free(m);
    CHECK(exists(path_in(o.s, "mlm_head.safetensors").s), "and its head");
}

/* The lines of the synthetic text (repeats included; the loop drops them), *n of them. */
static char **read_lines(int *n)
{
    size_t len = 0;
    char *all = read_all(text, &len), **lines = calloc(len + 1, sizeof *lines);
    *n = 0;
    for (char *save = NULL, *l = all && lines ? strtok_r(all, "\n", &save) : NULL; l;
         l = strtok_r(NULL, "\n", &save))
        lines[(*n)++] = strdup(l);
    free(all);
    return lines;
}

static void free_lines(char **lines, int n)
{
    for (int i = 0; lines && i < n; i++)
        free(lines[i]);
    free(lines);
}

/* train_pretrain_model on "tuned" (a joint model): the encoder learns, the rest stays. */
static void test_in_place(void)
{
    int n = 0;
    char **lines = read_lines(&n);
    bert_model *m = NULL;
    CHECK(bert_model_load(path_in(files.tmp, "tuned").s, &m) == PARLEY_OK, "load: %s",
          parley_errmsg());
    if (!m || !lines) {
        free_lines(lines, n);
        return;
    }
    const size_t enc = (size_t)(m->w.pool_w - m->params), all = m->n_params;
    float *before = malloc(all * sizeof *before);
    memcpy(before, m->params, all * sizeof *before);
    parley_pretrain_params p = tiny(NULL, 30);
    parley_pretrain_result res;
    train_seen s = { 0 };
    p.train.progress = train_watch;
    p.train.user_data = &s;
    CHECK(train_pretrain_model(m, (const char *const *)lines, n, &p, &res) == PARLEY_OK,
          "in place: %s", parley_errmsg());
    CHECK(res.epochs_done == 30 && !res.stopped && s.mlm_epochs == 30 && s.n_dev > 0,
          "%d epochs, %d scored", res.epochs_done, s.mlm_epochs);
    printf("in place: held-out masked-LM accuracy %.3f after epoch 1, %.3f after 30\n",
           s.first_mlm_acc, s.last_mlm_acc);
    CHECK(s.last_mlm_acc >= 0.5 && s.last_mlm_acc > s.first_mlm_acc + 0.2,
          "in place: held-out masked-LM accuracy %g -> %g", s.first_mlm_acc, s.last_mlm_acc);
    CHECK(memcmp(before, m->params, enc * sizeof *before) != 0, "the encoder learned");
    CHECK(!memcmp(before + enc, m->params + enc, (all - enc) * sizeof *before),
          "the pooler and the heads are untouched");
    free(before);
    bert_model_free(m);
    free_lines(lines, n);
}

/* What a training run with pretrain_epochs reported: its pretraining's events apart. */
typedef struct own_seen {
    int pre_starts, pre_epochs, pre_steps, starts, epochs, pre_after_start;
    int stop_at_pre_step; /* ask to stop after this pretraining step (0 = never) */
    int stop_at_step;     /* ... or after this training step */
} own_seen;

static int own_watch(const parley_train_progress *p, void *u)
{
    own_seen *s = u;
    if (p->pretraining) {
        s->pre_after_start += s->starts > 0;
        s->pre_starts += p->event == PARLEY_TRAIN_START;
        s->pre_epochs += p->event == PARLEY_TRAIN_EPOCH && p->has_mlm;
        s->pre_steps += p->event == PARLEY_TRAIN_STEP;
        return s->stop_at_pre_step && p->event == PARLEY_TRAIN_STEP &&
               p->step == s->stop_at_pre_step;
    }
    s->starts += p->event == PARLEY_TRAIN_START;
    s->epochs += p->event == PARLEY_TRAIN_EPOCH;
    return s->stop_at_step && p->event == PARLEY_TRAIN_STEP && p->step == s->stop_at_step;
}

static parley_train_params own_params(const char *out, int pretrain_epochs, own_seen *seen)
{
    parley_train_params p = parley_train_params_default();
    p.data = files.data;
    p.out = out;
    p.init = "none";
    p.sparse = PARLEY_SWITCH_OFF;
    p.shape = (parley_train_shape){ 2, 64, 2, 128, 32 };
    p.pretrain_epochs = pretrain_epochs;
    p.epochs = 40;
    p.batch = 8;
    p.lr = 3e-3f;
    p.threads = 1;
    p.progress = own_watch;
    p.user_data = seen;
    return p;
}

/* parley_train_run with pretrain_epochs, against the same run without. */
static void test_own_text(void)
{
    path o = path_in(files.tmp, "own"), plain = path_in(files.tmp, "own_none");
    own_seen s = { 0 }, s0 = { 0 };
    parley_train_params p = own_params(o.s, 5, &s);
    parley_train_result res;
    CHECK(parley_train_run(&p, &res) == PARLEY_OK && !res.stopped, "train: %s", parley_errmsg());
    CHECK(s.pre_starts == 1 && s.pre_epochs == 5 && s.pre_steps > 0 && !s.pre_after_start &&
                  s.starts == 1 && s.epochs == 40,
          "pretraining %d start, %d epochs, %d steps (%d after the training's start); training "
          "%d start, %d epochs",
          s.pre_starts, s.pre_epochs, s.pre_steps, s.pre_after_start, s.starts, s.epochs);
    bert_model *m = NULL;
    ds_dataset *ds = NULL;
    mt_report *r = NULL;
    CHECK(bert_model_load(o.s, &m) == PARLEY_OK && ds_load(files.data, &ds) == PARLEY_OK,
          "load: %s", parley_errmsg());
    if (m && ds && train_evaluate(m, ds, &r, NULL) == PARLEY_OK)
        CHECK(r->intent_accuracy == 1 && r->sentence_accuracy == 1,
              "pretrained, then trained: intent %g, sentence %g", r->intent_accuracy,
              r->sentence_accuracy);
    else
        CHECK(0, "evaluate: %s", parley_errmsg());
    mt_report_free(r);
    ds_free(ds);
    bert_model_free(m);
    size_t rec_len = 0;
    char *rec = read_all(path_in(o.s, "training.json").s, &rec_len);
    CHECK(rec && strstr(rec, "\"pretrain_epochs\":\t5"), "training.json records it");
    free(rec);
    CHECK(!exists(path_in(o.s, "train_state").s), "nothing left to resume");

    p = own_params(plain.s, 0, &s0);
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "train without: %s", parley_errmsg());
    CHECK(s0.pre_starts == 0 && s0.pre_steps == 0 && s0.starts == 1, "0: no pretraining");
    CHECK(!same_model_files(o.s, plain.s), "pretraining changed nothing");

    path st = path_in(files.tmp, "own_stop");
    own_seen s2 = { .stop_at_pre_step = 3 };
    p = own_params(st.s, 5, &s2);
    CHECK(parley_train_run(&p, &res) == PARLEY_OK, "stop: %s", parley_errmsg());
    CHECK(res.stopped && res.stopped_pretraining && res.steps_done == 0 && s2.starts == 0,
          "stopped in the pretraining: %d %d %ld", res.stopped, res.stopped_pretraining,
          res.steps_done);
    CHECK(!exists(path_in(st.s, "train_state").s) && !exists(path_in(st.s, "config.json").s),
          "a stop in the pretraining keeps nothing");

    /* Stopped after it, resumed: the record says what the run did, not the resume's -1. */
    path rs = path_in(files.tmp, "own_resume");
    own_seen s3 = { .stop_at_step = 7 }, s4 = { 0 };
    p = own_params(rs.s, 5, &s3);
    CHECK(parley_train_run(&p, &res) == PARLEY_OK && res.stopped && !res.stopped_pretraining,
          "stop after the pretraining: %s", parley_errmsg());
    p = parley_train_params_default();
    p.data = files.data;
    p.out = rs.s;
    p.threads = 1;
    p.resume = 1;
    p.progress = own_watch;
    p.user_data = &s4;
    CHECK(parley_train_run(&p, &res) == PARLEY_OK && !res.stopped && s4.pre_starts == 0,
          "resumed without pretraining again: %s", parley_errmsg());
    rec = read_all(path_in(rs.s, "training.json").s, &rec_len);
    CHECK(rec && strstr(rec, "\"pretrain_epochs\":\t5"), "the resumed run's record has it");
    free(rec);
}

static void write_file(const char *file, const char *s, size_t n)
{
    FILE *f = fopen(file, "wb");
    if (f) {
        fwrite(s, 1, n, f);
        fclose(f);
    }
}

static void expect_fail(parley_pretrain_params *p, parley_status want, const char *needle,
                        const char *what)
{
    parley_status st = parley_pretrain_run(p, NULL);
    CHECK(st == want && (!needle || strstr(parley_errmsg(), needle)), "%s: %s: %s", what,
          parley_status_str(st), parley_errmsg());
}

static void test_errors(void)
{
    path o = path_in(files.tmp, "err"), blank = path_in(files.tmp, "blank.txt"),
         utf = path_in(files.tmp, "utf.txt"), none = path_in(files.tmp, "nothing-here");
    const char *one[1];
    parley_pretrain_params p = tiny(o.s, 1);
    p.n_text = 0;
    expect_fail(&p, PARLEY_ERR_INVALID_ARG, NULL, "no text");
    p = tiny(o.s, 1);
    p.train.out = NULL;
    expect_fail(&p, PARLEY_ERR_INVALID_ARG, NULL, "no out");
    p = tiny(o.s, 1);
    p.mask_prob = 0;
    expect_fail(&p, PARLEY_ERR_INVALID_ARG, "mask", "mask probability 0");
    p = tiny(o.s, 1);
    p.holdout = 0.6f;
    expect_fail(&p, PARLEY_ERR_INVALID_ARG, "holdout", "holdout 0.6");
    p = tiny(o.s, 1);
    p.train.epochs = 0;
    expect_fail(&p, PARLEY_ERR_INVALID_ARG, NULL, "epochs 0");
    p = tiny(o.s, 1);
    p.train.device = "cuda:0";
    if (cuda_device_count() == 0) { /* no CUDA in the build, or no device: a clear refusal */
        parley_status st = parley_pretrain_run(&p, NULL);
        CHECK((st == PARLEY_ERR_NOT_BUILT || st == PARLEY_ERR_DEVICE) &&
                      strstr(parley_errmsg(), "cuda:0"),
              "cuda without a device: %s: %s", parley_status_str(st), parley_errmsg());
    }
    p = tiny(o.s, 1);
    p.train.shape.heads = 3;
    CHECK(parley_pretrain_run(&p, NULL) != PARLEY_OK, "heads must divide hidden");
    p = tiny(o.s, 1);
    p.train.init = none.s;
    expect_fail(&p, PARLEY_ERR_NOT_FOUND, "--init", "missing init");

    p = tiny(o.s, 1);
    one[0] = none.s;
    p.text = one;
    expect_fail(&p, PARLEY_ERR_NOT_FOUND, none.s, "missing text file");
    write_file(blank.s, "\n \n\t\n", 5);
    one[0] = blank.s;
    expect_fail(&p, PARLEY_ERR_INVALID_ARG, "no lines", "only blank lines");
    static const char bad_utf8[] = "a good line\nanother good one\nbad \xff\xfe byte\n";
    write_file(utf.s, bad_utf8, sizeof bad_utf8 - 1);
    one[0] = utf.s;
    p.holdout = 0;
    char where[1100];
    snprintf(where, sizeof where, "%s:3:5", utf.s);
    expect_fail(&p, PARLEY_ERR_UTF8, where, "invalid UTF-8");
    CHECK(!exists(path_in(o.s, "config.json").s), "a failed start writes nothing");
}

/* ---- allocation failures ----------------------------------------------------------------- */

static parley_status one_epoch(void *ctx)
{
    path o = path_in(files.tmp, "alloc");
    parley_pretrain_params p = tiny(o.s, 1);
    p.train.shape.layers = 1;
    p.train.shape.hidden = 8;
    p.train.shape.heads = 2;
    p.train.shape.intermediate = 16;
    p.train.batch = 64;
    (void)ctx;
    return parley_pretrain_run(&p, NULL);
}

static void test_alloc_failures(void)
{
    long n = fault_sweep("pretrain", one_epoch, NULL);
    CHECK(n > 200, "only %ld allocations swept", n);
    bert_model *m = NULL;
    path o = path_in(files.tmp, "alloc");
    CHECK(bert_model_load(o.s, &m) == PARLEY_OK, "after the sweep: %s", parley_errmsg());
    bert_model_free(m);
    CHECK(count_tmp(o.s, 0) == 0, "temporary files left behind");
}

int main(int argc, char **argv)
{
    int rc = train_test_start(argc, argv, "pretrain", &files);
    if (rc != 0)
        return rc;
    snprintf(text, sizeof text, "%s/text.txt", files.tmp);
    texts[0] = text;
    int n_lines = write_text(text);
    train_seen fit = test_fit(n_lines);
    test_determinism();
    test_continue(&fit);
    test_finetune();
    test_in_place();
    test_own_text();
    test_stop();
    test_errors();
    test_alloc_failures();
    rm_tree(files.tmp);
    return check_done();
}
