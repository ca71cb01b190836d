/* asr_lexicon.c — a bot's own pronunciations (the asr.pocketsphinx node's `lexicon`): its
 * words as its speakers say them where the pronunciation dictionary says them otherwise
 * ("grande" the coffee size, G R AA N D EY, where cmudict has only the Rio Grande's G R AE N
 * D) or not at all (a brand, a street, a name). asr_lang.c hears each word in these first,
 * then in the dictionary's own.
 *
 * The file is the dictionary's format: a word, then its phones, one pronunciation a line;
 * "word(2) ..." lines allowed; '#' starts a comment; blank lines skipped. Words are
 * lower-cased, phones written one space apart. Every phone must be one the dictionary uses (the
 * acoustic model's set, since a dictionary is made for its model): a typo in a phone would
 * otherwise fail only when the decoder loads, without naming the line.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "sdk/base/strbuf.h"
#include "services/asr_lang.h"

enum { MAX_PHONES = 128 };

/* The distinct phones of the dictionary text (every token after each line's word). */
static int dict_phones(const char *dict, char phones[][8], int cap)
{
    int n = 0;
    for (const char *line = dict; line && *line;) {
        const char *end = strchr(line, '\n'), *p = line + strcspn(line, " \t\n");
        end = end ? end : line + strlen(line);
        while (p < end) {
            p += strspn(p, " \t\r");
            size_t len = strcspn(p, " \t\r\n");
            if (!len || p >= end)
                break;
            int k = 0;
            while (k < n && (strlen(phones[k]) != len || strncmp(phones[k], p, len)))
                k++;
            if (k == n && n < cap && len < sizeof phones[0]) {
                memcpy(phones[n], p, len);
                phones[n++][len] = 0;
            }
            p += len;
        }
        line = *end ? end + 1 : NULL;
    }
    return n;
}

typedef struct entry {
    char *word, *phones; /* into the file's text */
    int line;            /* for a stable order */
} entry;

static int by_word(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = strcmp(x->word, y->word);
    return c ? c : x->line - y->line;
}

/* Splits the file's text into entries (modifying it), checking each line's phones. */
static parley_status parse(const char *path, char *text, const char *dict, entry **out, int *n)
{
    char phones[MAX_PHONES][8];
    const int n_phones = dict_phones(dict, phones, MAX_PHONES);
    entry *e = NULL;
    int cap = 0, lineno = 0;
    *n = 0;
    for (char *line = text; line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *word = line + strspn(line, " \t\r"), *p = word + strcspn(word, " \t\r");
        line = next;
        if (!*word)
            continue;
        if (*p)
            *p++ = 0;
        char *paren = strchr(word, '(');
        if (paren) /* "word(2)": a variant, numbered by its place in the file */
            *paren = 0;
        for (char *c = word; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        p += strspn(p, " \t\r");
        char *end = p + strlen(p);
        while (end > p && strchr(" \t\r", end[-1]))
            *--end = 0;
        if (!*word || !*p) {
            pl_free(e);
            return pl_fail(PARLEY_ERR_CONFIG, "%s:%d: a word and its phones, separated by a space",
                           path, lineno);
        }
        char *out = p; /* the phones rewritten in place, one space apart */
        for (char *ph = p; *ph;) {
            size_t len = strcspn(ph, " \t\r");
            int k = 0;
            while (k < n_phones && (strlen(phones[k]) != len || strncmp(phones[k], ph, len)))
                k++;
            if (k == n_phones) {
                pl_strbuf all = { 0 };
                for (int j = 0; j < n_phones; j++)
                    pl_strbuf_printf(&all, j ? " %s" : "%s", phones[j]);
                parley_status st =
                        pl_fail(PARLEY_ERR_CONFIG,
                                "%s:%d: '%.*s' is not a phone of the pronunciation dictionary "
                                "(its phones: %s)",
                                path, lineno, (int)len, ph, all.s ? all.s : "none");
                pl_free(all.s);
                pl_free(e);
                return st;
            }
            if (out != p)
                *out++ = ' ';
            memmove(out, ph, len);
            out += len;
            ph += len;
            ph += strspn(ph, " \t\r");
        }
        *out = 0;
        if (*n == cap) {
            cap = cap ? 2 * cap : 32;
            entry *g = pl_realloc(e, (size_t)cap * sizeof *g);
            if (!g) {
                pl_free(e);
                return pl_nomem("the lexicon %s", path);
            }
            e = g;
        }
        e[(*n)++] = (entry){ word, p, lineno };
    }
    *out = e;
    return PARLEY_OK;
}

parley_status svc_lexicon_load(const char *path, char *src, const char *dict, char **text,
                               pl_names *ix)
{
    parley_status st;
    entry *e = NULL;
    int n = 0;
    *text = NULL;
    if ((st = parse(path, src, dict, &e, &n)) != PARLEY_OK)
        return st;
    if (n)
        qsort(e, (size_t)n, sizeof *e, by_word);
    pl_strbuf o = { 0 };
    size_t *at = pl_calloc((size_t)n + 1, sizeof *at); /* each word's first line's offset */
    int words = 0;
    for (int i = 0, k = 1; i < n; i++) {
        int same = i && !strcmp(e[i].word, e[i - 1].word);
        k = same ? k + 1 : 1;
        if (!same && at)
            at[words++] = o.len;
        if (k > 1)
            pl_strbuf_printf(&o, "%s(%d) %s\n", e[i].word, k, e[i].phones);
        else
            pl_strbuf_printf(&o, "%s %s\n", e[i].word, e[i].phones);
    }
    st = !at || o.failed ? pl_nomem("the lexicon %s", path)
                         : pl_names_reserve(ix, (size_t)words + 1);
    for (int i = 0; st == PARLEY_OK && i < words; i++)
        pl_names_add(ix, o.s + at[i], strcspn(o.s + at[i], " ("), (int)at[i]);
    pl_free(at);
    pl_free(e);
    if (st != PARLEY_OK) {
        pl_free(o.s);
        pl_names_free(ix);
        return st;
    }
    *text = o.s ? o.s : pl_strdup("");
    return *text ? PARLEY_OK : pl_nomem("the lexicon %s", path);
}
