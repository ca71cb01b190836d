/* tokenizer.c — BERT's uncased BasicTokenizer + WordPiece over UTF-8, with byte offsets.
 *
 * It reproduces the pieces of Hugging Face's BertTokenizer(do_lower_case=True) and adds
 * where each piece came from (word index, byte range). It does not add [CLS]/[SEP], pad,
 * truncate or batch: nlu/nlu.c does.
 *
 * Words are split at space, \t, \n, \r and Unicode Zs, Zl, Zp (Zl and Zp survive BERT's
 * clean-up and Python's str.split() splits on them). One pass over each word, code point c
 * by code point:
 *   - U+0000, U+FFFD and category C* (but \t \n \r, which are whitespace) are removed;
 *   - a CJK Unified Ideograph (the blocks BERT lists) is a basic token of its own;
 *   - otherwise c is lower-cased (utf8proc_tolower, one code point at a time: HF lowers
 *     each character separately before its BasicTokenizer, so Greek capital sigma becomes
 *     σ, never the final ς), decomposed to NFD (utf8proc_decompose_char) and stripped of
 *     category Mn; each resulting punctuation character (ASCII 33-47, 58-64, 91-96,
 *     123-126 or category P*) is a basic token of its own, and the rest run together;
 *   - each basic token goes through greedy longest-match-first WordPiece, or becomes
 *     [UNK] when it has more than WP_MAX_WORD_CHARS characters or no full match.
 * A basic token is collected in a fixed buffer of WP_MAX_WORD_CHARS characters (longer ones
 * are [UNK] anyway, so only their range is kept), which is why nothing is allocated per
 * character or per word; the pieces array grows by doubling.
 *
 * Known differences from HF running on Python 3.11: utf8proc 2.8 carries Unicode 15.0 and
 * Python's unicodedata 14.0, so a character new in 15.0 is kept here (and usually gives
 * [UNK]) where Python sees it as unassigned (Cn), a control, and drops it. NFD is applied
 * code point by code point without canonical reordering; reordering only moves characters
 * of nonzero combining class, nearly all Mn and dropped anyway (a few Mc, such as the
 * musical symbol stems, could come out in another order). HF's newer versions apply NFC
 * before splitting words; that changes nothing here, as the later NFD undoes it. Every code
 * point Python 3.11 knows, tried between two letters, gives the same pieces and offsets as
 * tests/reference/tokenizer.py (checked once exhaustively; test_tokenizer_ref.py samples).
 */
#include <limits.h>
#include <string.h>

#include <utf8proc.h>

#include "nlu/text/tokenizer.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

enum { RUN_CAP = WP_MAX_WORD_CHARS + WP_DECOMP_CAP };

/* The basic token being collected: its normalized characters as UTF-8 and where each came
 * from. Past RUN_CAP characters only n and the range grow: the token is [UNK] anyway. */
typedef struct wp_run {
    int n;                    /* characters so far, may exceed RUN_CAP */
    uint16_t at[RUN_CAP + 1]; /* byte offset of each character in bytes */
    char bytes[RUN_CAP * 4];
    size_t src_start[RUN_CAP], src_end[RUN_CAP]; /* source bytes of each character */
    size_t start, end;                           /* source bytes of the whole run */
} wp_run;

typedef struct wp_state {
    const wp_vocab *v;
    wp_tokens *out;
    size_t cap;     /* capacity of out->pieces */
    int word;       /* index of the current word */
    int word_first; /* index of the current word's first piece */
    wp_run run;
} wp_state;

int wp_is_space(uint32_t c)
{
    if (c < 0x80)
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
    utf8proc_category_t cat = utf8proc_category((utf8proc_int32_t)c);
    return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL ||
           cat == UTF8PROC_CATEGORY_ZP;
}

int wp_is_removed(uint32_t c)
{
    if (c < 0x80)
        return c < 0x20 || c == 0x7F;
    switch (utf8proc_category((utf8proc_int32_t)c)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN: return 1;
    default: return c == 0xFFFD;
    }
}

int wp_is_punct(uint32_t c)
{
    if (c < 0x80)
        return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
               (c >= 123 && c <= 126);
    switch (utf8proc_category((utf8proc_int32_t)c)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO: return 1;
    default: return 0;
    }
}

int wp_is_cjk(uint32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

int wp_normalize(uint32_t c, uint32_t out[WP_DECOMP_CAP])
{
    if (c < 0x80) {
        out[0] = c >= 'A' && c <= 'Z' ? c + 32 : c;
        return 1;
    }
    utf8proc_int32_t lc = utf8proc_tolower((utf8proc_int32_t)c), d[WP_DECOMP_CAP];
    utf8proc_ssize_t n = utf8proc_decompose_char(lc, d, WP_DECOMP_CAP, UTF8PROC_DECOMPOSE, NULL);
    if (n < 1 || n > WP_DECOMP_CAP) { /* not with Unicode 15; keep the character whole */
        d[0] = lc;
        n = 1;
    }
    int k = 0;
    for (utf8proc_ssize_t i = 0; i < n; i++)
        if (utf8proc_category(d[i]) != UTF8PROC_CATEGORY_MN)
            out[k++] = (uint32_t)d[i];
    return k;
}

static parley_status push(wp_state *st, int id, size_t start, size_t end)
{
    wp_tokens *t = st->out;
    if ((size_t)t->n_pieces == st->cap) {
        size_t cap = st->cap * 2;
        wp_piece *p = pl_realloc(t->pieces, cap * sizeof *p);
        if (!p)
            return pl_nomem("tokenizer: %zu pieces", cap);
        t->pieces = p;
        st->cap = cap;
    }
    t->pieces[t->n_pieces++] = (wp_piece){ id, st->word, start, end };
    return PARLEY_OK;
}

static void run_add(wp_run *r, uint32_t c, size_t start, size_t end)
{
    if (r->n == 0)
        r->start = start;
    r->end = end;
    if (r->n < RUN_CAP) {
        char *b = r->bytes + r->at[r->n];
        int k = c < 0x80 ? (*b = (char)c, 1)
                         : (int)utf8proc_encode_char((utf8proc_int32_t)c, (utf8proc_uint8_t *)b);
        r->at[r->n + 1] = (uint16_t)(r->at[r->n] + k);
        r->src_start[r->n] = start;
        r->src_end[r->n] = end;
    }
    r->n++;
}

/* Greedy longest-match-first WordPiece over the collected basic token, then empties it. */
static parley_status flush(wp_state *st)
{
    wp_run *r = &st->run;
    const wp_vocab *v = st->v;
    parley_status s = PARLEY_OK;
    if (r->n == 0)
        return PARLEY_OK;
    int first = st->out->n_pieces, n = r->n;
    r->n = 0;
    if (n > WP_MAX_WORD_CHARS)
        return push(st, wp_vocab_unk(v), r->start, r->end);
    size_t max_len = wp_vocab_max_len(v);
    for (int a = 0; a < n;) {
        int b = n, id = -1;
        while (b > a && (size_t)(r->at[b] - r->at[a]) > max_len) /* no token is that long */
            b--;
        for (; b > a; b--)
            if ((id = wp_vocab_find_piece(v, a > 0, r->bytes + r->at[a],
                                          (size_t)(r->at[b] - r->at[a]))) >= 0)
                break;
        if (id < 0) {
            st->out->n_pieces = first;
            return push(st, wp_vocab_unk(v), r->start, r->end);
        }
        if ((s = push(st, id, r->src_start[a], r->src_end[b - 1])) != PARLEY_OK)
            return s;
        a = b;
    }
    return PARLEY_OK;
}

/* A code point that gives no character still belongs to the character before it in the
 * word: widen that character's range (in the open run, or the last piece already made). */
static void extend_prev(wp_state *st, size_t end)
{
    wp_run *r = &st->run;
    if (r->n > 0) {
        r->end = end;
        if (r->n <= RUN_CAP)
            r->src_end[r->n - 1] = end;
    } else if (st->out->n_pieces > st->word_first) {
        st->out->pieces[st->out->n_pieces - 1].end = end;
    }
}

/* Feeds one non-whitespace code point c = text[start..end) of the current word. */
static parley_status feed(wp_state *st, uint32_t c, size_t start, size_t end)
{
    parley_status s = PARLEY_OK;
    uint32_t ch[WP_DECOMP_CAP];
    int n = wp_is_removed(c) ? 0 : wp_normalize(c, ch);
    if (n == 0) {
        extend_prev(st, end);
        return PARLEY_OK;
    }
    int alone = wp_is_cjk(c);
    if (alone && (s = flush(st)) != PARLEY_OK)
        return s;
    for (int i = 0; i < n; i++) {
        int punct = wp_is_punct(ch[i]);
        if (punct && (s = flush(st)) != PARLEY_OK)
            return s;
        run_add(&st->run, ch[i], start, end);
        if (punct && (s = flush(st)) != PARLEY_OK)
            return s;
    }
    return alone ? flush(st) : PARLEY_OK;
}

/* wp_utf8_next with ASCII, by far the most common, kept inline. */
static inline int decode(const unsigned char *s, size_t len, uint32_t *c, const char **why)
{
    if (s[0] < 0x80) {
        *c = s[0];
        return 1;
    }
    return wp_utf8_next(s, len, c, why);
}

parley_status wp_tokenize(const wp_vocab *v, const char *text, size_t len, wp_tokens *out)
{
    const unsigned char *s = (const unsigned char *)text;
    parley_status st = PARLEY_OK;
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "wp_tokenize: out is NULL");
    memset(out, 0, sizeof *out);
    if (!v || (!text && len))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "wp_tokenize: vocabulary or text is NULL");
    if (len > INT_MAX / 2)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "wp_tokenize: text of %zu bytes is too long", len);

    /* First pass: check the UTF-8 and count words, so a bad text allocates nothing and the
     * word arrays get their exact size. */
    size_t n_cp = 0, i;
    int n_words = 0, in_word = 0;
    const char *why;
    for (i = 0; i < len; n_cp++) {
        uint32_t c;
        int k = decode(s + i, len - i, &c, &why);
        if (!k)
            return pl_fail(PARLEY_ERR_UTF8, "invalid UTF-8 at byte %zu (0x%02X): %s", i, s[i], why);
        int space = wp_is_space(c);
        n_words += !space && !in_word;
        in_word = !space;
        i += (size_t)k;
    }
    if (n_words == 0)
        return PARLEY_OK;

    wp_state state = { .v = v, .out = out, .cap = n_cp / 4 + 4, .word = -1 };
    out->word_start = pl_malloc(2 * (size_t)n_words * sizeof *out->word_start);
    out->pieces = pl_malloc(state.cap * sizeof *out->pieces);
    if (!out->word_start || !out->pieces) {
        st = pl_nomem("tokenizer: %d words", n_words);
        goto fail;
    }
    out->word_end = out->word_start + n_words;
    out->n_words = n_words;

    /* Second pass: words, basic tokens and pieces. */
    in_word = 0;
    for (i = 0; i < len;) {
        uint32_t c;
        int k = decode(s + i, len - i, &c, &why); /* cannot fail after the first pass */
        if (wp_is_space(c)) {
            if (in_word) {
                if ((st = flush(&state)) != PARLEY_OK)
                    goto fail;
                out->word_end[state.word] = i;
                in_word = 0;
            }
        } else {
            if (!in_word) {
                in_word = 1;
                state.word++;
                state.word_first = out->n_pieces;
                out->word_start[state.word] = i;
            }
            if ((st = feed(&state, c, i, i + (size_t)k)) != PARLEY_OK)
                goto fail;
        }
        i += (size_t)k;
    }
    if (in_word) {
        if ((st = flush(&state)) != PARLEY_OK)
            goto fail;
        out->word_end[state.word] = len;
    }
    return PARLEY_OK;
fail:
    wp_tokens_free(out);
    return st;
}

void wp_tokens_free(wp_tokens *t)
{
    if (!t)
        return;
    pl_free(t->pieces);
    pl_free(t->word_start);
    memset(t, 0, sizeof *t);
}

int wp_is_punct_piece(const char *text, const wp_piece *p)
{
    const unsigned char *s = (const unsigned char *)text;
    const char *why;
    int seen = 0;
    for (size_t i = p->start; i < p->end;) {
        uint32_t c, ch[WP_DECOMP_CAP];
        int k = decode(s + i, p->end - i, &c, &why);
        if (k == 0)
            return 0;
        int n = wp_is_removed(c) ? 0 : wp_normalize(c, ch);
        for (int j = 0; j < n; j++) {
            if (!wp_is_punct(ch[j]))
                return 0;
            seen = 1;
        }
        i += (size_t)k;
    }
    return seen;
}
