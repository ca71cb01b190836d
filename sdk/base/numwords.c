/* numwords.c — English cardinal numbers as words and as digits (numwords.h). */
#include <string.h>

#include "sdk/base/alloc.h"
#include "sdk/base/numwords.h"

static const char *const ones[] = { "zero",    "one",     "two",       "three",    "four",
                                    "five",    "six",     "seven",     "eight",    "nine",
                                    "ten",     "eleven",  "twelve",    "thirteen", "fourteen",
                                    "fifteen", "sixteen", "seventeen", "eighteen", "nineteen" };
static const char *const tens[] = { "",      "",      "twenty",  "thirty", "forty",
                                    "fifty", "sixty", "seventy", "eighty", "ninety" };

void pl_number_spell(pl_strbuf *o, int n)
{
    if (n >= 1000) {
        pl_number_spell(o, n / 1000);
        pl_strbuf_printf(o, " thousand");
        if (!(n %= 1000))
            return;
    }
    if (n >= 100) {
        pl_strbuf_printf(o, " %s hundred", ones[n / 100]);
        if (!(n %= 100))
            return;
    }
    if (n >= 20) {
        pl_strbuf_printf(o, " %s", tens[n / 10]);
        if (n % 10)
            pl_strbuf_printf(o, " %s", ones[n % 10]);
        return;
    }
    pl_strbuf_printf(o, " %s", ones[n]);
}

int pl_number_pairs(pl_strbuf *o, int n)
{
    int hi = n / 100, lo = n % 100;
    if (n < 100 || n > 9999 || (n < 1000 && !lo) || !(n % 1000))
        return 0;
    pl_number_spell(o, hi);
    if (!lo)
        pl_strbuf_printf(o, " hundred");
    else if (lo < 10)
        pl_strbuf_printf(o, " oh %s", ones[lo]);
    else
        pl_number_spell(o, lo);
    return 1;
}

/* What a word stands for in a number. */
enum { W_NONE = -1, W_A = -2, W_AND = -3, W_HUNDRED = 100, W_THOUSAND = 1000 };

static int same(const char *w, size_t n, const char *word)
{
    if (strlen(word) != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((w[i] >= 'A' && w[i] <= 'Z' ? w[i] - 'A' + 'a' : w[i]) != word[i])
            return 0;
    return 1;
}

/* 0-19, 20-90 by tens, W_HUNDRED, W_THOUSAND, W_A, W_AND or W_NONE. */
static int word_value(const char *w, size_t n)
{
    for (int v = 0; v < 20; v++)
        if (same(w, n, ones[v]))
            return v;
    for (int t = 2; t < 10; t++)
        if (same(w, n, tens[t]))
            return 10 * t;
    return same(w, n, "hundred")    ? W_HUNDRED
           : same(w, n, "thousand") ? W_THOUSAND
           : same(w, n, "a")        ? W_A
           : same(w, n, "and")      ? W_AND
                                    : W_NONE;
}

static int is_tens(int v)
{
    return v >= 20 && v < 100 && v % 10 == 0;
}

/* The words of a text and what each stands for. */
typedef struct words {
    const char **at;
    size_t *len;
    int *value;
    int n;
} words;

/* The number below 100 that words [i, ...) start with: its value, and *k words; -1 if none. */
static int below_100(const words *w, int i, int *k)
{
    int v = i < w->n ? w->value[i] : W_NONE;
    if (is_tens(v)) {
        int u = i + 1 < w->n ? w->value[i + 1] : W_NONE;
        *k = u >= 1 && u <= 9 ? 2 : 1;
        return *k == 2 ? v + u : v;
    }
    *k = 1;
    return v >= 0 && v < 20 ? v : -1;
}

/* After a multiple of `unit` (hundred or thousand) that ends at word j, the rest below it: an
 * optional "and", then a number of at least 1 read by `rest`; *j moves past it. */
static int rest_after(const words *w, int *j, int (*rest)(const words *, int, int *))
{
    int k, at = *j + (*j < w->n && w->value[*j] == W_AND), v = rest(w, at, &k);
    if (v < 1)
        return 0;
    *j = at + k;
    return v;
}

/* The number words [i, ...) start with, read as "[a | N] UNIT [and] REST" (N and REST read
 * by `below`, N under `unit`), or as `below` reads it alone; *k words. UNIT is the word
 * `unit_word` standing for `unit`: hundred below 1,000, thousand below 1,000,000. */
static int scaled(const words *w, int i, int *k, int unit_word, int unit,
                  int (*below)(const words *, int, int *))
{
    int n, j, m;
    if (i + 1 < w->n && w->value[i] == W_A && w->value[i + 1] == unit_word) {
        n = 1;
        j = i + 2;
    } else if ((n = below(w, i, &m)) >= 1 && n < unit && i + m < w->n &&
               w->value[i + m] == unit_word) {
        j = i + m + 1;
    } else {
        return below(w, i, k);
    }
    int v = unit * n + rest_after(w, &j, below);
    *k = j - i;
    return v;
}

static int below_1000(const words *w, int i, int *k)
{
    return scaled(w, i, k, W_HUNDRED, 100, below_100);
}

static int number(const words *w, int i, int *k)
{
    return scaled(w, i, k, W_THOUSAND, 1000, below_1000);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Adds one word, split in two at a hyphen between tens and ones ("twenty-one"). */
static void add_word(words *w, const char *s, size_t n)
{
    const char *dash = memchr(s, '-', n);
    if (dash) {
        size_t a = (size_t)(dash - s);
        int t = word_value(s, a), u = word_value(dash + 1, n - a - 1);
        if (is_tens(t) && u >= 1 && u <= 9) {
            w->at[w->n] = s;
            w->len[w->n] = a;
            w->value[w->n++] = t;
            w->at[w->n] = dash + 1;
            w->len[w->n] = n - a - 1;
            w->value[w->n++] = u;
            return;
        }
    }
    w->at[w->n] = s;
    w->len[w->n] = n;
    w->value[w->n++] = word_value(s, n);
}

char *pl_number_digits(const char *text, size_t len, int *changed)
{
    /* a word of n bytes is at most two words (a hyphen splits it), so len + 1 entries do */
    words w = { pl_malloc((len + 1) * sizeof *w.at), pl_malloc((len + 1) * sizeof *w.len),
                pl_malloc((len + 1) * sizeof *w.value), 0 };
    char *out = pl_malloc(len + 1);
    size_t n = 0;
    if (changed)
        *changed = 0;
    if (!w.at || !w.len || !w.value || !out) {
        pl_free(out);
        out = NULL;
        goto done;
    }
    for (size_t i = 0; i < len;) {
        while (i < len && is_space(text[i]))
            i++;
        size_t from = i;
        while (i < len && !is_space(text[i]))
            i++;
        if (i > from)
            add_word(&w, text + from, i - from);
    }
    for (int i = 0; i < w.n;) {
        int k, v = number(&w, i, &k);
        if (n)
            out[n++] = ' ';
        if (v < 0) {
            memcpy(out + n, w.at[i], w.len[i]);
            n += w.len[i++];
            continue;
        }
        char digits[16];
        int d = 0;
        do
            digits[d++] = (char)('0' + v % 10);
        while (v /= 10);
        while (d)
            out[n++] = digits[--d];
        i += k;
        if (changed)
            *changed = 1;
    }
    out[n] = '\0';
done:
    pl_free(w.at);
    pl_free(w.len);
    pl_free(w.value);
    return out;
}
