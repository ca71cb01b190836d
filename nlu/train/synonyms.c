/* synonyms.c — the training data's synonyms in a training run: their surface forms join the
 * lookup tables of the slot types their canonical values fill, and the model records them
 * (synonyms.h says why).
 */
#include <string.h>

#include "nlu/train/synonyms.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

/* The canonical values, folded, and a table from them to their synonym's index. */
typedef struct canon_ix {
    char **folded; /* (n) */
    int n;
    pl_names ix;
} canon_ix;

static void canon_free(canon_ix *c)
{
    for (int i = 0; i < c->n; i++)
        pl_free(c->folded[i]);
    pl_free(c->folded);
    pl_names_free(&c->ix);
}

static parley_status canon_build(const ds_dataset *ds, canon_ix *c)
{
    memset(c, 0, sizeof *c);
    const int n = ds->n_synonyms;
    if (!(c->folded = pl_calloc((size_t)n + 1, sizeof *c->folded)) ||
        pl_names_reserve(&c->ix, (size_t)n + 1) != PARLEY_OK)
        return pl_nomem("the synonyms");
    for (; c->n < n; c->n++) {
        const char *name = ds->synonyms[c->n].name;
        if (!(c->folded[c->n] = bert_synonym_fold(name, strlen(name))))
            return pl_nomem("the synonyms");
        pl_names_add(&c->ix, c->folded[c->n], strlen(c->folded[c->n]), c->n);
    }
    return PARLEY_OK;
}

/* The synonym whose canonical value is text[0..len) (folded), or -1; *st on failure. */
static int canon_find(const canon_ix *c, const char *text, size_t len, parley_status *st)
{
    char *key = bert_synonym_fold(text, len);
    if (!key) {
        *st = pl_nomem("the synonyms");
        return -1;
    }
    int k = pl_names_find(&c->ix, key, strlen(key));
    pl_free(key);
    return k;
}

/* The synonym whose canonical value span sp of example e holds (its canonical value, else
 * its words: the example's text mirrors them with single spaces), or -1; *st on failure. */
static int span_canon(const canon_ix *c, const ds_example *e, const ds_span *sp, parley_status *st)
{
    if (sp->value)
        return canon_find(c, sp->value, strlen(sp->value), st);
    const size_t from = (size_t)(e->words[sp->start] - e->words[0]),
                 to = (size_t)(e->words[sp->end - 1] - e->words[0]) + strlen(e->words[sp->end - 1]);
    return canon_find(c, e->text + from, to - from, st);
}

/* Marks fills[k * n_lookups + t] where synonym k's canonical value is a value of lookup
 * table t, or of a span, in a written example, of the type table t is for. */
static parley_status mark_fills(const ds_dataset *ds, const canon_ix *c, unsigned char *fills)
{
    parley_status st = PARLEY_OK;
    const int NL = ds->n_lookups;
    for (int t = 0; t < NL && st == PARLEY_OK; t++)
        for (int v = 0; v < ds->lookups[t].n && st == PARLEY_OK; v++) {
            const char *value = ds->lookups[t].values[v];
            int k = canon_find(c, value, strlen(value), &st);
            if (k >= 0)
                fills[(size_t)k * (size_t)NL + (size_t)t] = 1;
        }
    int *table = pl_malloc(((size_t)ds->n_slots + 1) * sizeof *table);
    if (!table)
        return pl_nomem("the synonyms");
    for (int s = 0; s < ds->n_slots; s++) {
        const ds_values *l = ds_lookup_for(ds, ds->slots[s]);
        table[s] = l ? (int)(l - ds->lookups) : -1;
    }
    for (int i = 0; i < ds->n_examples && st == PARLEY_OK; i++) {
        const ds_example *e = &ds->examples[i];
        for (int s = 0; e->variant_of < 0 && s < e->n_spans && st == PARLEY_OK; s++) {
            const ds_span *sp = &e->spans[s];
            if (table[sp->slot] < 0)
                continue;
            int k = span_canon(c, e, sp, &st);
            if (k >= 0)
                fills[(size_t)k * (size_t)NL + (size_t)table[sp->slot]] = 1;
        }
    }
    pl_free(table);
    return st;
}

/* Whether table t holds `value` (folded), or *st on failure. */
static int table_holds(const ds_values *t, const char *value, parley_status *st)
{
    char *key = bert_synonym_fold(value, strlen(value));
    int found = 0;
    for (int v = 0; key && !found && v < t->n; v++) {
        char *other = bert_synonym_fold(t->values[v], strlen(t->values[v]));
        if (!other) {
            pl_free(key);
            key = NULL;
            break;
        }
        found = !strcmp(key, other);
        pl_free(other);
    }
    if (!key)
        *st = pl_nomem("the synonyms");
    pl_free(key);
    return found;
}

parley_status train_synonym_lookups(ds_dataset *ds, int *added, train_notes *notes)
{
    canon_ix c;
    int count = 0;
    const size_t NL = (size_t)ds->n_lookups;
    unsigned char *fills = NULL;
    parley_status st = canon_build(ds, &c);
    if (st == PARLEY_OK && !(fills = pl_calloc((size_t)c.n * NL + 1, 1)))
        st = pl_nomem("the synonyms");
    if (st == PARLEY_OK)
        st = mark_fills(ds, &c, fills);
    for (int k = 0; k < c.n && st == PARLEY_OK; k++)
        for (size_t t = 0; t < NL && st == PARLEY_OK; t++) {
            if (!fills[(size_t)k * NL + t])
                continue;
            const ds_values *y = &ds->synonyms[k];
            for (int v = 0; v < y->n && st == PARLEY_OK; v++) {
                if (table_holds(&ds->lookups[t], y->values[v], &st) || st != PARLEY_OK)
                    continue;
                st = ds_values_add(&ds->lookups, &ds->n_lookups, ds->lookups[t].name, y->values[v],
                                   1);
                count += st == PARLEY_OK;
            }
        }
    pl_free(fills);
    canon_free(&c);
    *added = count;
    if (st == PARLEY_OK && count && notes)
        train_note(notes,
                   "synonyms: %d surface forms joined the lookup tables of the slots their "
                   "canonical values fill",
                   count);
    return st;
}

parley_status train_synonym_variants(ds_dataset *ds, int *added, train_notes *notes)
{
    canon_ix c;
    int count = 0;
    parley_status st = canon_build(ds, &c);
    const int n0 = ds->n_examples;
    for (int i = 0; i < n0 && st == PARLEY_OK; i++)
        for (int s = 0;
             ds->examples[i].variant_of < 0 && s < ds->examples[i].n_spans && st == PARLEY_OK;
             s++) {
            const ds_example *e = &ds->examples[i];
            const ds_span *sp = &e->spans[s];
            if (ds_lookup_for(ds, ds->slots[sp->slot]))
                continue; /* the table has the surface forms: its variants put them here */
            int k = span_canon(&c, e, sp, &st);
            for (int f = 0; k >= 0 && f < ds->synonyms[k].n && st == PARLEY_OK; f++) {
                int appended = 0;
                st = ds_add_span_variant(ds, i, s, ds->synonyms[k].values[f], &appended);
                count += appended;
            }
        }
    canon_free(&c);
    *added = count;
    if (st == PARLEY_OK && count && notes)
        train_note(notes,
                   "synonyms: %d copies of examples with a slot value that has synonyms (of a "
                   "slot without a lookup table), each surface form in its place",
                   count);
    return st;
}

parley_status train_synonyms_of(const ds_dataset *ds, bert_synonyms *out)
{
    bert_synonyms_clear(out);
    for (int k = 0; k < ds->n_synonyms; k++)
        for (int v = 0; v < ds->synonyms[k].n; v++) {
            const char *from = ds->synonyms[k].values[v];
            parley_status st = bert_synonyms_add(out, from, strlen(from), ds->synonyms[k].name);
            if (st != PARLEY_OK)
                return st;
        }
    return PARLEY_OK;
}
