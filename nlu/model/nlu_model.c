/* nlu_model.c — model directories through the public API: new ones
 * (parley_nlu_model_create) and the labels of existing ones (parley_nlu_labels_read).
 *
 * It turns the params into a bert_config (shape from a config.json or from the fields, the
 * vocabulary's size, the labels with "O" added when missing), checks it as a loaded config
 * is checked, and writes a model initialized as BERT is. Allocation, initialization and the
 * files are model.c's and model_io.c's; training is nlu/train/'s.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/model/model.h"
#include "parley/nlu.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"

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
    char where[512], staged[PATH_MAX];
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
    /* Written beside dir, then swapped in whole: a failure leaves dir as it was. */
    if ((st = pl_dir_only(dir, bert_model_dir_entries)) != PARLEY_OK ||
        (st = pl_dir_staging(dir, staged, sizeof staged)) != PARLEY_OK ||
        (st = pl_remove_tree(staged)) != PARLEY_OK)
        goto fail;
    if ((st = bert_model_save(m, staged)) != PARLEY_OK ||
        (st = pl_dir_replace(staged, dir, bert_model_dir_entries)) != PARLEY_OK) {
        pl_remove_tree(staged);
        goto fail;
    }
    if (info)
        bert_model_info(m, info);
fail:
    bert_model_free(m);
    wp_vocab_free(vocab);
    bert_config_clear(&cfg);
    pl_free(slots);
    return st;
}

/* The labels and the strings they point to, in one allocation freed by pl_free. */
typedef struct labels_block {
    parley_nlu_labels l;
    const char *names[]; /* intents, then entities; the strings follow */
} labels_block;

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

parley_status parley_nlu_labels_read(const char *model_dir, parley_nlu_labels **out)
{
    if (!model_dir || !out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_nlu_labels_read: NULL argument");
    *out = NULL;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/config.json", model_dir) >= (int)sizeof path)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s: path too long", model_dir);
    bert_config c = { 0 };
    parley_status st = bert_config_load(path, 0, &c);
    if (st != PARLEY_OK)
        return st;
    size_t n_names = (size_t)c.n_intents + (size_t)c.n_slots, bytes = 0;
    for (int i = 0; i < c.n_intents; i++)
        bytes += strlen(c.intent_labels[i]) + 1;
    for (int i = 0; i < c.n_slots; i++)
        bytes += strlen(c.slot_labels[i]) + 1;
    labels_block *b = pl_malloc(sizeof *b + n_names * sizeof(char *) + bytes);
    if (!b) {
        bert_config_clear(&c);
        return pl_nomem("%s: its labels", path);
    }
    char *text = (char *)(b->names + n_names);
    const char **names = b->names;
    for (int i = 0; i < c.n_intents; i++, text += strlen(text) + 1)
        names[i] = strcpy(text, c.intent_labels[i]);
    /* The entity of every B-/I- tag, then sorted and made unique. */
    const char **ents = names + c.n_intents;
    size_t n = 0;
    for (int i = 0; i < c.n_slots; i++) {
        const char *t = c.slot_labels[i];
        if ((t[0] == 'B' || t[0] == 'I') && t[1] == '-') {
            ents[n++] = strcpy(text, t + 2);
            text += strlen(text) + 1;
        }
    }
    qsort(ents, n, sizeof *ents, by_string);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || strcmp(ents[u - 1], ents[i]))
            ents[u++] = ents[i];
    b->l = (parley_nlu_labels){ c.n_intents, names, (int)u, ents };
    bert_config_clear(&c);
    *out = &b->l;
    return PARLEY_OK;
}

void parley_nlu_labels_free(parley_nlu_labels *labels)
{
    pl_free(labels); /* the first member of its labels_block */
}
