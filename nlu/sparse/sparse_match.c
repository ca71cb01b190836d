/* sparse_match.c — where a text's words match the nlu.yaml's lookup tables and regexes, for
 * the word features "L:B:TABLE" / "L:I:TABLE" and "R:B:NAME" / "R:I:NAME" (sparse.h).
 *
 * A lookup value matches whole words, compared by their cores (normalized, without the
 * punctuation at their ends), so "Mushrooms!" matches "mushrooms". A regex is searched in
 * the text as given, case-insensitively (sdk/base/pattern.h), and every word its match
 * overlaps takes part: the first begins it, the others continue it. The features
 * themselves are composed in sparse.c. The lookup matches are also told one by one
 * (sf_lookup_matches), for `parley check`'s unmarked values (nlu/data/unmarked.c), exactly.
 *
 * Where the featurizer allows typing slips, a run of words also matches a value of
 * PL_SLIP_MIN to PL_SLIP_MAX code points that is one slip away (sdk/base/slip.h; not a
 * space). Tables may be large, so instead of comparing a run with each value
 * (pl_one_slip), each such value's variants with one code point left out are indexed
 * (sf_lookup.slips, sparse_lookup.c): a run matches when it is one of them (left out), when it is a
 * value with a code point left out (added), or when both lose a code point to the same string
 * (changed, or two neighbours swapped; also a letter moved past its twin, "mushrmoos").
 */
#include <string.h>

#include "nlu/sparse/sparse_impl.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/slip.h"

/* The cores of t's words [w, w + k) joined by single spaces, into t->key. */
static parley_status join_cores(sf_text *t, int w, int k)
{
    parley_status st = PARLEY_OK;
    t->key.len = 0;
    for (int j = w; j < w + k && st == PARLEY_OK; j++) {
        if (j > w)
            st = sf_buf_put(&t->key, " ", 1);
        if (st == PARLEY_OK)
            st = sf_buf_put(&t->key, t->norm.data + t->words[j].c0,
                            t->words[j].c1 - t->words[j].c0);
    }
    return st == PARLEY_OK ? sf_buf_put(&t->key, "", 0) : st;
}

/* Calls fn(arg, variant, its length) for each variant of t->key with one code point (not a
 * space) left out, built in t->alt, until fn returns nonzero (returned) or memory runs out
 * (-1). */
static int each_left_out(sf_text *t, int (*fn)(void *arg, const char *s, size_t len), void *arg)
{
    const char *k = t->key.data;
    const size_t len = t->key.len;
    for (size_t at = 0; at < len;) {
        size_t end = at + 1;
        while (end < len && ((unsigned char)k[end] & 0xC0) == 0x80)
            end++;
        if (k[at] != ' ') {
            t->alt.len = 0;
            if (sf_buf_put(&t->alt, k, at) != PARLEY_OK ||
                sf_buf_put(&t->alt, k + end, len - end) != PARLEY_OK)
                return -1;
            int r = fn(arg, t->alt.data, t->alt.len);
            if (r)
                return r;
        }
        at = end;
    }
    return 0;
}

static parley_status add_value(const sf_featurizer *f, sf_lookup *l, sf_text *scratch,
                               const char *value)
{
    parley_status st;
    if ((st = sf_text_read(scratch, value, strlen(value))) != PARLEY_OK)
        return st;
    if (scratch->n_words == 0)
        return PARLEY_OK;
    if ((st = join_cores(scratch, 0, scratch->n_words)) != PARLEY_OK)
        return st;
    return sf_lookup_add(l, scratch->key.data, scratch->key.len, scratch->n_words, f->lookup_slips);
}

parley_status sf_featurizer_add_lookup(sf_featurizer *f, const char *name, int n,
                                       const char *const *values)
{
    parley_status st = PARLEY_OK;
    sf_text scratch = { 0 };
    if (n > SF_MAX_LOOKUP_VALUES)
        return pl_fail(PARLEY_ERR_CONFIG,
                       "lookup table \"%s\" lists %d values; a table may list at most %d", name, n,
                       SF_MAX_LOOKUP_VALUES);
    sf_lookup *l = &f->lookups[f->n_lookups];
    if (!(l->name = pl_strdup(name)))
        return pl_nomem("sparse features: lookup table \"%s\"", name);
    f->n_lookups++;
    /* Room for every value, and a slip a byte of those short enough to have slips (values
     * are normalized as they go in: a hint, the indexes grow if it falls short). */
    size_t bytes = 0;
    for (int i = 0; i < n; i++) {
        size_t k = strlen(values[i]);
        bytes += k <= 4 * PL_SLIP_MAX ? k : 0;
    }
    st = sf_lookup_reserve(l, (size_t)n, bytes, f->lookup_slips);
    for (int i = 0; i < n && st == PARLEY_OK; i++)
        st = add_value(f, l, &scratch, values[i]);
    sf_text_free(&scratch);
    return st;
}

parley_status sf_featurizer_add_regex(sf_featurizer *f, const char *name, int n,
                                      const char *const *patterns)
{
    parley_status st;
    sf_regex *r = &f->regexes[f->n_regexes];
    if (!(r->name = pl_strdup(name)) || !(r->sources = pl_calloc((size_t)n + 1, sizeof(char *))) ||
        !(r->pats = pl_calloc((size_t)n + 1, sizeof(pl_pattern *)))) {
        pl_free(r->name);
        pl_free(r->sources);
        memset(r, 0, sizeof *r);
        return pl_nomem("sparse features: regex \"%s\"", name);
    }
    f->n_regexes++;
    for (int i = 0; i < n; i++, r->n++) {
        size_t where;
        if (!(r->sources[i] = pl_strdup(patterns[i])))
            return pl_nomem("sparse features: regex \"%s\"", name);
        if ((st = pl_pattern_compile(patterns[i], strlen(patterns[i]), &r->pats[i], &where)) !=
            PARLEY_OK) {
            r->n++; /* its source is freed with the others */
            return st == PARLEY_ERR_NOMEM
                           ? st
                           : pl_wrap(st, "regex \"%s\", pattern %d (\"%s\") at byte %zu", name,
                                     i + 1, patterns[i], where);
        }
    }
    return PARLEY_OK;
}

void sf_matchers_free(sf_featurizer *f)
{
    for (int l = 0; f->lookups && l < f->n_lookups; l++)
        sf_lookup_free(&f->lookups[l]);
    for (int r = 0; f->regexes && r < f->n_regexes; r++) {
        for (int i = 0; i < f->regexes[r].n; i++) {
            pl_free(f->regexes[r].sources[i]);
            pl_pattern_free(f->regexes[r].pats[i]);
        }
        pl_free(f->regexes[r].name);
        pl_free(f->regexes[r].sources);
        pl_free(f->regexes[r].pats);
    }
    pl_free(f->lookups);
    pl_free(f->regexes);
}

/* Marks column c of t's flags (row stride `stride`) for words [w, w + k). */
static void mark(sf_text *t, int stride, int c, int w, int k)
{
    t->flags[(size_t)w * stride + c] |= SF_BEGINS;
    for (int j = w + 1; j < w + k; j++)
        t->flags[(size_t)j * stride + c] |= SF_CONTINUES;
}

/* What to do with a run of t's words [w, w + k) that is a lookup value (its cores joined in
 * t->key); a status other than PARLEY_OK stops the search. */
typedef parley_status (*run_fn)(void *arg, sf_text *t, int w, int k);

/* Whether s[0..len), t->key with a code point left out, is a value of PL_SLIP_MIN code
 * points or more (t->key added one; run_matches bounds it above) or one of the slips (both
 * lost one). Code points are counted only for a value found. */
static int slip_of(void *arg, const char *s, size_t len)
{
    const sf_lookup *lk = arg;
    return (sf_lookup_has(lk, s, len) && pl_code_points(s, len) >= PL_SLIP_MIN) ||
           sf_lookup_has_slip(lk, s, len);
}

/* 1 when t->key is a value of lk, or, with `slips`, one slip away from one; 0 when not; -1
 * when out of memory. */
static int run_matches(const sf_lookup *lk, int slips, sf_text *t)
{
    if (sf_lookup_has(lk, t->key.data, t->key.len))
        return 1;
    const int n = pl_code_points(t->key.data, t->key.len);
    if (!slips || !lk->slips.n || n < PL_SLIP_MIN - 1 || n > PL_SLIP_MAX + 1)
        return 0;
    if (sf_lookup_has_slip(lk, t->key.data, t->key.len))
        return 1;
    return each_left_out(t, slip_of, (void *)lk);
}

/* Calls fn for each run of t's words that is a value of lk (or, with slips, one slip away
 * from one), by first word, then length. */
static parley_status each_run(const sf_lookup *lk, sf_text *t, int slips, run_fn fn, void *arg)
{
    parley_status st;
    for (int w = 0; w < t->n_words; w++)
        for (int k = 1; k <= lk->max_words && w + k <= t->n_words; k++) {
            if ((st = join_cores(t, w, k)) != PARLEY_OK)
                return st;
            int m = run_matches(lk, slips, t);
            if (m < 0)
                return pl_nomem("sparse features: lookup table \"%s\"", lk->name);
            if (m && (st = fn(arg, t, w, k)) != PARLEY_OK)
                return st;
        }
    return PARLEY_OK;
}

typedef struct mark_at {
    int stride, column;
} mark_at;

static parley_status mark_run(void *arg, sf_text *t, int w, int k)
{
    const mark_at *m = arg;
    mark(t, m->stride, m->column, w, k);
    return PARLEY_OK;
}

typedef struct report {
    sf_lookup_fn fn;
    void *arg;
    int table;
} report;

static parley_status report_run(void *arg, sf_text *t, int w, int k)
{
    const report *r = arg;
    return r->fn(r->arg, r->table, t->words[w].o0, t->words[w + k - 1].o1, t->key.data);
}

parley_status sf_lookup_matches(const sf_featurizer *f, const char *text, size_t len,
                                sf_lookup_fn fn, void *arg)
{
    sf_text t = { 0 };
    parley_status st = sf_text_read(&t, text, len);
    for (int l = 0; st == PARLEY_OK && l < f->n_lookups; l++) {
        report r = { fn, arg, l };
        st = each_run(&f->lookups[l], &t, 0, report_run, &r);
    }
    sf_text_free(&t);
    return st;
}

/* Marks the words every match of p in text[0..len) overlaps. */
static parley_status match_pattern(const pl_pattern *p, sf_text *t, const char *text, size_t len,
                                   int stride, int c)
{
    size_t from = 0, span[2];
    int found = 1, w = 0;
    while (from <= len) {
        parley_status st = pl_pattern_find(p, text, len, from, &found, span);
        if (st == PARLEY_ERR_NOMEM)
            return st;
        if (st != PARLEY_OK || !found)
            break; /* a search past the cost limits ends this pattern's matches */
        while (w < t->n_words && t->words[w].o1 <= span[0])
            w++;
        int k = 0;
        while (w + k < t->n_words && t->words[w + k].o0 < span[1])
            k++;
        if (k > 0 && span[1] > span[0])
            mark(t, stride, c, w, k);
        /* On past the match, or past one character after an empty one. */
        from = span[1] > span[0] ? span[1] : span[0] + 1;
        while (from < len && ((unsigned char)text[from] & 0xC0) == 0x80)
            from++;
    }
    pl_clear_error(); /* a search that ended at a limit is no error of the text's */
    return PARLEY_OK;
}

parley_status sf_text_match(const sf_featurizer *f, sf_text *t, const char *text, size_t len)
{
    parley_status st;
    const int stride = f->n_lookups + f->n_regexes;
    size_t n = (size_t)t->n_words * (size_t)stride;
    if (n > t->cap_flags) {
        unsigned char *p = pl_realloc(t->flags, n);
        if (!p)
            return pl_nomem("sparse features: matches of %d words", t->n_words);
        t->flags = p;
        t->cap_flags = n;
    }
    if (n)
        memset(t->flags, 0, n);
    for (int l = 0; l < f->n_lookups; l++) {
        mark_at m = { stride, l };
        if ((st = each_run(&f->lookups[l], t, 1, mark_run, &m)) != PARLEY_OK)
            return st;
    }
    for (int r = 0; r < f->n_regexes; r++)
        for (int i = 0; i < f->regexes[r].n; i++)
            if ((st = match_pattern(f->regexes[r].pats[i], t, text, len, stride,
                                    f->n_lookups + r)) != PARLEY_OK)
                return st;
    return PARLEY_OK;
}
