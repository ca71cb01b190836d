/* sparse.c — the sparse featurizer (sparse.h): reading a text into normalized words, their
 * shapes and lookup-table matches; the sentence and word features of it; learning their
 * vocabulary and IDF from training texts; and the CSR rows the features travel in.
 *
 * The features are strings first ("w:pizza", "0:c:iz"), mapped to indices by a table; the
 * same code composes them when learning the vocabulary (every string is added and counted)
 * and when featurizing (unknown strings are dropped), so training and inference cannot
 * disagree. sparse.json is read and written by sparse_io.c; the weights that use the
 * features live in the model (nlu/model/model.h) and are applied by nlu/batch.c and the trainer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "nlu/sparse/sparse_impl.h"
#include "nlu/text/tokenizer.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

/* ---- the string table ------------------------------------------------------------------ */

void sf_strtab_free(sf_strtab *t)
{
    for (int i = 0; i < t->n; i++)
        pl_free(t->names[i]);
    pl_free(t->names);
    pl_free(t->count);
    pl_names_free(&t->ix);
    memset(t, 0, sizeof *t);
}

int sf_strtab_find(const sf_strtab *t, const char *s, size_t len)
{
    return pl_names_find(&t->ix, s, len);
}

parley_status sf_strtab_add(sf_strtab *t, const char *s, size_t len, int *id)
{
    int at = pl_names_find(&t->ix, s, len);
    if (at >= 0) {
        *id = at;
        return PARLEY_OK;
    }
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 1024;
        char **names = pl_realloc(t->names, (size_t)cap * sizeof *names);
        if (names)
            t->names = names;
        int *count = names ? pl_realloc(t->count, (size_t)cap * sizeof *count) : NULL;
        if (!count)
            return pl_nomem("sparse features: a table of %d names", cap);
        t->count = count;
        t->cap = cap;
    }
    char *copy = pl_malloc(len + 1);
    if (!copy || pl_names_reserve(&t->ix, (size_t)t->n + 1) != PARLEY_OK) {
        pl_free(copy);
        return pl_nomem("sparse features: a table of %d names", t->n + 1);
    }
    memcpy(copy, s, len);
    copy[len] = '\0';
    t->names[t->n] = copy;
    t->count[t->n] = 0;
    pl_names_add(&t->ix, copy, len, t->n);
    *id = t->n++;
    return PARLEY_OK;
}

/* ---- reading a text -------------------------------------------------------------------- */

/* A growing byte buffer. */
parley_status sf_buf_put(sf_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = pl_realloc(b->data, cap);
        if (!p)
            return pl_nomem("sparse features: %zu bytes of text", cap);
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return PARLEY_OK;
}

static parley_status buf_put_cp(sf_buf *b, uint32_t c)
{
    utf8proc_uint8_t u[4];
    utf8proc_ssize_t n = utf8proc_encode_char((utf8proc_int32_t)c, u);
    return sf_buf_put(b, (const char *)u, (size_t)n);
}

/* The next code point of s[i..len) (valid UTF-8 by contract; an invalid byte reads as
 * itself) and its length. */
static size_t next_cp(const char *s, size_t i, size_t len, uint32_t *c)
{
    utf8proc_int32_t cp;
    utf8proc_ssize_t n =
            utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &cp);
    if (n <= 0) {
        *c = (unsigned char)s[i];
        return 1;
    }
    *c = (uint32_t)cp;
    return (size_t)n;
}

/* The shape class of c: 'X', 'x', 'd', or 0 for "itself". */
static char shape_of(uint32_t c)
{
    switch (utf8proc_category((utf8proc_int32_t)c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LT: return 'X';
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: return 'x';
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: return 'd';
    default: return 0;
    }
}

/* Whether norm[a..b) is one punctuation code point long at a (for trimming). */
static int punct_at(const char *s, size_t i, size_t end, size_t *n)
{
    uint32_t c;
    *n = next_cp(s, i, end, &c);
    return wp_is_punct(c);
}

/* The core of word w: its normalized form without punctuation at either end. */
static void core_of(sf_text *t, sf_word *w)
{
    size_t a = w->n0, b = w->n1, n;
    while (a < b && punct_at(t->norm.data, a, b, &n))
        a += n;
    while (b > a) {
        size_t p = b - 1; /* back to the start of the last code point */
        while (p > a && ((unsigned char)t->norm.data[p] & 0xC0) == 0x80)
            p--;
        if (!punct_at(t->norm.data, p, b, &n))
            break;
        b = p;
    }
    w->c0 = a;
    w->c1 = b;
}

static parley_status word_open(sf_text *t, size_t at)
{
    if (t->n_words == t->cap_words) {
        int cap = t->cap_words ? 2 * t->cap_words : 32;
        sf_word *w = pl_realloc(t->words, (size_t)cap * sizeof *w);
        if (!w)
            return pl_nomem("sparse features: %d words", cap);
        t->words = w;
        t->cap_words = cap;
    }
    sf_word *w = &t->words[t->n_words++];
    memset(w, 0, sizeof *w);
    w->o0 = w->o1 = at;
    w->n0 = w->n1 = t->norm.len;
    w->s0 = w->s1 = t->shape.len;
    return PARLEY_OK;
}

/* Adds code point c of the text to the open word: normalized, and to its shape. */
static parley_status word_add(sf_text *t, uint32_t c, char *last_shape, int *run)
{
    parley_status st;
    sf_word *w = &t->words[t->n_words - 1];
    if (wp_is_removed(c))
        return PARLEY_OK;
    uint32_t out[WP_DECOMP_CAP];
    int n = wp_normalize(c, out);
    for (int k = 0; k < n; k++)
        if ((st = buf_put_cp(&t->norm, out[k])) != PARLEY_OK)
            return st;
    w->n1 = t->norm.len;
    char s = shape_of(c);
    *run = s && s == *last_shape ? *run + 1 : 1;
    *last_shape = s;
    if (*run <= 3 &&
        (st = s ? sf_buf_put(&t->shape, &s, 1) : buf_put_cp(&t->shape, c)) != PARLEY_OK)
        return st;
    w->s1 = t->shape.len;
    return PARLEY_OK;
}

parley_status sf_text_read(sf_text *t, const char *text, size_t len)
{
    parley_status st;
    t->norm.len = t->shape.len = 0;
    t->n_words = 0;
    int in_word = 0, run = 0;
    char last = 0;
    if ((st = sf_buf_put(&t->norm, "", 0)) != PARLEY_OK || (st = sf_buf_put(&t->shape, "", 0)))
        return st;
    for (size_t i = 0; i < len;) {
        uint32_t c;
        size_t at = i;
        i += next_cp(text, i, len, &c);
        if (wp_is_space(c)) {
            in_word = 0;
            continue;
        }
        if (!in_word) {
            if ((st = word_open(t, at)) != PARLEY_OK)
                return st;
            in_word = 1;
            last = 0;
            run = 0;
        }
        if ((st = word_add(t, c, &last, &run)) != PARLEY_OK)
            return st;
        t->words[t->n_words - 1].o1 = i;
    }
    for (int w = 0; w < t->n_words; w++)
        core_of(t, &t->words[w]);
    return PARLEY_OK;
}

void sf_text_free(sf_text *t)
{
    pl_free(t->norm.data);
    pl_free(t->shape.data);
    pl_free(t->words);
    pl_free(t->flags);
    pl_free(t->key.data);
    pl_free(t->alt.data);
    memset(t, 0, sizeof *t);
}

/* ---- composing features ---------------------------------------------------------------- */

/* Maps the feature in e->name to an id and records it in the row being built: added to
 * the table when building (e->build), dropped when unknown otherwise. */
static void emit_name(sf_emit *e)
{
    int id = -1;
    if (e->st != PARLEY_OK)
        return;
    if (e->build)
        e->st = sf_strtab_add(e->tab, e->name.data, e->name.len, &id);
    else
        id = sf_strtab_find(e->tab, e->name.data, e->name.len);
    if (e->st != PARLEY_OK || id < 0)
        return;
    if (e->n_ids == e->cap_ids) {
        int cap = e->cap_ids ? 2 * e->cap_ids : 256;
        int *ids = pl_realloc(e->ids, (size_t)cap * sizeof *ids);
        if (ids)
            e->ids = ids;
        int *counts = ids ? pl_realloc(e->counts, (size_t)cap * sizeof *counts) : NULL;
        if (counts)
            e->counts = counts;
        float *vals = counts ? pl_realloc(e->vals, (size_t)cap * sizeof *vals) : NULL;
        if (!vals) {
            e->st = pl_nomem("sparse features: a row of %d", cap);
            return;
        }
        e->vals = vals;
        e->cap_ids = cap;
    }
    e->ids[e->n_ids++] = id;
}

/* Emits the feature a + b[0..nb) + c. */
static void emit3(sf_emit *e, const char *a, const char *b, size_t nb, const char *c)
{
    e->name.len = 0;
    if (e->st == PARLEY_OK)
        e->st = sf_buf_put(&e->name, a, strlen(a));
    if (e->st == PARLEY_OK)
        e->st = sf_buf_put(&e->name, b, nb);
    if (e->st == PARLEY_OK)
        e->st = sf_buf_put(&e->name, c, strlen(c));
    emit_name(e);
}

/* Emits prefix + every n-gram (lo <= n <= hi code points) of "<" s[0..len) ">". */
static void emit_ngrams(sf_emit *e, const char *prefix, const char *s, size_t len, int lo, int hi)
{
    sf_buf *p = &e->padded;
    p->len = 0;
    if (e->st == PARLEY_OK)
        e->st = sf_buf_put(p, "<", 1);
    if (e->st == PARLEY_OK)
        e->st = sf_buf_put(p, s, len);
    if (e->st == PARLEY_OK)
        e->st = sf_buf_put(p, ">", 1);
    if (e->st != PARLEY_OK)
        return;
    /* Code point starts: at most one per byte, and the end. */
    size_t starts[p->len + 1], n = 0;
    for (size_t i = 0; i < p->len; i++)
        if (((unsigned char)p->data[i] & 0xC0) != 0x80)
            starts[n++] = i;
    starts[n] = p->len;
    for (int g = lo; g <= hi; g++)
        for (size_t i = 0; i + (size_t)g <= n; i++)
            emit3(e, prefix, p->data + starts[i], starts[i + (size_t)g] - starts[i], "");
}

/* Emits "b:" + x + " " + y. */
static void emit_bigram(sf_emit *e, const char *x, size_t nx, const char *y, size_t ny)
{
    e->name.len = 0;
    if (e->st == PARLEY_OK)
        e->st = sf_buf_put(&e->name, "b:", 2);
    if (e->st == PARLEY_OK)
        e->st = sf_buf_put(&e->name, x, nx);
    if (e->st == PARLEY_OK)
        e->st = sf_buf_put(&e->name, " ", 1);
    if (e->st == PARLEY_OK)
        e->st = sf_buf_put(&e->name, y, ny);
    emit_name(e);
}

/* Emits prefix + the name of lookup table or regex l: "L:" / "R:" in the sentence, a word's
 * position and "L:B:" or "L:I:" (likewise "R:") in a word. */
static void emit_match(sf_emit *e, const sf_featurizer *f, const char *pos, const char *mark, int l)
{
    char prefix[16];
    const int lk = l < f->n_lookups;
    const char *name = lk ? f->lookups[l].name : f->regexes[l - f->n_lookups].name;
    snprintf(prefix, sizeof prefix, "%s%s:%s", pos, lk ? "L" : "R", mark);
    emit3(e, prefix, name, strlen(name), "");
}

void sf_emit_sentence(sf_emit *e, const sf_featurizer *f, const sf_text *t)
{
    const int n_match = f->n_lookups + f->n_regexes;
    const char *s = t->norm.data;
    size_t prev0 = 0, prev1 = 0;
    int have_prev = 0;
    for (int w = 0; w < t->n_words; w++) {
        const sf_word *wd = &t->words[w];
        size_t i = wd->n0;
        while (i < wd->n1) {
            size_t a = i, n;
            while (i < wd->n1 && !punct_at(s, i, wd->n1, &n))
                i += n;
            size_t b = i;
            while (i < wd->n1 && punct_at(s, i, wd->n1, &n))
                i += n;
            if (a == b)
                continue;
            emit3(e, "w:", s + a, b - a, "");
            if (have_prev)
                emit_bigram(e, s + prev0, prev1 - prev0, s + a, b - a);
            emit_ngrams(e, "c:", s + a, b - a, SF_SENT_NGRAM_MIN, SF_SENT_NGRAM_MAX);
            prev0 = a;
            prev1 = b;
            have_prev = 1;
        }
        for (int l = 0; l < n_match; l++)
            if (t->flags[(size_t)w * n_match + l] & SF_BEGINS)
                emit_match(e, f, "", "", l);
    }
}

void sf_emit_word(sf_emit *e, const sf_featurizer *f, const sf_text *t, int w)
{
    static const char *const pos[3] = { "-1:", "0:", "+1:" };
    char prefix[16];
    for (int o = -1; o <= 1; o++) {
        const char *P = pos[o + 1];
        int j = w + o;
        if (j < 0 || j >= t->n_words) {
            emit3(e, P, j < 0 ? "<s>" : "</s>", j < 0 ? 3 : 4, "");
            continue;
        }
        const sf_word *wd = &t->words[j];
        snprintf(prefix, sizeof prefix, "%sw:", P);
        emit3(e, prefix, t->norm.data + wd->n0, wd->n1 - wd->n0, "");
        snprintf(prefix, sizeof prefix, "%ss:", P);
        emit3(e, prefix, t->shape.data + wd->s0, wd->s1 - wd->s0, "");
        for (int l = 0; l < f->n_lookups + f->n_regexes; l++) {
            unsigned char fl = t->flags[(size_t)j * (f->n_lookups + f->n_regexes) + l];
            if (fl & SF_BEGINS)
                emit_match(e, f, P, "B:", l);
            if (fl & SF_CONTINUES)
                emit_match(e, f, P, "I:", l);
        }
    }
    const sf_word *wd = &t->words[w];
    emit_ngrams(e, "0:c:", t->norm.data + wd->n0, wd->n1 - wd->n0, SF_WORD_NGRAM_MIN,
                SF_WORD_NGRAM_MAX);
}

parley_status sf_text_analyze(const sf_featurizer *f, sf_text *t, const char *text, size_t len)
{
    parley_status st;
    if ((st = sf_text_read(t, text, len)) != PARLEY_OK)
        return st;
    return sf_text_match(f, t, text, len);
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int sf_emit_unique(sf_emit *e)
{
    if (e->n_ids > 1) /* none: ids may be NULL, which qsort may not take */
        qsort(e->ids, (size_t)e->n_ids, sizeof *e->ids, by_int);
    int n = 0;
    for (int i = 0; i < e->n_ids; i++) {
        if (n && e->ids[n - 1] == e->ids[i]) {
            e->counts[n - 1]++;
            continue;
        }
        e->counts[n] = 1;
        e->ids[n++] = e->ids[i];
    }
    return e->n_ids = n;
}

void sf_emit_free(sf_emit *e)
{
    pl_free(e->name.data);
    pl_free(e->padded.data);
    pl_free(e->ids);
    pl_free(e->counts);
    pl_free(e->vals);
    memset(e, 0, sizeof *e);
}

/* ---- learning the vocabulary, featurizing ---------------------------------------------- */

int sf_sentence_size(const sf_featurizer *f)
{
    return f ? f->sent.n : 0;
}

int sf_word_size(const sf_featurizer *f)
{
    return f ? f->word.n : 0;
}

const char *sf_sentence_name(const sf_featurizer *f, int i)
{
    return f && i >= 0 && i < f->sent.n ? f->sent.names[i] : NULL;
}

const char *sf_word_name(const sf_featurizer *f, int i)
{
    return f && i >= 0 && i < f->word.n ? f->word.names[i] : NULL;
}

void sf_free(sf_featurizer *f)
{
    if (!f)
        return;
    sf_strtab_free(&f->sent);
    sf_strtab_free(&f->word);
    pl_free(f->idf);
    sf_matchers_free(f);
    pl_free(f);
}

parley_status sf_featurizer_new(int n_lookups, int n_regexes, sf_featurizer **out)
{
    sf_featurizer *f = pl_calloc(1, sizeof *f);
    if (f && (!(f->lookups = pl_calloc((size_t)n_lookups + 1, sizeof *f->lookups)) ||
              !(f->regexes = pl_calloc((size_t)n_regexes + 1, sizeof *f->regexes)))) {
        sf_free(f);
        f = NULL;
    }
    *out = f;
    return f ? PARLEY_OK : pl_nomem("a sparse featurizer");
}

/* A name of a table being sorted into vocabulary order: most counted first, ties by byte
 * order. */
typedef struct ranked {
    int count;
    const char *name;
} ranked;

static int by_rank(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Copies the `cap` most counted names of all into *keep, counts with them. */
static parley_status keep_top(const sf_strtab *all, int cap, sf_strtab *keep)
{
    parley_status st = PARLEY_OK;
    ranked *order = pl_malloc(((size_t)all->n + 1) * sizeof *order);
    int id;
    if (!order)
        return pl_nomem("sparse features: sorting %d", all->n);
    for (int i = 0; i < all->n; i++)
        order[i] = (ranked){ all->count[i], all->names[i] };
    qsort(order, (size_t)all->n, sizeof *order, by_rank);
    for (int i = 0; i < all->n && i < cap && st == PARLEY_OK; i++)
        if ((st = sf_strtab_add(keep, order[i].name, strlen(order[i].name), &id)) == PARLEY_OK)
            keep->count[id] = order[i].count;
    pl_free(order);
    return st;
}

/* Counts the distinct features of the row composed in e into e->tab's counts. */
static void count_row(sf_emit *e)
{
    if (e->st != PARLEY_OK)
        return;
    int n = sf_emit_unique(e);
    for (int i = 0; i < n; i++)
        e->tab->count[e->ids[i]]++;
}

static parley_status learn(sf_featurizer *f, const char *const *texts, int n, sf_strtab *sent,
                           sf_strtab *word)
{
    parley_status st = PARLEY_OK;
    sf_text t = { 0 };
    sf_emit e = { .build = 1 };
    for (int i = 0; i < n && st == PARLEY_OK; i++) {
        if ((st = sf_text_analyze(f, &t, texts[i], strlen(texts[i]))) != PARLEY_OK)
            break;
        e.tab = sent;
        e.n_ids = 0;
        sf_emit_sentence(&e, f, &t);
        count_row(&e);
        e.tab = word;
        for (int w = 0; w < t.n_words && e.st == PARLEY_OK; w++) {
            e.n_ids = 0;
            sf_emit_word(&e, f, &t, w);
            count_row(&e);
        }
        st = e.st;
    }
    sf_text_free(&t);
    sf_emit_free(&e);
    return st;
}

parley_status sf_build(const char *const *texts, int n, const sf_build_params *p,
                       sf_featurizer **out)
{
    parley_status st;
    sf_build_params d = p ? *p : (sf_build_params){ 0 };
    sf_featurizer *f = NULL;
    sf_strtab sent = { 0 }, word = { 0 };
    *out = NULL;
    if (n < 0 || (n && !texts) || d.n_lookups < 0 || (d.n_lookups && !d.lookups) ||
        d.n_regexes < 0 || (d.n_regexes && !d.regexes) || d.max_sentence < 0 || d.max_word < 0)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "sf_build: bad arguments");
    if ((st = sf_featurizer_new(d.n_lookups, d.n_regexes, &f)) != PARLEY_OK)
        return st;
    f->lookup_slips = d.lookup_slips != 0; /* before the tables: their slips are kept with them */
    for (int l = 0; l < d.n_lookups; l++)
        if ((st = sf_featurizer_add_lookup(f, d.lookups[l].name, d.lookups[l].n,
                                           d.lookups[l].values)) != PARLEY_OK)
            goto fail;
    for (int r = 0; r < d.n_regexes; r++)
        if ((st = sf_featurizer_add_regex(f, d.regexes[r].name, d.regexes[r].n,
                                          d.regexes[r].values)) != PARLEY_OK)
            goto fail;
    if ((st = learn(f, texts, n, &sent, &word)) != PARLEY_OK ||
        (st = keep_top(&sent, d.max_sentence ? d.max_sentence : SF_DEFAULT_MAX_SENTENCE,
                       &f->sent)) != PARLEY_OK ||
        (st = keep_top(&word, d.max_word ? d.max_word : SF_DEFAULT_MAX_WORD, &f->word)) !=
                PARLEY_OK)
        goto fail;
    if (!(f->idf = pl_malloc(((size_t)f->sent.n + 1) * sizeof *f->idf))) {
        st = pl_nomem("sparse features: IDF");
        goto fail;
    }
    for (int i = 0; i < f->sent.n; i++)
        f->idf[i] = (float)(log((1.0 + n) / (1.0 + f->sent.count[i])) + 1.0);
    f->word_norm_by_kind = d.word_norm_by_kind != 0;
    *out = f;
    f = NULL;
fail:
    sf_strtab_free(&sent);
    sf_strtab_free(&word);
    sf_free(f);
    return st;
}

/* The kind of feature i of e for the norm (sparse.h): 1 for a word's character n-gram
 * "0:c:", 0 for the rest; 0 for all where !by_kind. */
static int norm_kind(const sf_emit *e, int i, int by_kind)
{
    return by_kind && !strncmp(e->tab->names[e->ids[i]], "0:c:", 4);
}

/* Turns the row composed in e into values (sentence: sublinear TF times IDF; word: 1),
 * L2-normalized to 1 (where by_kind, each kind present to an equal share of it), and
 * appends it to rows. */
static parley_status finish_row(sf_emit *e, const float *idf, int by_kind, sf_rows *rows)
{
    if (e->st != PARLEY_OK)
        return e->st;
    int n = sf_emit_unique(e);
    double norm[2] = { 0, 0 };
    for (int i = 0; i < n; i++) {
        e->vals[i] = idf ? (float)((1.0 + log((double)e->counts[i])) * idf[e->ids[i]]) : 1.0f;
        norm[norm_kind(e, i, by_kind)] += (double)e->vals[i] * e->vals[i];
    }
    const int kinds = (norm[0] > 0) + (norm[1] > 0);
    for (int i = 0; i < n; i++)
        e->vals[i] = (float)(e->vals[i] / sqrt(norm[norm_kind(e, i, by_kind)] * kinds));
    return sf_rows_push(rows, e->ids, e->vals, n);
}

parley_status sf_featurize(const sf_featurizer *f, const char *text, size_t len, sf_rows *sent,
                           sf_rows *words, int *n_words)
{
    parley_status st;
    sf_text t = { 0 };
    /* The tables are only read: build is 0. */
    sf_emit e = { .tab = (sf_strtab *)&f->sent };
    if ((st = sf_text_analyze(f, &t, text, len)) != PARLEY_OK)
        goto done;
    sf_emit_sentence(&e, f, &t);
    if ((st = finish_row(&e, f->idf, 0, sent)) != PARLEY_OK)
        goto done;
    e.tab = (sf_strtab *)&f->word;
    for (int w = 0; w < t.n_words && st == PARLEY_OK; w++) {
        e.n_ids = 0;
        sf_emit_word(&e, f, &t, w);
        st = finish_row(&e, NULL, f->word_norm_by_kind, words);
    }
    if (n_words)
        *n_words = t.n_words;
done:
    sf_text_free(&t);
    sf_emit_free(&e);
    return st;
}
