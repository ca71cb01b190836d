/* random_model.h — random numbers and small random joint models for the NLU tests.
 *
 * test_urand() is a xorshift64 generator each test seeds with test_seed(), so a run repeats
 * exactly. test_random_model() builds a model in memory with weights uniform in
 * [-scale, scale] and every LayerNorm gain in [1 - scale, 1 + scale]: larger than BERT's init,
 * so that logits spread and differences between implementations show.
 */
#ifndef TESTS_NLU_RANDOM_MODEL_H
#define TESTS_NLU_RANDOM_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "nlu/model/model.h"

static uint64_t test_rng_state = 0x9e3779b97f4a7c15ull;

static inline void test_seed(uint64_t seed)
{
    test_rng_state = seed ? seed : 0x9e3779b97f4a7c15ull; /* xorshift needs a nonzero state */
}

/* Uniform in [0, 1). */
static inline double test_urand(void)
{
    test_rng_state ^= test_rng_state << 13;
    test_rng_state ^= test_rng_state >> 7;
    test_rng_state ^= test_rng_state << 17;
    return (double)(test_rng_state >> 11) / 9007199254740992.0;
}

/* Uniform in [-scale, scale). */
static inline float test_uniform(double scale)
{
    return (float)((test_urand() * 2 - 1) * scale);
}

typedef struct test_shape {
    int V, H, L, NH, I, P; /* vocabulary, hidden, layers, heads, intermediate, positions */
    int NI, NS;            /* intents and slot tags, at most 8 each */
} test_shape;

/* A model of shape s drawn from test_urand (the caller frees it with bert_model_free), or
 * NULL after printing why. */
static inline bert_model *test_random_model(test_shape s, double scale)
{
    static const char *const intents[] = { "i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7" };
    static const char *const slots[] = { "O", "B-a", "I-a", "B-b", "I-b", "B-c", "I-c", "B-d" };
    bert_config c = { .vocab_size = s.V,
                      .hidden = s.H,
                      .layers = s.L,
                      .heads = s.NH,
                      .intermediate = s.I,
                      .max_positions = s.P,
                      .type_vocab = 2,
                      .ln_eps = 1e-12f };
    bert_model *m = NULL;
    if (s.NI > 8 || s.NS > 8 ||
        bert_config_set_labels(&c, intents, s.NI, slots, s.NS) != PARLEY_OK ||
        bert_model_alloc(&c, NULL, &m) != PARLEY_OK) {
        fprintf(stderr, "test_random_model: %s\n", parley_errmsg());
        bert_config_clear(&c);
        return NULL;
    }
    bert_config_clear(&c);
    for (size_t i = 0; i < m->n_params; i++)
        m->params[i] = test_uniform(scale);
    const bert_weights *w = &m->w;
    for (int i = 0; i < s.H; i++)
        w->emb_ln_w[i] += 1.0f;
    for (int i = 0; i < s.L * s.H; i++)
        w->ln1_w[i] += 1.0f, w->ln2_w[i] += 1.0f;
    return m;
}

#endif
