/* wp_learn.c — learns a WordPiece vocabulary from training text (see wp_learn.h).
 *
 * The algorithm is the one Hugging Face's WordPieceTrainer runs (a BPE trainer with a "##"
 * continuing-subword prefix), with deterministic tie-breaking:
 *   1. Normalize and split each text exactly as the tokenizer's BasicTokenizer does
 *      (nlu/text/tokenizer.c): words at whitespace, controls removed, lower-cased, NFD with
 *      combining marks dropped, punctuation and CJK ideographs split into words of their
 *      own. Count each distinct word; words over WP_MAX_WORD_CHARS characters are skipped
 *      (the tokenizer makes them [UNK] whatever the vocabulary holds).
 *   2. The alphabet: every character seen, both word-initial ("a") and as a continuation
 *      ("##a"), sorted by bytes. Each word starts as its characters: "play" is
 *      p ##l ##a ##y.
 *   3. Repeatedly merge the adjacent pair of pieces with the highest count (summed over
 *      words, times each word's count) into one piece ("p" + "##l" -> "pl"), in every word
 *      at once, left to right. Ties go to the merged string that sorts first by bytes, then
 *      to the left piece that does. Stop when the vocabulary is full or no pair is seen
 *      min_frequency times.
 * The vocabulary is [PAD] [UNK] [CLS] [SEP] [MASK], the alphabet, then the merged pieces in
 * the order they were made. Since every character is there in both forms, greedy
 * longest-match WordPiece always finds a piece, and no training word becomes [UNK].
 *
 * Pair counts are kept up to date incrementally: each pair lists the words it occurs in,
 * a merge rewrites only those words (subtracting their old pairs and adding their new
 * ones), and a max-heap with lazy deletion (an entry whose count is out of date is skipped)
 * finds the next pair. This file does not tokenize (nlu/text/tokenizer.c does). Its character
 * classes restate the tokenizer's rules, which keeps them private; the test
 * tests/nlu/train/test_wp_learn.c tokenizes every training text with the learned vocabulary and
 * checks for [UNK], so the two cannot drift apart unnoticed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "nlu/text/tokenizer.h"
#include "nlu/train/wp_learn.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

/* Grows *p (of elem-byte elements, *cap of them) to hold at least need. */
static int grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 1;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = pl_realloc(*(void **)p, n * elem);
    if (!q)
        return 0;
    *(void **)p = q;
    *cap = n;
    return 1;
}

/* ---- a map from byte strings to dense ids 0, 1, 2, ... ---------------------------------- */

typedef struct wl_map {
    char *bytes; /* every key back to back, each followed by a NUL */
    size_t used, cap;
    size_t *off;   /* (n) where key id starts in bytes */
    uint32_t *len; /* (n) its length, NUL not counted */
    size_t cap_off, cap_len;
    int n;
    int *slot; /* (mask + 1) ids, -1 = empty; at most half full */
    size_t mask;
} wl_map;

static uint64_t fnv1a(const void *key, size_t n)
{
    const unsigned char *s = key;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ull;
    return h ^ (h >> 32);
}

static const char *map_key(const wl_map *m, int id)
{
    return m->bytes + m->off[id];
}

static int map_rehash(wl_map *m, size_t slots)
{
    int *s = pl_malloc(slots * sizeof *s);
    if (!s)
        return 0;
    memset(s, 0xff, slots * sizeof *s);
    for (int id = 0; id < m->n; id++) {
        size_t i = fnv1a(map_key(m, id), m->len[id]) & (slots - 1);
        while (s[i] >= 0)
            i = (i + 1) & (slots - 1);
        s[i] = id;
    }
    pl_free(m->slot);
    m->slot = s;
    m->mask = slots - 1;
    return 1;
}

/* The id of key[0..len); -1 when absent. */
static int map_find(const wl_map *m, const void *key, size_t len)
{
    if (!m->slot)
        return -1;
    for (size_t i = fnv1a(key, len) & m->mask;; i = (i + 1) & m->mask) {
        int id = m->slot[i];
        if (id < 0 || (m->len[id] == len && !memcmp(map_key(m, id), key, len)))
            return id;
    }
}

/* The id of key[0..len), added when new (*added says which; may be NULL). 0 on no memory. */
static int map_id(wl_map *m, const void *key, size_t len, int *id, int *added)
{
    int found = map_find(m, key, len);
    if (added)
        *added = found < 0;
    if (found >= 0) {
        *id = found;
        return 1;
    }
    size_t need_slots = m->slot ? m->mask + 1 : 64;
    while ((size_t)m->n * 2 + 2 > need_slots)
        need_slots *= 2;
    if ((!m->slot || need_slots != m->mask + 1) && !map_rehash(m, need_slots))
        return 0;
    if (!grow(&m->bytes, &m->cap, m->used + len + 1, 1) ||
        !grow(&m->off, &m->cap_off, (size_t)m->n + 1, sizeof *m->off) ||
        !grow(&m->len, &m->cap_len, (size_t)m->n + 1, sizeof *m->len))
        return 0;
    memcpy(m->bytes + m->used, key, len);
    m->bytes[m->used + len] = '\0';
    m->off[m->n] = m->used;
    m->len[m->n] = (uint32_t)len;
    m->used += len + 1;
    size_t i = fnv1a(key, len) & m->mask;
    while (m->slot[i] >= 0)
        i = (i + 1) & m->mask;
    m->slot[i] = *id = m->n++;
    return 1;
}

static void map_clear(wl_map *m)
{
    pl_free(m->bytes);
    pl_free(m->off);
    pl_free(m->len);
    pl_free(m->slot);
    memset(m, 0, sizeof *m);
}

/* ---- step 1: words as the BasicTokenizer makes them ------------------------------------ */

enum { WORD_BYTES = (WP_MAX_WORD_CHARS + WP_DECOMP_CAP) * 4, SP_TOKENS = 5 };
static const char *const specials[SP_TOKENS] = { "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]" };

typedef struct wl_word {
    char bytes[WORD_BYTES];
    size_t len;
    int chars; /* may pass WP_MAX_WORD_CHARS: then only counted, and skipped */
} wl_word;

/* One pair of adjacent pieces: its count and the words it was seen in. */
typedef struct wl_pair {
    long count; /* occurrences, each word's counted freq times */
    int *words; /* words it was seen in (may repeat, may be stale) */
    int n_words;
    size_t cap_words;
    int stamp; /* the merge that last touched it */
} wl_pair;

typedef struct wl_learner {
    wl_map words; /* distinct normalized words */
    long *freq;   /* (words.n) occurrences */
    size_t cap_freq;
    wl_map syms;    /* pieces: alphabet, then merges; "##" kept in the string */
    size_t *wstart; /* (words.n) first symbol of each word in sym */
    int *wlen;      /* (words.n) symbols left in each word after merges */
    int *sym;       /* every word's symbols back to back */
    int *wstamp;    /* (words.n) the merge that last rewrote the word */
    wl_map pairs;   /* (left, right) symbol ids as 8 bytes -> index into pair */
    wl_pair *pair;  /* (pairs.n) */
    size_t cap_pair;
    int *touched; /* pairs touched by the current merge */
    size_t n_touched, cap_touched;
    struct wl_entry {
        long count;
        int pair;
    } * heap;
    size_t n_heap, cap_heap;
} wl_learner;

/* Counts the word collected in w (if any and not too long) and empties w. */
static int word_flush(wl_learner *l, wl_word *w)
{
    int id, added, ok = 1;
    if (w->chars > 0 && w->chars <= WP_MAX_WORD_CHARS) {
        ok = map_id(&l->words, w->bytes, w->len, &id, &added) &&
             grow(&l->freq, &l->cap_freq, (size_t)l->words.n, sizeof *l->freq);
        if (ok) {
            if (added)
                l->freq[id] = 0;
            l->freq[id]++;
        }
    }
    w->len = 0;
    w->chars = 0;
    return ok;
}

static void word_add(wl_word *w, uint32_t c)
{
    if (++w->chars <= WP_MAX_WORD_CHARS)
        w->len += (size_t)utf8proc_encode_char((utf8proc_int32_t)c,
                                               (utf8proc_uint8_t *)w->bytes + w->len);
}

/* Splits and counts the words of one text (text `index` in errors). */
static parley_status count_words(wl_learner *l, const char *text, int index)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t len = strlen(text);
    wl_word w = { .len = 0 };
    for (size_t i = 0; i < len;) {
        uint32_t c, ch[WP_DECOMP_CAP];
        const char *why;
        int k = wp_utf8_next(s + i, len - i, &c, &why);
        if (!k)
            return pl_fail(PARLEY_ERR_UTF8, "text %d: invalid UTF-8 at byte %zu: %s", index, i,
                           why);
        i += (size_t)k;
        int n = wp_is_space(c) || wp_is_removed(c) ? 0 : wp_normalize(c, ch), alone = wp_is_cjk(c);
        if ((wp_is_space(c) || alone) && !word_flush(l, &w))
            goto nomem;
        for (int j = 0; j < n; j++) {
            int punct = wp_is_punct(ch[j]);
            if (punct && !word_flush(l, &w))
                goto nomem;
            word_add(&w, ch[j]);
            if (punct && !word_flush(l, &w))
                goto nomem;
        }
        if (alone && !word_flush(l, &w))
            goto nomem;
    }
    if (word_flush(l, &w))
        return PARLEY_OK;
nomem:
    return pl_nomem("learning a vocabulary: counting words");
}

/* ---- step 2: the alphabet and each word as characters ---------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The byte length of the UTF-8 character at s (the text is valid by now). */
static int char_len(const char *s)
{
    unsigned char c = (unsigned char)*s;
    return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

static parley_status make_alphabet(wl_learner *l)
{
    parley_status st = PARLEY_ERR_NOMEM;
    wl_map chars = { 0 };
    const char **sorted = NULL;
    size_t total = 0, cap_sym = 0;
    int id;
    for (int w = 0; w < l->words.n; w++)
        for (const char *p = map_key(&l->words, w); *p; p += char_len(p), total++)
            if (!map_id(&chars, p, (size_t)char_len(p), &id, NULL))
                goto fail;
    if (!(sorted = pl_malloc(((size_t)chars.n + 1) * sizeof *sorted)))
        goto fail;
    for (int c = 0; c < chars.n; c++)
        sorted[c] = map_key(&chars, c);
    qsort(sorted, (size_t)chars.n, sizeof *sorted, cmp_str);
    /* Word-initial forms first, then continuations, each in byte order. */
    for (int form = 0; form < 2; form++)
        for (int c = 0; c < chars.n; c++) {
            char piece[8] = "##";
            size_t n = strlen(sorted[c]);
            memcpy(piece + 2, sorted[c], n);
            if (!map_id(&l->syms, piece + (form ? 0 : 2), n + (form ? 2 : 0), &id, NULL))
                goto fail;
        }
    size_t nw = (size_t)l->words.n;
    l->wstart = pl_malloc((nw + 1) * sizeof *l->wstart);
    l->wlen = pl_malloc((nw + 1) * sizeof *l->wlen);
    l->wstamp = pl_calloc(nw + 1, sizeof *l->wstamp);
    if (!l->wstart || !l->wlen || !l->wstamp || !grow(&l->sym, &cap_sym, total + 1, sizeof *l->sym))
        goto fail;
    size_t at = 0;
    for (int w = 0; w < l->words.n; w++) {
        l->wstart[w] = at;
        for (const char *p = map_key(&l->words, w); *p; p += char_len(p)) {
            char piece[8] = "##";
            int first = p == map_key(&l->words, w), n = char_len(p);
            memcpy(piece + 2, p, (size_t)n);
            l->sym[at++] = map_find(&l->syms, piece + (first ? 2 : 0), (size_t)n + (first ? 0 : 2));
        }
        l->wlen[w] = (int)(at - l->wstart[w]);
    }
    st = PARLEY_OK;
fail:
    pl_free(sorted);
    map_clear(&chars);
    return st == PARLEY_OK ? st
                           : pl_fail(st, "learning a vocabulary: out of memory for the alphabet");
}

/* ---- step 3: merging ------------------------------------------------------------------- */

/* Byte i of x[0..nx) followed by y (NUL-terminated); 0 past the end. */
static unsigned char byte_at(const char *x, size_t nx, const char *y, size_t i)
{
    return (unsigned char)(i < nx ? x[i] : y[i - nx]);
}

/* The (left, right) symbols of pair p; keys sit unaligned in the map's byte arena. */
static void pair_syms(const wl_learner *l, int p, int k[2])
{
    memcpy(k, map_key(&l->pairs, p), 2 * sizeof *k);
}

/* Compares the merged strings of two pairs, then their left pieces. A merged string is the
 * left piece followed by the right one without its "##", compared without building it. */
static int pair_cmp(const wl_learner *l, int p, int q)
{
    int kp[2], kq[2];
    pair_syms(l, p, kp);
    pair_syms(l, q, kq);
    const char *lp = map_key(&l->syms, kp[0]), *rp = map_key(&l->syms, kp[1]) + 2;
    const char *lq = map_key(&l->syms, kq[0]), *rq = map_key(&l->syms, kq[1]) + 2;
    size_t np = l->syms.len[kp[0]], nq = l->syms.len[kq[0]];
    for (size_t i = 0;; i++) {
        unsigned char a = byte_at(lp, np, rp, i), b = byte_at(lq, nq, rq, i);
        if (a != b)
            return a < b ? -1 : 1;
        if (!a)
            return strcmp(lp, lq);
    }
}

/* True when heap entry x should come out before y. */
static int heap_before(const wl_learner *l, const struct wl_entry *x, const struct wl_entry *y)
{
    if (x->count != y->count)
        return x->count > y->count;
    return pair_cmp(l, x->pair, y->pair) < 0;
}

static int heap_push(wl_learner *l, int pair)
{
    if (!grow(&l->heap, &l->cap_heap, l->n_heap + 1, sizeof *l->heap))
        return 0;
    size_t i = l->n_heap++;
    struct wl_entry e = { l->pair[pair].count, pair };
    while (i > 0 && heap_before(l, &e, &l->heap[(i - 1) / 2])) {
        l->heap[i] = l->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    l->heap[i] = e;
    return 1;
}

static struct wl_entry heap_pop(wl_learner *l)
{
    struct wl_entry top = l->heap[0], last = l->heap[--l->n_heap];
    size_t i = 0, n = l->n_heap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && heap_before(l, &l->heap[c + 1], &l->heap[c]))
            c++;
        if (!heap_before(l, &l->heap[c], &last))
            break;
        l->heap[i] = l->heap[c];
        i = c;
    }
    if (n)
        l->heap[i] = last;
    return top;
}

/* Adds delta to pair (a, b) of word w, noting w in the pair's word list when `note`, and
 * the pair as touched by merge `stamp`. */
static int pair_add(wl_learner *l, int a, int b, long delta, int w, int note, int stamp)
{
    int key[2] = { a, b }, p, added;
    if (!grow(&l->pair, &l->cap_pair, (size_t)l->pairs.n + 1, sizeof *l->pair) ||
        !map_id(&l->pairs, key, sizeof key, &p, &added))
        return 0;
    wl_pair *e = &l->pair[p];
    if (added)
        *e = (wl_pair){ .stamp = -1 };
    e->count += delta;
    if (note && (e->n_words == 0 || e->words[e->n_words - 1] != w)) {
        if (!grow(&e->words, &e->cap_words, (size_t)e->n_words + 1, sizeof *e->words))
            return 0;
        e->words[e->n_words++] = w;
    }
    if (e->stamp != stamp) {
        e->stamp = stamp;
        if (!grow(&l->touched, &l->cap_touched, l->n_touched + 1, sizeof *l->touched))
            return 0;
        l->touched[l->n_touched++] = p;
    }
    return 1;
}

/* Adds sign * freq to every pair of word w; new pairs involving `fresh` (the merged
 * symbol, or -1 for all) record w in their word lists. */
static int word_pairs(wl_learner *l, int w, int sign, int fresh, int stamp)
{
    const int *s = l->sym + l->wstart[w];
    for (int i = 0; i + 1 < l->wlen[w]; i++) {
        int note = sign > 0 && (fresh < 0 || s[i] == fresh || s[i + 1] == fresh);
        if (!pair_add(l, s[i], s[i + 1], sign * l->freq[w], w, note, stamp))
            return 0;
    }
    return 1;
}

/* Replaces every (a, b) in word w by c, left to right. */
static void word_merge(wl_learner *l, int w, int a, int b, int c)
{
    int *s = l->sym + l->wstart[w], n = l->wlen[w], k = 0;
    for (int i = 0; i < n; i++) {
        if (i + 1 < n && s[i] == a && s[i + 1] == b) {
            s[k++] = c;
            i++;
        } else {
            s[k++] = s[i];
        }
    }
    l->wlen[w] = k;
}

/* Pushes the touched pairs with their new counts; stale heap entries are skipped on pop. */
static int push_touched(wl_learner *l)
{
    for (size_t i = 0; i < l->n_touched; i++)
        if (l->pair[l->touched[i]].count > 0 && !heap_push(l, l->touched[i]))
            return 0;
    l->n_touched = 0;
    return 1;
}

static parley_status learn_merges(wl_learner *l, int target, long min_frequency)
{
    for (int w = 0; w < l->words.n; w++)
        if (!word_pairs(l, w, 1, -1, 0))
            goto nomem;
    if (!push_touched(l))
        goto nomem;
    for (int merge = 1; SP_TOKENS + l->syms.n < target && l->n_heap > 0; merge++) {
        struct wl_entry e = heap_pop(l);
        if (e.count != l->pair[e.pair].count)
            continue; /* stale */
        if (e.count < min_frequency)
            break;
        int key[2], c;
        pair_syms(l, e.pair, key);
        int a = key[0], b = key[1];
        const char *left = map_key(&l->syms, a), *right = map_key(&l->syms, b) + 2;
        size_t nl = strlen(left), nr = strlen(right);
        char buf[2 * WORD_BYTES + 4];
        memcpy(buf, left, nl);
        memcpy(buf + nl, right, nr);
        if (!map_id(&l->syms, buf, nl + nr, &c, NULL))
            goto nomem;
        /* Pairs may be added while the list is walked (moving l->pair), so read it by
         * index; this pair's own list does not grow: every new pair contains c, which is
         * neither a nor b. */
        int n_words = l->pair[e.pair].n_words;
        for (int i = 0; i < n_words; i++) {
            int w = l->pair[e.pair].words[i];
            if (l->wstamp[w] == merge)
                continue;
            l->wstamp[w] = merge;
            if (!word_pairs(l, w, -1, c, merge))
                goto nomem;
            word_merge(l, w, a, b, c);
            if (!word_pairs(l, w, 1, c, merge))
                goto nomem;
        }
        if (!push_touched(l))
            goto nomem;
    }
    return PARLEY_OK;
nomem:
    return pl_nomem("learning a vocabulary: merging pieces");
}

/* ---- the whole ----------------------------------------------------------------------- */

static void learner_clear(wl_learner *l)
{
    for (int p = 0; p < l->pairs.n && l->pair; p++)
        pl_free(l->pair[p].words);
    pl_free(l->pair);
    map_clear(&l->pairs);
    map_clear(&l->words);
    map_clear(&l->syms);
    pl_free(l->freq);
    pl_free(l->wstart);
    pl_free(l->wlen);
    pl_free(l->sym);
    pl_free(l->wstamp);
    pl_free(l->touched);
    pl_free(l->heap);
}

parley_status wp_learn(const char *const *texts, int n, const wp_learn_params *p, wp_vocab **out)
{
    parley_status st;
    wl_learner l = { 0 };
    const char **tokens = NULL;
    int target = p && p->vocab_size > 0 ? p->vocab_size : WP_LEARN_DEFAULT_SIZE;
    long min_frequency =
            p && p->min_frequency > 0 ? p->min_frequency : WP_LEARN_DEFAULT_MIN_FREQUENCY;
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "wp_learn: out is NULL");
    *out = NULL;
    if (n < 0 || (n > 0 && !texts) || (p && (p->vocab_size < 0 || p->min_frequency < 0)))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "wp_learn: bad arguments");
    for (int i = 0; i < n; i++) {
        if (!texts[i]) {
            st = pl_fail(PARLEY_ERR_INVALID_ARG, "wp_learn: text %d is NULL", i);
            goto fail;
        }
        if ((st = count_words(&l, texts[i], i)) != PARLEY_OK)
            goto fail;
    }
    if ((st = make_alphabet(&l)) != PARLEY_OK ||
        (st = learn_merges(&l, target, min_frequency)) != PARLEY_OK)
        goto fail;
    int n_tokens = SP_TOKENS + l.syms.n;
    if (!(tokens = pl_malloc((size_t)n_tokens * sizeof *tokens))) {
        st = pl_nomem("learning a vocabulary: %d tokens", n_tokens);
        goto fail;
    }
    for (int i = 0; i < SP_TOKENS; i++)
        tokens[i] = specials[i];
    for (int i = 0; i < l.syms.n; i++)
        tokens[SP_TOKENS + i] = map_key(&l.syms, i);
    st = wp_vocab_from_tokens(tokens, n_tokens, out);
fail:
    pl_free(tokens);
    learner_clear(&l);
    return st;
}
