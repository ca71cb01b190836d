/* asr_ngram.c — the bot's language as a class trigram model (asr_lang.h), the recognizer's
 * default: the sentence patterns, with each slot value a class tag "[c_N]", estimated with
 * interpolated Kneser-Ney smoothing and written in ARPA form; the class members, each one
 * compound dictionary word, in sphinxbase's class definition form.
 *
 * So an opening seen in one example continues with a tail seen in another, and every slot
 * position takes every value of its class at the same cost, however large the lookup table:
 * the model is as big as the patterns, the classes as big as the values. The lower orders
 * are Kneser-Ney's continuation counts. The discount is fixed and small (DISCOUNT): a bot's
 * examples are patterns someone wrote, not a sample of speech, so the usual estimate from
 * the counts of counts (about 0.5-0.9 here) gives unseen continuations far too much; on
 * synthesized orders it cost a third more word errors (bench/RESULTS.md, "Voice"). Where two
 * slots stand side by side, each may be left out (leave_out): people drop a slot that
 * qualifies the next ("a medium dark roast please"); not in a list of things. Hesitations
 * ("um", asr_lang.h) may come before any word, the words after one scored as if it were not
 * there (hesitate). With a generic weight (services/asr.h), the generic model's most frequent
 * words that the bot lacks share the unigrams at that weight, and the patterns' n-grams back
 * off to the mix: speech outside the bot has words of its own. It decodes nothing:
 * asr_pocketsphinx.c loads what it writes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "services/asr_lang.h"

enum { BOS = 0, EOS = 1, FIRST_HESITATION = 2 };

/* Taken from every count: the mass left to unseen continuations, per distinct one seen. */
#define DISCOUNT 0.1
/* The count of a pattern with one of two slots side by side left out: people leave out a
 * slot that qualifies another ("a medium dark roast please" where the examples always name
 * the drink after the roast), less often than they say the examples' whole run. */
#define LEFT_OUT 0.15
/* The chance of a hesitation before any word (all of them together): people say "um" or
 * "uh" a few times in a hundred words of spontaneous speech. */
#define HESITATION 0.04

typedef struct gram {
    int w[3];
    double n;   /* count (highest order) or continuation count; estimated: log10 probability */
    double bow; /* bigrams: log10 back-off weight of (w[0], w[1]) as a history */
} gram;

typedef struct model {
    pl_names ix;       /* token → id */
    const char **name; /* (n_words) borrowed from the patterns */
    size_t *len;
    int n_words, cap_words;
    int first_generic; /* the generic words (svc_lang's) are the last, from this id on */
    double *n1;        /* (n_words) continuation counts of the words */
    gram *bi, *tri;    /* sorted, distinct */
    size_t n_bi, n_tri;
    double *p1, *bow1; /* (n_words) log10 probabilities and back-off weights */
} model;

static int word_id(model *m, const char *s, size_t n)
{
    int id = pl_names_find(&m->ix, s, n);
    if (id >= 0)
        return id;
    if (m->n_words == m->cap_words) {
        int cap = m->cap_words ? 2 * m->cap_words : 64;
        const char **name = pl_realloc(m->name, (size_t)cap * sizeof *name);
        if (name)
            m->name = name;
        size_t *len = name ? pl_realloc(m->len, (size_t)cap * sizeof *len) : NULL;
        if (!len || pl_names_reserve(&m->ix, (size_t)cap) != PARLEY_OK)
            return -1;
        m->len = len;
        m->cap_words = cap;
    }
    m->name[m->n_words] = s;
    m->len[m->n_words] = n;
    pl_names_add(&m->ix, s, n, m->n_words);
    return m->n_words++;
}

static int cmp_gram(const void *a, const void *b)
{
    const gram *x = a, *y = b;
    for (int i = 0; i < 3; i++)
        if (x->w[i] != y->w[i])
            return x->w[i] < y->w[i] ? -1 : 1;
    return 0;
}

/* Sorts g and merges equal n-grams, adding their counts; answers the new length. */
static size_t merge(gram *g, size_t n)
{
    size_t k = 0;
    qsort(g, n, sizeof *g, cmp_gram);
    for (size_t i = 0; i < n; i++) {
        if (k && !cmp_gram(&g[k - 1], &g[i]))
            g[k - 1].n += g[i].n;
        else
            g[k++] = g[i];
    }
    return k;
}

static size_t find_bi(const model *m, int b, int c)
{
    gram key = { { b, c, 0 }, 0, 0 };
    const gram *g = bsearch(&key, m->bi, m->n_bi, sizeof key, cmp_gram);
    return g ? (size_t)(g - m->bi) : (size_t)-1;
}

/* How far an n-gram of count n counts as seen: once, or by the share of it seen only with a
 * slot left out (LEFT_OUT). The discount and the mass left to unseen continuations scale by
 * it, so a continuation seen only so keeps its share rather than losing it to the discount. */
static double once(double n)
{
    return n < 1 ? n : 1;
}

static int is_class(const model *m, int w)
{
    return m->len[w] > 3 && !strncmp(m->name[w], "<c_", 3);
}

/* 1 when the pattern ids[0..n) names class token w more than once. */
static int repeated(const int *ids, int n, int w)
{
    int seen = 0;
    for (int k = 0; k < n; k++)
        seen += ids[k] == w;
    return seen > 1;
}

/* 1 when pattern ids[0..n)'s token k is a slot that may be left out: one beside another,
 * where neither is named twice. Slots side by side then qualify one thing ("a [size]
 * [roast] [drink]"); in a list of things ("[rank] of [suit] [rank] of [suit]") they belong
 * to two, and neither can go ("four of queen of clubs" for "four queen of clubs"). */
static int optional(const model *m, const int *ids, int n, int k)
{
    int next = is_class(m, ids[k - 1]) ? ids[k - 1] : is_class(m, ids[k + 1]) ? ids[k + 1] : -1;
    return is_class(m, ids[k]) && next >= 0 && !repeated(ids, n, ids[k]) && !repeated(ids, n, next);
}

/* The n-grams of the pattern ids[0..n) (<s> first, </s> last) that cross a slot left out
 * (optional), appended to m's at LEFT_OUT: the trigrams over the gap, and the opening
 * bigram when the pattern opened with it. */
static void leave_out(model *m, const int *ids, int n, size_t *n_open)
{
    for (int k = 1; k < n - 1; k++) {
        if (!optional(m, ids, n, k))
            continue;
        if (k >= 2)
            m->tri[m->n_tri++] = (gram){ { ids[k - 2], ids[k - 1], ids[k + 1] }, LEFT_OUT, 0 };
        else
            m->bi[(*n_open)++] = (gram){ { BOS, ids[2], 0 }, LEFT_OUT, 0 };
        if (k + 2 < n)
            m->tri[m->n_tri++] = (gram){ { ids[k - 1], ids[k + 1], ids[k + 2] }, LEFT_OUT, 0 };
    }
}

/* The counts: trigrams from every pattern (with <s> and </s>), and at LEFT_OUT those where
 * a slot beside another is left out (leave_out); bigrams are the trigrams' distinct left
 * contexts (Kneser-Ney's continuation counts, a trigram seen only with a slot left out
 * counting as much as it was), and a pattern's opening bigram, which no word precedes, its
 * plain count. */
static int count(model *m, const svc_lang *l)
{
    size_t cap = 0;
    for (int i = 0; i < l->sentences.n; i++)
        cap += strlen(l->sentences.s[i]) + 2;
    int *ids = pl_malloc(cap * sizeof *ids);
    m->tri = pl_malloc(3 * cap * sizeof *m->tri);
    m->bi = pl_malloc(4 * cap * sizeof *m->bi);
    int ok = ids && m->tri && m->bi && word_id(m, "<s>", 3) == BOS && word_id(m, "</s>", 4) == EOS;
    for (int i = 0; ok && i < svc_n_hesitations; i++)
        ok = word_id(m, svc_hesitations[i].word, strlen(svc_hesitations[i].word)) ==
             FIRST_HESITATION + i;
    if (!ok) {
        pl_free(ids);
        return 0;
    }
    size_t n_open = 0;
    for (int i = 0; i < l->sentences.n; i++) {
        int n = 0;
        ids[n++] = BOS;
        for (const char *p = l->sentences.s[i]; *p;) {
            size_t len = strcspn(p, " ");
            if ((ids[n++] = word_id(m, p, len)) < 0) {
                pl_free(ids);
                return 0;
            }
            p += len + (p[len] == ' ');
        }
        ids[n++] = EOS;
        m->bi[n_open++] = (gram){ { BOS, ids[1], 0 }, 1, 0 };
        for (int k = 2; k < n; k++)
            m->tri[m->n_tri++] = (gram){ { ids[k - 2], ids[k - 1], ids[k] }, 1, 0 };
        leave_out(m, ids, n, &n_open);
    }
    pl_free(ids);
    m->first_generic = m->n_words;
    for (int i = 0; i < l->generic.n; i++)
        if (word_id(m, l->generic.s[i], strlen(l->generic.s[i])) < 0)
            return 0;
    m->n_tri = merge(m->tri, m->n_tri);
    m->n_bi = n_open;
    for (size_t i = 0; i < m->n_tri; i++) /* one per distinct trigram: its left context */
        m->bi[m->n_bi++] = (gram){ { m->tri[i].w[1], m->tri[i].w[2], 0 }, once(m->tri[i].n), 0 };
    m->n_bi = merge(m->bi, m->n_bi);
    if (!(m->n1 = pl_calloc((size_t)m->n_words, sizeof *m->n1)))
        return 0;
    for (size_t i = 0; i < m->n_bi; i++)
        m->n1[m->bi[i].w[1]] += once(m->bi[i].n);
    return 1;
}

/* Interpolated probabilities, log10, and back-off weights, order by order. The unigrams are
 * the patterns' words' continuation counts, mixed with the generic words at their weight;
 * the higher orders back off to that mix. */
static int estimate(model *m, const svc_lang *l)
{
    const double d2 = DISCOUNT, d3 = DISCOUNT;
    double total = 0;
    m->p1 = pl_malloc((size_t)m->n_words * sizeof *m->p1);
    m->bow1 = pl_calloc((size_t)m->n_words, sizeof *m->bow1);
    if (!m->p1 || !m->bow1)
        return 0;
    for (int w = 0; w < m->n_words; w++)
        total += m->n1[w];
    for (int w = 0; w < m->n_words; w++)
        m->p1[w] = w >= m->first_generic
                           ? log10(l->generic_weight) + l->generic_p[w - m->first_generic]
                   : w == BOS || !m->n1[w] ? -99.0
                                           : log10((1 - l->generic_weight) * m->n1[w] / total);
    for (size_t i = 0; i < m->n_bi;) { /* one history b at a time */
        size_t j = i;
        double sum = 0, seen = 0;
        for (; j < m->n_bi && m->bi[j].w[0] == m->bi[i].w[0]; j++)
            sum += m->bi[j].n, seen += once(m->bi[j].n);
        double lambda = d2 * seen / sum;
        m->bow1[m->bi[i].w[0]] = log10(lambda);
        for (size_t k = i; k < j; k++)
            m->bi[k].n = log10((m->bi[k].n - d2 * once(m->bi[k].n)) / sum +
                               lambda * pow(10, m->p1[m->bi[k].w[1]]));
        i = j;
    }
    for (size_t i = 0; i < m->n_tri;) { /* one history (a, b) at a time */
        size_t j = i;
        double sum = 0, seen = 0;
        for (; j < m->n_tri && m->tri[j].w[0] == m->tri[i].w[0] && m->tri[j].w[1] == m->tri[i].w[1];
             j++)
            sum += m->tri[j].n, seen += once(m->tri[j].n);
        double lambda = d3 * seen / sum;
        m->bi[find_bi(m, m->tri[i].w[0], m->tri[i].w[1])].bow = log10(lambda);
        for (size_t k = i; k < j; k++) {
            double lower = pow(10, m->bi[find_bi(m, m->tri[k].w[1], m->tri[k].w[2])].n);
            m->tri[k].n = log10((m->tri[k].n - d3 * once(m->tri[k].n)) / sum + lambda * lower);
        }
        i = j;
    }
    return 1;
}

static int is_hesitation(int w)
{
    return w >= FIRST_HESITATION && w < FIRST_HESITATION + svc_n_hesitations;
}

/* 1 when trigram i (of sorted ones) opens its two-word history's run. */
static int new_history(const gram *tri, size_t i)
{
    return !i || tri[i].w[0] != tri[i - 1].w[0] || tri[i].w[1] != tri[i - 1].w[1];
}

/* Appends the n-gram (a, b, c) to `to` at *at (room was made). */
static void put(gram *to, size_t *at, int a, int b, int c, double p, double bow)
{
    to[(*at)++] = (gram){ { a, b, c }, p, bow };
}

/* Hesitations (asr_lang.h) let in between any two words of a pattern: every history gives
 * them HESITATION of its mass (its other continuations keep their odds), and the words after
 * one are scored as if it were not there. "a large um pepperoni" scores "pepperoni" on
 * "a large" through the trigram (large, um, pepperoni) that repeats (large, pepperoni); only
 * the word after that goes on one word of context, through (um, pepperoni)'s back-off. */
static int hesitate(model *m)
{
    const int k = svc_n_hesitations;
    const double each = log10(HESITATION / k), keep = log10(1.0 - HESITATION);
    size_t nb = m->n_bi, nt = m->n_tri, hist1 = 0, hist2 = 0;
    for (size_t i = 0; i < nb; i++)
        hist1 += !i || m->bi[i].w[0] != m->bi[i - 1].w[0];
    for (size_t i = 0; i < nt; i++)
        hist2 += new_history(m->tri, i);
    gram *bi = pl_realloc(m->bi, (nb + (size_t)k * (hist1 + (size_t)m->n_words)) * sizeof *bi);
    if (bi)
        m->bi = bi;
    gram *tri = bi ? pl_realloc(m->tri, (nt + (size_t)k * (hist2 + nb)) * sizeof *tri) : NULL;
    if (!tri)
        return 0;
    m->tri = tri;
    for (int w = 0; w < m->n_words; w++)
        m->p1[w] = is_hesitation(w) ? each : w == BOS ? m->p1[w] : m->p1[w] + keep;
    for (size_t i = 0; i < nb; i++)
        bi[i].n += keep;
    for (size_t i = 0; i < nt; i++)
        tri[i].n += keep;
    for (int u = FIRST_HESITATION; u < FIRST_HESITATION + k; u++) {
        for (size_t i = 0; i < nb; i++) {
            if (!i || bi[i].w[0] != bi[i - 1].w[0]) /* after each history word */
                put(bi, &m->n_bi, bi[i].w[0], u, 0, each, m->bow1[bi[i].w[0]]);
            put(tri, &m->n_tri, bi[i].w[0], u, bi[i].w[1], bi[i].n, 0); /* skipped over */
        }
        for (int c = 0; c < m->n_words; c++) /* what follows one: as after nothing */
            if (c != BOS && !is_hesitation(c))
                put(bi, &m->n_bi, u, c, 0, m->p1[c], 0);
        for (size_t i = 0; i < nt; i++) /* after each two-word history */
            if (new_history(tri, i))
                put(tri, &m->n_tri, tri[i].w[0], tri[i].w[1], u, each, 0);
    }
    qsort(m->bi, m->n_bi, sizeof *m->bi, cmp_gram);
    qsort(m->tri, m->n_tri, sizeof *m->tri, cmp_gram);
    return 1;
}

/* A token as the model names it: a class "<c_N>" becomes its tag "[c_N]". */
static void token(pl_strbuf *o, const model *m, int id)
{
    const char *s = m->name[id];
    int n = (int)m->len[id];
    if (s[0] == '<' && n > 2 && s[1] == 'c')
        pl_strbuf_printf(o, " [%.*s]", n - 2, s + 1);
    else
        pl_strbuf_printf(o, " %.*s", n, s);
}

static void render(pl_strbuf *o, const model *m)
{
    pl_strbuf_printf(o, "\\data\\\nngram 1=%d\nngram 2=%zu\nngram 3=%zu\n\n\\1-grams:\n",
                     m->n_words, m->n_bi, m->n_tri);
    for (int w = 0; w < m->n_words; w++) {
        pl_strbuf_printf(o, "%.6f", m->p1[w]);
        token(o, m, w);
        pl_strbuf_printf(o, " %.6f\n", m->bow1[w]);
    }
    pl_strbuf_printf(o, "\n\\2-grams:\n");
    for (size_t i = 0; i < m->n_bi; i++) {
        pl_strbuf_printf(o, "%.6f", m->bi[i].n);
        token(o, m, m->bi[i].w[0]);
        token(o, m, m->bi[i].w[1]);
        pl_strbuf_printf(o, " %.6f\n", m->bi[i].bow);
    }
    pl_strbuf_printf(o, "\n\\3-grams:\n");
    for (size_t i = 0; i < m->n_tri; i++) {
        pl_strbuf_printf(o, "%.6f", m->tri[i].n);
        for (int k = 0; k < 3; k++)
            token(o, m, m->tri[i].w[k]);
        pl_strbuf_printf(o, "\n");
    }
    pl_strbuf_printf(o, "\n\\end\\\n");
}

char *svc_lang_arpa(const svc_lang *l)
{
    model m = { 0 };
    pl_strbuf o = { 0 };
    if (count(&m, l) && estimate(&m, l) && hesitate(&m))
        render(&o, &m);
    else
        o.failed = 1;
    pl_free(m.name);
    pl_free(m.len);
    pl_free(m.n1);
    pl_free(m.bi);
    pl_free(m.tri);
    pl_free(m.p1);
    pl_free(m.bow1);
    pl_names_free(&m.ix);
    if (o.failed) {
        pl_free(o.s);
        return NULL;
    }
    return o.s;
}

/* 1 when some pattern names class c: only those are tags of the model. */
static int used(const svc_lang *l, int c)
{
    char tag[32];
    int n = snprintf(tag, sizeof tag, "<c_%d>", c);
    for (int i = 0; i < l->sentences.n; i++)
        for (const char *p = strstr(l->sentences.s[i], tag); p; p = strstr(p + 1, tag))
            if ((p == l->sentences.s[i] || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
                return 1;
    return 0;
}

char *svc_lang_classdef(const svc_lang *l)
{
    pl_strbuf o = { 0 };
    for (int c = 0; c < l->n_classes; c++) {
        const svc_strset *v = &l->classes[c];
        if (!v->n || !used(l, c))
            continue;
        pl_strbuf_printf(&o, "LMCLASS [c_%d]\n", c);
        for (int i = 0; i < v->n; i++)
            pl_strbuf_printf(&o, "%s %.9f\n", l->members[c].s[i], 1.0 / v->n);
        pl_strbuf_printf(&o, "END [c_%d]\n", c);
    }
    if (o.failed) {
        pl_free(o.s);
        return NULL;
    }
    return o.s ? o.s : pl_strdup(""); /* a bot without slots */
}
