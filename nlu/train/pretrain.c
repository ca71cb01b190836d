/* pretrain.c — masked-language-model pretraining of the encoder (parley_pretrain_run,
 * parley/train.h): text lines -> pieces -> masked mini-batches -> bert_mlm_step_ws ->
 * clipping -> AdamW, with held-out scoring and an atomic save after every epoch. It is the
 * loop behind `parley pretrain`, whose output parley_train_run() fine-tunes.
 *
 * BERT's objective without next-sentence prediction (the lines are short utterances, and
 * RoBERTa found NSP unnecessary), with dynamic masking as RoBERTa's: 15% of the pieces
 * chosen, of those 80% [MASK], 10% a random piece, 10% unchanged, drawn anew every step.
 * Only the encoder (embeddings and layers) and the MLM head learn; the pooler and the
 * joint heads keep their initialization, for fine-tuning to replace or train. The held-out
 * lines are scored with fixed masks (the same positions every epoch, no dropout). A run
 * started from init continues from that model, and from its mlm_head.safetensors
 * (cls.predictions.*) when present. train_pretrain_model (nlu/train/train.h) runs the same
 * loop in memory on a training run's new model and its own text, saving nothing.
 *
 * The step's math is nlu/train/bert_train.c, the head's layout and the masking
 * nlu/train/bert_mlm.c, the schedule and clipping nlu/train/train_util.c. Everything random is a
 * function of (seed, something counted): the held-out split of the seed, the shuffle of (seed,
 * epoch), the masks and the dropout of (seed, step), the held-out masks of (seed, chunk). This file
 * never prints: progress goes to the callback.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nlu/cuda/cuda_train.h"
#include "nlu/text/tokenizer.h"
#include "nlu/train/bert_train.h"
#include "nlu/train/defaults.h"
#include "nlu/train/encoder.h"
#include "nlu/train/train_util.h"
#include "nlu/train/wp_learn.h"
#include "nlu/text/vocab.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"

enum { TEXT_MAX_BYTES = 1 << 30 };
static const char HEAD_FILE[] = "mlm_head.safetensors";
static const uint64_t SPLIT_SALT = 0x53504c4954ull, SHUFFLE_SALT = 0x53485546464c45ull,
                      MASK_SALT = 0x4d41534bull, DROPOUT_SALT = 0x44524f504f5554ull,
                      EVAL_SALT = 0x4556414cull, HEAD_SALT = 0x48454144ull;

parley_pretrain_params parley_pretrain_params_default(void)
{
    parley_pretrain_params p = { .train = parley_train_params_default(),
                                 .mask_prob = 0.15f,
                                 .holdout = 0.02f };
    p.train.epochs = 10;
    p.train.batch = 64;
    p.train.weight_decay = 0.01f; /* training sizes these to the data; pretraining does not */
    p.train.shape = train_size_shape(&p.train.shape, -1, NULL);
    return p;
}

/* ---- text ------------------------------------------------------------------------------ */

typedef struct line {
    char *text;   /* owned */
    int file, no; /* where it came from: p->text[file], line no (1-based) */
} line;

typedef struct corpus {
    line *lines;
    int n, cap;
} corpus;

static void corpus_free(corpus *c)
{
    for (int i = 0; i < c->n; i++)
        pl_free(c->lines[i].text);
    pl_free(c->lines);
    *c = (corpus){ 0 };
}

static parley_status corpus_add(corpus *c, const char *s, size_t len, int file, int no)
{
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 1024;
        line *l = cap > c->cap ? pl_realloc(c->lines, (size_t)cap * sizeof *l) : NULL;
        if (!l)
            return pl_nomem("pretrain: %d lines", c->n);
        c->lines = l;
        c->cap = cap;
    }
    char *t = pl_strndup(s, len);
    if (!t)
        return pl_nomem("pretrain: %d lines", c->n);
    c->lines[c->n++] = (line){ t, file, no };
    return PARLEY_OK;
}

/* PARLEY_OK when s[0..n) is valid UTF-8; otherwise an error naming file:line:col. */
static parley_status check_utf8(const char *s, size_t n, const char *file, int no)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        const char *why;
        int k = wp_utf8_next((const unsigned char *)s + i, n - i, &cp, &why);
        if (!k)
            return pl_fail(PARLEY_ERR_UTF8, "%s:%d:%zu: invalid UTF-8: %s", file, no, i + 1, why);
        i += (size_t)k;
    }
    return PARLEY_OK;
}

/* Every non-blank line of every file, without its line end and outer blanks; invalid
 * UTF-8 is an error naming the file, line and byte column. */
static parley_status read_text(corpus *c, const char *const *files, int n_files)
{
    for (int f = 0; f < n_files; f++) {
        char *text = NULL;
        size_t len = 0;
        parley_status st = pl_read_file(files[f], TEXT_MAX_BYTES, &text, &len);
        if (st != PARLEY_OK)
            return pl_wrap(st, "pretrain: --text");
        int no = 0;
        for (size_t at = 0; at < len && st == PARLEY_OK;) {
            const char *nl = memchr(text + at, '\n', len - at);
            size_t end = nl ? (size_t)(nl - text) : len, a = at, b = end;
            no++;
            while (a < b && (text[a] == ' ' || text[a] == '\t'))
                a++;
            while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\r'))
                b--;
            if (b > a && (st = check_utf8(text + a, b - a, files[f], no)) == PARLEY_OK)
                st = corpus_add(c, text + a, b - a, f, no);
            at = end + 1;
        }
        pl_free(text);
        if (st != PARLEY_OK)
            return st;
    }
    return PARLEY_OK;
}

static int by_text(const void *a, const void *b)
{
    const line *x = a, *y = b;
    int d = strcmp(x->text, y->text);
    return d ? d : (x->file != y->file ? x->file - y->file : x->no - y->no);
}

static int by_origin(const void *a, const void *b)
{
    const line *x = a, *y = b;
    return x->file != y->file ? x->file - y->file : x->no - y->no;
}

/* Drops exact repeats (the first stays), keeping the order of the files. */
static void dedupe(corpus *c)
{
    if (c->n < 2)
        return;
    qsort(c->lines, (size_t)c->n, sizeof *c->lines, by_text);
    int k = 1;
    for (int i = 1; i < c->n; i++) {
        if (!strcmp(c->lines[i].text, c->lines[k - 1].text))
            pl_free(c->lines[i].text);
        else
            c->lines[k++] = c->lines[i];
    }
    c->n = k;
    qsort(c->lines, (size_t)c->n, sizeof *c->lines, by_origin);
}

/* ---- the run --------------------------------------------------------------------------- */

typedef struct pt_run {
    const parley_pretrain_params *p;
    corpus text;
    int *order; // (n) the held-out lines first, then the training lines
    int n_hold, n_train;
    bert_model *m;
    int borrowed; // m is the caller's (train_pretrain_model): not freed, not saved
    size_t *off;  // (n + 1) where each line's pieces start in ids, by order
    int *ids;
    float *head;                    // (n_head) the MLM head
    size_t n_head, n_enc;           /* the head's floats; the model's encoder prefix */
    float *grads, *adam_m, *adam_v; // (n_params + n_head) the model's layout, then the head
    unsigned char *decay;           // (n_params + n_head)
    bert_train_ws ws;
    cuda_trainer *gpu;     /* NULL: the CPU trains; else the model and head live there */
    int *perm, perm_epoch; // (n_train)
    int *b_ids, *b_target, *b_len;
    float lr;
    long warmup, step, steps, epoch_steps;
    parley_train_progress pr;
    train_meter meter;     /* this call's counts, for progress */
    char staged[PATH_MAX]; /* OUT's staging folder, where the epochs are saved */
    int saved;             /* an epoch is in staged */
} pt_run;

static void run_clear(pt_run *r)
{
    corpus_free(&r->text);
    if (!r->borrowed)
        bert_model_free(r->m);
    bert_train_ws_free(&r->ws);
    cuda_trainer_close(r->gpu);
    void *owned[] = { r->order,  r->off,   r->ids,  r->head,  r->grads,    r->adam_m,
                      r->adam_v, r->decay, r->perm, r->b_ids, r->b_target, r->b_len };
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        pl_free(owned[i]);
}

static parley_status check_params(const parley_pretrain_params *p)
{
    const parley_train_params *t = &p->train;
    parley_status st;
    if (!p->text || p->n_text < 1 || !t->out)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "pretrain: text files and the output directory are required");
    int gpu;
    cuda_precision prec;
    if ((st = train_parse_device(t->device, &gpu)) != PARLEY_OK ||
        (st = cuda_precision_parse(t->precision ? t->precision : "bf16", &prec)) != PARLEY_OK)
        return st;
    if (prec == CUDA_PREC_FP16)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "pretrain: precision fp16 is not offered (it would need loss scaling): "
                       "use bf16 or fp32");
    if ((st = train_check_common(t, "pretrain", 0)) != PARLEY_OK)
        return st;
    if (!(p->mask_prob > 0 && p->mask_prob < 1) || !(p->holdout >= 0 && p->holdout <= 0.5f))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "pretrain: the mask probability must be in (0, "
                                               "1) and the holdout in [0, 0.5]");
    return PARLEY_OK;
}

/* The held-out split: a seeded shuffle of the lines, the first n_hold held out. */
static parley_status split(pt_run *r)
{
    int n = r->text.n;
    if (!(r->order = pl_malloc((size_t)(n ? n : 1) * sizeof *r->order)))
        return pl_nomem("pretrain: %d lines", n);
    train_shuffle(r->order, n, train_mix(r->p->train.seed ^ SPLIT_SALT, 0));
    r->n_hold = (int)floor((double)r->p->holdout * n);
    r->n_train = n - r->n_hold;
    if (r->n_train < 1)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "pretrain: the text has no lines to train on");
    return PARLEY_OK;
}

/* The MLM head (init's when it has one, else new) and the optimizer's buffers for r->m. */
static parley_status head_prepare(pt_run *r, const char *init)
{
    const parley_train_params *p = &r->p->train;
    parley_status st;
    char path[PATH_MAX];
    const bert_config *c = &r->m->cfg;
    r->n_head = bert_mlm_param_count(c);
    r->n_enc = (size_t)(r->m->w.pool_w - r->m->params);
    size_t n = r->m->n_params + r->n_head;
    r->head = pl_malloc(r->n_head * sizeof *r->head);
    r->grads = pl_calloc(n, sizeof *r->grads);
    r->adam_m = pl_calloc(n, sizeof *r->adam_m);
    r->adam_v = pl_calloc(n, sizeof *r->adam_v);
    r->decay = pl_malloc(n);
    if (!r->head || !r->grads || !r->adam_m || !r->adam_v || !r->decay)
        return pl_nomem("pretrain: %zu parameters", n);
    bert_decay_mask(c, r->decay);
    bert_mlm_decay_mask(c, r->decay + r->m->n_params);
    if (init && snprintf(path, sizeof path, "%s/%s", init, HEAD_FILE) < (int)sizeof path &&
        access(path, F_OK) == 0)
        return (st = bert_mlm_load(c, path, r->head)) == PARLEY_OK ? st : pl_wrap(st, "--init");
    bert_mlm_init(c, r->head, train_mix(p->seed ^ HEAD_SALT, 0));
    return PARLEY_OK;
}

/* A new model of the requested shape, or the init model, and the head. */
static parley_status model_prepare(pt_run *r)
{
    const parley_train_params *p = &r->p->train;
    const char *init = train_init_dir(p);
    parley_status st;
    if (init) {
        if ((st = bert_model_load(init, &r->m)) != PARLEY_OK)
            return pl_wrap(st, "--init");
    } else {
        static const char *const intents[] = { "none" }, *const tags[] = { "O" };
        wp_vocab *v = NULL;
        const parley_train_shape shape = train_size_shape(&p->shape, -1, NULL);
        bert_config cfg = train_config_of(&shape);
        if (p->vocab) {
            st = wp_vocab_load(p->vocab, &v);
        } else {
            const char **texts = pl_malloc((size_t)r->n_train * sizeof *texts);
            for (int i = 0; texts && i < r->n_train; i++)
                texts[i] = r->text.lines[r->order[r->n_hold + i]].text;
            wp_learn_params lp = { .vocab_size = p->vocab_size };
            st = texts ? wp_learn(texts, r->n_train, &lp, &v) : pl_nomem("pretrain");
            pl_free(texts);
            r->pr.vocab_learned = 1;
        }
        if (st == PARLEY_OK) {
            cfg.vocab_size = wp_vocab_size(v);
            if ((st = bert_config_set_labels(&cfg, intents, 1, tags, 1)) == PARLEY_OK)
                st = bert_model_alloc(&cfg, v, &r->m);
            else
                wp_vocab_free(v);
        }
        bert_config_clear(&cfg);
        if (st != PARLEY_OK)
            return st;
        bert_model_init_random(r->m, p->seed);
    }
    return head_prepare(r, init);
}

/* Every line as [CLS] pieces [SEP], in r->order, cut to the model's max positions. */
static parley_status encode(pt_run *r)
{
    const int n = r->text.n;
    size_t cap = 0, at = 0;
    if (!(r->off = pl_malloc(((size_t)n + 1) * sizeof *r->off)))
        return pl_nomem("pretrain");
    for (int k = 0; k < n; k++) {
        const line *l = &r->text.lines[r->order[k]];
        wp_tokens tk;
        parley_status st = wp_tokenize(r->m->vocab, l->text, strlen(l->text), &tk);
        if (st != PARLEY_OK)
            return pl_wrap(st, "%s:%d", r->borrowed ? "the training text" : r->p->text[l->file],
                           l->no);
        int len = bert_seq_len(&r->m->cfg, &tk);
        r->pr.n_truncated += len - 2 < tk.n_pieces;
        if (at + (size_t)len > cap) {
            size_t c2 = 2 * cap + (size_t)len + 4096;
            int *ids = pl_realloc(r->ids, c2 * sizeof *ids);
            if (!ids) {
                wp_tokens_free(&tk);
                return pl_nomem("pretrain: the encoded text");
            }
            r->ids = ids;
            cap = c2;
        }
        r->off[k] = at;
        bert_seq_write(r->m, &tk, r->ids + at);
        at += (size_t)len;
        wp_tokens_free(&tk);
    }
    r->off[n] = at;
    return PARLEY_OK;
}

/* Copies lines order[first .. first + nb) (indices into r->order via map, or direct when
 * map is NULL) into the batch buffers and masks them with key; returns the token count. */
static size_t fill_batch(pt_run *r, const int *map, int first, int nb, uint64_t key)
{
    size_t n_tok = 0;
    for (int j = 0; j < nb; j++) {
        int k = map ? r->n_hold + map[first + j] : first + j;
        size_t len = r->off[k + 1] - r->off[k];
        memcpy(r->b_ids + n_tok, r->ids + r->off[k], len * sizeof *r->b_ids);
        r->b_len[j] = (int)len;
        n_tok += len;
    }
    bert_mlm_mask(r->b_ids, r->b_target, r->b_len, nb, wp_vocab_mask(r->m->vocab),
                  r->m->cfg.vocab_size, r->p->mask_prob, key);
    return n_tok;
}

static int report(pt_run *r, parley_train_event ev)
{
    parley_train_progress *pr = &r->pr;
    const parley_train_params *p = &r->p->train;
    train_meter_report(&r->meter, ev, r->step, r->steps, r->epoch_steps, pr);
    pr->epochs = p->epochs;
    return p->progress ? p->progress(pr, p->user_data) : 0;
}

static parley_status train_step(pt_run *r)
{
    const parley_train_params *p = &r->p->train;
    int e = (int)(r->step / r->epoch_steps), k = (int)(r->step % r->epoch_steps);
    if (r->perm_epoch != e) {
        train_shuffle(r->perm, r->n_train, train_mix(p->seed ^ SHUFFLE_SALT, (uint64_t)e));
        r->perm_epoch = e;
    }
    int first = k * p->batch, nb = r->n_train - first < p->batch ? r->n_train - first : p->batch;
    fill_batch(r, r->perm, first, nb, train_mix(p->seed ^ MASK_SALT, (uint64_t)r->step));
    bert_batch b = { nb, r->b_len, r->b_ids };
    bert_mlm_loss loss;
    const size_t np = r->m->n_params;
    double t0 = train_now_s();
    const uint64_t seed = train_mix(p->seed ^ DROPOUT_SALT, (uint64_t)r->step);
    adamw_params ap = { train_lr_at(r->lr, r->warmup, r->steps, r->step), 0.9f, 0.999f, 1e-8f,
                        p->weight_decay };
    parley_status st;
    if (r->gpu) { /* the update follows in the same call, so a bad loss is seen after it */
        st = cuda_trainer_mlm_step(r->gpu, &b, r->b_target, p->dropout, seed, p->clip, &ap,
                                   r->step + 1, &loss);
    } else {
        memset(r->grads, 0, (np + r->n_head) * sizeof *r->grads);
        st = bert_mlm_step_ws(&r->ws, r->m, r->head, &b, r->b_target, p->dropout, seed, r->grads,
                              r->grads + np, &loss);
    }
    if (st != PARLEY_OK)
        return pl_wrap(st, "pretraining step %ld", r->step + 1);
    if (!isfinite(loss.loss))
        return pl_fail(PARLEY_ERR_CONFIG, "pretraining step %ld: the loss is %g; try a lower --lr",
                       r->step + 1, (double)loss.loss);
    if (!r->gpu) {
        train_clip_grads(r->grads, np + r->n_head, p->clip);
        adamw_step(r->m->params, r->grads, r->adam_m, r->adam_v, r->decay, r->n_enc, r->step + 1,
                   &ap);
        adamw_step(r->head, r->grads + np, r->adam_m + np, r->adam_v + np, r->decay + np, r->n_head,
                   r->step + 1, &ap);
    }
    train_meter_step(&r->meter, t0, nb, loss.loss);
    r->pr.lr = ap.lr;
    r->step++;
    return PARLEY_OK;
}

/* Scores the held-out lines: fixed masks, no dropout, no backward. */
static parley_status score_holdout(pt_run *r)
{
    const int batch = r->p->train.batch;
    double sum = 0;
    long masked = 0, correct = 0;
    for (int first = 0, chunk = 0; first < r->n_hold; first += batch, chunk++) {
        int nb = r->n_hold - first < batch ? r->n_hold - first : batch;
        fill_batch(r, NULL, first, nb, train_mix(r->p->train.seed ^ EVAL_SALT, (uint64_t)chunk));
        bert_batch b = { nb, r->b_len, r->b_ids };
        bert_mlm_loss loss;
        parley_status st =
                r->gpu ? cuda_trainer_mlm(r->gpu, &b, r->b_target, 0.0f, 0, 0, &loss, NULL, NULL)
                       : bert_mlm_step_ws(&r->ws, r->m, r->head, &b, r->b_target, 0.0f, 0, NULL,
                                          NULL, &loss);
        if (st != PARLEY_OK)
            return pl_wrap(st, "scoring the held-out lines");
        sum += (double)loss.loss * loss.masked;
        masked += loss.masked;
        correct += loss.correct;
    }
    r->pr.has_mlm = masked > 0;
    r->pr.mlm_loss = masked ? sum / (double)masked : 0;
    r->pr.mlm_accuracy = masked ? (double)correct / (double)masked : 0;
    return PARLEY_OK;
}

/* Brings the model's and the head's weights back from the GPU, when it trains them. */
static parley_status to_host(pt_run *r)
{
    parley_status st;
    if (r->gpu && ((st = cuda_trainer_download(r->gpu, r->m->params, NULL, NULL)) != PARLEY_OK ||
                   (st = cuda_trainer_download_head(r->gpu, r->head)) != PARLEY_OK))
        return pl_wrap(st, "pretrain");
    return PARLEY_OK;
}

/* Saves the model and its head into OUT's staging folder, which replaces OUT when the run
 * ends (publish): a run that fails leaves OUT as it was. */
static parley_status save(pt_run *r)
{
    char path[PATH_MAX];
    parley_status st;
    if (snprintf(path, sizeof path, "%s/%s", r->staged, HEAD_FILE) >= (int)sizeof path)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s: path too long", r->staged);
    if ((st = to_host(r)) != PARLEY_OK)
        return st;
    if ((st = bert_model_save(r->m, r->staged)) != PARLEY_OK ||
        (st = bert_mlm_save(&r->m->cfg, r->head, path)) != PARLEY_OK)
        return pl_wrap(st, "pretrain: saving the model");
    r->saved = 1;
    return PARLEY_OK;
}

/* The saved model takes OUT's place whole (pl_dir_replace); bert_model_save made the
 * staging folder's parents, which are OUT's. */
static parley_status publish(pt_run *r)
{
    parley_status st = pl_dir_replace(r->staged, r->p->train.out, bert_model_dir_entries);
    return st == PARLEY_OK ? st : pl_wrap(st, "pretrain: saving the model");
}

/* The GPU's trainer, with the model and head as they stand, where the device names one. */
static parley_status open_device(pt_run *r)
{
    const parley_train_params *p = &r->p->train;
    int device;
    cuda_precision prec;
    parley_status st;
    r->pr.device = "cpu";
    if ((st = train_parse_device(p->device, &device)) != PARLEY_OK ||
        (st = cuda_precision_parse(p->precision ? p->precision : "bf16", &prec)) != PARLEY_OK)
        return st;
    if (device == CUDA_DEVICE_CPU)
        return PARLEY_OK;
    if ((st = cuda_trainer_open_mlm(r->m, r->head, r->decay, device, prec, &r->gpu)) != PARLEY_OK)
        return pl_wrap(st, "pretrain: device \"%s\"", p->device ? p->device : "");
    r->pr.device = cuda_trainer_describe(r->gpu);
    return PARLEY_OK;
}

/* The encoding and the batch buffers, once the text is split and r->m and the head are
 * there: everything else before the first step. */
static parley_status run_prepare(pt_run *r)
{
    const parley_train_params *p = &r->p->train;
    parley_status st;
    if ((st = encode(r)) != PARLEY_OK)
        return st;
    size_t max_tok = (size_t)p->batch * (size_t)r->m->cfg.max_positions;
    r->perm = pl_malloc((size_t)r->n_train * sizeof *r->perm);
    r->b_ids = pl_malloc(max_tok * sizeof *r->b_ids);
    r->b_target = pl_malloc(max_tok * sizeof *r->b_target);
    r->b_len = pl_malloc((size_t)p->batch * sizeof *r->b_len);
    if (!r->perm || !r->b_ids || !r->b_target || !r->b_len)
        return pl_nomem("pretrain: the batches");
    r->perm_epoch = -1;
    r->epoch_steps = (r->n_train + p->batch - 1) / p->batch;
    r->steps = r->epoch_steps * p->epochs;
    r->warmup = p->warmup_steps >= 0 ? p->warmup_steps
                                     : (long)((double)p->warmup_fraction * (double)r->steps);
    r->lr = p->lr > 0 ? p->lr : parley_train_default_lr(0);
    r->pr.n_train = r->n_train;
    r->pr.n_dev = r->n_hold;
    r->pr.vocab_size = r->m->cfg.vocab_size;
    r->pr.n_params = r->n_enc + r->n_head;
    r->pr.shape = train_shape_of(&r->m->cfg);
    return open_device(r);
}

/* The steps, scoring the held-out lines after every epoch and saving it unless the model
 * is borrowed (then a stop keeps nothing either); then *result (may be NULL). */
static parley_status run_loop(pt_run *r, double t0, parley_pretrain_result *result)
{
    parley_status st;
    int stop = report(r, PARLEY_TRAIN_START);
    while (!stop && r->step < r->steps) {
        if ((st = train_step(r)) != PARLEY_OK)
            return st;
        stop = report(r, PARLEY_TRAIN_STEP);
        if (r->step % r->epoch_steps == 0) {
            if ((st = score_holdout(r)) != PARLEY_OK ||
                (!r->borrowed && (st = save(r)) != PARLEY_OK))
                return st;
            r->pr.best = !r->borrowed;
            stop |= report(r, PARLEY_TRAIN_EPOCH);
            train_meter_epoch(&r->meter);
        }
    }
    if (!r->borrowed && r->step % r->epoch_steps && (st = save(r)) != PARLEY_OK)
        return st; /* stopped mid-epoch */
    if (r->borrowed && (st = to_host(r)) != PARLEY_OK)
        return st; /* the caller's model takes the weights */
    if (r->saved && (st = publish(r)) != PARLEY_OK)
        return st;
    if (result)
        *result = (parley_pretrain_result){ .epochs_done = (int)(r->step / r->epoch_steps),
                                            .steps_done = r->step,
                                            .stopped = (r->step < r->steps),
                                            .wall_s = train_now_s() - t0,
                                            .examples_per_s = train_meter_rate(&r->meter),
                                            .n_train = r->n_train,
                                            .n_holdout = r->n_hold,
                                            .mlm_loss = r->pr.mlm_loss,
                                            .mlm_accuracy = r->pr.mlm_accuracy };
    return PARLEY_OK;
}

parley_status parley_pretrain_run(const parley_pretrain_params *p, parley_pretrain_result *result)
{
    pt_run r = { .p = p };
    parley_status st;
    if (!p)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_pretrain_run: params is NULL");
    if ((st = check_params(p)) != PARLEY_OK)
        return st;
    double t0 = train_now_s();
    bert_set_threads(p->train.threads);
    if ((st = read_text(&r.text, p->text, p->n_text)) == PARLEY_OK) {
        dedupe(&r.text);
        if ((st = pl_dir_only(p->train.out, bert_model_dir_entries)) == PARLEY_OK &&
            (st = pl_dir_staging(p->train.out, r.staged, sizeof r.staged)) == PARLEY_OK &&
            (st = pl_remove_tree(r.staged)) == PARLEY_OK && (st = split(&r)) == PARLEY_OK &&
            (st = model_prepare(&r)) == PARLEY_OK && (st = run_prepare(&r)) == PARLEY_OK)
            st = run_loop(&r, t0, result);
    }
    if (st != PARLEY_OK && r.saved)
        pl_remove_tree(r.staged); /* a failed run leaves OUT as it was, and nothing beside */
    run_clear(&r);
    return st;
}

parley_status train_pretrain_model(bert_model *m, const char *const *lines, int n,
                                   const parley_pretrain_params *p, parley_pretrain_result *result)
{
    pt_run r = { .p = p, .m = m, .borrowed = 1, .pr.pretraining = 1 };
    parley_status st = PARLEY_OK;
    double t0 = train_now_s();
    for (int i = 0; i < n && st == PARLEY_OK; i++)
        st = corpus_add(&r.text, lines[i], strlen(lines[i]), 0, i + 1);
    if (st == PARLEY_OK) {
        dedupe(&r.text);
        if ((st = split(&r)) == PARLEY_OK && (st = head_prepare(&r, NULL)) == PARLEY_OK &&
            (st = run_prepare(&r)) == PARLEY_OK)
            st = run_loop(&r, t0, result);
    }
    run_clear(&r);
    return st;
}
