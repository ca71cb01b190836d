/* data_read.c — parley_data_read(): a data set's examples as the trainer reads them, for
 * tools that check training data (`parley check`).
 *
 * The data set is loaded by ds_load (dataset.h: errors name FILE:LINE:COL) and copied into
 * one flat public struct, so the caller sees texts, intents and the slot of every
 * annotated value without the data module's internals, with the lookup values its examples
 * hold unmarked (unmarked.h). Nothing here judges the data.
 */
#include <string.h>

#include "nlu/data/dataset.h"
#include "nlu/data/unmarked.h"
#include "parley/train.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

typedef struct data_box {
    parley_data d; /* first, so a parley_data * is a data_box * */
    ds_dataset *ds;
    parley_data_example *examples;
    const char **slots; /* every example's slot names, one array */
    parley_data_unmarked *unmarked;
    ds_unmarked *found; /* (d.n_unmarked) their values */
} data_box;

parley_status parley_data_read(const char *path, parley_data **out)
{
    if (!path || !out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_data_read: NULL argument");
    *out = NULL;
    data_box *b = pl_calloc(1, sizeof *b);
    if (!b)
        return pl_nomem("%s: the data set", path);
    parley_status st = ds_load(path, &b->ds);
    if (st != PARLEY_OK) {
        pl_free(b);
        return st;
    }
    const ds_dataset *ds = b->ds;
    size_t n_spans = 0;
    for (int i = 0; i < ds->n_examples; i++)
        n_spans += (size_t)ds->examples[i].n_spans;
    b->examples = pl_calloc(ds->n_examples ? (size_t)ds->n_examples : 1, sizeof *b->examples);
    b->slots = pl_calloc(n_spans ? n_spans : 1, sizeof *b->slots);
    if (!b->examples || !b->slots) {
        parley_data_free(&b->d);
        return pl_nomem("%s: the data set", path);
    }
    const char **slot = b->slots;
    for (int i = 0; i < ds->n_examples; i++) {
        const ds_example *e = &ds->examples[i];
        parley_data_example *x = &b->examples[i];
        x->text = e->text;
        x->intent = ds->intents[e->intent];
        x->n_slots = e->n_spans;
        x->slots = slot;
        for (int s = 0; s < e->n_spans; s++)
            *slot++ = ds->slots[e->spans[s].slot];
    }
    int n_found = 0;
    if ((st = ds_unmarked_values(ds, &b->found, &n_found)) != PARLEY_OK) {
        parley_data_free(&b->d);
        return st;
    }
    b->d.n_unmarked = n_found;
    b->unmarked = pl_calloc(n_found ? (size_t)n_found : 1, sizeof *b->unmarked);
    for (int i = 0; b->unmarked && i < n_found; i++)
        b->unmarked[i] =
                (parley_data_unmarked){ b->found[i].example, b->found[i].table, b->found[i].value };
    if (!b->unmarked) {
        parley_data_free(&b->d);
        return pl_nomem("%s: the data set", path);
    }
    b->d.n_examples = ds->n_examples;
    b->d.examples = b->examples;
    b->d.n_duplicates = ds->n_duplicates;
    b->d.unmarked = b->unmarked;
    *out = &b->d;
    return PARLEY_OK;
}

void parley_data_free(parley_data *data)
{
    data_box *b = (data_box *)data;
    if (!b)
        return;
    ds_free(b->ds);
    pl_free(b->examples);
    pl_free(b->slots);
    pl_free(b->unmarked);
    ds_unmarked_free(b->found, b->d.n_unmarked);
    pl_free(b);
}
