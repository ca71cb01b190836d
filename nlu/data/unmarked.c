/* unmarked.c — values of a lookup table that an example holds without marking them
 * (unmarked.h).
 *
 * The tables become a featurizer of lookup tables alone (nlu/sparse/sparse.h), so an example's
 * words are compared with their values exactly as the model's lookup features compare them
 * (sf_lookup_matches). Each run it reports is mapped to the example's words by bytes (the
 * text is its words joined by single spaces); where none of them is tagged, the longest run
 * that starts at a word is kept, and the search goes on after it.
 */
#include <stdlib.h>
#include <string.h>

#include "nlu/data/unmarked.h"
#include "nlu/sparse/sparse.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

/* The longest untagged run found that starts at a word. */
typedef struct best {
    int n_words, table;
    char *value; /* owned until it joins the list */
} best;

/* One example being searched. */
typedef struct scan {
    const ds_example *x;
    size_t *start; /* (n_words) the byte where each word starts in x->text */
    best *at;      /* (n_words) */
} scan;

/* The word of s->x that holds byte b of its text. */
static int word_at(const scan *s, size_t b)
{
    int lo = 0, hi = s->x->n_words - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (s->start[mid] <= b)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static parley_status on_match(void *arg, int table, size_t from, size_t to, const char *value)
{
    scan *s = arg;
    const int a = word_at(s, from), b = word_at(s, to - 1);
    for (int w = a; w <= b; w++)
        if (s->x->tags[w])
            return PARLEY_OK;
    if (b - a + 1 <= s->at[a].n_words)
        return PARLEY_OK;
    char *v = pl_strdup(value);
    if (!v)
        return pl_nomem("the unmarked lookup values");
    pl_free(s->at[a].value);
    s->at[a] = (best){ b - a + 1, table, v };
    return PARLEY_OK;
}

static parley_status push(ds_unmarked **list, int *n, int *cap, ds_unmarked u)
{
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 8;
        ds_unmarked *grown = pl_realloc(*list, (size_t)c * sizeof *grown);
        if (!grown)
            return pl_nomem("the unmarked lookup values");
        *list = grown;
        *cap = c;
    }
    (*list)[(*n)++] = u;
    return PARLEY_OK;
}

/* Searches example i of ds with the matcher f and appends what it holds unmarked. */
static parley_status search(const ds_dataset *ds, const sf_featurizer *f, int i, ds_unmarked **list,
                            int *n, int *cap)
{
    const ds_example *x = &ds->examples[i];
    if (x->n_words == 0)
        return PARLEY_OK;
    scan s = { x, pl_malloc((size_t)x->n_words * sizeof *s.start),
               pl_calloc((size_t)x->n_words, sizeof *s.at) };
    parley_status st = PARLEY_OK;
    if (!s.start || !s.at)
        st = pl_nomem("%s: example %d", ds->source, i + 1);
    for (int w = 0, b = 0; st == PARLEY_OK && w < x->n_words; w++) {
        s.start[w] = (size_t)b;
        b += (int)strlen(x->words[w]) + 1;
    }
    if (st == PARLEY_OK)
        st = sf_lookup_matches(f, x->text, strlen(x->text), on_match, &s);
    for (int w = 0; st == PARLEY_OK && w < x->n_words; w++)
        if (s.at[w].n_words) {
            const best *b = &s.at[w];
            if ((st = push(list, n, cap,
                           (ds_unmarked){ i, ds->lookups[b->table].name, b->value })) == PARLEY_OK)
                s.at[w].value = NULL;
            w += b->n_words - 1;
        }
    for (int w = 0; s.at && w < x->n_words; w++)
        pl_free(s.at[w].value);
    pl_free(s.start);
    pl_free(s.at);
    return st;
}

/* A featurizer of ds's lookup tables alone. */
static parley_status matcher(const ds_dataset *ds, sf_featurizer **out)
{
    sf_table *t = pl_calloc((size_t)ds->n_lookups, sizeof *t);
    if (!t)
        return pl_nomem("%s: the lookup tables", ds->source);
    for (int i = 0; i < ds->n_lookups; i++)
        t[i] = (sf_table){ ds->lookups[i].name, ds->lookups[i].n,
                           (const char *const *)ds->lookups[i].values };
    const sf_build_params p = { .n_lookups = ds->n_lookups, .lookups = t };
    parley_status st = sf_build(NULL, 0, &p, out);
    pl_free(t);
    return st;
}

parley_status ds_unmarked_values(const ds_dataset *ds, ds_unmarked **out, int *n_out)
{
    sf_featurizer *f = NULL;
    ds_unmarked *list = NULL;
    int n = 0, cap = 0;
    *out = NULL;
    *n_out = 0;
    if (ds->n_lookups == 0)
        return PARLEY_OK;
    parley_status st = matcher(ds, &f);
    for (int i = 0; st == PARLEY_OK && i < ds->n_examples; i++)
        st = search(ds, f, i, &list, &n, &cap);
    sf_free(f);
    if (st != PARLEY_OK) {
        ds_unmarked_free(list, n);
        return st;
    }
    *out = list;
    *n_out = n;
    return PARLEY_OK;
}

void ds_unmarked_free(ds_unmarked *list, int n)
{
    for (int i = 0; list && i < n; i++)
        pl_free(list[i].value);
    pl_free(list);
}
