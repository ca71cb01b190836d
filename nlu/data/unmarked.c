/* unmarked.c — values of a lookup table that an example holds without marking them
 * (unmarked.h).
 *
 * Every value of every table is normalized once (each word lower-cased in ASCII and stripped
 * of the punctuation at its ends, words joined by single spaces) into one sorted array; then
 * each run of up to the longest value's word count in each example is normalized the same
 * way and searched for, when none of its words is tagged; the longest value found at a word
 * is reported, and the search goes on after it.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/data/unmarked.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

typedef struct entry {
    char *key;                 /* the normalized value */
    const char *table, *value; /* borrowed from the data set */
} entry;

/* Appends word w normalized to buf at *len (room checked by the caller). */
static void put_word(char *buf, size_t *len, const char *w, size_t n)
{
    while (n > 0 && ispunct((unsigned char)w[0]))
        w++, n--;
    while (n > 0 && ispunct((unsigned char)w[n - 1]))
        n--;
    if (*len > 0)
        buf[(*len)++] = ' ';
    for (size_t i = 0; i < n; i++)
        buf[(*len)++] = (char)tolower((unsigned char)w[i]);
    buf[*len] = '\0';
}

/* The normalized form of a value (a fresh string), and its word count in *n_words. */
static char *value_key(const char *value, int *n_words)
{
    char *key = pl_malloc(strlen(value) + 1);
    size_t len = 0;
    *n_words = 0;
    if (!key)
        return NULL;
    key[0] = '\0';
    for (const char *p = value; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *w = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (p > w) {
            put_word(key, &len, w, (size_t)(p - w));
            (*n_words)++;
        }
    }
    return key;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->key, ((const entry *)b)->key);
}

static void entries_free(entry *e, size_t n)
{
    for (size_t i = 0; e && i < n; i++)
        pl_free(e[i].key);
    pl_free(e);
}

/* The sorted entries of every table's values, and the most words of one. */
static parley_status build(const ds_dataset *ds, entry **out, size_t *n_out, int *longest)
{
    size_t n = 0, k = 0;
    for (int t = 0; t < ds->n_lookups; t++)
        n += (size_t)ds->lookups[t].n;
    entry *e = pl_calloc(n ? n : 1, sizeof *e);
    if (!e)
        return pl_nomem("%s: the lookup tables", ds->source);
    *longest = 0;
    for (int t = 0; t < ds->n_lookups; t++)
        for (int v = 0; v < ds->lookups[t].n; v++) {
            int words;
            char *key = value_key(ds->lookups[t].values[v], &words);
            if (!key) {
                entries_free(e, k);
                return pl_nomem("%s: the lookup tables", ds->source);
            }
            if (words == 0 || !key[0]) {
                pl_free(key);
                continue;
            }
            e[k++] = (entry){ key, ds->lookups[t].name, ds->lookups[t].values[v] };
            *longest = words > *longest ? words : *longest;
        }
    qsort(e, k, sizeof *e, by_key);
    *out = e;
    *n_out = k;
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

parley_status ds_unmarked_values(const ds_dataset *ds, ds_unmarked **out, int *n_out)
{
    entry *e = NULL;
    size_t n_entries = 0;
    int longest = 0, n = 0, cap = 0;
    char *buf = NULL;
    ds_unmarked *list = NULL;
    *out = NULL;
    *n_out = 0;
    parley_status st = build(ds, &e, &n_entries, &longest);
    for (int i = 0; st == PARLEY_OK && n_entries > 0 && i < ds->n_examples; i++) {
        const ds_example *x = &ds->examples[i];
        pl_free(buf);
        if (!(buf = pl_malloc(strlen(x->text) + 1))) {
            st = pl_nomem("%s: example %d", ds->source, i + 1);
            break;
        }
        for (int w = 0; w < x->n_words && st == PARLEY_OK; w++) {
            const entry *found = NULL;
            int words = 0;
            size_t len = 0;
            for (int k = 0; k < longest && w + k < x->n_words && !x->tags[w + k]; k++) {
                put_word(buf, &len, x->words[w + k], strlen(x->words[w + k]));
                const entry key = { buf, NULL, NULL },
                            *hit = bsearch(&key, e, n_entries, sizeof *e, by_key);
                if (hit)
                    found = hit, words = k + 1;
            }
            if (found) { /* the longest value that starts here; the next search after it */
                st = push(&list, &n, &cap, (ds_unmarked){ i, found->table, found->value });
                w += words - 1;
            }
        }
    }
    pl_free(buf);
    entries_free(e, n_entries);
    if (st != PARLEY_OK) {
        pl_free(list);
        return st;
    }
    *out = list;
    *n_out = n;
    return PARLEY_OK;
}
