/* model.c — the in-memory model: parameter layout, allocation, random initialization, and
 * its shape in the public API's terms.
 *
 * Every parameter lives in one FP32 array; bert_weights points into it in the order of the
 * table below, which is also the order of the struct's fields; the sparse features'
 * weights come last (empty in a model without them). This file does not read or
 * write files (nlu/model/model_io.c, nlu/model/config.c) and does not compute anything
 * (nlu/bert.c).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "nlu/model/model.h"
#include "nlu/sparse/sparse.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

enum fill { FILL_NORMAL, FILL_ZERO, FILL_ONE };

#define FIELD(name) offsetof(bert_weights, name)
static const struct field {
    size_t off;    /* of the pointer in bert_weights */
    int per_layer; /* repeated L times */
    bert_dim rows, cols;
    enum fill fill;
} fields[] = {
    { FIELD(word_emb), 0, BERT_DIM_V, BERT_DIM_H, FILL_NORMAL },
    { FIELD(pos_emb), 0, BERT_DIM_P, BERT_DIM_H, FILL_NORMAL },
    { FIELD(type_emb), 0, BERT_DIM_TT, BERT_DIM_H, FILL_NORMAL },
    { FIELD(emb_ln_w), 0, BERT_DIM_1, BERT_DIM_H, FILL_ONE },
    { FIELD(emb_ln_b), 0, BERT_DIM_1, BERT_DIM_H, FILL_ZERO },
    { FIELD(qkv_w), 1, BERT_DIM_3H, BERT_DIM_H, FILL_NORMAL },
    { FIELD(qkv_b), 1, BERT_DIM_1, BERT_DIM_3H, FILL_ZERO },
    { FIELD(attn_out_w), 1, BERT_DIM_H, BERT_DIM_H, FILL_NORMAL },
    { FIELD(attn_out_b), 1, BERT_DIM_1, BERT_DIM_H, FILL_ZERO },
    { FIELD(ln1_w), 1, BERT_DIM_1, BERT_DIM_H, FILL_ONE },
    { FIELD(ln1_b), 1, BERT_DIM_1, BERT_DIM_H, FILL_ZERO },
    { FIELD(ffn_in_w), 1, BERT_DIM_I, BERT_DIM_H, FILL_NORMAL },
    { FIELD(ffn_in_b), 1, BERT_DIM_1, BERT_DIM_I, FILL_ZERO },
    { FIELD(ffn_out_w), 1, BERT_DIM_H, BERT_DIM_I, FILL_NORMAL },
    { FIELD(ffn_out_b), 1, BERT_DIM_1, BERT_DIM_H, FILL_ZERO },
    { FIELD(ln2_w), 1, BERT_DIM_1, BERT_DIM_H, FILL_ONE },
    { FIELD(ln2_b), 1, BERT_DIM_1, BERT_DIM_H, FILL_ZERO },
    { FIELD(pool_w), 0, BERT_DIM_H, BERT_DIM_H, FILL_NORMAL },
    { FIELD(pool_b), 0, BERT_DIM_1, BERT_DIM_H, FILL_ZERO },
    { FIELD(intent_w), 0, BERT_DIM_NI, BERT_DIM_H, FILL_NORMAL },
    { FIELD(intent_b), 0, BERT_DIM_1, BERT_DIM_NI, FILL_ZERO },
    { FIELD(slot_w), 0, BERT_DIM_NS, BERT_DIM_H, FILL_NORMAL },
    { FIELD(slot_b), 0, BERT_DIM_1, BERT_DIM_NS, FILL_ZERO },
    /* Last, so the weights above draw the same initial numbers whether the model has sparse
     * features or not. */
    { FIELD(sparse_intent_w), 0, BERT_DIM_NI, BERT_DIM_FS, FILL_ZERO },
    { FIELD(sparse_slot_w), 0, BERT_DIM_NS, BERT_DIM_FW, FILL_ZERO },
};
#undef FIELD
enum { N_FIELDS = sizeof fields / sizeof fields[0] };
_Static_assert(N_FIELDS * sizeof(float *) == sizeof(bert_weights),
               "every weight has a row in fields[]");

size_t bert_dim_size(const bert_config *c, bert_dim d)
{
    switch (d) {
    case BERT_DIM_1: return 1;
    case BERT_DIM_V: return (size_t)c->vocab_size;
    case BERT_DIM_P: return (size_t)c->max_positions;
    case BERT_DIM_TT: return (size_t)c->type_vocab;
    case BERT_DIM_H: return (size_t)c->hidden;
    case BERT_DIM_3H: return 3 * (size_t)c->hidden;
    case BERT_DIM_I: return (size_t)c->intermediate;
    case BERT_DIM_NI: return (size_t)c->n_intents;
    case BERT_DIM_NS: return (size_t)c->n_slots;
    case BERT_DIM_FS: return (size_t)c->sparse_sent;
    case BERT_DIM_FW: return (size_t)c->sparse_word;
    }
    return 0;
}

/* a * b and a + b, or SIZE_MAX when the exact result does not fit: a count that
 * overflowed stays too big to pass any limit. */
static size_t mul_sat(size_t a, size_t b)
{
    size_t r;
    return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

static size_t add_sat(size_t a, size_t b)
{
    size_t r;
    return __builtin_add_overflow(a, b, &r) ? SIZE_MAX : r;
}

static size_t field_size(const bert_config *c, const struct field *f)
{
    return mul_sat(mul_sat(f->per_layer ? (size_t)c->layers : 1, bert_dim_size(c, f->rows)),
                   bert_dim_size(c, f->cols));
}

static float **field_ptr(bert_weights *w, const struct field *f)
{
    return (float **)((char *)w + f->off);
}

size_t bert_param_count(const bert_config *c)
{
    size_t n = 0;
    for (int i = 0; i < N_FIELDS; i++)
        n = add_sat(n, field_size(c, &fields[i]));
    return n;
}

void bert_weights_point(bert_weights *w, const bert_config *c, float *params)
{
    for (int i = 0; i < N_FIELDS; i++) {
        *field_ptr(w, &fields[i]) = params;
        params += field_size(c, &fields[i]);
    }
}

/* Big parameter arrays are faulted in 4 KiB at a time unless the kernel backs them with
 * huge pages; asking for them makes a first touch of BERT-mini's 45 MB several times
 * faster. Advice only: the kernel may ignore it, and the memory stays ordinary heap. */
static void advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = 2u << 20;
    uintptr_t begin = ((uintptr_t)p + huge - 1) & ~(huge - 1),
              end = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (end > begin)
        madvise((void *)begin, end - begin, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

static parley_status model_new(const bert_config *cfg, wp_vocab *vocab, int zero, bert_model **out)
{
    parley_status st;
    bert_model *m = NULL;
    *out = NULL;
    if ((st = bert_config_check(cfg, "model config")) != PARLEY_OK)
        goto fail;
    if (vocab && wp_vocab_size(vocab) != cfg->vocab_size) {
        st = pl_fail(PARLEY_ERR_CONFIG,
                     "model config: vocab_size is %d but the vocabulary has %d tokens",
                     cfg->vocab_size, wp_vocab_size(vocab));
        goto fail;
    }
    m = pl_calloc(1, sizeof *m);
    if (!m) {
        st = pl_nomem("a model");
        goto fail;
    }
    if ((st = bert_config_copy(&m->cfg, cfg)) != PARLEY_OK)
        goto fail;
    m->n_params = bert_param_count(cfg);
    m->params = pl_malloc(m->n_params * sizeof(float));
    if (!m->params) {
        st = pl_nomem("%zu parameters (%zu MiB)", m->n_params, m->n_params * sizeof(float) >> 20);
        goto fail;
    }
    advise_huge(m->params, m->n_params * sizeof(float));
    if (zero)
        memset(m->params, 0, m->n_params * sizeof(float));
    bert_weights_point(&m->w, &m->cfg, m->params);
    m->vocab = vocab;
    *out = m;
    return PARLEY_OK;
fail:
    wp_vocab_free(vocab);
    bert_model_free(m);
    return st;
}

parley_status bert_model_alloc(const bert_config *cfg, wp_vocab *vocab, bert_model **out)
{
    return model_new(cfg, vocab, 1, out);
}

parley_status bert_model_alloc_uninit(const bert_config *cfg, wp_vocab *vocab, bert_model **out)
{
    return model_new(cfg, vocab, 0, out);
}

void bert_model_free(bert_model *m)
{
    if (!m)
        return;
    bert_config_clear(&m->cfg);
    pl_free(m->params);
    wp_vocab_free(m->vocab);
    sf_free(m->sparse);
    pl_free(m);
}

parley_status bert_model_set_sparse(bert_model *m, sf_featurizer *f)
{
    if (f && (sf_sentence_size(f) != m->cfg.sparse_sent || sf_word_size(f) != m->cfg.sparse_word)) {
        parley_status st = pl_fail(PARLEY_ERR_CONFIG,
                                   "sparse features: %d sentence and %d word features, but the "
                                   "model's config says %d and %d",
                                   sf_sentence_size(f), sf_word_size(f), m->cfg.sparse_sent,
                                   m->cfg.sparse_word);
        sf_free(f);
        return st;
    }
    sf_free(m->sparse);
    m->sparse = f;
    return PARLEY_OK;
}

/* splitmix64 (Steele, Lea, Flood 2014): tiny, and good enough for initial weights. */
typedef struct rng {
    uint64_t state;
    int has_spare;
    double spare;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Standard normal by Box-Muller; each pair of uniforms gives two values. */
static double rng_normal(rng *r)
{
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u1 = (double)((rng_next(r) >> 11) + 1) * 0x1p-53; /* (0, 1]: log(u1) is finite */
    double u2 = (double)(rng_next(r) >> 11) * 0x1p-53;
    double radius = sqrt(-2.0 * log(u1)), angle = 2.0 * M_PI * u2;
    r->spare = radius * sin(angle);
    r->has_spare = 1;
    return radius * cos(angle);
}

void bert_fill_normal(float *p, size_t n, double std, unsigned long long seed)
{
    rng r = { .state = seed };
    for (size_t k = 0; k < n; k++)
        p[k] = (float)(std * rng_normal(&r));
}

void bert_model_init_random(bert_model *m, unsigned long long seed)
{
    /* BERT's initializer_range. */
    const double std = 0.02;
    rng r = { .state = seed };
    for (int i = 0; i < N_FIELDS; i++) {
        const struct field *f = &fields[i];
        float *p = *field_ptr(&m->w, f);
        size_t n = field_size(&m->cfg, f);
        for (size_t k = 0; k < n; k++)
            p[k] = f->fill == FILL_NORMAL ? (float)(std * rng_normal(&r))
                   : f->fill == FILL_ONE  ? 1.0f
                                          : 0.0f;
    }
    /* Like torch.nn.Embedding(padding_idx=pad): the [PAD] row starts at zero. */
    int pad = m->vocab ? wp_vocab_pad(m->vocab) : -1;
    if (pad >= 0 && pad < m->cfg.vocab_size)
        memset(m->w.word_emb + (size_t)pad * (size_t)m->cfg.hidden, 0,
               (size_t)m->cfg.hidden * sizeof(float));
}

void bert_model_info(const bert_model *m, parley_nlu_info *out)
{
    const bert_config *c = &m->cfg;
    *out = (parley_nlu_info){ .layers = c->layers,
                              .hidden = c->hidden,
                              .heads = c->heads,
                              .intermediate = c->intermediate,
                              .max_positions = c->max_positions,
                              .type_vocab = c->type_vocab,
                              .vocab_size = c->vocab_size,
                              .n_intents = c->n_intents,
                              .n_slot_tags = c->n_slots,
                              .n_params = m->n_params };
}
