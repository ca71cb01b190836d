/* train.c — the training driver, parley_train_run() (parley/train.h; nlu/train/train.h says
 * more): data -> labelled pieces -> mini-batches -> bert_train_step -> clipping -> AdamW,
 * with dev scoring, checkpoints and resume.
 *
 * The math of a step (forward, loss, backward) is nlu/train/bert_train.c and AdamW
 * nlu/train/adamw.c; this file owns the schedule, the order of examples, what is saved where, and
 * the evaluation through the inference path. It never prints: progress goes to a callback.
 *
 * Reproducibility rests on one rule: everything random is a pure function of (seed,
 * something counted) — the shuffle of epoch e of (seed, e), the dropout of step s of
 * (seed, s) — so a run resumed at any step replays exactly what an uninterrupted run does,
 * given the same thread count (the math's reductions depend on it).
 *
 * The training state, OUT/train_state/, is checkpoint.h's: a checkpoint after each epoch and
 * at a stop, the run's recipe saved whole in it. A completed run also writes
 * OUT/training.json, the record of how the model was made (record.c).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "nlu/cuda/cuda_train.h"
#include "nlu/decode.h"
#include "nlu/model/safetensors.h"
#include "nlu/text/fillers.h"
#include "nlu/text/tokenizer.h"
#include "nlu/train/background.h"
#include "nlu/train/builtin.h"
#include "nlu/train/bert_train.h"
#include "nlu/train/calibrate.h"
#include "nlu/train/checkpoint.h"
#include "nlu/train/defaults.h"
#include "nlu/train/encoder.h"
#include "nlu/train/sparse_train.h"
#include "nlu/train/slot_values.h"
#include "nlu/train/synonyms.h"
#include "nlu/train/recipe.h"
#include "nlu/train/record.h"
#include "nlu/train/train.h"
#include "nlu/train/trainset.h"
#include "nlu/train/train_util.h"
#include "nlu/train/wp_learn.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"
#include "sdk/base/json.h"

enum { EVAL_CHUNK = 64 }; /* sequences per bert_forward when scoring */

parley_train_params parley_train_params_default(void)
{
    return (parley_train_params){
        .vocab_size = WP_LEARN_DEFAULT_SIZE,
        /* the shape but max_positions sized to the data, as are ... */
        .shape = { PARLEY_AUTO, PARLEY_AUTO, PARLEY_AUTO, PARLEY_AUTO, 128 },
        .pretrain_epochs = PARLEY_AUTO, /* ... these, by the recipe: nlu/train/recipe.c */
        .epochs = PARLEY_AUTO,
        .batch = PARLEY_AUTO,
        .lr = PARLEY_AUTO,
        .augment = PARLEY_AUTO,
        .background = PARLEY_AUTO,
        .weight_decay = PARLEY_AUTO,
        .warmup_fraction = 0.1f,
        .warmup_steps = -1,
        .dropout = 0.1f,
        .slot_weight = PARLEY_AUTO,
        .clip = 1.0f,
        .seed = 42,
        .word_dropout = 0.1f,
    };
}

float parley_train_default_lr(int from_init)
{
    /* Fine-tuning a pretrained encoder wants BERT's usual small rate; a small model from
     * scratch learns far faster with a larger one. */
    return from_init ? 5e-5f : 1e-3f;
}

/* ---- small helpers --------------------------------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t fnv1a_str(uint64_t h, const char *s)
{
    return fnv1a(h, s, strlen(s) + 1); /* the NUL separates fields */
}

/* A fingerprint of a dataset's examples and labels, so a resumed run can tell that its
 * data changed under it. */
static uint64_t data_hash(const ds_dataset *ds)
{
    uint64_t h = 0xcbf29ce484222325ull;
    if (!ds)
        return 0;
    for (int i = 0; i < ds->n_examples; i++) {
        const ds_example *e = &ds->examples[i];
        h = fnv1a_str(fnv1a_str(h, e->text), ds->intents[e->intent]);
        for (int w = 0; w < e->n_words; w++)
            h = fnv1a_str(h, ds->tags[e->tags[w]]);
    }
    return h;
}

/* ---- examples as labelled pieces ------------------------------------------------------- */

/* Tokenizes example i of ds with the model's vocabulary; *n_used is how many pieces fit
 * between [CLS] and [SEP]. The tokenizer must see the dataset's words (both split at the
 * same whitespace), or the tags would go to the wrong pieces. Hesitations leave the input
 * as they do in parsing (fillers.h). */
static parley_status tokenize_example(const bert_model *m, const ds_dataset *ds, int i,
                                      wp_tokens *tk, int *n_used)
{
    const ds_example *e = &ds->examples[i];
    parley_status st = wp_tokenize(m->vocab, e->text, strlen(e->text), tk);
    if (st != PARLEY_OK)
        return pl_wrap(st, "%s: example %d", ds->source, i + 1);
    if (tk->n_words != e->n_words) {
        wp_tokens_free(tk);
        return pl_fail(PARLEY_ERR_FORMAT,
                       "%s: example %d (\"%s\"): the tokenizer sees %d words, the data %d",
                       ds->source, i + 1, e->text, tk->n_words, e->n_words);
    }
    wp_drop_fillers(e->text, tk);
    int room = m->cfg.max_positions - 2;
    *n_used = tk->n_pieces < room ? tk->n_pieces : room;
    return PARLEY_OK;
}

/* The training set as model inputs. */
typedef struct encoded_set {
    int n;
    size_t *off;              /* (n + 1) where each example starts in ids and slot */
    int *ids;                 /* [CLS] pieces [SEP] of every example, one after another */
    int *slot;                /* tag of a word's first piece, -1 on every other token */
    int *intent;              /* (n) */
    int max_len;              /* longest example in tokens */
    int truncated;            /* examples cut to max_positions */
    bert_sparse_batch sparse; /* a model with sparse features: a sentence row per example, a
                                 row per token (bert_sparse_rows) */
} encoded_set;

static void set_clear(encoded_set *s)
{
    pl_free(s->off);
    pl_free(s->ids);
    pl_free(s->slot);
    pl_free(s->intent);
    bert_sparse_batch_free(&s->sparse);
    memset(s, 0, sizeof *s);
}

/* Encodes ds for model m, whose label lists are ds's own. */
static parley_status set_encode(encoded_set *s, const bert_model *m, const ds_dataset *ds)
{
    parley_status st = PARLEY_OK;
    wp_tokens tk = { 0 };
    size_t cap = 0, n_tok = 0;
    memset(s, 0, sizeof *s);
    s->n = ds->n_examples;
    s->off = pl_malloc(((size_t)s->n + 1) * sizeof *s->off);
    s->intent = pl_malloc(((size_t)s->n + 1) * sizeof *s->intent);
    if (!s->off || !s->intent)
        goto nomem;
    for (int i = 0; i < s->n; i++) {
        const ds_example *e = &ds->examples[i];
        int used = 0;
        if ((st = tokenize_example(m, ds, i, &tk, &used)) != PARLEY_OK ||
            (m->sparse && (st = bert_sparse_rows(m, e->text, &tk, &s->sparse)) != PARLEY_OK))
            goto fail;
        if (n_tok + (size_t)used + 2 > cap) {
            size_t c = cap ? cap : 4096;
            while (c < n_tok + (size_t)used + 2)
                c *= 2;
            int *ids = pl_realloc(s->ids, c * sizeof *ids);
            if (ids)
                s->ids = ids;
            int *slot = ids ? pl_realloc(s->slot, c * sizeof *slot) : NULL;
            if (!slot)
                goto nomem;
            s->slot = slot;
            cap = c;
        }
        s->off[i] = n_tok;
        s->intent[i] = e->intent;
        s->ids[n_tok] = wp_vocab_cls(m->vocab);
        s->slot[n_tok++] = -1;
        for (int p = 0; p < used; p++) {
            int w = tk.pieces[p].word, first = p == 0 || tk.pieces[p - 1].word != w;
            s->ids[n_tok] = tk.pieces[p].id;
            s->slot[n_tok++] = first && !e->untagged ? e->tags[w] : -1;
        }
        s->ids[n_tok] = wp_vocab_sep(m->vocab);
        s->slot[n_tok++] = -1;
        s->truncated += used < tk.n_pieces;
        if (used + 2 > s->max_len)
            s->max_len = used + 2;
        wp_tokens_free(&tk);
    }
    s->off[s->n] = n_tok;
    return PARLEY_OK;
nomem:
    st = pl_nomem("%s: encoding the examples", ds->source);
fail:
    wp_tokens_free(&tk);
    set_clear(s);
    return st;
}

/* ---- evaluation through the inference path --------------------------------------------- */

/* For each repaired (kind, type), the model's tag id: bi[(kind - 1) * n_types + type]. */
static parley_status tag_table(const nlu_tagset *ts, int **out)
{
    int *bi = pl_malloc(((size_t)ts->n_types * 2 + 1) * sizeof *bi);
    if (!bi)
        return pl_nomem("the tag table");
    for (int k = 0; k < 2 * ts->n_types; k++)
        bi[k] = -1;
    for (int t = 0; t < ts->n_tags; t++)
        if (ts->kind[t] != NLU_TAG_O)
            bi[(ts->kind[t] - 1) * ts->n_types + ts->type[t]] = t;
    *out = bi;
    return PARLEY_OK;
}

typedef struct eval_pass {
    const bert_model *m;
    const ds_dataset *ds;
    int first; /* the first example of the chunk being scored */
    nlu_tagset ts;
    int *bi;
    mt_scorer *sc;
    int max_words;
    int *word_tag, *type; /* (max_words) */
    void *viterbi;        /* nlu_word_tags_scratch(max_words, NS) */
    float *prior_scratch; /* (NI + NS) for bert_slot_prior */
    signed char *kind;
    nlu_span *spans;
    const char **gold, **pred;
    float *logits;    /* (n_examples, NI) the intent logits, kept to fit the temperature; or NULL */
    int *gold_intent; /* (n_examples) the gold intent's index in the model, -1 when it has none */
} eval_pass;

/* A bert_logits_fn: scores example ev->first + k from its logits, intent (NI) and slots
 * (n_used, NS) after [CLS]. */
static parley_status eval_one(void *ctx, int k, const wp_tokens *tk, int n_used,
                              const float *intent_logits, const float *slot_logits)
{
    eval_pass *ev = ctx;
    const bert_config *c = &ev->m->cfg;
    const int i = ev->first + k;
    const ds_example *e = &ev->ds->examples[i];
    int best;
    float prob;
    nlu_top_k(intent_logits, c->n_intents, c->intent_temperature, 1, &best, &prob);
    if (ev->logits) {
        memcpy(ev->logits + (size_t)i * c->n_intents, intent_logits,
               (size_t)c->n_intents * sizeof *intent_logits);
        ev->gold_intent[i] = -1;
        for (int j = 0; j < c->n_intents; j++)
            if (!strcmp(c->intent_labels[j], ev->ds->intents[e->intent]))
                ev->gold_intent[i] = j;
    }
    nlu_word_tags(&ev->ts, bert_slot_prior(c, intent_logits, ev->prior_scratch), slot_logits,
                  tk->pieces, n_used, e->n_words, ev->word_tag, ev->viterbi);
    nlu_bio_spans(&ev->ts, ev->word_tag, e->n_words, ev->kind, ev->type, ev->spans);
    for (int w = 0; w < e->n_words; w++) {
        int t = ev->kind[w] == NLU_TAG_O ? ev->ts.o_tag
                                         : ev->bi[(ev->kind[w] - 1) * ev->ts.n_types + ev->type[w]];
        ev->pred[w] = c->slot_labels[t >= 0 ? t : ev->word_tag[w]];
        ev->gold[w] = ev->ds->tags[e->tags[w]];
    }
    parley_status st = mt_scorer_add(ev->sc, ev->ds->intents[e->intent], c->intent_labels[best],
                                     e->n_words, ev->gold, ev->pred);
    return st == PARLEY_OK ? st : pl_wrap(st, "%s: example %d", ev->ds->source, i + 1);
}

/* Runs examples [first, first + n) (n <= EVAL_CHUNK) through the model and scores them. */
static parley_status eval_chunk(eval_pass *ev, int first, int n)
{
    wp_tokens tk[EVAL_CHUNK];
    parley_status st = PARLEY_OK;
    int i, used;
    const char *texts[EVAL_CHUNK];
    memset(tk, 0, sizeof tk);
    for (i = 0; i < n; i++) {
        texts[i] = ev->ds->examples[first + i].text;
        if ((st = tokenize_example(ev->m, ev->ds, first + i, &tk[i], &used)) != PARLEY_OK)
            goto fail;
    }
    ev->first = first;
    st = bert_run_pieces(ev->m, texts, tk, n, NULL, NULL, eval_one, ev);
fail:
    for (i = 0; i < n; i++)
        wp_tokens_free(&tk[i]);
    return st;
}

parley_status train_evaluate(const bert_model *m, const ds_dataset *ds, mt_report **out,
                             float *temperature)
{
    parley_status st;
    eval_pass ev = { .m = m, .ds = ds };
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "train_evaluate: out is NULL");
    *out = NULL;
    if (!m || !ds)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "train_evaluate: model or dataset is NULL");
    for (int i = 0; i < ds->n_examples; i++)
        if (ds->examples[i].n_words > ev.max_words)
            ev.max_words = ds->examples[i].n_words;
    size_t w = (size_t)ev.max_words + 1;
    if ((st = nlu_tagset_init(&ev.ts, m->cfg.slot_labels, m->cfg.n_slots)) != PARLEY_OK ||
        (st = tag_table(&ev.ts, &ev.bi)) != PARLEY_OK || (st = mt_scorer_new(&ev.sc)) != PARLEY_OK)
        goto fail;
    ev.word_tag = pl_malloc(w * sizeof *ev.word_tag);
    ev.type = pl_malloc(w * sizeof *ev.type);
    ev.kind = pl_malloc(w);
    ev.spans = pl_malloc(w * sizeof *ev.spans);
    ev.gold = pl_malloc(w * sizeof *ev.gold);
    ev.pred = pl_malloc(w * sizeof *ev.pred);
    ev.viterbi = pl_malloc(nlu_word_tags_scratch((int)w, ev.ts.n_tags));
    ev.prior_scratch = pl_malloc(((size_t)m->cfg.n_intents + (size_t)m->cfg.n_slots) *
                                 sizeof *ev.prior_scratch);
    if (temperature) {
        ev.logits = pl_malloc(((size_t)ds->n_examples * m->cfg.n_intents + 1) * sizeof *ev.logits);
        ev.gold_intent = pl_malloc(((size_t)ds->n_examples + 1) * sizeof *ev.gold_intent);
    }
    if (!ev.word_tag || !ev.type || !ev.kind || !ev.spans || !ev.gold || !ev.pred || !ev.viterbi ||
        !ev.prior_scratch || (temperature && (!ev.logits || !ev.gold_intent))) {
        st = pl_nomem("%s: scoring", ds->source);
        goto fail;
    }
    for (int i = 0; i < ds->n_examples; i += EVAL_CHUNK) {
        int n = ds->n_examples - i < EVAL_CHUNK ? ds->n_examples - i : EVAL_CHUNK;
        if ((st = eval_chunk(&ev, i, n)) != PARLEY_OK)
            goto fail;
    }
    st = mt_scorer_report(ev.sc, out);
    if (st == PARLEY_OK && temperature)
        *temperature =
                train_fit_temperature(ev.logits, ev.gold_intent, ds->n_examples, m->cfg.n_intents);
fail:
    pl_free(ev.logits);
    pl_free(ev.gold_intent);
    nlu_tagset_clear(&ev.ts);
    pl_free(ev.bi);
    mt_scorer_free(ev.sc);
    pl_free(ev.word_tag);
    pl_free(ev.viterbi);
    pl_free(ev.prior_scratch);
    pl_free(ev.type);
    pl_free(ev.kind);
    pl_free(ev.spans);
    pl_free(ev.gold);
    pl_free(ev.pred);
    return st;
}

/* ---- the run --------------------------------------------------------------------------- */

typedef struct run_state {
    const parley_train_params *p;
    train_recipe s;        /* what the run does, decided at its start (recipe.h) or read back */
    train_set_added added; /* what the recipe added to the data (trainset.h) */
    long warmup;           /* steps */
    ds_dataset *train, *dev;
    uint64_t train_hash, dev_hash;
    uint64_t state_hash[2]; /* the fingerprints a resumed state was made with */
    bert_model *m;
    encoded_set set;
    float *grads, *adam_m, *adam_v; // (n_params) each
    bert_train_ws ws;               /* the step's activation arena, kept between steps */
    train_record *rec;              /* OUT/training.json in the making (record.h) */
    int device;                     /* CUDA_DEVICE_CPU or a GPU's index */
    cuda_precision prec;            /* on the GPU */
    cuda_trainer *gpu;              /* NULL: the CPU trains; else params, grads and
                                       moments live on the GPU between syncs */
    unsigned char *decay;           // (n_params)
    long step, steps, epoch_steps;
    int has_best, best_epoch;
    parley_train_scores best;
    char state_dir[PATH_MAX];               /* OUT/train_state */
    char best_dir[PATH_MAX];                /* OUT/train_state/best: the best epoch's model
                                               until the run publishes it (publish) */
    long saved_step;                        /* the step of the checkpoint written last, or -1 */
    int *perm, perm_epoch;                  // (n) the order of epoch perm_epoch
    int *b_ids, *b_slot, *b_len, *b_intent; /* the batch being built */
    bert_sparse_batch b_sparse;             /* its sparse features */
    float *class_weight;                    /* (n_intents) each intent's weight, or NULL */
    parley_train_progress pr;
    train_meter meter;       /* this call's counts, for progress */
    char init_dir[PATH_MAX]; /* the default encoder, where the recipe starts from it */
    int pretrain_stopped;    /* the callback stopped the run in its pretraining: nothing kept */
} run_state;

static const uint64_t SHUFFLE_SALT = 0x53485546464c45ull, DROPOUT_SALT = 0x44524f504f5554ull,
                      UNK_SALT = 0x554e4b4e4f4953ull;

/* Word dropout: each piece between [CLS] and [SEP] of the batch (n_tok tokens, b_len
 * lengths) becomes [UNK] with chance p, drawn from (seed, step, position). Slot names
 * and values the training set never shows are common at test time; a model that has
 * sometimes seen [UNK] in a slot learns to tag from the context too. */
static void word_dropout(run_state *r, int nb)
{
    uint64_t key = train_mix(r->s.seed ^ UNK_SALT, (uint64_t)r->step),
             cut = (uint64_t)((double)r->s.word_dropout * 0x1p64);
    int unk = wp_vocab_unk(r->m->vocab);
    size_t at = 0;
    for (int j = 0; j < nb; j++) {
        for (int t = 1; t + 1 < r->b_len[j]; t++)
            if (train_mix(key, at + (size_t)t) < cut)
                r->b_ids[at + (size_t)t] = unk;
        at += (size_t)r->b_len[j];
    }
}

/* Fills the progress record for event ev and calls back; nonzero asks to stop. */
static int report(run_state *r, parley_train_event ev)
{
    parley_train_progress *pr = &r->pr;
    train_meter_report(&r->meter, ev, r->step, r->steps, r->epoch_steps, pr);
    pr->epochs = r->s.epochs;
    if (ev == PARLEY_TRAIN_EPOCH && r->rec)
        train_record_epoch(r->rec, pr);
    return r->p->progress ? r->p->progress(pr, r->p->user_data) : 0;
}

/* The order of epoch e (0-based): a function of (seed, e). */
static void shuffle(run_state *r, int e)
{
    train_shuffle(r->perm, r->set.n, train_mix(r->s.seed ^ SHUFFLE_SALT, (uint64_t)e));
    r->perm_epoch = e;
}

/* One optimizer step: the next batch of the current epoch. */
static parley_status train_step(run_state *r)
{
    const encoded_set *set = &r->set;
    int e = (int)(r->step / r->epoch_steps), k = (int)(r->step % r->epoch_steps);
    if (r->perm_epoch != e)
        shuffle(r, e);
    int first = k * r->s.batch, nb = set->n - first < r->s.batch ? set->n - first : r->s.batch;
    size_t n_tok = 0;
    for (int j = 0; j < nb; j++) {
        int ex = r->perm[first + j];
        size_t len = set->off[ex + 1] - set->off[ex];
        memcpy(r->b_ids + n_tok, set->ids + set->off[ex], len * sizeof *r->b_ids);
        memcpy(r->b_slot + n_tok, set->slot + set->off[ex], len * sizeof *r->b_slot);
        r->b_len[j] = (int)len;
        r->b_intent[j] = set->intent[ex];
        n_tok += len;
    }
    if (r->s.word_dropout > 0)
        word_dropout(r, nb);
    parley_status st;
    if (r->m->sparse && (st = train_sparse_batch(&set->sparse, set->off, r->perm + first, nb,
                                                 &r->b_sparse)) != PARLEY_OK)
        return st;
    bert_batch b = { nb, r->b_len, r->b_ids };
    bert_labels y = { r->b_intent, r->b_slot, r->s.slot_weight, &r->b_sparse, r->class_weight };
    bert_loss loss;
    size_t n = r->m->n_params;
    uint64_t seed = train_mix(r->s.seed ^ DROPOUT_SALT, (uint64_t)r->step);
    adamw_params ap = { train_lr_at(r->s.lr, r->warmup, r->steps, r->step), 0.9f, 0.999f, 1e-8f,
                        r->s.weight_decay };
    double t0 = train_now_s();
    if (r->gpu) {
        /* On the GPU the update follows in the same call, so a bad loss is seen after it. */
        st = cuda_trainer_step(r->gpu, &b, &y, r->s.dropout, seed, r->s.clip, &ap,
                               train_lr_at(r->s.sparse_lr, r->warmup, r->steps, r->step),
                               train_lr_at(r->s.slot_map_lr, r->warmup, r->steps, r->step),
                               r->step + 1, &loss);
    } else {
        memset(r->grads, 0, n * sizeof *r->grads);
        st = bert_train_step_ws(&r->ws, r->m, &b, &y, r->s.dropout, seed, r->grads, &loss, NULL,
                                NULL);
    }
    if (st != PARLEY_OK)
        return pl_wrap(st, "training step %ld", r->step + 1);
    if (!isfinite(loss.total))
        return pl_fail(PARLEY_ERR_CONFIG, "training step %ld: the loss is %g; try a lower --lr",
                       r->step + 1, (double)loss.total);
    if (!r->gpu) {
        train_clip_grads(r->grads, n, r->s.clip);
        train_sparse_update(r->m, r->grads, r->adam_m, r->adam_v, r->decay, r->step + 1, &ap,
                            train_lr_at(r->s.sparse_lr, r->warmup, r->steps, r->step),
                            train_lr_at(r->s.slot_map_lr, r->warmup, r->steps, r->step));
    }
    train_meter_step(&r->meter, t0, nb, loss.total);
    r->pr.lr = ap.lr;
    r->step++;
    return PARLEY_OK;
}

/* ---- the model ------------------------------------------------------------------------- */

static parley_status set_labels(bert_config *c, const ds_dataset *ds)
{
    return bert_config_set_labels(c, (const char *const *)ds->intents, ds->n_intents,
                                  (const char *const *)ds->tags, ds->n_tags);
}

static int same_labels(const bert_config *c, const ds_dataset *ds)
{
    if (c->n_intents != ds->n_intents || c->n_slots != ds->n_tags)
        return 0;
    for (int i = 0; i < c->n_intents; i++)
        if (strcmp(c->intent_labels[i], ds->intents[i]))
            return 0;
    for (int i = 0; i < c->n_slots; i++)
        if (strcmp(c->slot_labels[i], ds->tags[i]))
            return 0;
    return 1;
}

/* A new model of the given shape, its vocabulary loaded or learned. */
static parley_status model_scratch(run_state *r, const parley_train_shape *shape)
{
    const parley_train_params *p = r->p;
    parley_status st;
    wp_vocab *v = NULL;
    const char **texts = NULL;
    bert_config cfg = train_config_of(shape);
    if (p->vocab) {
        if ((st = wp_vocab_load(p->vocab, &v)) != PARLEY_OK)
            goto fail;
    } else {
        if (!(texts = pl_malloc(((size_t)r->train->n_examples + 1) * sizeof *texts))) {
            st = pl_nomem("learning a vocabulary");
            goto fail;
        }
        for (int i = 0; i < r->train->n_examples; i++)
            texts[i] = r->train->examples[i].text;
        wp_learn_params lp = { .vocab_size = p->vocab_size };
        if ((st = wp_learn(texts, r->train->n_examples, &lp, &v)) != PARLEY_OK) {
            pl_wrap(st, "%s: learning a vocabulary", r->train->source);
            goto fail;
        }
        r->pr.vocab_learned = 1;
    }
    cfg.vocab_size = wp_vocab_size(v);
    if ((st = set_labels(&cfg, r->train)) != PARLEY_OK)
        goto fail;
    st = bert_model_alloc(&cfg, v, &r->m);
    v = NULL; /* the model owns it, or freed it */
    if (st != PARLEY_OK)
        goto fail;
    bert_model_init_random(r->m, r->s.seed);
fail:
    wp_vocab_free(v);
    pl_free(texts);
    bert_config_clear(&cfg);
    return st;
}

/* The model of init; new heads when its labels are not the training set's. */
static parley_status model_from_init(run_state *r, const char *init)
{
    parley_status st;
    bert_model *old = NULL;
    bert_config cfg = { 0 };
    if ((st = bert_model_load(init, &old)) != PARLEY_OK) {
        pl_wrap(st, init == r->init_dir ? "the default encoder" : "--init");
        goto fail;
    }
    if (same_labels(&old->cfg, r->train)) {
        r->m = old;
        return PARLEY_OK;
    }
    if ((st = bert_config_copy(&cfg, &old->cfg)) != PARLEY_OK ||
        (st = set_labels(&cfg, r->train)) != PARLEY_OK)
        goto fail;
    wp_vocab *v = old->vocab;
    old->vocab = NULL;
    if ((st = bert_model_alloc(&cfg, v, &r->m)) != PARLEY_OK)
        goto fail;
    /* Fresh BERT initialization for everything, then the encoder copied over it: the heads
     * are the last parameters (nlu/model/model.h's layout), so the encoder is a common prefix. */
    bert_model_init_random(r->m, r->s.seed);
    size_t encoder = (size_t)(old->w.intent_w - old->params);
    if (encoder != (size_t)(r->m->w.intent_w - r->m->params)) {
        st = pl_fail(PARLEY_ERR_INTERNAL, "--init: the encoder layouts differ");
        goto fail;
    }
    memcpy(r->m->params, old->params, encoder * sizeof *old->params);
    r->pr.heads_replaced = 1;
fail:
    bert_model_free(old);
    bert_config_clear(&cfg);
    return st;
}

/* ---- the training state (checkpoint.h) ------------------------------------------------ */

/* Saves checkpoint r->step. */
static parley_status state_save(run_state *r)
{
    const train_checkpoint c = { .step = r->step,
                                 .steps = r->steps,
                                 .warmup = r->warmup,
                                 .recipe = r->s,
                                 .data = r->p->data,
                                 .data_hash = r->train_hash,
                                 .dev_hash = r->dev_hash,
                                 .has_best = r->has_best,
                                 .best_epoch = r->best_epoch,
                                 .best = r->best };
    parley_status st = pl_make_dir(r->p->out);
    if (st == PARLEY_OK &&
        (st = train_checkpoint_save(r->state_dir, &c, r->m, r->adam_m, r->adam_v)) == PARLEY_OK)
        r->saved_step = r->step;
    return st;
}

/* Reads checkpoint dir into r: its recipe, step, best and fingerprints. */
static parley_status state_parse(run_state *r, const char *dir)
{
    train_checkpoint c = { 0 };
    parley_status st = train_checkpoint_read(dir, &c);
    if (st != PARLEY_OK) {
        train_recipe_clear(&c.recipe);
        return st;
    }
    r->s = c.recipe;
    r->step = c.step;
    r->warmup = c.warmup;
    r->state_hash[0] = c.data_hash;
    r->state_hash[1] = c.dev_hash;
    r->has_best = c.has_best;
    r->best_epoch = c.best_epoch;
    r->best = c.best;
    return PARLEY_OK;
}

/* Checks the data against checkpoint dir's fingerprints (state_parse read them) and loads
 * its weights (the moments come later, once the buffers exist: state_load_moments). */
static parley_status state_load(run_state *r, const char *dir)
{
    parley_status st;
    if (r->state_hash[0] != r->train_hash || r->state_hash[1] != r->dev_hash)
        return pl_fail(PARLEY_ERR_CONFIG,
                       "--resume: %s: the %s set is not the one this training state was made with",
                       dir, r->state_hash[0] != r->train_hash ? "training" : "dev");
    if ((st = bert_model_load(dir, &r->m)) != PARLEY_OK)
        return pl_wrap(st, "--resume");
    if (!same_labels(&r->m->cfg, r->train))
        return pl_fail(PARLEY_ERR_CONFIG,
                       "--resume: %s: the model's labels are not the training set's", dir);
    return PARLEY_OK;
}

/* ---- the loop -------------------------------------------------------------------------- */

static int better(const parley_train_scores *a, const parley_train_scores *b)
{
    if (a->sentence_accuracy != b->sentence_accuracy)
        return a->sentence_accuracy > b->sentence_accuracy;
    if (a->slot_f1 != b->slot_f1)
        return a->slot_f1 > b->slot_f1;
    return a->intent_accuracy > b->intent_accuracy;
}

/* After the last step of an epoch: score dev, keep the best (or last) model in OUT, save
 * the state, tell the callback. */
/* Brings the GPU's weights and moments to the host, before scoring or saving. */
static parley_status sync_host(run_state *r)
{
    return r->gpu ? cuda_trainer_download(r->gpu, r->m->params, r->adam_m, r->adam_v) : PARLEY_OK;
}

static parley_status epoch_end(run_state *r, int *stop)
{
    parley_status st;
    int epoch = (int)(r->step / r->epoch_steps), keep = 1;
    r->pr.has_dev = 0;
    if ((st = sync_host(r)) != PARLEY_OK)
        return st;
    if (r->dev) {
        mt_report *rep = NULL;
        float t = 0;
        if ((st = train_evaluate(r->m, r->dev, &rep, &t)) != PARLEY_OK)
            return pl_wrap(st, "scoring epoch %d", epoch);
        r->pr.dev = (parley_train_scores){ rep->intent_accuracy, rep->slots.f1,
                                           rep->sentence_accuracy };
        r->pr.has_dev = 1;
        mt_report_free(rep);
        keep = !r->has_best || better(&r->pr.dev, &r->best);
        if (keep) {
            r->m->cfg.intent_temperature = t; /* saved with this epoch's weights */
            r->best = r->pr.dev;
            r->has_best = 1;
        }
    }
    if (keep) {
        if ((st = bert_model_save(r->m, r->best_dir)) != PARLEY_OK)
            return pl_wrap(st, "saving epoch %d", epoch);
        r->best_epoch = epoch;
    }
    r->pr.best = keep;
    if ((st = state_save(r)) != PARLEY_OK)
        return st;
    *stop |= report(r, PARLEY_TRAIN_EPOCH);
    train_meter_epoch(&r->meter);
    return PARLEY_OK;
}

/* Puts the run's model in the output directory whole, or leaves the directory as it was
 * (pl_dir_replace): the best epoch's model, staged in train_state/best, goes to OUT's
 * staging folder with the record of a completed run or, for a stopped one, the state to
 * resume; that folder then replaces OUT (the old model, and a completed run's state, go
 * with the old folder). A run that fails publishes nothing: OUT keeps its model, and
 * train_state/ what --resume needs. Without a staged model (none better since a stopped
 * run published), OUT already holds this run's model: a completed run adds its record. */
static parley_status publish(run_state *r, const parley_train_result *res)
{
    char staged[PATH_MAX], path[PATH_MAX];
    struct stat sb;
    parley_status st;
    if (lstat(r->best_dir, &sb) != 0) {
        if (res->stopped)
            return PARLEY_OK;
        train_remove_entries(r->state_dir, NULL, 0, 1);
        rmdir(r->state_dir);
        return train_record_write(r->rec, r->p->out, res);
    }
    if ((st = pl_dir_staging(r->p->out, staged, sizeof staged)) != PARLEY_OK ||
        (st = pl_remove_tree(staged)) != PARLEY_OK)
        return st;
    if (rename(r->best_dir, staged) != 0)
        return pl_errno_fail(staged, "move the best epoch's model to");
    if (res->stopped) {
        if ((st = train_path_join(path, staged, "train_state")) != PARLEY_OK)
            return st;
        if (rename(r->state_dir, path) != 0)
            return pl_errno_fail(path, "move the training state to");
    } else if ((st = train_record_write(r->rec, staged, res)) != PARLEY_OK) {
        return st;
    }
    return pl_dir_replace(staged, r->p->out, bert_model_dir_entries);
}

/* Checks p, and parses its device and precision into r. */
static parley_status check_params(const parley_train_params *p, run_state *r)
{
    parley_status st;
    if (!p->data || !p->out)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "train: the training data and the output directory are required");
    if ((st = train_parse_device(p->device, &r->device)) != PARLEY_OK ||
        (st = cuda_precision_parse(p->precision ? p->precision : "bf16", &r->prec)) != PARLEY_OK)
        return st;
    if (r->prec == CUDA_PREC_FP16)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "train: precision fp16 is not offered (it would need loss scaling): "
                       "use bf16 or fp32");
    if (p->threads < 0)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "train: threads must be >= 0");
    if (p->resume)
        return PARLEY_OK;
    if (p->pretrain_epochs > 10000)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "train: pretrain epochs must be at most 10000");
    if ((st = train_check_common(p, "train", 1)) != PARLEY_OK)
        return st;
    const struct {
        const char *what;
        parley_switch v;
    } onoff[] = { { "built-in replies", p->builtin },
                  { "sparse features", p->sparse },
                  { "the intent encoder", p->intent_encoder } };
    for (size_t i = 0; i < sizeof onoff / sizeof onoff[0]; i++)
        if (onoff[i].v < PARLEY_SWITCH_AUTO || onoff[i].v > PARLEY_SWITCH_OFF)
            return pl_fail(PARLEY_ERR_INVALID_ARG,
                           "train: %s: PARLEY_SWITCH_AUTO, _ON or _OFF, not %d", onoff[i].what,
                           (int)onoff[i].v);
    if (p->intent_encoder == PARLEY_SWITCH_OFF && p->sparse == PARLEY_SWITCH_OFF)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "train: --intent-encoder off leaves the intent to the sparse features, "
                       "and --sparse is off");
    if (!(p->sparse_lr >= 0 && p->sparse_lr <= 1e3))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "train: sparse lr must be in [0, 1000]");
    if (!isfinite(p->slot_weight) || !(p->word_dropout >= 0 && p->word_dropout < 1))
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "train: slot weight must be a number (negative: sized to the data) and "
                       "word dropout in [0, 1)");
    return PARLEY_OK;
}

/* Starts the run's record with the settings in force (a resumed run's come from its state). */
static parley_status open_record(run_state *r)
{
    parley_train_params q = *r->p;
    if (q.resume) {
        q.epochs = r->s.epochs;
        q.batch = r->s.batch;
        q.augment = r->s.augment;
        q.background = r->s.background;
        q.lr = r->s.lr;
        q.weight_decay = r->s.weight_decay;
        q.dropout = r->s.dropout;
        q.slot_weight = r->s.slot_weight;
        q.clip = r->s.clip;
        q.word_dropout = r->s.word_dropout;
        q.warmup_steps = r->warmup;
        q.seed = r->s.seed;
        q.pretrain_epochs = r->s.pretrain_epochs; /* done before the state was first saved */
        q.shape = train_shape_of(&r->m->cfg);
    }
    char *json = NULL;
    parley_status st =
            train_record_open(&q,
                              r->train->n_examples - r->pr.n_augmented - r->pr.n_background -
                                      r->pr.n_builtin - r->pr.n_lowercase,
                              &r->rec);
    if (st == PARLEY_OK && (st = train_recipe_json(&r->s, &json)) == PARLEY_OK)
        st = train_record_recipe(r->rec, json);
    pl_free(json);
    return st;
}

static void run_clear(run_state *r)
{
    train_record_free(r->rec);
    train_recipe_clear(&r->s);
    ds_free(r->train);
    ds_free(r->dev);
    bert_model_free(r->m);
    set_clear(&r->set);
    bert_train_ws_free(&r->ws);
    cuda_trainer_close(r->gpu);
    pl_free(r->grads);
    pl_free(r->adam_m);
    pl_free(r->adam_v);
    pl_free(r->decay);
    pl_free(r->perm);
    pl_free(r->b_ids);
    pl_free(r->b_slot);
    pl_free(r->b_len);
    pl_free(r->b_intent);
    bert_sparse_batch_free(&r->b_sparse);
    pl_free(r->class_weight);
}

/* Puts the training on the GPU when the device says so (the sparse weights as they stand:
 * the pre-fit runs on the CPU before). */
static parley_status open_device(run_state *r)
{
    r->pr.device = "cpu";
    if (r->device == CUDA_DEVICE_CPU)
        return PARLEY_OK;
    parley_status st = cuda_trainer_open(r->m, r->decay, r->device, r->prec, &r->gpu);
    if (st == PARLEY_OK && r->p->resume)
        st = cuda_trainer_set_moments(r->gpu, r->adam_m, r->adam_v);
    if (st != PARLEY_OK)
        return pl_wrap(st, "train: device \"%s\"", r->p->device);
    r->pr.device = cuda_trainer_describe(r->gpu);
    return PARLEY_OK;
}

/* The intent temperature of a model whose intent is the sparse features' alone, without a
 * dev set: fitted on the held-out intent logits of the written examples by
 * TRAIN_CROSSFIT_FOLDS-fold cross-fitting of the sparse intent map (set and pp as the
 * pre-fit's; the variants are not scored). */
static parley_status crossfit_temperature(run_state *r, const sparse_prefit_set *set,
                                          const sparse_prefit_params *pp)
{
    const int n = set->n, NI = r->m->cfg.n_intents;
    int *gold = pl_malloc(((size_t)n + 1) * sizeof *gold);
    float *logits = pl_malloc(((size_t)n * (size_t)NI + 1) * sizeof *logits);
    parley_status st = PARLEY_OK;
    if (!gold || !logits)
        st = pl_nomem("cross-fitting the sparse intent");
    for (int e = 0; st == PARLEY_OK && e < n; e++)
        gold[e] = set->source[e] == e ? set->intent[e] : -1;
    if (st == PARLEY_OK &&
        (st = train_sparse_crossfit(r->m, set, pp, TRAIN_CROSSFIT_FOLDS, logits)) == PARLEY_OK)
        r->m->cfg.intent_temperature = train_fit_temperature(logits, gold, n, NI);
    pl_free(gold);
    pl_free(logits);
    return st;
}

/* The slot types of each intent, into the model's config (replacing those of a checkpoint
 * resumed: the data decides them again), for a model whose intent is the sparse features'
 * alone: its encoder tags without learning the intents. */
static parley_status intent_slot_tags(run_state *r)
{
    bert_config *c = &r->m->cfg;
    unsigned char *tags;
    parley_status st =
            train_intent_slot_tags(c->slot_labels, c->n_slots, c->n_intents, r->set.intent,
                                   r->set.off, r->set.slot, r->set.n, &tags, NULL);
    if (st == PARLEY_OK) {
        pl_free(c->intent_slot_tags);
        c->intent_slot_tags = tags;
    }
    return st;
}

/* The pre-fit's examples and settings: source (n, the caller's) receives each example's
 * written example; class_weight as the run weighs the intents. */
static void prefit_inputs(const run_state *r, int *source, const float *class_weight,
                          sparse_prefit_set *set, sparse_prefit_params *pp)
{
    const int n = r->set.n;
    for (int e = 0; e < n; e++) {
        const int from = r->train->examples[e].variant_of;
        source[e] = from < 0 ? e : from;
    }
    *set = (sparse_prefit_set){ .n = n,
                                .crossfit_written = train_set_own_values(r->train, &r->added),
                                .source = source,
                                .off = r->set.off,
                                .intent = r->set.intent,
                                .slot = r->set.slot,
                                .rows = &r->set.sparse };
    *pp = (sparse_prefit_params){
        .epochs = r->s.prefit_epochs,
        .batch = TRAIN_PREFIT_BATCH,
        .lr = r->s.sparse_lr,
        .slot_lr = r->s.slot_map_lr,
        .slot_weight = r->s.slot_weight,
        .seed = train_mix(r->s.seed, TRAIN_PREFIT_SALT),
        .class_weight = class_weight,
    };
}

/* Fits the sparse weights alone before the joint training (a fresh run of a model with
 * sparse features and few examples), and where the recipe says so the intent temperature on
 * the held-out logits of the same fit's cross-fitting. */
static parley_status sparse_prefit(run_state *r)
{
    int *source = pl_malloc(((size_t)r->set.n + 1) * sizeof *source);
    sparse_prefit_set set;
    sparse_prefit_params pp;
    parley_status st;
    if (!source)
        return pl_nomem("fitting the sparse features");
    prefit_inputs(r, source, r->class_weight, &set, &pp);
    if ((st = train_sparse_prefit(r->m, &set, &pp, NULL)) == PARLEY_OK && r->s.crossfit_temperature)
        st = crossfit_temperature(r, &set, &pp);
    pl_free(source);
    return st;
}

/* The new model's encoder pretrained in place on the training text (r->s.pretrain_epochs epochs,
 * the masked-LM loop of parley_pretrain_run, its batch and rate), its progress reported as
 * pretraining; a stop there sets r->pretrain_stopped. */
static parley_status pretrain_own_text(run_state *r)
{
    parley_pretrain_params pp = parley_pretrain_params_default();
    parley_pretrain_result res = { 0 };
    const char **lines = pl_malloc(((size_t)r->train->n_examples + 1) * sizeof *lines);
    if (!lines)
        return pl_nomem("pretraining on the training text");
    for (int i = 0; i < r->train->n_examples; i++)
        lines[i] = r->train->examples[i].text;
    pp.train.epochs = r->s.pretrain_epochs;
    pp.train.dropout = r->s.dropout;
    pp.train.clip = r->s.clip;
    pp.train.seed = r->s.seed;
    pp.train.device = r->p->device;
    pp.train.precision = r->p->precision;
    pp.train.progress = r->p->progress;
    pp.train.user_data = r->p->user_data;
    parley_status st = train_pretrain_model(r->m, lines, r->train->n_examples, &pp, &res);
    pl_free(lines);
    if (st != PARLEY_OK)
        return pl_wrap(st, "pretraining on the training text");
    r->pretrain_stopped = res.stopped;
    return PARLEY_OK;
}

/* The model the recipe starts from (init's, the default encoder, or new at its shape), with
 * its sparse features learned from the training set, and the set encoded. */
static parley_status new_model(run_state *r)
{
    parley_status st;
    const char *init = r->s.from_init      ? train_init_dir(r->p)
                       : r->s.from_encoder ? r->init_dir
                                           : NULL;
    if (r->s.from_encoder && !train_default_encoder(r->init_dir, sizeof r->init_dir))
        return pl_fail(PARLEY_ERR_NOT_FOUND, "train: the default encoder is gone");
    if ((st = init ? model_from_init(r, init) : model_scratch(r, &r->s.shape)) != PARLEY_OK ||
        (st = train_sparse_setup(&r->m, r->train, r->s.sparse, r->s.word_norm_by_kind)) !=
                PARLEY_OK ||
        (st = train_synonyms_of(r->train, &r->m->cfg.synonyms)) != PARLEY_OK ||
        (st = train_slot_values_of(r->train, &r->m->cfg.slot_values)) != PARLEY_OK)
        return st;
    r->m->cfg.intent_temperature = 0; /* new weights: calibrated anew on dev, or not */
    r->m->cfg.intent_sparse_only = r->s.intent_sparse_only && r->m->cfg.sparse_sent;
    return set_encode(&r->set, r->m, r->train);
}

/* The recipe of a fresh run (measured and decided: recipe.h), or a resumed run's own, and
 * the training set it trains on. */
static parley_status recipe_and_data(run_state *r, const char *resume_dir)
{
    const parley_train_params *p = r->p;
    parley_status st;
    train_profile pf;
    if (p->resume) {
        if ((st = state_parse(r, resume_dir)) != PARLEY_OK ||
            (st = train_set_extend(r->train, r->s.augment, r->s.builtin, r->s.lowercase, r->s.seed,
                                   &r->added)) != PARLEY_OK ||
            (st = train_set_background(r->train, r->s.background, &r->added)) != PARLEY_OK)
            return pl_wrap(st, "--resume");
    } else if ((st = train_profile_measure(p, r->train, r->device != CUDA_DEVICE_CPU, &r->added,
                                           &pf)) != PARLEY_OK ||
               (st = train_recipe_decide(p, &pf, &r->s)) != PARLEY_OK ||
               (st = train_set_background(r->train, r->s.background, &r->added)) != PARLEY_OK) {
        return st;
    }
    r->pr.n_augmented = r->added.variants;
    r->pr.n_builtin = r->added.builtin;
    r->pr.n_lowercase = r->added.lowercase;
    r->pr.n_background = r->added.background;
    r->train_hash = data_hash(r->train);
    return PARLEY_OK;
}

/* Data, recipe, model and buffers: everything before the first step. */
static parley_status run_prepare(run_state *r)
{
    const parley_train_params *p = r->p;
    parley_status st;
    char dir[PATH_MAX];
    if ((st = ds_load(p->data, &r->train)) != PARLEY_OK ||
        (p->dev && (st = ds_load(p->dev, &r->dev)) != PARLEY_OK))
        return st;
    if (r->train->n_examples == 0)
        return pl_fail(PARLEY_ERR_CONFIG, "%s: no training examples", p->data);
    if ((st = train_path_join(r->state_dir, p->out, "train_state")) != PARLEY_OK ||
        (st = train_path_join(r->best_dir, r->state_dir, "best")) != PARLEY_OK)
        return st;
    if (p->resume && (st = train_checkpoint_latest(r->state_dir, dir)) != PARLEY_OK)
        return pl_wrap(st, "--resume");
    if ((st = recipe_and_data(r, dir)) != PARLEY_OK)
        return st;
    r->dev_hash = data_hash(r->dev);
    if (p->resume) {
        if ((st = state_load(r, dir)) != PARLEY_OK ||
            (st = set_encode(&r->set, r->m, r->train)) != PARLEY_OK)
            return st;
    } else {
        /* OUT is replaced whole at the end (publish): refuse one that holds more, now. */
        if ((st = pl_dir_only(p->out, bert_model_dir_entries)) != PARLEY_OK ||
            (st = pl_make_dirs(p->out)) != PARLEY_OK)
            return st;
        /* A fresh run starts a fresh state: an old one must not be resumed by mistake. */
        train_remove_entries(r->state_dir, NULL, 0, 1);
        rmdir(r->state_dir);
        if ((st = new_model(r)) != PARLEY_OK)
            return st;
        if (r->s.pretrain_epochs &&
            ((st = pretrain_own_text(r)) != PARLEY_OK || r->pretrain_stopped))
            return st;
    }
    r->epoch_steps = (r->set.n + r->s.batch - 1) / r->s.batch;
    r->steps = r->epoch_steps * r->s.epochs;
    if (!p->resume)
        r->warmup = r->s.warmup_steps >= 0 ? r->s.warmup_steps
                                           : lround(r->s.warmup_fraction * (double)r->steps);
    size_t n = r->m->n_params, batch_tok = (size_t)r->s.batch * (size_t)r->set.max_len;
    r->grads = pl_malloc(n * sizeof *r->grads);
    r->adam_m = pl_calloc(n, sizeof *r->adam_m);
    r->adam_v = pl_calloc(n, sizeof *r->adam_v);
    r->decay = pl_malloc(n);
    r->perm = pl_malloc(((size_t)r->set.n + 1) * sizeof *r->perm);
    r->b_ids = pl_malloc(batch_tok * sizeof *r->b_ids);
    r->b_slot = pl_malloc(batch_tok * sizeof *r->b_slot);
    r->b_len = pl_malloc((size_t)r->s.batch * sizeof *r->b_len);
    r->b_intent = pl_malloc((size_t)r->s.batch * sizeof *r->b_intent);
    if (!r->grads || !r->adam_m || !r->adam_v || !r->decay || !r->perm || !r->b_ids || !r->b_slot ||
        !r->b_len || !r->b_intent)
        return pl_nomem("training buffers (%zu parameters)", n);
    bert_decay_mask(&r->m->cfg, r->decay);
    if (r->s.few_examples) {
        int *intents, n_unvaried;
        if ((st = train_set_unvaried_intents(r->train, &intents, &n_unvaried)) == PARLEY_OK)
            st = train_class_weights(intents, n_unvaried, r->m->cfg.n_intents, &r->class_weight,
                                     NULL);
        pl_free(intents);
        if (st != PARLEY_OK)
            return st;
    }
    if (r->s.prefit_epochs && !p->resume && r->m->sparse && (st = sparse_prefit(r)) != PARLEY_OK)
        return st;
    if (r->s.intent_slot_tags && (st = intent_slot_tags(r)) != PARLEY_OK)
        return st;
    if (p->resume &&
        (st = train_checkpoint_moments(dir, r->m->n_params, r->adam_m, r->adam_v)) != PARLEY_OK)
        return st;
    if ((st = open_device(r)) != PARLEY_OK)
        return st;
    r->pr.chosen = r->s.notes && *r->s.notes ? r->s.notes : NULL;
    r->perm_epoch = -1;
    r->saved_step = p->resume ? r->step : -1;
    return PARLEY_OK;
}

parley_status parley_train_run(const parley_train_params *p, parley_train_result *result)
{
    parley_status st;
    run_state r = { .p = p };
    double t0 = train_now_s();
    int stop = 0;
    if (!p)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_train_run: params is NULL");
    if ((st = check_params(p, &r)) != PARLEY_OK)
        return st;
    bert_set_threads(p->threads);
    if ((st = run_prepare(&r)) != PARLEY_OK)
        goto fail;
    if (r.pretrain_stopped) { /* nothing trained on the labels yet: nothing to resume */
        if (result)
            *result = (parley_train_result){ .stopped = 1,
                                             .stopped_pretraining = 1,
                                             .wall_s = train_now_s() - t0 };
        goto fail;
    }
    if ((st = open_record(&r)) != PARLEY_OK)
        goto fail;
    r.pr.n_train = r.train->n_examples;
    r.pr.n_dev = r.dev ? r.dev->n_examples : 0;
    r.pr.n_intents = r.m->cfg.n_intents;
    r.pr.n_tags = r.m->cfg.n_slots;
    r.pr.vocab_size = r.m->cfg.vocab_size;
    r.pr.n_truncated = r.set.truncated;
    r.pr.n_params = r.m->n_params;
    r.pr.sparse_sentence = r.m->cfg.sparse_sent;
    r.pr.sparse_word = r.m->cfg.sparse_word;
    r.pr.shape = train_shape_of(&r.m->cfg);
    stop = report(&r, PARLEY_TRAIN_START);
    if (r.steps == 0 && (st = epoch_end(&r, &stop)) != PARLEY_OK) /* the pre-fit alone */
        goto fail;
    while (r.step < r.steps && !stop) {
        if ((st = train_step(&r)) != PARLEY_OK)
            goto fail;
        stop = report(&r, PARLEY_TRAIN_STEP);
        if (r.step % r.epoch_steps == 0 && (st = epoch_end(&r, &stop)) != PARLEY_OK)
            goto fail;
    }
    /* Stopped: keep what is needed to go on. */
    if (r.step < r.steps && r.saved_step != r.step &&
        ((st = sync_host(&r)) != PARLEY_OK || (st = state_save(&r)) != PARLEY_OK))
        goto fail;
    parley_train_result res = { .epochs_done = (int)(r.step / r.epoch_steps),
                                .steps_done = r.step,
                                .stopped = (r.step < r.steps),
                                .wall_s = train_now_s() - t0,
                                .examples_per_s = train_meter_rate(&r.meter),
                                .has_dev = r.dev != NULL,
                                .best_epoch = r.best_epoch,
                                .best = r.best };
    if ((st = publish(&r, &res)) != PARLEY_OK)
        goto fail;
    if (result)
        *result = res;
    st = PARLEY_OK;
fail:
    run_clear(&r);
    return st;
}
