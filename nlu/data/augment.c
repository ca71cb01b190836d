/* augment.c — data augmentation by slot-value substitution (dataset.h): variants of an
 * example with each slot value replaced by another value of its slot type, drawn either from
 * the type's lookup table (ds_augment_lookups) or from the values the data's own examples of
 * the same intent give the type (ds_augment_own_values); and one span given a value of the
 * caller's (ds_add_span_variant: the trainer's synonym copies).
 *
 * Both walk the examples in order and draw from one seeded PRNG, so a seed always makes the
 * same variants; a variant records the example it was made from (variant_of), which the
 * trainer's cross-fitting and loss weights follow.
 */
#include <stdlib.h>
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

/* The value span k of an example takes in a variant (words joined by single spaces), or
 * NULL to keep the words it has. */
typedef const char *(*value_fn)(void *ctx, int k, const ds_span *sp);

/* Builds one variant of e into b, each span taking the value pick(ctx, ...) gives it. */
static int aug_variant(aug_buf *b, const ds_example *e, value_fn pick, void *ctx)
{
    b->n = b->n_spans = 0;
    int s = 0;
    for (int w = 0; w < e->n_words;) {
        if (s < e->n_spans && e->spans[s].start == w) {
            const ds_span *sp = &e->spans[s];
            /* Spans never outnumber words, so b->spans (sized like words) has room. */
            ds_span out = { b->n, 0, sp->slot, sp->value };
            const char *v = pick(ctx, s++, sp);
            if (v) {
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

static void aug_free(aug_buf *b)
{
    pl_free(b->words);
    pl_free(b->lens);
    pl_free(b->tags);
    pl_free(b->spans);
}

/* A random value of the span's table (NULL: it has none): value_fn's context. */
typedef struct draw {
    const ds_values *const *tables;
    uint64_t *rng;
} draw;

static const char *draw_value(void *ctx, int k, const ds_span *sp)
{
    (void)k;
    const draw *d = ctx;
    const ds_values *t = d->tables[sp->slot];
    return t ? t->values[splitmix64(d->rng) % (uint64_t)t->n] : NULL;
}

/* The one span that takes a given value: value_fn's context. */
typedef struct one_span {
    int span;
    const char *value;
} one_span;

static const char *one_value(void *ctx, int k, const ds_span *sp)
{
    (void)sp;
    const one_span *o = ctx;
    return k == o->span ? o->value : NULL;
}

parley_status ds_add_span_variant(ds_dataset *ds, int example, int span, const char *value,
                                  int *appended)
{
    aug_buf b = { 0 };
    one_span o = { span, value };
    const ds_example e = ds->examples[example]; /* a copy: ds_add may move the array */
    parley_status st = aug_variant(&b, &e, one_value, &o)
                               ? ds_add(ds, b.n, b.words, b.lens, b.tags, e.intent, b.n_spans,
                                        b.spans, DS_DROP_SAME_TEXT, NULL, appended)
                               : pl_nomem("%s: a variant", ds->source);
    if (st == PARLEY_OK && *appended)
        ds->examples[ds->n_examples - 1].variant_of = example;
    aug_free(&b);
    return st;
}

/* The tables the spans of example e draw from, indexed by slot type (NULL: the span is kept
 * as written); only the entries of e's spans are read. */
typedef const ds_values *const *(*tables_fn)(void *ctx, const ds_example *e);

/* Appends up to per_example_max variants of each example present now, its spans drawing
 * from tables_of(ctx, example). */
static parley_status augment(ds_dataset *ds, tables_fn tables_of, void *ctx, int per_example_max,
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
        const ds_values *const *tables = tables_of(ctx, &ds->examples[i]);
        int usable = 0;
        for (int s = 0; s < e.n_spans; s++)
            usable |= tables[e.spans[s].slot] != NULL;
        for (int tries = 0, made = 0;
             usable && made < per_example_max && tries < 4 * per_example_max; tries++) {
            int appended;
            draw d = { tables, &rng };
            if (!aug_variant(&b, &e, draw_value, &d)) {
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
    aug_free(&b);
    return st;
}

static parley_status check_args(const ds_dataset *ds, int per_example_max, const char *fn)
{
    if (per_example_max < 0 || !ds->finished)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s: %s", fn,
                       per_example_max < 0 ? "negative per_example_max" : "dataset not finished");
    return PARLEY_OK;
}

/* ---- from lookup tables --------------------------------------------------------------- */

static const ds_values *const *lookup_tables(void *ctx, const ds_example *e)
{
    (void)e;
    return ctx;
}

parley_status ds_augment_lookups(ds_dataset *ds, int per_example_max, uint64_t seed, int *added)
{
    int count = 0;
    parley_status st = check_args(ds, per_example_max, "ds_augment_lookups");
    const ds_values **tables =
            st == PARLEY_OK ? pl_calloc((size_t)(ds->n_slots ? ds->n_slots : 1), sizeof *tables)
                            : NULL;
    if (st == PARLEY_OK && !tables)
        st = pl_nomem("%s: augmentation", ds->source);
    if (st == PARLEY_OK) {
        for (int s = 0; s < ds->n_slots; s++) {
            const ds_values *t = ds_lookup_for(ds, ds->slots[s]);
            tables[s] = t && t->n ? t : NULL;
        }
        st = augment(ds, lookup_tables, tables, per_example_max, seed, &count);
    }
    if (added)
        *added = count;
    pl_free(tables);
    return st;
}

/* ---- from the data's own values -------------------------------------------------------- */

/* One slot value of a written example: its intent and type, its text (the words joined by
 * single spaces, inside the example's text) and its place among all of them. */
typedef struct own_value {
    int intent, slot, at;
    const char *text;
    size_t len;
} own_value;

/* The distinct values of one (intent, type), in the order the examples first give them. */
typedef struct own_group {
    int intent, slot;
    ds_values values;
} own_group;

/* The groups sorted by (intent, type), and the row of tables of the example last asked for
 * (own_tables_of sets its spans' entries, and clears them at the next example: the spans
 * stay where they are when ds_add moves the examples). */
typedef struct own_tables {
    own_group *group;
    int n_group;
    const ds_values **row; /* (n_slots) */
    const ds_span *last;   /* the last example's spans */
    int n_last;
} own_tables;

static int cmp_key(int intent_a, int slot_a, int intent_b, int slot_b)
{
    return intent_a != intent_b ? (intent_a > intent_b) - (intent_a < intent_b)
                                : (slot_a > slot_b) - (slot_a < slot_b);
}

/* By intent, type, text, then place: a value's repeats follow its first. */
static int cmp_value(const void *pa, const void *pb)
{
    const own_value *a = pa, *b = pb;
    int c = cmp_key(a->intent, a->slot, b->intent, b->slot);
    if (!c)
        c = memcmp(a->text, b->text, a->len < b->len ? a->len : b->len);
    if (!c)
        c = (a->len > b->len) - (a->len < b->len);
    return c ? c : (a->at > b->at) - (a->at < b->at);
}

static int cmp_place(const void *pa, const void *pb)
{
    const own_value *a = pa, *b = pb;
    return (a->at > b->at) - (a->at < b->at);
}

static int cmp_group(const void *pa, const void *pb)
{
    const own_group *a = pa, *b = pb;
    return cmp_key(a->intent, a->slot, b->intent, b->slot);
}

static const ds_values *own_table(const own_tables *t, int intent, int slot)
{
    const own_group key = { intent, slot, { 0 } };
    const own_group *g = bsearch(&key, t->group, (size_t)t->n_group, sizeof key, cmp_group);
    /* A type with one value of the intent has nothing to draw but what is there. */
    return g && g->values.n > 1 ? &g->values : NULL;
}

static const ds_values *const *own_tables_of(void *ctx, const ds_example *e)
{
    own_tables *t = ctx;
    for (int s = 0; s < t->n_last; s++)
        t->row[t->last[s].slot] = NULL;
    for (int s = 0; s < e->n_spans; s++)
        t->row[e->spans[s].slot] = own_table(t, e->intent, e->spans[s].slot);
    t->last = e->spans;
    t->n_last = e->n_spans;
    return t->row;
}

/* The values of the written examples' spans (*out, *n; the caller's to pl_free). The word
 * block mirrors e->text with NULs for spaces, so a run of words is a run of text at the
 * same offset. */
static parley_status own_values_of(const ds_dataset *ds, own_value **out, int *n)
{
    int count = 0;
    for (int i = 0; i < ds->n_examples; i++)
        count += ds->examples[i].variant_of < 0 ? ds->examples[i].n_spans : 0;
    own_value *v = pl_malloc(((size_t)count + 1) * sizeof *v);
    if (!v)
        return PARLEY_ERR_NOMEM;
    count = 0;
    for (int i = 0; i < ds->n_examples; i++) {
        const ds_example *e = &ds->examples[i];
        for (int s = 0; e->variant_of < 0 && s < e->n_spans; s++) {
            const ds_span *sp = &e->spans[s];
            const size_t from = (size_t)(e->words[sp->start] - e->words[0]),
                         to = (size_t)(e->words[sp->end - 1] - e->words[0]) +
                              strlen(e->words[sp->end - 1]);
            v[count] = (own_value){ e->intent, sp->slot, count, e->text + from, to - from };
            count++;
        }
    }
    *out = v;
    *n = count;
    return PARLEY_OK;
}

/* Groups v[0..n) (sorted by cmp_value) into t->group: each (intent, type) with its distinct
 * texts, copied, in the order of their first place. v is reordered. */
static parley_status own_group_values(own_tables *t, own_value *v, int n)
{
    t->group = pl_calloc((size_t)n + 1, sizeof *t->group);
    if (!t->group)
        return PARLEY_ERR_NOMEM;
    for (int i = 0; i < n;) {
        int j = i, distinct = 0;
        /* Compacted in place: a write lands at or before j - 1's place, and at j - 1 itself
         * only as itself, so v[j - 1] is as sorted when v[j] meets it. */
        for (; j < n && !cmp_key(v[j].intent, v[j].slot, v[i].intent, v[i].slot); j++)
            if (j == i || v[j].len != v[j - 1].len || memcmp(v[j].text, v[j - 1].text, v[j].len))
                v[i + distinct++] = v[j]; /* the first of its text: the least place */
        qsort(v + i, (size_t)distinct, sizeof *v, cmp_place);
        own_group *g = &t->group[t->n_group++];
        *g = (own_group){ v[i].intent, v[i].slot, { 0 } };
        if (!(g->values.values = pl_calloc((size_t)distinct, sizeof *g->values.values)))
            return PARLEY_ERR_NOMEM;
        for (; g->values.n < distinct; g->values.n++) {
            const own_value *x = &v[i + g->values.n];
            if (!(g->values.values[g->values.n] = pl_strndup(x->text, x->len)))
                return PARLEY_ERR_NOMEM;
        }
        i = j;
    }
    return PARLEY_OK;
}

static void own_tables_free(own_tables *t)
{
    for (int g = 0; t->group && g < t->n_group; g++) {
        for (int k = 0; k < t->group[g].values.n; k++)
            pl_free(t->group[g].values.values[k]);
        pl_free(t->group[g].values.values);
    }
    pl_free(t->group);
    pl_free(t->row);
}

parley_status ds_augment_own_values(ds_dataset *ds, int per_example_max, uint64_t seed, int *added)
{
    int count = 0, n = 0;
    own_value *v = NULL;
    own_tables t = { 0 };
    parley_status st = check_args(ds, per_example_max, "ds_augment_own_values");
    if (st == PARLEY_OK) {
        t.row = pl_calloc((size_t)(ds->n_slots ? ds->n_slots : 1), sizeof *t.row);
        if (!t.row || own_values_of(ds, &v, &n) != PARLEY_OK)
            st = PARLEY_ERR_NOMEM;
        else {
            qsort(v, (size_t)n, sizeof *v, cmp_value);
            st = own_group_values(&t, v, n);
        }
        if (st != PARLEY_OK)
            st = pl_nomem("%s: augmentation", ds->source);
    }
    if (st == PARLEY_OK)
        st = augment(ds, own_tables_of, &t, per_example_max, seed, &count);
    if (added)
        *added = count;
    pl_free(v);
    own_tables_free(&t);
    return st;
}
