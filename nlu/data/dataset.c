/* dataset.c — the in-memory annotated dataset: building, label lists, duplicates,
 * and loading by path (augmentation: augment.c, lowercase.c).
 *
 * The file formats live in rasa.c and jointbert.c; they call the builder here
 * (ds_new, ds_intern_*, ds_add, ds_finish). This file knows nothing about YAML or
 * seq.in. It is not a batcher or a tokenizer: the trainer turns examples into pieces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <utf8proc.h>

#include "nlu/data/dataset.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

/* Open-addressing set of example indices keyed by their text, for duplicate detection. */
struct ds_seen {
    int *slot;  /* (cap) example index + 1, 0 = empty */
    size_t cap; /* a power of two */
    size_t used;
};

/* ---- characters --------------------------------------------------------------------- */

size_t ds_space_len(const char *s, size_t i, size_t len)
{
    unsigned char c = (unsigned char)s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        return 1;
    if (c < 0x80)
        return 0;
    utf8proc_int32_t cp;
    utf8proc_ssize_t n =
            utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &cp);
    if (n <= 0)
        return 0;
    utf8proc_category_t cat = utf8proc_category(cp);
    return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP
                   ? (size_t)n
                   : 0;
}

/* ---- building ----------------------------------------------------------------------- */

parley_status ds_new(const char *source, ds_dataset **out)
{
    ds_dataset *ds = pl_calloc(1, sizeof *ds);
    *out = NULL;
    if (!ds || !(ds->source = pl_strdup(source ? source : ""))) {
        pl_free(ds);
        return pl_nomem("%s: the dataset", source ? source : "");
    }
    *out = ds;
    return PARLEY_OK;
}

static void example_clear(ds_example *e)
{
    for (int i = 0; i < e->n_spans; i++)
        pl_free(e->spans[i].value);
    pl_free(e->spans);
    pl_free(e->tags);
    pl_free(e->words);
    pl_free(e->text); /* also holds the words' bytes */
    memset(e, 0, sizeof *e);
}

static void values_free(ds_values *v, int n)
{
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < v[i].n; j++)
            pl_free(v[i].values[j]);
        pl_free(v[i].values);
        pl_free(v[i].name);
    }
    pl_free(v);
}

static void names_free(char **names, int n)
{
    for (int i = 0; i < n; i++)
        pl_free(names[i]);
    pl_free(names);
}

void ds_free(ds_dataset *ds)
{
    if (!ds)
        return;
    for (int i = 0; i < ds->n_examples; i++)
        example_clear(&ds->examples[i]);
    pl_free(ds->examples);
    names_free(ds->intents, ds->n_intents);
    names_free(ds->slots, ds->n_slots);
    names_free(ds->tags, ds->n_tags);
    values_free(ds->synonyms, ds->n_synonyms);
    values_free(ds->lookups, ds->n_lookups);
    values_free(ds->regexes, ds->n_regexes);
    if (ds->seen)
        pl_free(ds->seen->slot);
    pl_free(ds->seen);
    pl_free(ds->source);
    pl_names_free(&ds->intent_ix);
    pl_names_free(&ds->slot_ix);
    pl_free(ds);
}

static int find_name(char *const *names, int n, const char *name, size_t len);

/* Finds name[0..len) in names through its table `ix`, or adds it; once the data set is
 * finished (names sorted, tables gone) only finds, by bisection. Either way O(1) or
 * O(log n), so building a data set is linear in its size. */
static parley_status intern(ds_dataset *ds, char ***names, int *n, pl_names *ix, const char *what,
                            const char *name, size_t len, int *id)
{
    if (ds->finished) {
        if ((*id = find_name(*names, *n, name, len)) >= 0)
            return PARLEY_OK;
        return pl_fail(PARLEY_ERR_NOT_FOUND, "%s: unknown %s '%.*s'", ds->source, what, (int)len,
                       name);
    }
    if ((*id = pl_names_find(ix, name, len)) >= 0)
        return PARLEY_OK;
    if (*n == 0 || !(*n & (*n - 1))) { /* at 1, 2, 4, ...: the array doubles */
        char **grown = pl_realloc(*names, (size_t)(*n ? 2 * *n : 1) * sizeof *grown);
        if (!grown)
            return pl_nomem("%s: %s names", ds->source, what);
        *names = grown;
    }
    if (pl_names_reserve(ix, (size_t)*n + 1) != PARLEY_OK ||
        !((*names)[*n] = pl_strndup(name, len)))
        return pl_nomem("%s: %s names", ds->source, what);
    pl_names_add(ix, (*names)[*n], len, *n);
    *id = (*n)++;
    return PARLEY_OK;
}

parley_status ds_intern_intent(ds_dataset *ds, const char *name, size_t len, int *id)
{
    return intern(ds, &ds->intents, &ds->n_intents, &ds->intent_ix, "intent", name, len, id);
}

parley_status ds_intern_slot(ds_dataset *ds, const char *name, size_t len, int *id)
{
    return intern(ds, &ds->slots, &ds->n_slots, &ds->slot_ix, "slot type", name, len, id);
}

static uint64_t text_hash(const char *s)
{
    return pl_fnv(PL_FNV_SEED, s, strlen(s));
}

static parley_status seen_insert(ds_dataset *ds, int index)
{
    struct ds_seen *s = ds->seen;
    if (2 * (s->used + 1) > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        int *slot = pl_calloc(cap, sizeof *slot);
        if (!slot)
            return pl_nomem("%s: the duplicate index", ds->source);
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i]) {
                size_t j = text_hash(ds->examples[s->slot[i] - 1].text) & (cap - 1);
                while (slot[j])
                    j = (j + 1) & (cap - 1);
                slot[j] = s->slot[i];
            }
        pl_free(s->slot);
        s->slot = slot;
        s->cap = cap;
    }
    size_t j = text_hash(ds->examples[index].text) & (s->cap - 1);
    while (s->slot[j])
        j = (j + 1) & (s->cap - 1);
    s->slot[j] = index + 1;
    s->used++;
    return PARLEY_OK;
}

/* How an example compares with the earlier ones of the same text. */
static ds_add_result seen_classify(const ds_dataset *ds, const ds_example *e)
{
    const struct ds_seen *s = ds->seen;
    ds_add_result r = DS_ADDED;
    if (!s->cap)
        return r;
    for (size_t j = text_hash(e->text) & (s->cap - 1); s->slot[j]; j = (j + 1) & (s->cap - 1)) {
        const ds_example *o = &ds->examples[s->slot[j] - 1];
        if (strcmp(o->text, e->text) != 0)
            continue;
        if (o->intent == e->intent &&
            !memcmp(o->tags, e->tags, (size_t)e->n_words * sizeof *e->tags))
            return DS_DUPLICATE;
        r = DS_CONFLICT;
    }
    return r;
}

/* Fills e from the words, tags and spans (deep copies). */
static parley_status example_build(ds_example *e, int n_words, const char *const *words,
                                   const size_t *lens, const int *tags, int intent, int n_spans,
                                   const ds_span *spans)
{
    size_t total = 0;
    for (int i = 0; i < n_words; i++)
        total += lens[i] + 1;
    /* text (words + spaces + NUL), then the words again, each NUL-terminated */
    e->text = pl_malloc(2 * total + 1);
    e->words = pl_malloc((size_t)(n_words ? n_words : 1) * sizeof *e->words);
    e->tags = pl_malloc((size_t)(n_words ? n_words : 1) * sizeof *e->tags);
    e->spans = n_spans ? pl_calloc((size_t)n_spans, sizeof *e->spans) : NULL;
    if (!e->text || !e->words || !e->tags || (n_spans && !e->spans))
        return PARLEY_ERR_NOMEM;
    char *t = e->text, *w = e->text + total + 1;
    for (int i = 0; i < n_words; i++) {
        memcpy(t, words[i], lens[i]);
        t += lens[i];
        *t++ = ' ';
        memcpy(w, words[i], lens[i]);
        e->words[i] = w;
        w += lens[i];
        *w++ = '\0';
    }
    t[n_words ? -1 : 0] = '\0';
    memcpy(e->tags, tags, (size_t)n_words * sizeof *tags);
    e->n_words = n_words;
    e->intent = intent;
    e->variant_of = -1;
    for (int i = 0; i < n_spans; i++) {
        e->spans[i] = spans[i];
        e->spans[i].value = NULL;
        e->n_spans = i + 1;
        if (spans[i].value && !(e->spans[i].value = pl_strdup(spans[i].value)))
            return PARLEY_ERR_NOMEM;
    }
    return PARLEY_OK;
}

parley_status ds_add(ds_dataset *ds, int n_words, const char *const *words, const size_t *lens,
                     const int *tags, int intent, int n_spans, const ds_span *spans,
                     ds_dup_policy policy, ds_add_result *result, int *appended)
{
    ds_example e = { 0 };
    ds_add_result r;
    if (appended)
        *appended = 0;
    if (!ds->seen && !(ds->seen = pl_calloc(1, sizeof *ds->seen)))
        goto nomem;
    if (ds->n_examples == ds->cap_examples) {
        int cap = ds->cap_examples ? 2 * ds->cap_examples : 64;
        ds_example *grown = pl_realloc(ds->examples, (size_t)cap * sizeof *grown);
        if (!grown)
            goto nomem;
        ds->examples = grown;
        ds->cap_examples = cap;
    }
    if (example_build(&e, n_words, words, lens, tags, intent, n_spans, spans) != PARLEY_OK)
        goto nomem;
    r = seen_classify(ds, &e);
    if (result)
        *result = r;
    /* Synthetic examples (DS_DROP_SAME_TEXT) that repeat one are not duplicates in the data. */
    int counted = r == DS_DUPLICATE && policy != DS_DROP_SAME_TEXT;
    ds->n_duplicates += counted;
    if ((r == DS_DUPLICATE && policy != DS_KEEP_ALL) ||
        (r != DS_ADDED && policy == DS_DROP_SAME_TEXT)) {
        example_clear(&e);
        return PARLEY_OK;
    }
    ds->examples[ds->n_examples] = e;
    if (seen_insert(ds, ds->n_examples) != PARLEY_OK) {
        ds->n_duplicates -= counted;
        example_clear(&ds->examples[ds->n_examples]);
        return PARLEY_ERR_NOMEM;
    }
    ds->n_examples++;
    if (appended)
        *appended = 1;
    return PARLEY_OK;
nomem:
    example_clear(&e);
    return pl_nomem("%s: adding example %d", ds->source, ds->n_examples + 1);
}

parley_status ds_values_add(ds_values **list, int *n, const char *name, const char *value,
                            int dedupe)
{
    ds_values *v = NULL;
    for (int i = 0; i < *n && !v; i++)
        if (!strcmp((*list)[i].name, name))
            v = &(*list)[i];
    if (!v) {
        ds_values *grown = pl_realloc(*list, (size_t)(*n + 1) * sizeof *grown);
        if (!grown)
            goto nomem;
        *list = grown;
        v = &grown[*n];
        memset(v, 0, sizeof *v);
        if (!(v->name = pl_strdup(name)))
            goto nomem;
        (*n)++;
    }
    for (int i = 0; dedupe && i < v->n; i++)
        if (!strcmp(v->values[i], value))
            return PARLEY_OK;
    char **values = pl_realloc(v->values, (size_t)(v->n + 1) * sizeof *values);
    if (!values)
        goto nomem;
    v->values = values;
    if (!(values[v->n] = pl_strdup(value)))
        goto nomem;
    v->n++;
    return PARLEY_OK;
nomem:
    return pl_nomem("adding '%s' to '%s'", value, name);
}

/* ---- finishing: sorted labels ---------------------------------------------------------- */

static int cmp_name(const void *a, const void *b, void *names)
{
    char **n = names;
    return strcmp(n[*(const int *)a], n[*(const int *)b]);
}

/* Sorts names[0..n) in place and fills map[old] = new. No names (a data set without slot
 * annotations) is no work: names is NULL then, which memcpy and qsort may not be given. */
static parley_status sort_names(char **names, int n, int *map)
{
    if (n == 0)
        return PARLEY_OK;
    int *order = pl_malloc((size_t)n * sizeof *order);
    char **copy = pl_malloc((size_t)n * sizeof *copy);
    if (!order || !copy) {
        pl_free(order);
        pl_free(copy);
        return PARLEY_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, (size_t)n, sizeof *order, cmp_name, names);
    memcpy(copy, names, (size_t)n * sizeof *names);
    for (int i = 0; i < n; i++) {
        names[i] = copy[order[i]];
        map[order[i]] = i;
    }
    pl_free(order);
    pl_free(copy);
    return PARLEY_OK;
}

parley_status ds_finish(ds_dataset *ds)
{
    int ni = ds->n_intents, ns = ds->n_slots;
    int *imap = pl_malloc((size_t)(ni ? ni : 1) * sizeof *imap);
    int *smap = pl_malloc((size_t)(ns ? ns : 1) * sizeof *smap);
    char **tags = pl_calloc((size_t)(1 + 2 * ns), sizeof *tags);
    if (!imap || !smap || !tags || sort_names(ds->intents, ni, imap) != PARLEY_OK ||
        sort_names(ds->slots, ns, smap) != PARLEY_OK)
        goto nomem;
    if (!(tags[0] = pl_strdup("O")))
        goto nomem;
    for (int s = 0; s < ns; s++) {
        size_t len = strlen(ds->slots[s]) + 3;
        if (!(tags[1 + 2 * s] = pl_malloc(len)) || !(tags[2 + 2 * s] = pl_malloc(len)))
            goto nomem;
        snprintf(tags[1 + 2 * s], len, "B-%s", ds->slots[s]);
        snprintf(tags[2 + 2 * s], len, "I-%s", ds->slots[s]);
    }
    for (int i = 0; i < ds->n_examples; i++) {
        ds_example *e = &ds->examples[i];
        e->intent = imap[e->intent];
        for (int w = 0; w < e->n_words; w++)
            if (e->tags[w])
                e->tags[w] = 1 + 2 * smap[(e->tags[w] - 1) / 2] + (e->tags[w] - 1) % 2;
        for (int s = 0; s < e->n_spans; s++)
            e->spans[s].slot = smap[e->spans[s].slot];
    }
    ds->tags = tags;
    ds->n_tags = 1 + 2 * ns;
    ds->finished = 1;
    pl_names_free(&ds->intent_ix); /* the names moved: lookups bisect from here on */
    pl_names_free(&ds->slot_ix);
    pl_free(imap);
    pl_free(smap);
    return PARLEY_OK;
nomem:
    names_free(tags, tags ? 1 + 2 * ns : 0);
    pl_free(imap);
    pl_free(smap);
    return pl_nomem("%s: sorting labels", ds->source);
}

/* ---- queries ------------------------------------------------------------------------- */

/* The index of name[0..len) in the sorted names, or -1. */
static int find_name(char *const *names, int n, const char *name, size_t len)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, c = strncmp(names[mid], name, len);
        if (c == 0 && names[mid][len]) /* names[mid] is longer: it sorts after name */
            c = 1;
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int ds_intent_index(const ds_dataset *ds, const char *name)
{
    return find_name(ds->intents, ds->n_intents, name, strlen(name));
}

int ds_slot_index(const ds_dataset *ds, const char *name)
{
    return find_name(ds->slots, ds->n_slots, name, strlen(name));
}

int ds_tag_index(const ds_dataset *ds, const char *tag)
{
    if (!strcmp(tag, "O"))
        return 0;
    int s = (tag[0] == 'B' || tag[0] == 'I') && tag[1] == '-' ? ds_slot_index(ds, tag + 2) : -1;
    return s < 0 || !ds->finished ? -1 : 1 + 2 * s + (tag[0] == 'I');
}

const ds_values *ds_lookup_for(const ds_dataset *ds, const char *slot)
{
    for (int i = 0; i < ds->n_lookups; i++)
        if (!strcmp(ds->lookups[i].name, slot))
            return &ds->lookups[i];
    return NULL;
}

parley_status ds_add_intent(ds_dataset *ds, const char *name, int *id)
{
    if (!ds->finished)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "ds_add_intent: dataset not finished");
    if ((*id = ds_intent_index(ds, name)) >= 0)
        return PARLEY_OK;
    int at = 0;
    while (at < ds->n_intents && strcmp(ds->intents[at], name) < 0)
        at++;
    char **grown = pl_realloc(ds->intents, ((size_t)ds->n_intents + 1) * sizeof *grown);
    if (grown)
        ds->intents = grown;
    char *copy = grown ? pl_strdup(name) : NULL;
    if (!copy)
        return pl_nomem("%s: intent names", ds->source);
    memmove(grown + at + 1, grown + at, (size_t)(ds->n_intents - at) * sizeof *grown);
    grown[at] = copy;
    ds->n_intents++;
    for (int i = 0; i < ds->n_examples; i++)
        ds->examples[i].intent += ds->examples[i].intent >= at;
    *id = at;
    return PARLEY_OK;
}

/* ---- loading by path ----------------------------------------------------------------- */

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcasecmp(s + n - m, suffix);
}

parley_status ds_load(const char *path, ds_dataset **out)
{
    struct stat sb;
    if (!out || !path)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "ds_load: NULL argument");
    *out = NULL;
    if (stat(path, &sb) != 0)
        return pl_fail(PARLEY_ERR_NOT_FOUND, "%s: no such file or directory", path);
    if (S_ISDIR(sb.st_mode))
        return ds_load_jointbert(path, out);
    if (has_suffix(path, ".yaml") || has_suffix(path, ".yml"))
        return ds_load_rasa(path, out);
    return pl_fail(PARLEY_ERR_UNSUPPORTED,
                   "%s: not a dataset (expected a .yaml/.yml file or a folder with seq.in, "
                   "seq.out, label)",
                   path);
}
