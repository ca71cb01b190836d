/* jointbert.c — reads a JointBERT-style dataset folder into a ds_dataset.
 *
 * The folder holds three line-aligned files: seq.in (the words of one utterance per line,
 * space-separated), seq.out (one BIO tag per word) and label (the intent). This is the
 * layout of the SNIPS and ATIS splits in github.com/monologg/JointBERT. Joined ATIS
 * intents ("atis_airfare#atis_flight") stay one label; duplicates are kept so the splits
 * keep their published sizes. Every problem is reported as FILE:LINE. It does not look
 * for the intent_label.txt / slot_label.txt vocabulary files: labels come from the data.
 */
#include <stdio.h>
#include <string.h>

#include <utf8proc.h>

#include "nlu/data/dataset.h"
#include "nlu/data/metrics.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"

/* Big enough for any real split (SNIPS train is 1.3 MB in all). */
static const size_t MAX_FILE = (size_t)1 << 30;

typedef struct line_file {
    char *path;
    char *buf;    /* the file, lines NUL-terminated in place */
    char **lines; /* (n) */
    size_t n;
} line_file;

static void line_file_clear(line_file *f)
{
    pl_free(f->path);
    pl_free(f->buf);
    pl_free(f->lines);
}

/* Offset of the first byte that is not valid UTF-8 in s[0..len), or len. */
static size_t utf8_check(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t n =
                utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &cp);
        if (n <= 0)
            return i;
        i += (size_t)n;
    }
    return len;
}

/* Reads dir/name and splits it into lines (a final line break is optional; CR is dropped). */
static parley_status line_file_read(const char *dir, const char *name, line_file *f)
{
    parley_status st;
    size_t len, dl = strlen(dir);
    memset(f, 0, sizeof *f);
    if (!(f->path = pl_malloc(dl + strlen(name) + 2)))
        return pl_nomem("%s", dir);
    sprintf(f->path, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", name);
    if ((st = pl_read_file(f->path, MAX_FILE, &f->buf, &len)) != PARLEY_OK)
        return st;
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += f->buf[i] == '\n';
    n += len && f->buf[len - 1] != '\n';
    if (!(f->lines = pl_malloc((n ? n : 1) * sizeof *f->lines)))
        return pl_nomem("%s: %zu lines", f->path, n);
    for (size_t i = 0, start = 0; i <= len && f->n < n; i++) {
        if (i < len && f->buf[i] != '\n')
            continue;
        size_t end = i;
        if (end > start && f->buf[end - 1] == '\r')
            end--;
        f->buf[end] = '\0';
        size_t bad = utf8_check(f->buf + start, end - start);
        if (bad != end - start)
            return pl_fail(PARLEY_ERR_UTF8, "%s:%zu: invalid UTF-8 at byte %zu of the line",
                           f->path, f->n + 1, bad + 1);
        f->lines[f->n++] = f->buf + start;
        start = i + 1;
    }
    return PARLEY_OK;
}

/* Splits s into whitespace-separated fields, NUL-terminating each in place; *fields grows. */
static parley_status split_fields(char *s, const char ***fields, size_t **lens, int *cap, int *n)
{
    size_t len = strlen(s), i = 0;
    *n = 0;
    while (i < len) {
        size_t sp;
        while (i < len && (sp = ds_space_len(s, i, len)) != 0)
            i += sp;
        if (i >= len)
            break;
        size_t start = i;
        while (i < len && ds_space_len(s, i, len) == 0)
            i++;
        if (*n == *cap) {
            int c = *cap ? 2 * *cap : 64;
            const char **f = pl_realloc((void *)*fields, (size_t)c * sizeof *f);
            if (f)
                *fields = f;
            size_t *l = pl_realloc(*lens, (size_t)c * sizeof *l);
            if (l)
                *lens = l;
            if (!f || !l)
                return PARLEY_ERR_NOMEM;
            *cap = c;
        }
        (*fields)[*n] = s + start;
        (*lens)[(*n)++] = i - start;
        if (i < len) /* the first byte of the separator; the next field starts after it */
            s[i++] = '\0';
        while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
    }
    return PARLEY_OK;
}

/* Scratch for one line, reused across lines. */
typedef struct line_scratch {
    const char **words, **tags;
    size_t *word_lens, *tag_lens;
    int word_cap, tag_cap;
    int *tag_ids;
    mt_chunk *chunks;
    ds_span *spans;
    int id_cap;
} line_scratch;

static parley_status add_line(ds_dataset *ds, line_file *f, size_t ln, line_scratch *s)
{
    parley_status st;
    int nw, nt, nl, intent;
    /* The label first, split like the words so whitespace means the same everywhere. */
    if (split_fields(f[2].lines[ln], &s->tags, &s->tag_lens, &s->tag_cap, &nl) != PARLEY_OK)
        goto nomem;
    if (nl != 1)
        return pl_fail(PARLEY_ERR_FORMAT, "%s:%zu: %s", f[2].path, ln + 1,
                       nl ? "the intent contains whitespace" : "empty intent");
    if ((st = ds_intern_intent(ds, s->tags[0], s->tag_lens[0], &intent)) != PARLEY_OK)
        return st;
    if (split_fields(f[0].lines[ln], &s->words, &s->word_lens, &s->word_cap, &nw) != PARLEY_OK ||
        split_fields(f[1].lines[ln], &s->tags, &s->tag_lens, &s->tag_cap, &nt) != PARLEY_OK)
        goto nomem;
    if (nw == 0)
        return pl_fail(PARLEY_ERR_FORMAT, "%s:%zu: empty utterance", f[0].path, ln + 1);
    if (nt != nw)
        return pl_fail(PARLEY_ERR_FORMAT, "%s:%zu: %d tags for the %d words of %s:%zu", f[1].path,
                       ln + 1, nt, nw, f[0].path, ln + 1);
    if (nw > s->id_cap) {
        int c = nw < 64 ? 64 : nw;
        int *ids = pl_realloc(s->tag_ids, (size_t)c * sizeof *ids);
        if (ids)
            s->tag_ids = ids;
        mt_chunk *ch = pl_realloc(s->chunks, (size_t)c * sizeof *ch);
        if (ch)
            s->chunks = ch;
        ds_span *sp = pl_realloc(s->spans, (size_t)c * sizeof *sp);
        if (sp)
            s->spans = sp;
        if (!ids || !ch || !sp)
            goto nomem;
        s->id_cap = c;
    }
    for (int w = 0; w < nw; w++) {
        char prefix;
        const char *type;
        int slot;
        if (!mt_tag_split(s->tags[w], &prefix, &type))
            return pl_fail(PARLEY_ERR_FORMAT,
                           "%s:%zu: word %d: '%s' is not a BIO tag (O, B-x or I-x)", f[1].path,
                           ln + 1, w + 1, s->tags[w]);
        s->tag_ids[w] = 0;
        if (prefix != 'O') {
            if ((st = ds_intern_slot(ds, type, strlen(type), &slot)) != PARLEY_OK)
                return st;
            s->tag_ids[w] = 1 + 2 * slot + (prefix == 'I');
        }
    }
    int nc = mt_chunks(s->tags, nw, s->chunks);
    for (int c = 0; c < nc; c++) {
        int slot;
        if ((st = ds_intern_slot(ds, s->chunks[c].type, s->chunks[c].type_len, &slot)) != PARLEY_OK)
            return st;
        s->spans[c] = (ds_span){ s->chunks[c].start, s->chunks[c].end, slot, NULL };
    }
    return ds_add(ds, nw, s->words, s->word_lens, s->tag_ids, intent, nc, s->spans, DS_KEEP_ALL,
                  NULL, NULL);
nomem:
    return pl_nomem("%s:%zu", f[0].path, ln + 1);
}

parley_status ds_load_jointbert(const char *dir, ds_dataset **out)
{
    static const char *const names[3] = { "seq.in", "seq.out", "label" };
    parley_status st;
    line_file f[3] = { { 0 } };
    line_scratch s = { 0 };
    ds_dataset *ds = NULL;
    if (!out || !dir)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "ds_load_jointbert: NULL argument");
    *out = NULL;
    for (int i = 0; i < 3; i++)
        if ((st = line_file_read(dir, names[i], &f[i])) != PARLEY_OK)
            goto fail;
    if (f[0].n == 0) {
        st = pl_fail(PARLEY_ERR_FORMAT, "%s: no lines", f[0].path);
        goto fail;
    }
    for (int i = 1; i < 3; i++)
        if (f[i].n != f[0].n) {
            size_t ln = (f[i].n < f[0].n ? f[i].n : f[0].n) + 1;
            st = pl_fail(PARLEY_ERR_FORMAT, "%s:%zu: %s (%s has %zu lines, %s has %zu)", f[i].path,
                         ln, f[i].n < f[0].n ? "missing line" : "extra line", f[0].path, f[0].n,
                         f[i].path, f[i].n);
            goto fail;
        }
    if ((st = ds_new(dir, &ds)) != PARLEY_OK)
        goto fail;
    for (size_t ln = 0; ln < f[0].n; ln++)
        if ((st = add_line(ds, f, ln, &s)) != PARLEY_OK)
            goto fail;
    if ((st = ds_finish(ds)) != PARLEY_OK)
        goto fail;
    *out = ds;
    ds = NULL;
fail:
    ds_free(ds);
    for (int i = 0; i < 3; i++)
        line_file_clear(&f[i]);
    pl_free((void *)s.words);
    pl_free((void *)s.tags);
    pl_free(s.word_lens);
    pl_free(s.tag_lens);
    pl_free(s.tag_ids);
    pl_free(s.chunks);
    pl_free(s.spans);
    return st;
}
