/* yaml_doc.c — builds a positioned node tree from libyaml's event stream.
 *
 * This is parley's one boundary with libyaml: its events become yd_node trees and its
 * errors become parley_status values with "FILE:LINE:COL: message" details. It knows
 * nothing about what the YAML means; the graph loader, domain and nlu readers do.
 *
 * libyaml's marks count characters, not bytes (index and column alike), and treat CR LF,
 * CR, LF, NEL, LS and PS as line breaks. To map marks and scalar offsets back to bytes of
 * the source the document keeps the source text and a table of line starts built with the
 * same break rules.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "sdk/base/alloc.h"
#include "sdk/base/yaml_doc.h"

/* Deeper nesting than this is refused, which bounds the recursion below. */
enum { MAX_DEPTH = 256 };

struct yd_doc {
    char *file;
    char *src; /* the source text after a UTF-8 byte-order mark, NUL-terminated */
    size_t src_len;
    size_t *line_start; /* (n_lines) byte offset where each line starts */
    size_t n_lines;
    yd_node *root;
};

typedef struct parse_state {
    yaml_parser_t parser;
    yd_doc *doc;
    /* The last mark mark_byte() placed: its line, column (characters) and byte offset.
     * at_line is SIZE_MAX before the first. */
    size_t at_line, at_col, at_byte;
} parse_state;

/* ---- source positions ------------------------------------------------------------- */

/* Length of the line break at src[i], 0 when there is none (libyaml's set of breaks). */
static size_t break_len(const char *s, size_t i, size_t n)
{
    unsigned char c = (unsigned char)s[i];
    if (c == '\n')
        return 1;
    if (c == '\r')
        return i + 1 < n && s[i + 1] == '\n' ? 2 : 1;
    if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] == 0x85)
        return 2;
    if (c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
        ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9))
        return 3;
    return 0;
}

static parley_status build_line_table(yd_doc *d)
{
    size_t n = 1;
    for (size_t i = 0; i < d->src_len;) {
        size_t b = break_len(d->src, i, d->src_len);
        n += b != 0;
        i += b ? b : 1;
    }
    d->line_start = pl_malloc(n * sizeof *d->line_start);
    if (!d->line_start)
        return pl_nomem("%s: the line table", d->file);
    d->n_lines = 0;
    d->line_start[d->n_lines++] = 0;
    for (size_t i = 0; i < d->src_len;) {
        size_t b = break_len(d->src, i, d->src_len);
        i += b ? b : 1;
        if (b)
            d->line_start[d->n_lines++] = i;
    }
    return PARLEY_OK;
}

/* Byte offset one past the last content byte of line `ln` (before its break). */
static size_t line_end(const yd_doc *d, size_t ln)
{
    size_t i = d->line_start[ln];
    while (i < d->src_len && !break_len(d->src, i, d->src_len))
        i++;
    return i;
}

/* Advances `chars` UTF-8 characters from byte i, stopping at the end of the line. */
static size_t advance_chars(const yd_doc *d, size_t i, size_t chars)
{
    size_t end = d->src_len;
    while (chars > 0 && i < end && !break_len(d->src, i, end)) {
        i++;
        while (i < end && ((unsigned char)d->src[i] & 0xC0) == 0x80)
            i++;
        chars--;
    }
    return i;
}

/* The byte offset of a libyaml mark. Marks arrive in document order, so a mark on the
 * line of the one before is reached from it, and each line is walked once in all rather
 * than once per scalar on it (a long one-line flow collection would cost its length
 * squared). advance_chars stops at the end of the line, so starting from an earlier mark
 * of the line gives the same byte as starting from the line's start. */
static size_t mark_byte(parse_state *ps, const yaml_mark_t *m)
{
    const yd_doc *d = ps->doc;
    if (m->line >= d->n_lines)
        return d->src_len;
    if (m->line != ps->at_line || m->column < ps->at_col) {
        ps->at_line = m->line;
        ps->at_col = 0;
        ps->at_byte = d->line_start[m->line];
    }
    ps->at_byte = advance_chars(d, ps->at_byte, m->column - ps->at_col);
    ps->at_col = m->column;
    return ps->at_byte;
}

/* 1-based line and column (in characters) of byte offset `pos`. */
static void byte_linecol(const yd_doc *d, size_t pos, int *line, int *col)
{
    size_t lo = 0, hi = d->n_lines; /* the last line start <= pos */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->line_start[mid] <= pos)
            lo = mid;
        else
            hi = mid;
    }
    size_t chars = 0;
    for (size_t i = d->line_start[lo]; i < pos && i < d->src_len; i++)
        chars += ((unsigned char)d->src[i] & 0xC0) != 0x80;
    *line = lo + 1 > INT_MAX ? INT_MAX : (int)(lo + 1);
    *col = chars + 1 > INT_MAX ? INT_MAX : (int)(chars + 1);
}

/* Byte position of value offset `off` of a literal block scalar, or SIZE_MAX when the
 * source does not line up (then the caller falls back to the node's start). Value line k
 * comes from source line indicator_line + 1 + k, and, because a literal block keeps every
 * character after the indentation, each value line is a suffix of its source line. */
static size_t literal_byte(const yd_node *n, size_t off)
{
    const yd_doc *d = n->doc;
    size_t i = n->src_start;
    /* Skip an anchor or tag before the indicator. */
    while (i < d->src_len && (d->src[i] == '&' || d->src[i] == '!')) {
        while (i < d->src_len && d->src[i] != ' ' && d->src[i] != '\t' &&
               !break_len(d->src, i, d->src_len))
            i++;
        while (i < d->src_len &&
               (d->src[i] == ' ' || d->src[i] == '\t' || break_len(d->src, i, d->src_len)))
            i++;
    }
    if (i >= d->src_len || d->src[i] != '|')
        return SIZE_MAX;
    int ind_line, ind_col;
    byte_linecol(d, i, &ind_line, &ind_col);
    size_t k = 0, vline = 0;
    for (size_t j = 0; j < off; j++)
        if (n->str[j] == '\n') {
            k++;
            vline = j + 1;
        }
    size_t vend = vline;
    while (vend < n->len && n->str[vend] != '\n')
        vend++;
    size_t ln = (size_t)ind_line + k; /* 0-based index of the source line after the header */
    if (ln >= d->n_lines)
        return SIZE_MAX;
    size_t s = d->line_start[ln], e = line_end(d, ln), want = vend - vline;
    if (e - s < want || memcmp(d->src + e - want, n->str + vline, want) != 0)
        return SIZE_MAX;
    /* An empty value line has no suffix to align: point at the start of its source line. */
    return want ? e - want + (off - vline) : s;
}

void yd_scalar_pos(const yd_node *n, size_t offset, int *line, int *col)
{
    *line = n->line;
    *col = n->col;
    if (n->kind != YD_SCALAR || offset > n->len)
        return;
    size_t pos = SIZE_MAX;
    if (n->style == YD_LITERAL) {
        pos = literal_byte(n, offset);
    } else if (n->style != YD_FOLDED) {
        /* A flow scalar whose source text equals its value (one line, no escapes). */
        size_t q = n->style == YD_PLAIN ? 0 : 1;
        if (n->src_end - n->src_start == n->len + 2 * q &&
            memcmp(n->doc->src + n->src_start + q, n->str, n->len) == 0)
            pos = n->src_start + q + offset;
    }
    if (pos != SIZE_MAX)
        byte_linecol(n->doc, pos, line, col);
}

/* ---- errors ----------------------------------------------------------------------- */

static parley_status fail_v(const char *file, int line, int col, parley_status st, const char *fmt,
                            va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return pl_fail(st, "%s:%d:%d: %s", file, line, col, msg);
}

parley_status yd_fail(const yd_node *n, parley_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(n->file, n->line, n->col, st, fmt, ap);
    va_end(ap);
    return st;
}

parley_status yd_fail_at(const yd_node *n, size_t offset, parley_status st, const char *fmt, ...)
{
    int line, col;
    yd_scalar_pos(n, offset, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    fail_v(n->file, line, col, st, fmt, ap);
    va_end(ap);
    return st;
}

static parley_status fail_mark(const yd_doc *d, const yaml_mark_t *m, parley_status st,
                               const char *fmt, ...) PL_PRINTF(4, 5);
static parley_status fail_mark(const yd_doc *d, const yaml_mark_t *m, parley_status st,
                               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(d->file, (int)m->line + 1, (int)m->column + 1, st, fmt, ap);
    va_end(ap);
    return st;
}

/* Translates libyaml's error state; the one place its error codes are read. */
static parley_status parser_error(parse_state *ps)
{
    yaml_parser_t *p = &ps->parser;
    yd_doc *d = ps->doc;
    const char *problem = p->problem ? p->problem : "unknown error";
    int line, col;
    switch (p->error) {
    case YAML_MEMORY_ERROR: return pl_nomem("%s: parsing YAML", d->file);
    case YAML_READER_ERROR:
        /* Reader errors carry a byte offset, not a mark. */
        byte_linecol(d, p->problem_offset, &line, &col);
        return pl_fail(PARLEY_ERR_UTF8, "%s:%d:%d: %s (byte offset %zu)", d->file, line, col,
                       problem, p->problem_offset);
    case YAML_SCANNER_ERROR:
    case YAML_PARSER_ERROR:
        if (p->context)
            return fail_mark(d, &p->problem_mark, PARLEY_ERR_FORMAT,
                             "%s (%s started at line %zu, column %zu)", problem, p->context,
                             p->context_mark.line + 1, p->context_mark.column + 1);
        return fail_mark(d, &p->problem_mark, PARLEY_ERR_FORMAT, "%s", problem);
    default:
        return pl_fail(PARLEY_ERR_INTERNAL, "%s: libyaml error %d: %s", d->file, (int)p->error,
                       problem);
    }
}

static parley_status next_event(parse_state *ps, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&ps->parser, ev))
        return parser_error(ps);
    return PARLEY_OK;
}

/* ---- tree ------------------------------------------------------------------------- */

static void node_free(yd_node *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++) {
        node_free(n->items[i]);
        if (n->keys)
            node_free(n->keys[i]);
    }
    pl_free(n->items);
    pl_free(n->keys);
    pl_free(n->str);
    pl_free(n);
}

static yd_node *node_new(yd_doc *d, yd_kind kind, const yaml_mark_t *m)
{
    yd_node *n = pl_calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->kind = kind;
    n->doc = d;
    n->file = d->file;
    n->line = (int)m->line + 1;
    n->col = (int)m->column + 1;
    return n;
}

/* Appends (key, value) or, for sequences, value; *cap tracks the arrays' capacity. */
static int node_append(yd_node *n, size_t *cap, yd_node *key, yd_node *value)
{
    if (n->n == *cap) {
        size_t c = *cap ? 2 * *cap : 4;
        yd_node **items = pl_realloc(n->items, c * sizeof *items);
        if (!items)
            return 0;
        n->items = items;
        if (n->kind == YD_MAP) {
            yd_node **keys = pl_realloc(n->keys, c * sizeof *keys);
            if (!keys)
                return 0;
            n->keys = keys;
        }
        *cap = c;
    }
    if (key)
        n->keys[n->n] = key;
    n->items[n->n++] = value;
    return 1;
}

static yd_style style_of(yaml_scalar_style_t s)
{
    switch (s) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE: return YD_SINGLE_QUOTED;
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE: return YD_DOUBLE_QUOTED;
    case YAML_LITERAL_SCALAR_STYLE: return YD_LITERAL;
    case YAML_FOLDED_SCALAR_STYLE: return YD_FOLDED;
    default: return YD_PLAIN;
    }
}

/* The keys of a mapping being built, as an open-addressing hash table of indices into
 * its keys (slot 0: empty, else index + 1), so that each new key is checked against all
 * earlier ones in constant time rather than one by one. */
typedef struct key_set {
    size_t *slot;
    size_t cap; /* a power of two, at least twice the number of keys held */
} key_set;

static size_t key_hash(const yd_node *k)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < k->len; i++)
        h = (h ^ (unsigned char)k->str[i]) * 0x100000001b3ull;
    return (size_t)h;
}

/* The first slot of map's key table that is empty or holds a key equal to `key`. */
static size_t key_slot(const key_set *ks, const yd_node *map, const yd_node *key)
{
    size_t j = key_hash(key) & (ks->cap - 1);
    for (; ks->slot[j]; j = (j + 1) & (ks->cap - 1)) {
        const yd_node *k = map->keys[ks->slot[j] - 1];
        if (k->len == key->len && !memcmp(k->str, key->str, key->len))
            break;
    }
    return j;
}

/* The earlier key of map equal to `key`, or NULL. */
static const yd_node *key_find(const key_set *ks, const yd_node *map, const yd_node *key)
{
    if (!ks->cap)
        return NULL;
    size_t j = key_slot(ks, map, key);
    return ks->slot[j] ? map->keys[ks->slot[j] - 1] : NULL;
}

/* Adds map->keys[i] (distinct from the keys before it), growing the table first when it
 * would be more than half full. 0 when out of memory. */
static int key_add(key_set *ks, const yd_node *map, size_t i)
{
    if (2 * (i + 1) > ks->cap) {
        size_t cap = ks->cap ? 2 * ks->cap : 16;
        size_t *slot = pl_calloc(cap, sizeof *slot);
        if (!slot)
            return 0;
        pl_free(ks->slot);
        ks->slot = slot;
        ks->cap = cap;
        for (size_t k = 0; k < i; k++)
            ks->slot[key_slot(ks, map, map->keys[k])] = k + 1;
    }
    ks->slot[key_slot(ks, map, map->keys[i])] = i + 1;
    return 1;
}

static parley_status build_node(parse_state *ps, yaml_event_t *ev, int depth, yd_node **out);

/* Reads children until the closing event of a sequence or mapping node n. */
static parley_status build_children(parse_state *ps, yd_node *n, int depth)
{
    parley_status st;
    yaml_event_t ev;
    yd_node *key = NULL, *value = NULL;
    const yd_node *first;
    key_set keys = { NULL, 0 };
    size_t cap = 0;
    yaml_event_type_t end = n->kind == YD_MAP ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
    for (;;) {
        if ((st = next_event(ps, &ev)) != PARLEY_OK)
            goto fail;
        if (ev.type == end) {
            yaml_event_delete(&ev);
            pl_free(keys.slot);
            return PARLEY_OK;
        }
        if (n->kind == YD_MAP) {
            if ((st = build_node(ps, &ev, depth + 1, &key)) != PARLEY_OK)
                goto fail;
            if (key->kind != YD_SCALAR) {
                st = yd_fail(key, PARLEY_ERR_FORMAT, "a mapping key must be a scalar, not a %s",
                             yd_kind_name(key->kind));
                goto fail;
            }
            if ((first = key_find(&keys, n, key)) != NULL) {
                st = yd_fail(key, PARLEY_ERR_FORMAT,
                             "duplicate key '%s' (first at line %d, column %d)", key->str,
                             first->line, first->col);
                goto fail;
            }
            if ((st = next_event(ps, &ev)) != PARLEY_OK)
                goto fail;
        }
        if ((st = build_node(ps, &ev, depth + 1, &value)) != PARLEY_OK)
            goto fail;
        if (!node_append(n, &cap, key, value))
            goto nomem;
        key = value = NULL;
        if (n->kind == YD_MAP && !key_add(&keys, n, n->n - 1))
            goto nomem;
    }
nomem:
    st = pl_nomem("%s: building the YAML tree", ps->doc->file);
fail:
    pl_free(keys.slot);
    node_free(key);
    node_free(value);
    return st;
}

/* Builds the node that starts with event *ev (consumed: deleted here in every case). */
static parley_status build_node(parse_state *ps, yaml_event_t *ev, int depth, yd_node **out)
{
    parley_status st;
    yd_doc *d = ps->doc;
    yd_node *n = NULL;
    *out = NULL;
    if (depth > MAX_DEPTH) {
        st = fail_mark(d, &ev->start_mark, PARLEY_ERR_FORMAT, "nesting deeper than %d levels",
                       MAX_DEPTH);
        goto fail;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        /* Only a double-quoted "\0" escape puts a NUL here; every reader takes strings as C
         * strings, which it would cut short ("bob\0evil" read as "bob"). */
        if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length)) {
            st = fail_mark(d, &ev->start_mark, PARLEY_ERR_FORMAT, "a NUL character in a string");
            goto fail;
        }
        if (!(n = node_new(d, YD_SCALAR, &ev->start_mark)) ||
            !(n->str = pl_strndup((const char *)ev->data.scalar.value, ev->data.scalar.length)))
            goto nomem;
        n->len = ev->data.scalar.length;
        n->style = style_of(ev->data.scalar.style);
        n->src_start = mark_byte(ps, &ev->start_mark);
        n->src_end = mark_byte(ps, &ev->end_mark);
        break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        if (!(n = node_new(d, ev->type == YAML_MAPPING_START_EVENT ? YD_MAP : YD_SEQ,
                           &ev->start_mark)))
            goto nomem;
        if ((st = build_children(ps, n, depth)) != PARLEY_OK)
            goto fail;
        break;
    case YAML_ALIAS_EVENT:
        st = fail_mark(d, &ev->start_mark, PARLEY_ERR_UNSUPPORTED,
                       "aliases (*%s) are not supported", (const char *)ev->data.alias.anchor);
        goto fail;
    default:
        st = fail_mark(d, &ev->start_mark, PARLEY_ERR_INTERNAL, "unexpected YAML event %d",
                       (int)ev->type);
        goto fail;
    }
    yaml_event_delete(ev);
    *out = n;
    return PARLEY_OK;
nomem:
    st = pl_nomem("%s: building the YAML tree", d->file);
fail:
    yaml_event_delete(ev);
    node_free(n);
    return st;
}

/* STREAM-START [DOCUMENT-START node DOCUMENT-END] STREAM-END; a second document is refused. */
static parley_status build_doc(parse_state *ps)
{
    parley_status st;
    yaml_event_t ev;
    if ((st = next_event(ps, &ev)) != PARLEY_OK)
        return st;
    yaml_event_delete(&ev); /* STREAM-START */
    if ((st = next_event(ps, &ev)) != PARLEY_OK)
        return st;
    if (ev.type == YAML_STREAM_END_EVENT) {
        yaml_event_delete(&ev);
        return PARLEY_OK;
    }
    yaml_event_delete(&ev); /* DOCUMENT-START */
    if ((st = next_event(ps, &ev)) != PARLEY_OK ||
        (st = build_node(ps, &ev, 0, &ps->doc->root)) != PARLEY_OK)
        return st;
    if ((st = next_event(ps, &ev)) != PARLEY_OK)
        return st;
    yaml_event_delete(&ev); /* DOCUMENT-END */
    if ((st = next_event(ps, &ev)) != PARLEY_OK)
        return st;
    if (ev.type != YAML_STREAM_END_EVENT)
        st = fail_mark(ps->doc, &ev.start_mark, PARLEY_ERR_FORMAT,
                       "a second YAML document; one file holds one document");
    yaml_event_delete(&ev);
    return st;
}

/* Takes ownership of src (pl_malloc'd, src_len bytes plus a NUL). */
static parley_status parse_owned(const char *name, char *src, size_t src_len, yd_doc **out)
{
    parley_status st;
    parse_state ps;
    int parser_ready = 0;
    yd_doc *d = pl_calloc(1, sizeof *d);
    *out = NULL;
    if (!d || !(d->file = pl_strdup(name))) {
        st = pl_nomem("%s", name);
        goto fail;
    }
    d->src = src;
    d->src_len = src_len;
    src = NULL;
    /* libyaml skips a byte-order mark without counting it in its marks; so do we. */
    size_t skip = d->src_len >= 3 && !memcmp(d->src, "\xEF\xBB\xBF", 3) ? 3 : 0;
    if (skip) {
        memmove(d->src, d->src + skip, d->src_len - skip + 1);
        d->src_len -= skip;
    }
    if ((st = build_line_table(d)) != PARLEY_OK)
        goto fail;
    if (!yaml_parser_initialize(&ps.parser)) {
        st = pl_nomem("%s: starting the YAML parser", d->file);
        goto fail;
    }
    parser_ready = 1;
    ps.doc = d;
    ps.at_line = SIZE_MAX;
    yaml_parser_set_encoding(&ps.parser, YAML_UTF8_ENCODING);
    yaml_parser_set_input_string(&ps.parser, (const unsigned char *)d->src, d->src_len);
    if ((st = build_doc(&ps)) != PARLEY_OK)
        goto fail;
    yaml_parser_delete(&ps.parser);
    *out = d;
    return PARLEY_OK;
fail:
    if (parser_ready)
        yaml_parser_delete(&ps.parser);
    pl_free(src);
    yd_free(d);
    return st;
}

parley_status yd_parse_string(const char *name, const char *text, size_t len, yd_doc **out)
{
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "yd_parse_string: out is NULL");
    *out = NULL;
    if (!text)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "yd_parse_string: text is NULL");
    if (!name)
        name = "<string>";
    char *src = pl_strndup(text, len);
    if (!src)
        return pl_nomem("%s", name);
    return parse_owned(name, src, len, out);
}

parley_status yd_parse_file(const char *path, yd_doc **out)
{
    parley_status st;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    if (!out || !path)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "yd_parse_file: NULL argument");
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return pl_fail(errno == ENOENT ? PARLEY_ERR_NOT_FOUND : PARLEY_ERR_IO,
                       "%s: cannot open: %s", path, strerror(errno));
    for (;;) {
        if (cap - len < 2) {
            size_t c = cap ? 2 * cap : 16384;
            char *b = pl_realloc(buf, c);
            if (!b) {
                st = pl_nomem("%s: reading the file", path);
                goto fail;
            }
            buf = b;
            cap = c;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        st = pl_fail(PARLEY_ERR_IO, "%s: read error", path);
        goto fail;
    }
    fclose(f);
    buf[len] = '\0';
    return parse_owned(path, buf, len, out);
fail:
    fclose(f);
    pl_free(buf);
    return st;
}

void yd_free(yd_doc *d)
{
    if (!d)
        return;
    node_free(d->root);
    pl_free(d->line_start);
    pl_free(d->src);
    pl_free(d->file);
    pl_free(d);
}

const yd_node *yd_root(const yd_doc *d)
{
    return d ? d->root : NULL;
}

const char *yd_file(const yd_doc *d)
{
    return d ? d->file : "";
}

/* ---- lookups and typed getters ---------------------------------------------------- */

const char *yd_kind_name(yd_kind kind)
{
    switch (kind) {
    case YD_MAP: return "mapping";
    case YD_SEQ: return "sequence";
    default: return "scalar";
    }
}

const yd_node *yd_get(const yd_node *map, const char *key)
{
    if (!map || map->kind != YD_MAP)
        return NULL;
    size_t len = strlen(key);
    for (size_t i = 0; i < map->n; i++)
        if (map->keys[i]->len == len && !memcmp(map->keys[i]->str, key, len))
            return map->items[i];
    return NULL;
}

parley_status yd_require(const yd_node *map, const char *key, const yd_node **out)
{
    *out = yd_get(map, key);
    if (!*out)
        return yd_fail(map, PARLEY_ERR_CONFIG, "missing key '%s'", key);
    return PARLEY_OK;
}

enum { MAX_WORD = 64 };

/* Optimal string alignment distance of a and b, both shorter than MAX_WORD. */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b), d[MAX_WORD + 1][MAX_WORD + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *yd_nearest(const char *word, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t best_d = 0;
    if (strlen(word) >= MAX_WORD)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t len = names[i] ? strlen(names[i]) : MAX_WORD, limit = len / 3;
        if (len >= MAX_WORD)
            continue;
        limit = limit < 1 ? 1 : limit > 3 ? 3 : limit;
        size_t d = distance(word, names[i]);
        if (d <= limit && (!best || d < best_d)) {
            best = names[i];
            best_d = d;
        }
    }
    return best;
}

parley_status yd_check_keys(const yd_node *map, const char *const *allowed)
{
    if (!map || map->kind != YD_MAP)
        return PARLEY_OK;
    for (size_t i = 0; i < map->n; i++) {
        size_t a = 0;
        while (allowed[a] && strcmp(allowed[a], map->keys[i]->str) != 0)
            a++;
        if (allowed[a])
            continue;
        char list[256];
        size_t used = 0;
        list[0] = '\0';
        for (a = 0; allowed[a] && used < sizeof list; a++)
            used += snprintf(list + used, sizeof list - used, "%s%s", a ? ", " : "", allowed[a]);
        const char *near = yd_nearest(map->keys[i]->str, allowed, a);
        return yd_fail(map->keys[i], PARLEY_ERR_CONFIG,
                       "unknown key '%s' (expected one of: %s)%s%s%s", map->keys[i]->str, list,
                       near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    }
    return PARLEY_OK;
}

parley_status yd_expect(const yd_node *n, yd_kind kind, const char *what)
{
    if (n->kind != kind)
        return yd_fail(n, PARLEY_ERR_CONFIG, "%s must be a %s, not a %s", what, yd_kind_name(kind),
                       yd_kind_name(n->kind));
    return PARLEY_OK;
}

int yd_is_null(const yd_node *n)
{
    return n && n->kind == YD_SCALAR && n->style == YD_PLAIN &&
           (n->len == 0 || !strcmp(n->str, "~") || !strcmp(n->str, "null") ||
            !strcmp(n->str, "Null") || !strcmp(n->str, "NULL"));
}

parley_status yd_str(const yd_node *n, const char **out)
{
    if (n->kind != YD_SCALAR)
        return yd_fail(n, PARLEY_ERR_CONFIG, "expected a string, found a %s",
                       yd_kind_name(n->kind));
    *out = n->str;
    return PARLEY_OK;
}

parley_status yd_int(const yd_node *n, long long lo, long long hi, long long *out)
{
    if (n->kind != YD_SCALAR)
        return yd_fail(n, PARLEY_ERR_CONFIG, "expected an integer, found a %s",
                       yd_kind_name(n->kind));
    char *end;
    errno = 0;
    long long v = strtoll(n->str, &end, 10); /* decimal only: no surprise octal for "010" */
    if (n->len == 0 || errno || *end || end != n->str + n->len)
        return yd_fail(n, PARLEY_ERR_CONFIG, "expected an integer, found '%s'", n->str);
    if (v < lo || v > hi)
        return yd_fail(n, PARLEY_ERR_CONFIG, "%lld is out of range [%lld, %lld]", v, lo, hi);
    *out = v;
    return PARLEY_OK;
}

parley_status yd_double(const yd_node *n, double lo, double hi, double *out)
{
    if (n->kind != YD_SCALAR)
        return yd_fail(n, PARLEY_ERR_CONFIG, "expected a number, found a %s",
                       yd_kind_name(n->kind));
    char *end;
    errno = 0;
    double v = strtod(n->str, &end);
    if (n->len == 0 || errno || *end || end != n->str + n->len || !isfinite(v))
        return yd_fail(n, PARLEY_ERR_CONFIG, "expected a finite number, found '%s'", n->str);
    if (v < lo || v > hi)
        return yd_fail(n, PARLEY_ERR_CONFIG, "%g is out of range [%g, %g]", v, lo, hi);
    *out = v;
    return PARLEY_OK;
}

parley_status yd_bool(const yd_node *n, int *out)
{
    static const char *const names[2][3] = { { "false", "False", "FALSE" },
                                             { "true", "True", "TRUE" } };
    if (n->kind == YD_SCALAR)
        for (int v = 0; v < 2; v++)
            for (int i = 0; i < 3; i++)
                if (!strcmp(n->str, names[v][i])) {
                    *out = v;
                    return PARLEY_OK;
                }
    return yd_fail(n, PARLEY_ERR_CONFIG, "expected true or false, found %s%s%s",
                   n->kind == YD_SCALAR ? "'" : "a ",
                   n->kind == YD_SCALAR ? n->str : yd_kind_name(n->kind),
                   n->kind == YD_SCALAR ? "'" : "");
}
