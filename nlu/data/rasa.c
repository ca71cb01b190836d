/* rasa.c — reads a Rasa 3 style nlu.yaml into a ds_dataset.
 *
 *   version: "3.1"                       # optional
 *   nlu:
 *   - intent: order_pizza
 *     examples: |
 *       - i want a [large](size) [margherita](pizza)
 *       - [two]{"entity": "count", "value": "2"} pizzas please
 *   - synonym: margherita                # values that mean the canonical one
 *     examples: |
 *       - margarita
 *   - lookup: pizza                      # values of slot "pizza", for ds_augment_lookups
 *     examples: |
 *       - hawaiian
 *   - regex: zipcode                     # patterns, matched as sparse features
 * (nlu/sparse/sparse.h) examples: |
 *       - \d{5}
 *
 * `examples` is a block of "- " lines or a YAML list of strings. An annotation is
 * [value](slot) or [value]{"entity": "slot"} with an optional "value" (the canonical value,
 * also recorded as a synonym). Annotated spans become BIO tags on the whitespace words of
 * the plain text. A span must cover whole words, except that punctuation may touch it
 * ("[boston](city)?" tags the word "boston?"), as parley_nlu_parse gives slot values back
 * without edge punctuation. Every malformed annotation fails with FILE:LINE:COL of the
 * character at fault, computed through yd_scalar_pos.
 *
 * It does not read stories, rules, responses or domain keys: parley keeps those elsewhere.
 */
#include <string.h>

#include <utf8proc.h>

#include "nlu/data/dataset.h"
#include "nlu/text/tokenizer.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/yaml_doc.h"

/* A growing byte string. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
} sbuf;

static int sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = pl_realloc(b->s, cap);
        if (!p)
            return 0;
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 1;
}

/* An annotation of the example being read: its place in the plain text and the source. */
typedef struct ann {
    size_t pstart, pend; /* bytes of the plain text */
    size_t open_off;     /* offset of '[' in the scalar */
    size_t after_off;    /* offset just past the closing ')' or '}' */
    int slot;            /* provisional slot id */
    char *value;         /* canonical value or NULL; owned */
} ann;

typedef struct rasa_ctx {
    ds_dataset *ds;
    sbuf plain; /* the example's text without annotation markup */
    ann *anns;
    int n_anns, cap_anns;
    /* per word of the plain text */
    const char **words;
    size_t *lens, *wstart;
    int *tags;
    ds_span *spans;
    int cap_words;
} rasa_ctx;

typedef parley_status (*example_fn)(rasa_ctx *c, const yd_node *n, size_t off, size_t len,
                                    const char *name);

static void anns_clear(rasa_ctx *c)
{
    for (int i = 0; i < c->n_anns; i++)
        pl_free(c->anns[i].value);
    c->n_anns = 0;
}

static void ctx_free(rasa_ctx *c)
{
    anns_clear(c);
    pl_free(c->anns);
    pl_free(c->plain.s);
    pl_free((void *)c->words);
    pl_free(c->lens);
    pl_free(c->wstart);
    pl_free(c->tags);
    pl_free(c->spans);
}

static parley_status nomem(const yd_node *n)
{
    return pl_nomem("%s:%d:%d", n->file, n->line, n->col);
}

/* ---- names and JSON ------------------------------------------------------------------- */

/* A slot or intent name: non-empty, no whitespace, no annotation syntax, and no control or
 * format character (Unicode Cc, Cf: bidi overrides, zero-width spaces and joiners), which
 * would make two names that print alike differ, or a name print as another. */
static parley_status check_name(const yd_node *n, const char *s, size_t len, size_t off,
                                const char *what)
{
    if (len == 0)
        return yd_fail_at(n, off, PARLEY_ERR_FORMAT, "empty %s name", what);
    for (size_t i = 0; i < len; i++)
        if (ds_space_len(s, i, len) || strchr("[](){}\"", s[i]))
            return yd_fail_at(n, off + i, PARLEY_ERR_FORMAT,
                              "%s name '%.*s' contains whitespace or one of []{}()\"", what,
                              (int)len, s);
    for (size_t i = 0; i < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k =
                utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &cp);
        utf8proc_category_t c = k > 0 ? utf8proc_category(cp) : UTF8PROC_CATEGORY_CN;
        if (k <= 0 || c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF)
            return yd_fail_at(n, off + i, PARLEY_ERR_FORMAT,
                              "%s name holds U+%04X at byte %zu: a control, bidi or zero-width "
                              "character",
                              what, k > 0 ? (unsigned)cp : (unsigned)(unsigned char)s[i], i);
        i += (size_t)k;
    }
    return PARLEY_OK;
}

static size_t skip_ws(const char *s, size_t i, size_t end)
{
    while (i < end && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

/* True when s[i..end) holds nothing but whitespace, Unicode spaces (U+00A0, U+3000, ...)
 * included: the words of an example are what such spaces separate. */
static int all_space(const char *s, size_t i, size_t end)
{
    size_t n;
    while (i < end && (n = ds_space_len(s, i, end)) != 0)
        i += n;
    return i == end;
}

static int hex4(const char *s, size_t i, size_t end, unsigned *v)
{
    *v = 0;
    for (size_t k = 0; k < 4; k++) {
        if (i + k >= end)
            return 0;
        char ch = s[i + k];
        int d = ch >= '0' && ch <= '9'   ? ch - '0'
                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                         : -1;
        if (d < 0)
            return 0;
        *v = *v * 16 + (unsigned)d;
    }
    return 1;
}

/* A JSON string at s[*i] == '"'; on success *out is owned and *i is past the closing quote. */
static parley_status json_string(const yd_node *n, size_t *i, size_t end, char **out)
{
    const char *s = n->str;
    size_t start = *i, k = *i + 1;
    sbuf b = { 0 };
    parley_status st;
    *out = NULL;
    while (k < end && s[k] != '"') {
        if ((unsigned char)s[k] < 0x20) {
            st = yd_fail_at(n, k, PARLEY_ERR_FORMAT, "control character in a JSON string");
            goto fail;
        }
        if (s[k] != '\\') {
            if (!sb_put(&b, s + k++, 1))
                goto nomem;
            continue;
        }
        static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
        const char *e = k + 1 < end && s[k + 1] ? strchr(esc_in, s[k + 1]) : NULL;
        if (e) {
            if (!sb_put(&b, &esc_out[e - esc_in], 1))
                goto nomem;
            k += 2;
            continue;
        }
        unsigned cp, lo;
        if (k + 1 >= end || s[k + 1] != 'u' || !hex4(s, k + 2, end, &cp)) {
            st = yd_fail_at(n, k, PARLEY_ERR_FORMAT, "bad escape in a JSON string");
            goto fail;
        }
        size_t esc = k;
        k += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (k + 1 >= end || s[k] != '\\' || s[k + 1] != 'u' || !hex4(s, k + 2, end, &lo) ||
                lo < 0xDC00 || lo > 0xDFFF) {
                st = yd_fail_at(n, esc, PARLEY_ERR_FORMAT, "unpaired surrogate in a JSON string");
                goto fail;
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            k += 6;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            st = yd_fail_at(n, esc, PARLEY_ERR_FORMAT, "unpaired surrogate in a JSON string");
            goto fail;
        }
        utf8proc_uint8_t u[4];
        utf8proc_ssize_t ul = utf8proc_encode_char((utf8proc_int32_t)cp, u);
        if (cp == 0 || ul <= 0) {
            st = yd_fail_at(n, esc, PARLEY_ERR_FORMAT, "bad code point in a JSON string");
            goto fail;
        }
        if (!sb_put(&b, (const char *)u, (size_t)ul))
            goto nomem;
    }
    if (k >= end) {
        st = yd_fail_at(n, start, PARLEY_ERR_FORMAT, "unterminated JSON string");
        goto fail;
    }
    if (!b.s && !sb_put(&b, "", 0))
        goto nomem;
    *i = k + 1;
    *out = b.s;
    return PARLEY_OK;
nomem:
    st = nomem(n);
fail:
    pl_free(b.s);
    return st;
}

/* {"entity": "slot", "value": "canonical"} at s[k] == '{'. *after is past the '}'. */
static parley_status json_entity(const yd_node *n, size_t k, size_t end, size_t *after,
                                 char **entity, char **value)
{
    const char *s = n->str;
    parley_status st;
    char *key = NULL, *val = NULL;
    size_t i = skip_ws(s, k + 1, end), entity_off = 0;
    *entity = *value = NULL;
    while (i < end && s[i] != '}') {
        size_t key_off = i;
        if (s[i] != '"') {
            st = yd_fail_at(n, i, PARLEY_ERR_FORMAT, "expected a quoted key in {...}");
            goto fail;
        }
        if ((st = json_string(n, &i, end, &key)) != PARLEY_OK)
            goto fail;
        i = skip_ws(s, i, end);
        if (i >= end || s[i] != ':') {
            st = yd_fail_at(n, i, PARLEY_ERR_FORMAT, "expected ':' after \"%s\"", key);
            goto fail;
        }
        i = skip_ws(s, i + 1, end);
        size_t val_off = i;
        if (i >= end || s[i] != '"') {
            st = yd_fail_at(n, i, PARLEY_ERR_FORMAT, "the value of \"%s\" must be a string", key);
            goto fail;
        }
        if ((st = json_string(n, &i, end, &val)) != PARLEY_OK)
            goto fail;
        char **slot = !strcmp(key, "entity") ? entity : !strcmp(key, "value") ? value : NULL;
        if (!slot || *slot) {
            st = yd_fail_at(n, key_off, PARLEY_ERR_FORMAT,
                            "%s key \"%s\" in {...} (allowed: \"entity\", \"value\")",
                            slot ? "duplicate" : "unknown", key);
            goto fail;
        }
        if (slot == entity)
            entity_off = val_off + 1;
        else if (!*val) {
            st = yd_fail_at(n, val_off, PARLEY_ERR_FORMAT, "empty \"value\"");
            goto fail;
        }
        *slot = val;
        val = NULL;
        pl_free(key);
        key = NULL;
        i = skip_ws(s, i, end);
        if (i < end && s[i] == ',')
            i = skip_ws(s, i + 1, end);
        else if (i < end && s[i] != '}') {
            st = yd_fail_at(n, i, PARLEY_ERR_FORMAT, "expected ',' or '}' in {...}");
            goto fail;
        }
    }
    if (i >= end) {
        st = yd_fail_at(n, k, PARLEY_ERR_FORMAT, "unclosed '{'");
        goto fail;
    }
    if (!*entity) {
        st = yd_fail_at(n, k, PARLEY_ERR_FORMAT, "missing \"entity\" in {...}");
        goto fail;
    }
    if ((st = check_name(n, *entity, strlen(*entity), entity_off, "slot")) != PARLEY_OK)
        goto fail;
    *after = i + 1;
    return PARLEY_OK;
fail:
    pl_free(key);
    pl_free(val);
    pl_free(*entity);
    pl_free(*value);
    *entity = *value = NULL;
    return st;
}

/* ---- one annotated example ------------------------------------------------------------ */

/* Reads the annotation at s[open] == '[' into a new ann; *next is where the text resumes. */
static parley_status read_annotation(rasa_ctx *c, const yd_node *n, size_t open, size_t end,
                                     size_t *next)
{
    const char *s = n->str;
    parley_status st;
    char *entity = NULL, *value = NULL;
    size_t close = open + 1, after = 0;
    while (close < end && s[close] != ']' && s[close] != '[')
        close++;
    if (close >= end)
        return yd_fail_at(n, open, PARLEY_ERR_FORMAT, "unclosed '['");
    if (s[close] == '[')
        return yd_fail_at(n, close, PARLEY_ERR_FORMAT, "'[' inside an annotation");
    size_t v = open + 1;
    while (v < close && ds_space_len(s, v, close))
        v++;
    if (v == close)
        return yd_fail_at(n, open, PARLEY_ERR_FORMAT, "empty annotated value");
    size_t k = close + 1;
    if (k < end && s[k] == '(') {
        size_t pe = k + 1;
        while (pe < end && s[pe] != ')')
            pe++;
        if (pe >= end)
            return yd_fail_at(n, k, PARLEY_ERR_FORMAT, "unclosed '('");
        if ((st = check_name(n, s + k + 1, pe - k - 1, k + 1, "slot")) != PARLEY_OK)
            return st;
        if (!(entity = pl_strndup(s + k + 1, pe - k - 1)))
            return nomem(n);
        after = pe + 1;
    } else if (k < end && s[k] == '{') {
        if ((st = json_entity(n, k, end, &after, &entity, &value)) != PARLEY_OK)
            return st;
    } else {
        return yd_fail_at(n, close, PARLEY_ERR_FORMAT,
                          "']' must be followed by (slot) or {\"entity\": \"slot\"}");
    }
    if (c->n_anns == c->cap_anns) {
        int cap = c->cap_anns ? 2 * c->cap_anns : 8;
        ann *a = pl_realloc(c->anns, (size_t)cap * sizeof *a);
        if (!a)
            goto nomem;
        c->anns = a;
        c->cap_anns = cap;
    }
    ann *a = &c->anns[c->n_anns];
    a->pstart = c->plain.len;
    if (!sb_put(&c->plain, s + open + 1, close - open - 1))
        goto nomem;
    a->pend = c->plain.len;
    a->open_off = open;
    a->after_off = after;
    a->value = value;
    value = NULL;
    if ((st = ds_intern_slot(c->ds, entity, strlen(entity), &a->slot)) != PARLEY_OK) {
        pl_free(a->value);
        goto fail;
    }
    c->n_anns++;
    if (a->value) {
        /* Rasa records an inline canonical value as a synonym of the annotated text. */
        char *surface = pl_strndup(s + open + 1, close - open - 1);
        st = surface ? ds_values_add(&c->ds->synonyms, &c->ds->n_synonyms, a->value, surface, 1)
                     : nomem(n);
        pl_free(surface);
        if (st != PARLEY_OK)
            goto fail;
    }
    pl_free(entity);
    *next = after;
    return PARLEY_OK;
nomem:
    st = nomem(n);
fail:
    pl_free(entity);
    pl_free(value);
    return st;
}

static int words_reserve(rasa_ctx *c, int n)
{
    if (n <= c->cap_words)
        return 1;
    int cap = c->cap_words ? 2 * c->cap_words : 64;
    while (cap < n)
        cap *= 2;
    const char **w = pl_realloc((void *)c->words, (size_t)cap * sizeof *w);
    if (w)
        c->words = w;
    size_t *l = pl_realloc(c->lens, (size_t)cap * sizeof *l);
    if (l)
        c->lens = l;
    size_t *ws = pl_realloc(c->wstart, (size_t)cap * sizeof *ws);
    if (ws)
        c->wstart = ws;
    int *t = pl_realloc(c->tags, (size_t)cap * sizeof *t);
    if (t)
        c->tags = t;
    ds_span *sp = pl_realloc(c->spans, (size_t)cap * sizeof *sp);
    if (sp)
        c->spans = sp;
    if (!w || !l || !ws || !t || !sp)
        return 0;
    c->cap_words = cap;
    return 1;
}

/* Splits the plain text into words (c->words, lens, wstart); returns the count or -1. */
static int split_plain(rasa_ctx *c)
{
    const char *p = c->plain.s;
    size_t len = c->plain.len, i = 0, sp;
    int nw = 0;
    while (i < len) {
        if ((sp = ds_space_len(p, i, len)) != 0) {
            i += sp;
            continue;
        }
        size_t start = i;
        while (i < len && !ds_space_len(p, i, len))
            i++;
        if (!words_reserve(c, nw + 1))
            return -1;
        c->words[nw] = p + start;
        c->wstart[nw] = start;
        c->lens[nw++] = i - start;
    }
    return nw;
}

/* True when p[a..b) is only punctuation. */
static int all_punct(const char *p, size_t a, size_t b)
{
    while (a < b) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t n =
                utf8proc_iterate((const utf8proc_uint8_t *)p + a, (utf8proc_ssize_t)(b - a), &cp);
        if (n <= 0 || !wp_is_punct((uint32_t)cp))
            return 0;
        a += (size_t)n;
    }
    return 1;
}

/* The index of the word holding plain byte pos (which is not whitespace). */
static int word_at(const rasa_ctx *c, int nw, size_t pos)
{
    int lo = 0, hi = nw - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (c->wstart[mid] <= pos)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Turns the annotations into word spans and BIO tags. */
static parley_status tag_words(rasa_ctx *c, const yd_node *n, int nw)
{
    const char *p = c->plain.s;
    for (int w = 0; w < nw; w++)
        c->tags[w] = 0;
    for (int i = 0; i < c->n_anns; i++) {
        const ann *a = &c->anns[i];
        size_t s = a->pstart, e = a->pend;
        while (ds_space_len(p, s, e))
            s += ds_space_len(p, s, e);
        while (e > s && (p[e - 1] == ' ' || p[e - 1] == '\t'))
            e--;
        int ws = word_at(c, nw, s), we = word_at(c, nw, e - 1);
        size_t wend = c->wstart[we] + c->lens[we];
        if (i + 1 < c->n_anns && word_at(c, nw, c->anns[i + 1].pstart) == we &&
            !ds_space_len(p, c->anns[i + 1].pstart, c->plain.len))
            return yd_fail_at(n, c->anns[i + 1].open_off, PARLEY_ERR_FORMAT,
                              "two annotations in one word");
        if (!all_punct(p, c->wstart[ws], s))
            return yd_fail_at(n, a->open_off, PARLEY_ERR_FORMAT,
                              "the annotation starts inside a word (annotate whole words)");
        if (!all_punct(p, e, wend))
            return yd_fail_at(n, a->after_off, PARLEY_ERR_FORMAT,
                              "the annotation ends inside a word (annotate whole words)");
        for (int w = ws; w <= we; w++)
            c->tags[w] = 1 + 2 * a->slot + (w > ws);
        c->spans[i] = (ds_span){ ws, we + 1, a->slot, a->value };
    }
    return PARLEY_OK;
}

static parley_status add_example(rasa_ctx *c, const yd_node *n, size_t off, size_t len,
                                 const char *intent_name)
{
    const char *s = n->str;
    size_t end = off + len, i = off;
    parley_status st;
    int intent;
    ds_add_result result;
    c->plain.len = 0;
    anns_clear(c);
    if ((st = ds_intern_intent(c->ds, intent_name, strlen(intent_name), &intent)) != PARLEY_OK)
        return st;
    while (i < end) {
        size_t run = i;
        while (run < end && s[run] != '[')
            run++;
        if (!sb_put(&c->plain, s + i, run - i))
            return nomem(n);
        i = run;
        if (i < end && (st = read_annotation(c, n, i, end, &i)) != PARLEY_OK)
            return st;
    }
    int nw = split_plain(c);
    if (nw < 0)
        return nomem(n);
    if ((st = tag_words(c, n, nw)) != PARLEY_OK)
        return st;
    if ((st = ds_add(c->ds, nw, c->words, c->lens, c->tags, intent, c->n_anns, c->spans,
                     DS_DROP_DUPLICATES, &result, NULL)) != PARLEY_OK)
        return st;
    if (result == DS_CONFLICT) {
        int line, col;
        yd_scalar_pos(n, off, &line, &col);
        pl_log(PARLEY_LOG_WARN, "%s:%d:%d: '%s' appears earlier with another intent or other slots",
               n->file, line, col, c->ds->examples[c->ds->n_examples - 1].text);
    }
    return PARLEY_OK;
}

/* ---- synonyms, lookups, regexes -------------------------------------------------------- */

/* Lookup and synonym values: words joined by single spaces, like example texts. */
static parley_status add_value(rasa_ctx *c, const yd_node *n, size_t off, size_t len,
                               ds_values **list, int *count, const char *name, int normalize,
                               int dedupe)
{
    c->plain.len = 0;
    if (!sb_put(&c->plain, n->str + off, len))
        return nomem(n);
    if (normalize) {
        int nw = split_plain(c);
        if (nw < 0)
            return nomem(n);
        size_t k = 0;
        for (int w = 0; w < nw; w++) {
            memmove(c->plain.s + k, c->words[w], c->lens[w]);
            k += c->lens[w];
            c->plain.s[k++] = ' ';
        }
        c->plain.s[k ? k - 1 : 0] = '\0';
    }
    return ds_values_add(list, count, name, c->plain.s, dedupe);
}

static parley_status add_synonym(rasa_ctx *c, const yd_node *n, size_t off, size_t len,
                                 const char *name)
{
    return add_value(c, n, off, len, &c->ds->synonyms, &c->ds->n_synonyms, name, 1, 1);
}

static parley_status add_lookup(rasa_ctx *c, const yd_node *n, size_t off, size_t len,
                                const char *name)
{
    return add_value(c, n, off, len, &c->ds->lookups, &c->ds->n_lookups, name, 1, 0);
}

static parley_status add_regex(rasa_ctx *c, const yd_node *n, size_t off, size_t len,
                               const char *name)
{
    return add_value(c, n, off, len, &c->ds->regexes, &c->ds->n_regexes, name, 0, 0);
}

/* ---- the file ------------------------------------------------------------------------- */

/* Calls fn on each example of `examples`: the "- " lines of a block, or a list of strings. */
static parley_status each_example(rasa_ctx *c, const yd_node *ex, example_fn fn, const char *name)
{
    parley_status st;
    int count = 0;
    if (ex->kind == YD_SEQ) {
        for (size_t i = 0; i < ex->n; i++) {
            const yd_node *it = ex->items[i];
            if (it->kind != YD_SCALAR)
                return yd_fail(it, PARLEY_ERR_CONFIG, "an example must be a string, not a %s",
                               yd_kind_name(it->kind));
            size_t a = skip_ws(it->str, 0, it->len), b = it->len;
            while (b > a && (it->str[b - 1] == ' ' || it->str[b - 1] == '\t'))
                b--;
            if (all_space(it->str, a, b))
                return yd_fail(it, PARLEY_ERR_FORMAT, "empty example");
            if ((st = fn(c, it, a, b - a, name)) != PARLEY_OK)
                return st;
            count++;
        }
    } else if (ex->kind == YD_SCALAR && !yd_is_null(ex)) {
        const char *s = ex->str;
        for (size_t ls = 0; ls < ex->len;) {
            size_t le = ls;
            while (le < ex->len && s[le] != '\n')
                le++;
            size_t a = skip_ws(s, ls, le), b = le;
            while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r'))
                b--;
            if (a < b) {
                if (s[a] != '-' || (a + 1 < b && s[a + 1] != ' ' && s[a + 1] != '\t'))
                    return yd_fail_at(ex, a, PARLEY_ERR_FORMAT,
                                      "an example line must start with '- '");
                size_t t = skip_ws(s, a + 1, b);
                if (all_space(s, t, b))
                    return yd_fail_at(ex, a, PARLEY_ERR_FORMAT, "empty example");
                if ((st = fn(c, ex, t, b - t, name)) != PARLEY_OK)
                    return st;
                count++;
            }
            ls = le + 1;
        }
    } else {
        return yd_fail(ex, PARLEY_ERR_CONFIG,
                       "examples must be a block of '- ' lines or a list of strings");
    }
    if (count == 0)
        return yd_fail(ex, PARLEY_ERR_CONFIG, "no examples");
    return PARLEY_OK;
}

static parley_status read_item(rasa_ctx *c, const yd_node *item)
{
    static const struct {
        const char *key;
        example_fn fn;
        const char *name_kind; /* how the name is checked: as a slot or intent name, or not */
    } kinds[] = {
        { "intent", add_example, "intent" },
        { "synonym", add_synonym, NULL },
        { "lookup", add_lookup, "slot" },
        { "regex", add_regex, NULL },
    };
    parley_status st;
    const yd_node *name_node = NULL, *examples;
    const char *name;
    size_t k = 0;
    if ((st = yd_expect(item, YD_MAP, "an nlu item")) != PARLEY_OK)
        return st;
    for (; k < sizeof kinds / sizeof kinds[0] && !name_node; k++)
        name_node = yd_get(item, kinds[k].key);
    if (!name_node)
        return yd_fail(item, PARLEY_ERR_CONFIG,
                       "an nlu item needs one of: intent, synonym, lookup, regex");
    k--;
    const char *const allowed[] = { kinds[k].key, "examples", NULL };
    if ((st = yd_check_keys(item, allowed)) != PARLEY_OK ||
        (st = yd_str(name_node, &name)) != PARLEY_OK ||
        (st = yd_require(item, "examples", &examples)) != PARLEY_OK)
        return st;
    size_t len = strlen(name);
    if (len == 0 || name_node->len != len)
        return yd_fail(name_node, PARLEY_ERR_CONFIG, "empty or invalid %s name", kinds[k].key);
    if (kinds[k].name_kind &&
        (st = check_name(name_node, name, len, 0, kinds[k].name_kind)) != PARLEY_OK)
        return st;
    return each_example(c, examples, kinds[k].fn, name);
}

static parley_status read_doc(rasa_ctx *c, const yd_doc *doc)
{
    static const char *const top_keys[] = { "version", "nlu", NULL };
    parley_status st;
    const yd_node *root = yd_root(doc), *nlu, *version;
    const char *unused;
    if (!root)
        return pl_fail(PARLEY_ERR_CONFIG,
                       "%s:1:1: empty file; expected 'nlu:' with a list of intents", yd_file(doc));
    if ((st = yd_expect(root, YD_MAP, "an nlu file")) != PARLEY_OK ||
        (st = yd_check_keys(root, top_keys)) != PARLEY_OK)
        return st;
    if ((version = yd_get(root, "version")) && (st = yd_str(version, &unused)) != PARLEY_OK)
        return st;
    if ((st = yd_require(root, "nlu", &nlu)) != PARLEY_OK ||
        (st = yd_expect(nlu, YD_SEQ, "'nlu'")) != PARLEY_OK)
        return st;
    for (size_t i = 0; i < nlu->n; i++)
        if ((st = read_item(c, nlu->items[i])) != PARLEY_OK)
            return st;
    return PARLEY_OK;
}

static parley_status load_doc(yd_doc *doc, ds_dataset **out)
{
    parley_status st;
    rasa_ctx c = { 0 };
    if ((st = ds_new(yd_file(doc), &c.ds)) != PARLEY_OK || (st = read_doc(&c, doc)) != PARLEY_OK ||
        (st = ds_finish(c.ds)) != PARLEY_OK)
        goto fail;
    if (c.ds->n_duplicates)
        pl_log(PARLEY_LOG_INFO, "%s: dropped %d duplicate examples", c.ds->source,
               c.ds->n_duplicates);
    *out = c.ds;
    c.ds = NULL;
fail:
    ds_free(c.ds);
    ctx_free(&c);
    yd_free(doc);
    return st;
}

parley_status ds_load_rasa(const char *path, ds_dataset **out)
{
    parley_status st;
    yd_doc *doc;
    if (!out || !path)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "ds_load_rasa: NULL argument");
    *out = NULL;
    if ((st = yd_parse_file(path, &doc)) != PARLEY_OK)
        return st;
    return load_doc(doc, out);
}

parley_status ds_load_rasa_string(const char *name, const char *text, size_t len, ds_dataset **out)
{
    parley_status st;
    yd_doc *doc;
    if (!out || !text)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "ds_load_rasa_string: NULL argument");
    *out = NULL;
    if ((st = yd_parse_string(name, text, len, &doc)) != PARLEY_OK)
        return st;
    return load_doc(doc, out);
}
