/* slot_values.c — the values each slot type knows, from a training set (slot_values.h). */
#include <string.h>

#include "nlu/train/slot_values.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/numwords.h"
#include "sdk/base/strbuf.h"

/* Adds the spans of slot type `slot` of the examples that are (written 1) or are not
 * (written 0) of the data; *tagged (may be NULL): how many spans. */
static parley_status add_spans(const ds_dataset *ds, int slot, int written, bert_known *k,
                               int *tagged)
{
    parley_status st = PARLEY_OK;
    for (int i = 0; i < ds->n_examples && st == PARLEY_OK; i++) {
        const ds_example *e = &ds->examples[i];
        if ((e->variant_of < 0) != written)
            continue;
        for (int s = 0; s < e->n_spans && st == PARLEY_OK; s++) {
            const ds_span *sp = &e->spans[s];
            if (sp->slot != slot)
                continue;
            if (tagged)
                ++*tagged;
            pl_strbuf b = { 0 };
            for (int w = sp->start; w < sp->end; w++)
                pl_strbuf_printf(&b, "%s%s", w > sp->start ? " " : "", e->words[w]);
            st = b.failed || !b.s ? pl_nomem("the slot values") : bert_known_add(k, b.s, b.len);
            pl_free(b.s);
            if (st == PARLEY_OK && sp->value)
                st = bert_known_add(k, sp->value, strlen(sp->value));
        }
    }
    return st;
}

/* Adds every synonym that has a value k holds already: its canonical value and surface forms;
 * *found: whether one had. */
static parley_status add_synonyms(const ds_dataset *ds, bert_known *k, int *found)
{
    parley_status st = PARLEY_OK;
    for (int y = 0; y < ds->n_synonyms && st == PARLEY_OK; y++) {
        const ds_values *syn = &ds->synonyms[y];
        int held = 0;
        for (int v = -1; v < syn->n && !held; v++) {
            const char *value = v < 0 ? syn->name : syn->values[v];
            char *f = bert_synonym_fold(value, strlen(value));
            if (!f)
                return pl_nomem("the slot values");
            held = pl_names_find(&k->ix, f, strlen(f)) >= 0;
            pl_free(f);
        }
        *found |= held;
        for (int v = -1; held && v < syn->n && st == PARLEY_OK; v++) {
            const char *value = v < 0 ? syn->name : syn->values[v];
            st = bert_known_add(k, value, strlen(value));
        }
    }
    return st;
}

/* Whether most of k's values hold a word that starts with a digit, and more of them than hold
 * a number word. */
static parley_status writes_digits(bert_known *k)
{
    int digits = 0, words = 0;
    for (int i = 0; i < k->n; i++) {
        const char *f = k->folded[i];
        int spelled = 0;
        char *d = pl_number_digits(f, strlen(f), &spelled);
        if (!d)
            return pl_nomem("the slot values");
        pl_free(d);
        words += spelled;
        for (const char *p = f; *p; p++)
            if (*p >= '0' && *p <= '9' && (p == f || p[-1] == ' ')) {
                digits++;
                break;
            }
    }
    k->digits = 2 * digits > k->n && digits > words;
    return PARLEY_OK;
}

parley_status train_slot_values_of(const ds_dataset *ds, bert_slot_values *out)
{
    parley_status st = PARLEY_OK;
    bert_slot_values_clear(out);
    for (int s = 0; s < ds->n_slots && st == PARLEY_OK; s++) {
        bert_known *k = bert_slot_values_of(out, ds->slots[s]);
        if (!k)
            return pl_nomem("the slot values");
        const ds_values *table = ds_lookup_for(ds, ds->slots[s]);
        int tagged = 0, synonyms = 0;
        st = add_spans(ds, s, 1, k, &tagged);
        /* the written examples' values (before the table) seen twice each on average */
        const int repeated = 2 * k->n <= tagged;
        for (int v = 0; table && v < table->n && st == PARLEY_OK; v++)
            st = bert_known_add(k, table->values[v], strlen(table->values[v]));
        if (st == PARLEY_OK)
            st = add_synonyms(ds, k, &synonyms);
        if (st == PARLEY_OK)
            st = add_spans(ds, s, 0, k, NULL);
        k->open |= !table && !synonyms && !repeated;
        if (st == PARLEY_OK)
            st = writes_digits(k);
    }
    return st;
}
