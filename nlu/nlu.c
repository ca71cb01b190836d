/* nlu.c — the public parley_nlu API: open a model directory, parse utterances, free results.
 *
 * It glues the pieces together: tokenizer -> packed batch -> bert_forward -> decode, and
 * lays each result out in one allocation so that freeing it is one call and it outlives the
 * handle. The math lives in bert.c and nlu/cpu/, the decisions in decode.c.
 */
#include <stdalign.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "nlu/bert.h"
#include "nlu/cpu/ops.h"
#include "nlu/cuda/cuda_bert.h"
#include "nlu/decode.h"
#include "nlu/text/fillers.h"
#include "parley/nlu.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/sync.h"

/* Sequences per pass through the model: bounds scratch memory for big batches on the CPU;
 * the GPU takes bigger ones, as its throughput keeps growing with the batch. */
enum { NLU_CHUNK = 32, NLU_GPU_CHUNK = 256, NLU_DEFAULT_TOP_K = 5 };

struct parley_nlu {
    bert_model *model;
    parley_tokenizer tokenizer; /* over the model's vocabulary (parley_nlu_tokenizer) */
    cuda_bert *gpu;             /* NULL: the CPU runs the model */
    pthread_mutex_t gpu_lock;   /* one batch at a time on the GPU instance */
    nlu_tagset tags;
    int top_k;
    size_t max_intent;    /* longest intent label, in bytes */
    size_t max_canonical; /* longest canonical value of a synonym or value a slot knows, bytes */
};

parley_nlu_params parley_nlu_params_default(void)
{
    return (parley_nlu_params){
        .threads = 0, .top_k = NLU_DEFAULT_TOP_K, .device = "auto", .precision = "fp16"
    };
}

/* Puts the model on GPU `gpu` (cuda_device_parse's codes). With auto, a GPU that fails to
 * take it is logged and the CPU runs the model; a GPU named explicitly must work. */
static parley_status pick_device(parley_nlu *nlu, int gpu, cuda_precision prec, const char *dir)
{
    if (gpu == CUDA_DEVICE_CPU || (gpu == CUDA_DEVICE_AUTO && cuda_device_count() == 0)) {
        pl_log(PARLEY_LOG_INFO, "nlu: %s on the cpu%s", dir,
               gpu == CUDA_DEVICE_AUTO ? " (auto: no usable CUDA device)" : "");
        return PARLEY_OK;
    }
    parley_status st = cuda_bert_open(nlu->model, gpu < 0 ? 0 : gpu, prec, &nlu->gpu);
    if (st != PARLEY_OK && gpu == CUDA_DEVICE_AUTO) {
        pl_log(PARLEY_LOG_WARN, "nlu: %s on the cpu (auto: the GPU failed: %s)", dir,
               parley_errmsg());
        return PARLEY_OK;
    }
    if (st == PARLEY_OK && (st = pl_mutex_init(&nlu->gpu_lock, dir)) != PARLEY_OK) {
        cuda_bert_close(nlu->gpu);
        nlu->gpu = NULL;
    }
    if (st != PARLEY_OK)
        return st;
    pl_log(PARLEY_LOG_INFO, "nlu: %s on %s", dir, cuda_bert_describe(nlu->gpu));
    return PARLEY_OK;
}

/* The forward pass on the model's device (a bert_forward_fn; ctx is the parley_nlu). */
static parley_status nlu_forward(void *ctx, const bert_batch *b, float *intent_logits,
                                 float *slot_logits)
{
    parley_nlu *nlu = ctx;
    if (!nlu->gpu)
        return bert_forward(nlu->model, b, intent_logits, slot_logits);
    pthread_mutex_lock(&nlu->gpu_lock);
    parley_status st = cuda_bert_forward(nlu->gpu, b, intent_logits, slot_logits);
    pthread_mutex_unlock(&nlu->gpu_lock);
    return st;
}

const char *parley_nlu_blas_coretype(void)
{
    return cpu_blas_better_core();
}

/* Says once per process when OpenBLAS runs kernels far below what the CPU can do: only the
 * environment, before the process starts, can change that (see cpu_blas_better_core). */
static void warn_slow_blas(void)
{
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    const char *core = parley_nlu_blas_coretype();
    if (core && !atomic_flag_test_and_set(&warned))
        pl_log(PARLEY_LOG_WARN,
               "nlu: OpenBLAS did not recognize this CPU and uses slow generic "
               "kernels; start the process with OPENBLAS_CORETYPE=%s for 2-3x faster GEMMs",
               core);
}

parley_status parley_nlu_open(const char *model_dir, const parley_nlu_params *params,
                              parley_nlu **out)
{
    parley_nlu_params p = params ? *params : parley_nlu_params_default();
    parley_nlu *nlu = NULL;
    parley_status st;
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_nlu_open: out is NULL");
    *out = NULL;
    if (!model_dir)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_nlu_open: model_dir is NULL");
    if (p.threads < 0 || p.top_k < 0)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_nlu_open: threads and top_k must be >= 0");
    int gpu = CUDA_DEVICE_AUTO;
    cuda_precision prec = CUDA_PREC_FP16;
    if ((st = cuda_device_parse(p.device, &gpu)) != PARLEY_OK ||
        (st = cuda_precision_parse(p.precision, &prec)) != PARLEY_OK)
        return st;
    if (!(nlu = pl_calloc(1, sizeof *nlu)))
        return pl_nomem("opening %s", model_dir);
    if ((st = bert_model_load(model_dir, &nlu->model)) != PARLEY_OK)
        goto fail;
    nlu->tokenizer.vocab = nlu->model->vocab;
    const bert_config *c = &nlu->model->cfg;
    if ((st = nlu_tagset_init(&nlu->tags, c->slot_labels, c->n_slots)) != PARLEY_OK) {
        pl_wrap(st, "%s/config.json: slot_labels", model_dir);
        goto fail;
    }
    nlu->top_k = p.top_k ? p.top_k : NLU_DEFAULT_TOP_K;
    if (nlu->top_k > c->n_intents)
        nlu->top_k = c->n_intents;
    for (int i = 0; i < c->n_intents; i++) {
        size_t len = strlen(c->intent_labels[i]);
        if (len > nlu->max_intent)
            nlu->max_intent = len;
    }
    nlu->max_canonical = bert_synonyms_longest(&c->synonyms);
    if (bert_slot_values_longest(&c->slot_values) > nlu->max_canonical)
        nlu->max_canonical = bert_slot_values_longest(&c->slot_values);
    if (p.threads)
        bert_set_threads(p.threads);
    if ((st = pick_device(nlu, gpu, prec, model_dir)) != PARLEY_OK)
        goto fail;
    if (!nlu->gpu)
        warn_slow_blas();
    pl_log(PARLEY_LOG_DEBUG, "nlu: opened %s (L%d H%d, %d intents, %d slot tags)", model_dir,
           c->layers, c->hidden, c->n_intents, c->n_slots);
    *out = nlu;
    return PARLEY_OK;
fail:
    parley_nlu_close(nlu);
    return st;
}

void parley_nlu_close(parley_nlu *nlu)
{
    if (!nlu)
        return;
    nlu_tagset_clear(&nlu->tags);
    if (nlu->gpu) {
        cuda_bert_close(nlu->gpu);
        pthread_mutex_destroy(&nlu->gpu_lock);
    }
    bert_model_free(nlu->model);
    pl_free(nlu);
}

int parley_nlu_intent_count(const parley_nlu *nlu)
{
    return nlu->model->cfg.n_intents;
}
int parley_nlu_slot_tag_count(const parley_nlu *nlu)
{
    return nlu->model->cfg.n_slots;
}

const char *parley_nlu_intent_label(const parley_nlu *nlu, int i)
{
    return i >= 0 && i < nlu->model->cfg.n_intents ? nlu->model->cfg.intent_labels[i] : NULL;
}

const char *parley_nlu_slot_tag(const parley_nlu *nlu, int i)
{
    return i >= 0 && i < nlu->model->cfg.n_slots ? nlu->model->cfg.slot_labels[i] : NULL;
}

parley_status parley_nlu_get_info(const parley_nlu *nlu, parley_nlu_info *out)
{
    if (!nlu || !out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_nlu_get_info: NULL argument");
    bert_model_info(nlu->model, out);
    return PARLEY_OK;
}

const parley_tokenizer *parley_nlu_tokenizer(const parley_nlu *nlu)
{
    return nlu ? &nlu->tokenizer : NULL;
}

void parley_nlu_result_free(parley_nlu_result *result)
{
    pl_free(result); /* one allocation holds everything (see build_result) */
}

/* A bump allocator over the single block of a result. */
typedef struct arena {
    char *base;
    size_t used, cap;
} arena;

static void *arena_take(arena *a, size_t size, size_t align)
{
    size_t at = (a->used + align - 1) / align * align;
    if (at + size > a->cap)
        return NULL; /* unreachable when the size bound in build_result is right */
    a->used = at + size;
    return a->base + at;
}

static char *arena_str(arena *a, const char *s, size_t len)
{
    char *d = arena_take(a, len + 1, 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

static char *arena_tag(arena *a, signed char kind, const char *type)
{
    if (kind == NLU_TAG_O)
        return arena_str(a, "O", 1);
    size_t len = strlen(type);
    char *d = arena_take(a, len + 3, 1);
    if (d) {
        d[0] = kind == NLU_TAG_B ? 'B' : 'I';
        d[1] = '-';
        memcpy(d + 2, type, len + 1);
    }
    return d;
}

/* Narrows a span's byte range so punctuation pieces at either end are left out, unless the
 * span is nothing but punctuation. */
static void trim_span(const char *text, const wp_tokens *tk, int n_used, const nlu_span *sp,
                      size_t *start, size_t *end)
{
    int first = -1, last = -1;
    for (int p = 0; p < n_used; p++) {
        const wp_piece *pc = &tk->pieces[p];
        if (pc->word < sp->w0 || pc->word >= sp->w1 || wp_is_punct_piece(text, pc))
            continue;
        if (first < 0)
            first = p;
        last = p;
    }
    *start = tk->word_start[sp->w0];
    *end = tk->word_end[sp->w1 - 1];
    if (first >= 0) {
        *start = tk->pieces[first].start;
        *end = tk->pieces[last].end;
    }
}

/* Builds one result. intent_logits: (NI); slot_logits: (n_used, NS) for the pieces after
 * [CLS]. Scratch (word tags, spans) is carved from the end of the same block. */
static parley_status build_result(const parley_nlu *nlu, const char *text, size_t len,
                                  const wp_tokens *tk, int n_used, const float *intent_logits,
                                  const float *slot_logits, parley_nlu_result **out)
{
    const bert_config *c = &nlu->model->cfg;
    const nlu_tagset *ts = &nlu->tags;
    size_t W = (size_t)tk->n_words, K = (size_t)nlu->top_k;
    size_t cap = sizeof(parley_nlu_result) + K * sizeof(parley_nlu_intent) +
                 W * (sizeof(parley_nlu_slot) + sizeof(char *) + 2 * sizeof(size_t)) +
                 W * (sizeof(int) * 2 + sizeof(nlu_span) + 1) /* scratch */ + len + 1 +
                 K * (nlu->max_intent + 1) + W * (ts->max_name + 3) /* tags */ +
                 W * (ts->max_name + 1) + len + W /* slot names and values */ +
                 W * (nlu->max_canonical + 1) + len +
                 W /* canonical values (bert_known_resolve) */ + 16 * alignof(max_align_t);
    arena a = { pl_malloc(cap), 0, cap };
    if (!a.base)
        return pl_nomem("building an NLU result");
    parley_nlu_result *r = arena_take(&a, sizeof *r, alignof(parley_nlu_result));
    memset(r, 0, sizeof *r);
    parley_nlu_intent *top = arena_take(&a, K * sizeof *top, alignof(parley_nlu_intent));
    parley_nlu_slot *slots = arena_take(&a, W * sizeof *slots, alignof(parley_nlu_slot));
    const char **tags = arena_take(&a, W * sizeof *tags, alignof(char *));
    size_t *wstart = arena_take(&a, W * sizeof *wstart, alignof(size_t));
    size_t *wend = arena_take(&a, W * sizeof *wend, alignof(size_t));
    int *word_tag = arena_take(&a, W * sizeof(int), alignof(int));
    int *type = arena_take(&a, W * sizeof(int), alignof(int));
    nlu_span *spans = arena_take(&a, W * sizeof *spans, alignof(nlu_span));
    signed char *kind = arena_take(&a, W, 1);

    int idx[K ? K : 1];
    float prob[K ? K : 1];
    nlu_top_k(intent_logits, c->n_intents, c->intent_temperature, (int)K, idx, prob);
    for (size_t k = 0; k < K; k++) {
        const char *label = c->intent_labels[idx[k]];
        top[k] = (parley_nlu_intent){ arena_str(&a, label, strlen(label)), prob[k] };
    }
    /* the Viterbi scratch, then the slot prior's (NI + NS floats) */
    const size_t vs = nlu_word_tags_scratch((int)W, ts->n_tags);
    void *viterbi = pl_malloc(vs + ((size_t)c->n_intents + (size_t)c->n_slots) * sizeof(float));
    if (!viterbi) {
        pl_free(a.base);
        return pl_nomem("decoding slots");
    }
    const float *prior = bert_slot_prior(c, intent_logits, (float *)((char *)viterbi + vs));
    nlu_word_tags(ts, prior, slot_logits, tk->pieces, n_used, (int)W, word_tag, viterbi);
    pl_free(viterbi);
    int n_spans = nlu_bio_spans(ts, word_tag, (int)W, kind, type, spans);
    for (size_t w = 0; w < W; w++) {
        tags[w] = arena_tag(&a, kind[w], type[w] >= 0 ? ts->type_names[type[w]] : "");
        wstart[w] = tk->word_start[w];
        wend[w] = tk->word_end[w];
    }
    for (int s = 0; s < n_spans; s++) {
        size_t b, e;
        trim_span(text, tk, n_used, &spans[s], &b, &e);
        const char *name = ts->type_names[spans[s].type], *canon;
        const bert_known *known = bert_slot_values_find(&c->slot_values, name);
        char *resolved = NULL;
        parley_status st = bert_synonyms_find(&c->synonyms, text + b, e - b, &canon);
        const bert_known *owner = NULL;
        if (st == PARLEY_OK && !canon && known)
            st = bert_slot_values_owner(&c->slot_values, known, text + b, e - b, &owner);
        int ty = owner ? nlu_tagset_type(ts, owner->slot) : -1;
        if (ty >= 0) { /* the span's words are another slot type's value */
            spans[s].type = ty;
            known = owner;
            name = ts->type_names[ty];
            for (int w = spans[s].w0; w < spans[s].w1; w++)
                tags[w] = arena_tag(&a, kind[w], name);
        }
        if (st == PARLEY_OK && !canon && known)
            st = bert_known_resolve(known, &c->synonyms, text + b, e - b, &resolved);
        if (st != PARLEY_OK) {
            pl_free(a.base);
            return st;
        }
        if (resolved)
            canon = resolved;
        const char *value = arena_str(&a, text + b, e - b);
        slots[s] = (parley_nlu_slot){ arena_str(&a, name, strlen(name)),
                                      value,
                                      b,
                                      e,
                                      spans[s].w0,
                                      spans[s].w1,
                                      canon ? arena_str(&a, canon, strlen(canon)) : value };
        pl_free(resolved);
    }
    r->text = arena_str(&a, text, len);
    r->intent = top[0].label;
    r->confidence = top[0].prob;
    r->n_top = (int)K;
    r->top = top;
    r->n_slots = n_spans;
    r->slots = slots;
    r->n_words = (int)W;
    r->tags = tags;
    r->word_start = wstart;
    r->word_end = wend;
    r->n_pieces = n_used + 2;
    r->truncated = n_used < tk->n_pieces;
    *out = r;
    return PARLEY_OK;
}

/* One chunk of parley_nlu_parse_batch: the texts, the batch index of the first, and where
 * their results go. */
typedef struct chunk {
    const parley_nlu *nlu;
    const char *const *texts;
    size_t first_index;
    parley_nlu_result **out;
} chunk;

/* Fails when text `index`'s scores are not all finite numbers: it has no intent to report,
 * only a failed turn. Weights are checked at load so that the FP32 forward pass stays
 * finite (nlu/model/model_io.c); a GPU at fp16 or bf16 can still overflow.
 * intent_logits: (NI); slot_logits: (n_pieces, NS). */
static parley_status check_scores(const parley_nlu *nlu, size_t index, const float *intent_logits,
                                  const float *slot_logits, int n_pieces)
{
    const size_t NI = (size_t)nlu->model->cfg.n_intents;
    const size_t NS = (size_t)nlu->model->cfg.n_slots * (size_t)n_pieces;
    if (nlu_first_nonfinite(intent_logits, NI) == NI && nlu_first_nonfinite(slot_logits, NS) == NS)
        return PARLEY_OK;
    return pl_fail(PARLEY_ERR_UNSUPPORTED,
                   "text %zu: the model's scores for it are not finite numbers (NaN or "
                   "infinity), so no intent can be decided%s",
                   index, nlu->gpu ? " (on the GPU, precision fp32 may avoid the overflow)" : "");
}

/* A bert_logits_fn: decodes text i of the chunk into its result. */
static parley_status result_of(void *ctx, int i, const wp_tokens *tk, int n_pieces,
                               const float *intent_logits, const float *slot_logits)
{
    chunk *ch = ctx;
    parley_status st;
    if ((st = check_scores(ch->nlu, ch->first_index + (size_t)i, intent_logits, slot_logits,
                           n_pieces)) != PARLEY_OK)
        return st;
    return build_result(ch->nlu, ch->texts[i], strlen(ch->texts[i]), tk, n_pieces, intent_logits,
                        slot_logits, &ch->out[i]);
}

/* Tokenizes, runs and decodes texts[0..n) (n <= NLU_GPU_CHUNK) as one batch. out[0..n) are
 * NULL on entry, and again after a failure. */
static parley_status parse_chunk(parley_nlu *nlu, const char *const *texts, size_t n,
                                 size_t first_index, parley_nlu_result **out)
{
    const wp_vocab *v = nlu->model->vocab;
    wp_tokens tk[NLU_GPU_CHUNK];
    chunk ch = { nlu, texts, first_index, out };
    parley_status st = PARLEY_OK;
    size_t i;

    memset(tk, 0, sizeof tk);
    for (i = 0; i < n; i++) {
        if (!texts[i]) {
            st = pl_fail(PARLEY_ERR_INVALID_ARG, "text %zu is NULL", first_index + i);
            goto fail;
        }
        if ((st = wp_tokenize(v, texts[i], strlen(texts[i]), &tk[i])) != PARLEY_OK) {
            pl_wrap(st, "text %zu", first_index + i);
            goto fail;
        }
        wp_drop_fillers(texts[i], &tk[i]);
    }
    st = bert_run_pieces(nlu->model, texts, tk, (int)n, nlu_forward, nlu, result_of, &ch);
fail:
    if (st != PARLEY_OK)
        for (i = 0; i < n; i++) {
            parley_nlu_result_free(out[i]);
            out[i] = NULL;
        }
    for (i = 0; i < n; i++)
        wp_tokens_free(&tk[i]);
    return st;
}

parley_status parley_nlu_parse_batch(parley_nlu *nlu, const char *const *texts, size_t n,
                                     parley_nlu_result **out)
{
    if (!nlu || (!texts && n) || (!out && n))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_nlu_parse_batch: NULL argument");
    for (size_t i = 0; i < n; i++)
        out[i] = NULL;
    const size_t chunk = nlu->gpu ? NLU_GPU_CHUNK : NLU_CHUNK;
    for (size_t at = 0; at < n; at += chunk) {
        size_t m = n - at < chunk ? n - at : chunk;
        parley_status st = parse_chunk(nlu, texts + at, m, at, out + at);
        if (st != PARLEY_OK) {
            for (size_t i = 0; i < at; i++) {
                parley_nlu_result_free(out[i]);
                out[i] = NULL;
            }
            return st;
        }
    }
    return PARLEY_OK;
}

parley_status parley_nlu_parse(parley_nlu *nlu, const char *text, parley_nlu_result **out)
{
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_nlu_parse: out is NULL");
    return parley_nlu_parse_batch(nlu, &text, 1, out);
}
