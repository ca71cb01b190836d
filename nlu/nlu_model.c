/* nlu_model.c — new model directories through the public API (parley_nlu_model_create).
 *
 * It turns the params into a bert_config (shape from a config.json or from the fields, the
 * vocabulary's size, the labels with "O" added when missing), checks it as a loaded config
 * is checked, and writes a model initialized as BERT is. Allocation, initialization and the
 * files are model.c's and model_io.c's; training is nlu/train/'s.
 */
#include <stdio.h>
#include <string.h>

#include "nlu/model.h"
#include "parley/nlu.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

parley_nlu_model_params parley_nlu_model_params_default(void)
{
    return (parley_nlu_model_params){ 0 };
}

/* True when one of the n labels is NULL. */
static int has_null(const char *const *labels, int n)
{
    for (int i = 0; i < n; i++)
        if (!labels[i])
            return 1;
    return 0;
}

/* The arguments an application can get wrong before anything is read. */
static parley_status check_params(const char *dir, const parley_nlu_model_params *p)
{
    int shape = p->layers || p->hidden || p->heads || p->intermediate || p->max_positions ||
                p->type_vocab;
    if (!dir || !p->vocab)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_nlu_model_create: NULL %s",
                       dir ? "vocab" : "dir");
    if (p->n_intents < 0 || p->n_slot_tags < 0 || (p->n_intents && !p->intents) ||
        (p->n_slot_tags && !p->slot_tags) || has_null(p->intents, p->n_intents) ||
        has_null(p->slot_tags, p->n_slot_tags))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_nlu_model_create: a NULL label list or "
                                               "label, or a negative count");
    if (p->config && shape)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_nlu_model_create: config and the shape "
                                               "fields exclude each other");
    if (!p->config && !(p->layers && p->hidden && p->heads && p->intermediate))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_nlu_model_create: needs config, or all of "
                                               "layers, hidden, heads and intermediate");
    return PARLEY_OK;
}

parley_status parley_nlu_model_create(const char *dir, const parley_nlu_model_params *params,
                                      parley_nlu_info *info)
{
    parley_nlu_model_params p = params ? *params : parley_nlu_model_params_default();
    bert_config cfg = { 0 };
    wp_vocab *vocab = NULL;
    bert_model *m = NULL;
    const char **slots = NULL;
    char where[512];
    parley_status st;
    if ((st = check_params(dir, &p)) != PARLEY_OK)
        return st;
    snprintf(where, sizeof where, "new model %s", dir);
    if (p.config) {
        if ((st = bert_config_load(p.config, 1, &cfg)) != PARLEY_OK)
            goto fail;
    } else {
        cfg = (bert_config){ .layers = p.layers,
                             .hidden = p.hidden,
                             .heads = p.heads,
                             .intermediate = p.intermediate,
                             .max_positions = p.max_positions ? p.max_positions : 512,
                             .type_vocab = p.type_vocab ? p.type_vocab : 2,
                             .ln_eps = 1e-12f };
    }
    if ((st = wp_vocab_load(p.vocab, &vocab)) != PARLEY_OK)
        goto fail;
    cfg.vocab_size = wp_vocab_size(vocab);

    /* slots[0] is the "O" put first when the tags lack it. */
    if (!(slots = pl_malloc(((size_t)p.n_slot_tags + 1) * sizeof *slots))) {
        st = pl_nomem("%s: the slot tags", where);
        goto fail;
    }
    int has_o = 0;
    for (int i = 0; i < p.n_slot_tags; i++)
        has_o |= !strcmp((slots[i + 1] = p.slot_tags[i]), "O");
    slots[0] = "O";
    if ((st = bert_config_set_labels(&cfg, p.intents, p.n_intents, slots + has_o,
                                     p.n_slot_tags + !has_o)) != PARLEY_OK ||
        (st = bert_config_check(&cfg, where)) != PARLEY_OK)
        goto fail;

    st = bert_model_alloc(&cfg, vocab, &m);
    vocab = NULL; /* owned by the model now, or freed */
    if (st != PARLEY_OK)
        goto fail;
    bert_model_init_random(m, p.seed);
    if ((st = bert_model_save(m, dir)) != PARLEY_OK)
        goto fail;
    if (info)
        bert_model_info(m, info);
fail:
    bert_model_free(m);
    wp_vocab_free(vocab);
    bert_config_clear(&cfg);
    pl_free(slots);
    return st;
}
