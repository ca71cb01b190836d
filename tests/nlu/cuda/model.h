/* model.h — a small random joint model for the GPU tests, built in memory.
 *
 * Weights are uniform in [-scale, scale] (LayerNorm weights around 1), larger than BERT's
 * init so that logits spread and differences between the CPU and GPU paths show.
 */
#ifndef TESTS_NLU_CUDA_MODEL_H
#define TESTS_NLU_CUDA_MODEL_H

#include <stdio.h>
#include <stdlib.h>

#include "nlu/model.h"

static bert_model *gpu_test_model(int V, int H, int L, int NH, int I, int P, int NI, int NS,
                                  float scale, unsigned seed)
{
    static const char *const intents[] = { "i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7" };
    static const char *const slots[] = { "O", "B-a", "I-a", "B-b", "I-b", "B-c", "I-c", "B-d" };
    bert_config c = { .vocab_size = V,
                      .hidden = H,
                      .layers = L,
                      .heads = NH,
                      .intermediate = I,
                      .max_positions = P,
                      .type_vocab = 2,
                      .ln_eps = 1e-12f };
    bert_model *m = NULL;
    if (NI > 8 || NS > 8 || bert_config_set_labels(&c, intents, NI, slots, NS) != PARLEY_OK ||
        bert_model_alloc(&c, NULL, &m) != PARLEY_OK) {
        fprintf(stderr, "gpu_test_model: %s\n", parley_errmsg());
        bert_config_clear(&c);
        return NULL;
    }
    bert_config_clear(&c);
    srand(seed);
    for (size_t i = 0; i < m->n_params; i++)
        m->params[i] = scale * (2.0f * rand() / (float)RAND_MAX - 1.0f);
    const bert_weights *w = &m->w;
    for (int i = 0; i < H; i++)
        w->emb_ln_w[i] += 1.0f;
    for (int i = 0; i < L * H; i++)
        w->ln1_w[i] += 1.0f, w->ln2_w[i] += 1.0f;
    return m;
}

#endif
