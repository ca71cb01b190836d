/* augment.c — data augmentation by slot-value substitution (dataset.h): variants of an
 * example with each slot value replaced by another value of its slot type, drawn either from
 * the type's lookup table (ds_augment_lookups) or from the values the data's own examples of
 * the same intent give the type (ds_augment_own_values).
 *
 * Both walk the examples in order and draw from one seeded PRNG, so a seed always makes the
 * same variants; a variant records the example it was made from (variant_of), which the
 * trainer's cross-fitting and loss weights follow.
 */
#include <string.h>

#include "nlu/data/dataset.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Scratch arrays for one synthetic example, grown as needed. */
typedef struct aug_buf {
    const char **words;
    size_t *lens;
    int *tags;
    ds_span *spans;
    int cap, n, n_spans;
} aug_buf;

static int aug_push(aug_buf *b, const char *w, size_t len, int tag)
{
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 64;
        const char **words = pl_realloc(b->words, (size_t)cap * sizeof *words);
        if (words)
            b->words = words;
        size_t *lens = pl_realloc(b->lens, (size_t)cap * sizeof *lens);
        if (lens)
            b->lens = lens;
        int *tags = pl_realloc(b->tags, (size_t)cap * sizeof *tags);
        if (tags)
            b->tags = tags;
        ds_span *spans = pl_realloc(b->spans, (size_t)cap * sizeof *spans);
        if (spans)
            b->spans = spans;
        if (!words || !lens || !tags || !spans)
            return 0;
        b->cap = cap;
    }
    b->words[b->n] = w;
    b->lens[b->n] = len;
    b->tags[b->n++] = tag;
    return 1;
}

/* Builds one variant of e into b: spans whose slot has a table (tables[slot] != NULL) get a
 * random value of it. Values are stored with single spaces between words. */
static int aug_variant(aug_buf *b, const ds_example *e, const ds_values *const *tables,
                       uint64_t *rng)
{
    b->n = b->n_spans = 0;
    int s = 0;
    for (int w = 0; w < e->n_words;) {
        if (s < e->n_spans && e->spans[s].start == w) {
            const ds_span *sp = &e->spans[s++];
            /* Spans never outnumber words, so b->spans (sized like words) has room. */
            ds_span out = { b->n, 0, sp->slot, sp->value };
            const ds_values *t = tables[sp->slot];
            if (t) {
                const char *v = t->values[splitmix64(rng) % (uint64_t)t->n];
                out.value = NULL;
                for (int first = 1; *v; first = 0) {
                    size_t len = strcspn(v, " ");
                    if (!aug_push(b, v, len, first ? 1 + 2 * sp->slot : 2 + 2 * sp->slot))
                        return 0;
                    v += len + (v[len] == ' ');
                }
            } else {
                for (int k = sp->start; k < sp->end; k++)
                    if (!aug_push(b, e->words[k], strlen(e->words[k]), e->tags[k]))
                        return 0;
            }
            out.end = b->n;
            b->spans[b->n_spans++] = out;
            w = sp->end;
        } else {
            if (!aug_push(b, e->words[w], strlen(e->words[w]), e->tags[w]))
                return 0;
            w++;
        }
    }
    return 1;
}

/* Appends up to per_example_max variants of each example present now, the spans of an
 * example of intent i drawing from tables[i * ds->n_slots + slot] (NULL: kept as written). */
static parley_status augment(ds_dataset *ds, const ds_values *const *tables, int per_example_max,
                             uint64_t seed, int *added)
{
    parley_status st = PARLEY_OK;
    aug_buf b = { 0 };
    uint64_t rng = seed;
    int count = 0;
    const int n0 = ds->n_examples;
    for (int i = 0; i < n0; i++) {
        /* A copy: ds_add may move the examples array, not what the pointers point to. */
        ds_example e = ds->examples[i];
        const ds_values *const *own = tables + (size_t)e.intent * (size_t)ds->n_slots;
        int usable = 0;
        for (int s = 0; s < e.n_spans; s++)
            usable |= own[e.spans[s].slot] != NULL;
        for (int tries = 0, made = 0;
             usable && made < per_example_max && tries < 4 * per_example_max; tries++) {
            int appended;
            if (!aug_variant(&b, &e, own, &rng)) {
                st = pl_nomem("%s: augmentation", ds->source);
                break;
            }
            if ((st = ds_add(ds, b.n, b.words, b.lens, b.tags, e.intent, b.n_spans, b.spans,
                             DS_DROP_SAME_TEXT, NULL, &appended)) != PARLEY_OK)
                break;
            if (appended)
                ds->examples[ds->n_examples - 1].variant_of = i;
            made += appended;
            count += appended;
        }
        if (st != PARLEY_OK)
            break;
    }
    *added = count;
    pl_free(b.words);
    pl_free(b.lens);
    pl_free(b.tags);
    pl_free(b.spans);
    return st;
}

static parley_status check_args(const ds_dataset *ds, int per_example_max, const char *fn)
{
    if (per_example_max < 0 || !ds->finished)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s: %s", fn,
                       per_example_max < 0 ? "negative per_example_max" : "dataset not finished");
    return PARLEY_OK;
}

/* (n_intents * n_slots) table pointers for ds, the caller's to pl_free; NULL when out of
 * memory. */
static const ds_values **table_grid(const ds_dataset *ds)
{
    const size_t n =
            (size_t)(ds->n_intents ? ds->n_intents : 1) * (size_t)(ds->n_slots ? ds->n_slots : 1);
    return pl_calloc(n, sizeof(const ds_values *));
}

parley_status ds_augment_lookups(ds_dataset *ds, int per_example_max, uint64_t seed, int *added)
{
    int count = 0;
    parley_status st = check_args(ds, per_example_max, "ds_augment_lookups");
    const ds_values **tables = st == PARLEY_OK ? table_grid(ds) : NULL;
    if (st == PARLEY_OK && !tables)
        st = pl_nomem("%s: augmentation", ds->source);
    if (st == PARLEY_OK) {
        for (int s = 0; s < ds->n_slots; s++) {
            const ds_values *t = ds_lookup_for(ds, ds->slots[s]);
            for (int i = 0; i < ds->n_intents; i++)
                tables[(size_t)i * (size_t)ds->n_slots + (size_t)s] = t && t->n ? t : NULL;
        }
        st = augment(ds, tables, per_example_max, seed, &count);
    }
    if (added)
        *added = count;
    pl_free(tables);
    return st;
}

/* Adds the words [start, end) of e, joined by single spaces, to v unless v holds them. The
 * word block mirrors e->text with NULs for spaces, so a run of words is a run of text at
 * the same offset. */
static parley_status own_value_add(ds_values *v, const ds_example *e, int start, int end)
{
    const size_t from = (size_t)(e->words[start] - e->words[0]),
                 len = (size_t)(e->words[end - 1] - e->words[0]) + strlen(e->words[end - 1]) - from;
    const char *value = e->text + from;
    for (int i = 0; i < v->n; i++)
        if (strlen(v->values[i]) == len && !memcmp(v->values[i], value, len))
            return PARLEY_OK;
    char **grown = pl_realloc(v->values, (size_t)(v->n + 1) * sizeof *grown);
    if (grown)
        v->values = grown;
    if (!grown || !(grown[v->n] = pl_strndup(value, len)))
        return PARLEY_ERR_NOMEM;
    v->n++;
    return PARLEY_OK;
}

parley_status ds_augment_own_values(ds_dataset *ds, int per_example_max, uint64_t seed, int *added)
{
    int count = 0;
    parley_status st = check_args(ds, per_example_max, "ds_augment_own_values");
    const size_t n_tables = (size_t)ds->n_intents * (size_t)ds->n_slots;
    ds_values *values = st == PARLEY_OK ? pl_calloc(n_tables ? n_tables : 1, sizeof *values) : NULL;
    const ds_values **tables = values ? table_grid(ds) : NULL;
    if (st == PARLEY_OK && !tables)
        st = pl_nomem("%s: augmentation", ds->source);
    for (int i = 0; st == PARLEY_OK && i < ds->n_examples; i++) {
        const ds_example *e = &ds->examples[i];
        for (int s = 0; e->variant_of < 0 && s < e->n_spans && st == PARLEY_OK; s++) {
            const ds_span *sp = &e->spans[s];
            if (own_value_add(&values[(size_t)e->intent * (size_t)ds->n_slots + (size_t)sp->slot],
                              e, sp->start, sp->end) != PARLEY_OK)
                st = pl_nomem("%s: augmentation", ds->source);
        }
    }
    if (st == PARLEY_OK) {
        /* A type with one value of the intent has nothing to draw but what is there. */
        for (size_t t = 0; t < n_tables; t++)
            tables[t] = values[t].n > 1 ? &values[t] : NULL;
        st = augment(ds, tables, per_example_max, seed, &count);
    }
    if (added)
        *added = count;
    for (size_t t = 0; values && t < n_tables; t++) {
        for (int v = 0; v < values[t].n; v++)
            pl_free(values[t].values[v]);
        pl_free(values[t].values);
    }
    pl_free(values);
    pl_free(tables);
    return st;
}
