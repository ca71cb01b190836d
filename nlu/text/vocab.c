/* vocab.c — loading, saving and looking up a WordPiece vocabulary (vocab.txt).
 *
 * The tokens live back to back, NUL-terminated, in one buffer indexed by id; an
 * open-addressing table (linear probing, at most half full) maps FNV-1a hashes to ids, so a
 * lookup allocates nothing, and a "##" continuation is looked up by hashing the prefix first
 * instead of building the prefixed string. The strict UTF-8 decoder shared with the
 * tokenizer lives here too. This file does not split text into pieces: tokenizer.c does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nlu/text/vocab.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

enum { SP_PAD, SP_UNK, SP_CLS, SP_SEP, SP_MASK, SP_COUNT };
static const char *const special_names[SP_COUNT] = { "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]" };

typedef struct wp_slot {
    uint32_t hash; /* folded hash of the token, compared before the bytes */
    int32_t id;    /* -1 = empty */
} wp_slot;

struct wp_vocab {
    char *text;    /* every token, NUL-terminated, in id order */
    uint32_t *off; /* (n + 1) offset of each token in text; off[n] = bytes used */
    int n;
    wp_slot *table; /* (mask + 1) */
    size_t mask;
    size_t max_len; /* longest token in bytes, "##" prefix not counted */
    int special[SP_COUNT];
};

#define FNV_BASIS 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t fnv1a(uint64_t h, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * FNV_PRIME;
    return h;
}

/* The table index uses the low bits, so fold the high half of the 64-bit state into them. */
static uint32_t fold(uint64_t h)
{
    return (uint32_t)(h ^ (h >> 32));
}

static size_t token_len(const wp_vocab *v, int id)
{
    return v->off[id + 1] - v->off[id] - 1;
}

int wp_utf8_next(const unsigned char *s, size_t len, uint32_t *cp, const char **why)
{
    uint32_t c = s[0], min;
    int n;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c < 0xC0) {
        *why = "stray continuation byte";
        return 0;
    } else if (c < 0xE0) {
        n = 2, c &= 0x1F, min = 0x80;
    } else if (c < 0xF0) {
        n = 3, c &= 0x0F, min = 0x800;
    } else if (c < 0xF8) {
        n = 4, c &= 0x07, min = 0x10000;
    } else {
        *why = "invalid lead byte";
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((size_t)i >= len || (s[i] & 0xC0) != 0x80) {
            *why = "truncated sequence";
            return 0;
        }
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min) {
        *why = "overlong encoding";
        return 0;
    }
    if (c >= 0xD800 && c < 0xE000) {
        *why = "UTF-16 surrogate";
        return 0;
    }
    if (c > 0x10FFFF) {
        *why = "code point above U+10FFFF";
        return 0;
    }
    *cp = c;
    return n;
}

/* Where token `id` came from, for error messages: "path:line" or "token id". */
static void where(char *buf, size_t cap, const char *path, int id)
{
    if (path)
        snprintf(buf, cap, "%s:%d", path, id + 1);
    else
        snprintf(buf, cap, "token %d", id);
}

static int table_find(const wp_vocab *v, uint32_t h, int continuation, const char *s, size_t len)
{
    for (size_t i = h & v->mask;; i = (i + 1) & v->mask) {
        const wp_slot *sl = &v->table[i];
        if (sl->id < 0)
            return -1;
        if (sl->hash != h)
            continue;
        const char *t = v->text + v->off[sl->id];
        size_t tl = token_len(v, sl->id);
        if (continuation ? tl == len + 2 && t[0] == '#' && t[1] == '#' && !memcmp(t + 2, s, len)
                         : tl == len && !memcmp(t, s, len))
            return sl->id;
    }
}

/* Checks every token of v->text/v->off and builds the hash table. `path` names the file
 * (NULL for a token list) in error messages. */
static parley_status index_tokens(wp_vocab *v, const char *path)
{
    char loc[512];
    size_t cap = 16;
    while (cap < 2 * (size_t)v->n)
        cap *= 2;
    v->table = pl_malloc(cap * sizeof *v->table);
    if (!v->table)
        return pl_nomem("vocabulary of %d tokens", v->n);
    for (size_t i = 0; i < cap; i++)
        v->table[i].id = -1;
    v->mask = cap - 1;

    for (int id = 0; id < v->n; id++) {
        const char *t = v->text + v->off[id];
        size_t len = token_len(v, id);
        if (len == 0) {
            where(loc, sizeof loc, path, id);
            return pl_fail(PARLEY_ERR_FORMAT, "%s: empty token", loc);
        }
        for (size_t i = 0; i < len;) {
            uint32_t cp;
            const char *why;
            int k = wp_utf8_next((const unsigned char *)t + i, len - i, &cp, &why);
            if (!k) {
                where(loc, sizeof loc, path, id);
                return pl_fail(PARLEY_ERR_FORMAT, "%s: invalid UTF-8 at byte %zu of the token: %s",
                               loc, i, why);
            }
            /* A token with these could not be written back as one line of vocab.txt (and
             * Python reads a lone "\r" as a line end). */
            if (cp == 0 || cp == '\n' || cp == '\r') {
                where(loc, sizeof loc, path, id);
                return pl_fail(PARLEY_ERR_FORMAT, "%s: byte %zu of the token is %s", loc, i,
                               cp ? "a line break" : "NUL");
            }
            i += (size_t)k;
        }
        uint32_t h = fold(fnv1a(FNV_BASIS, (const unsigned char *)t, len));
        int dup = table_find(v, h, 0, t, len);
        if (dup >= 0) {
            where(loc, sizeof loc, path, id);
            return pl_fail(PARLEY_ERR_FORMAT, "%s: duplicate token '%s' (first as %s %d)", loc, t,
                           path ? "line" : "token", path ? dup + 1 : dup);
        }
        size_t i = h & v->mask;
        while (v->table[i].id >= 0)
            i = (i + 1) & v->mask;
        v->table[i] = (wp_slot){ h, id };
        size_t bare = len > 2 && t[0] == '#' && t[1] == '#' ? len - 2 : len;
        if (bare > v->max_len)
            v->max_len = bare;
    }
    for (int s = 0; s < SP_COUNT; s++) {
        v->special[s] = wp_vocab_find(v, special_names[s], strlen(special_names[s]));
        if (v->special[s] < 0)
            return pl_fail(PARLEY_ERR_FORMAT, "%s: missing special token %s",
                           path ? path : "token list", special_names[s]);
    }
    return PARLEY_OK;
}

/* Reads the whole file into a fresh buffer with one spare byte at the end. */
static parley_status read_all(const char *path, char **out, size_t *size)
{
    parley_status st = PARLEY_OK;
    size_t cap = 1 << 16, n = 0;
    char *buf = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return pl_fail(PARLEY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    for (;;) {
        char *nb = pl_realloc(buf, cap + 1);
        if (!nb) {
            st = pl_nomem("%s: reading %zu bytes", path, cap);
            goto fail;
        }
        buf = nb;
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        if (cap > UINT32_MAX / 2) {
            st = pl_fail(PARLEY_ERR_FORMAT, "%s: too large for a vocabulary", path);
            goto fail;
        }
        cap *= 2;
    }
    if (ferror(f)) {
        st = pl_fail(PARLEY_ERR_IO, "%s: read error: %s", path, strerror(errno));
        goto fail;
    }
    *out = buf;
    *size = n;
    buf = NULL;
fail:
    pl_free(buf);
    fclose(f);
    return st;
}

parley_status wp_vocab_load(const char *path, wp_vocab **out)
{
    parley_status st;
    wp_vocab *v = NULL;
    char *buf = NULL;
    size_t size = 0;
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "wp_vocab_load: out is NULL");
    *out = NULL;
    if (!path)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "wp_vocab_load: path is NULL");
    if ((st = read_all(path, &buf, &size)) != PARLEY_OK)
        return st;
    /* Every line is a token, so line k holds id k - 1; a final "\n" ends the last line. */
    size_t lines = 0;
    for (size_t i = 0; i < size; i++)
        lines += buf[i] == '\n';
    if (size && buf[size - 1] != '\n')
        lines++;
    if (lines == 0) {
        st = pl_fail(PARLEY_ERR_FORMAT, "%s: empty file", path);
        goto fail;
    }
    if (lines > INT32_MAX / 2) {
        st = pl_fail(PARLEY_ERR_FORMAT, "%s: too many lines", path);
        goto fail;
    }
    v = pl_calloc(1, sizeof *v);
    if (!v || !(v->off = pl_malloc((lines + 1) * sizeof *v->off))) {
        st = pl_nomem("%s", path);
        goto fail;
    }
    /* Turn the lines into NUL-terminated tokens in place, dropping each "\r" before a "\n".
     * The write position never passes the read position, and the spare byte read_all keeps
     * holds the terminator of a last line without "\n". */
    size_t w = 0, r = 0;
    for (size_t id = 0; id < lines; id++) {
        size_t e = r;
        while (e < size && buf[e] != '\n')
            e++;
        size_t len = e - r;
        if (e < size && len && buf[e - 1] == '\r')
            len--;
        v->off[id] = (uint32_t)w;
        memmove(buf + w, buf + r, len);
        w += len;
        buf[w++] = '\0';
        r = e + 1;
    }
    v->off[lines] = (uint32_t)w;
    v->n = (int)lines;
    v->text = buf;
    buf = NULL;
    if ((st = index_tokens(v, path)) != PARLEY_OK)
        goto fail;
    *out = v;
    v = NULL;
fail:
    pl_free(buf);
    wp_vocab_free(v);
    return st;
}

parley_status wp_vocab_from_tokens(const char *const *tokens, int n, wp_vocab **out)
{
    parley_status st;
    wp_vocab *v = NULL;
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "wp_vocab_from_tokens: out is NULL");
    *out = NULL;
    if (!tokens || n <= 0 || n > INT32_MAX / 2)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "wp_vocab_from_tokens: need 1 to %d tokens, got %d",
                       INT32_MAX / 2, n);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        if (!tokens[i])
            return pl_fail(PARLEY_ERR_INVALID_ARG, "wp_vocab_from_tokens: token %d is NULL", i);
        total += strlen(tokens[i]) + 1;
        if (total > UINT32_MAX)
            return pl_fail(PARLEY_ERR_FORMAT, "wp_vocab_from_tokens: tokens too large");
    }
    v = pl_calloc(1, sizeof *v);
    if (!v || !(v->off = pl_malloc(((size_t)n + 1) * sizeof *v->off)) ||
        !(v->text = pl_malloc(total))) {
        st = pl_nomem("vocabulary of %d tokens", n);
        goto fail;
    }
    size_t w = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(tokens[i]) + 1;
        v->off[i] = (uint32_t)w;
        memcpy(v->text + w, tokens[i], len);
        w += len;
    }
    v->off[n] = (uint32_t)w;
    v->n = n;
    if ((st = index_tokens(v, NULL)) != PARLEY_OK)
        goto fail;
    *out = v;
    v = NULL;
fail:
    wp_vocab_free(v);
    return st;
}

void wp_vocab_free(wp_vocab *v)
{
    if (!v)
        return;
    pl_free(v->text);
    pl_free(v->off);
    pl_free(v->table);
    pl_free(v);
}

int wp_vocab_size(const wp_vocab *v)
{
    return v->n;
}

int wp_vocab_find_piece(const wp_vocab *v, int continuation, const char *s, size_t len)
{
    if (len > v->max_len)
        return -1;
    uint64_t h = continuation ? fnv1a(FNV_BASIS, (const unsigned char *)"##", 2) : FNV_BASIS;
    return table_find(v, fold(fnv1a(h, (const unsigned char *)s, len)), continuation, s, len);
}

int wp_vocab_find(const wp_vocab *v, const char *s, size_t len)
{
    return wp_vocab_find_piece(v, 0, s, len);
}

size_t wp_vocab_max_len(const wp_vocab *v)
{
    return v->max_len;
}

const char *wp_vocab_token(const wp_vocab *v, int id)
{
    return id >= 0 && id < v->n ? v->text + v->off[id] : NULL;
}

parley_status wp_vocab_save(const wp_vocab *v, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return pl_fail(PARLEY_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    int ok = 1;
    for (int id = 0; id < v->n && ok; id++) {
        size_t len = token_len(v, id);
        ok = fwrite(v->text + v->off[id], 1, len, f) == len && fputc('\n', f) != EOF;
    }
    int err = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        err = errno;
    }
    return ok ? PARLEY_OK : pl_fail(PARLEY_ERR_IO, "%s: write error: %s", path, strerror(err));
}

int wp_vocab_pad(const wp_vocab *v)
{
    return v->special[SP_PAD];
}
int wp_vocab_unk(const wp_vocab *v)
{
    return v->special[SP_UNK];
}
int wp_vocab_cls(const wp_vocab *v)
{
    return v->special[SP_CLS];
}
int wp_vocab_sep(const wp_vocab *v)
{
    return v->special[SP_SEP];
}
int wp_vocab_mask(const wp_vocab *v)
{
    return v->special[SP_MASK];
}
