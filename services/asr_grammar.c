/* asr_grammar.c — the recognizer's grammar, specialized to one bot: a JSGF grammar built
 * from the bot's nlu.yaml, cached on disk (services/asr.h).
 *
 * Each example becomes a sentence pattern in which every annotated slot value is replaced by
 * that slot's class, `<c_N>`: all the values the slot takes in the examples, its lookup
 * table and the synonyms of those values. So "a [large](size) pizza with [ham](topping)"
 * also accepts every other size and topping: recombinations the examples never show. Words
 * are lower-cased, punctuation is dropped, digits are spelled out ("42" → "forty two"), and
 * a phrase with a word the pronunciation dictionary lacks is dropped with a warning (it
 * could never be recognized). It does not decode audio: asr_pocketsphinx.c does.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nlu/data/dataset.h"
#include "sdk/base/alloc.h"
#include "sdk/base/files.h"
#include "sdk/base/names.h"
#include "sdk/base/strbuf.h"
#include "services/asr.h"

#define GRAMMAR_VERSION "parley-jsgf-1"

/* A list of distinct strings (owned), found by name. */
typedef struct strset {
    char **s;
    int n;
    pl_names ix;
} strset;

typedef struct builder {
    const ds_dataset *ds;
    pl_names dict; /* the dictionary's words → their line's offset (in dict_text) */
    char *dict_text;
    pl_strbuf word;  /* scratch: one normalized phrase */
    strset *classes; /* (ds->n_slots) */
    strset sentences;
    int dropped;
} builder;

/* Adds s (taken) unless present; 0 on allocation failure (s is freed). */
static int set_add(strset *set, char *s)
{
    if (pl_names_find(&set->ix, s, strlen(s)) >= 0) {
        pl_free(s);
        return 1;
    }
    char **t = pl_realloc(set->s, (size_t)(set->n + 1) * sizeof *t);
    if (!t || pl_names_reserve(&set->ix, (size_t)set->n + 1) != PARLEY_OK) {
        if (t)
            set->s = t;
        pl_free(s);
        return 0;
    }
    set->s = t;
    set->s[set->n] = s;
    pl_names_add(&set->ix, s, strlen(s), set->n);
    set->n++;
    return 1;
}

static void set_free(strset *set)
{
    for (int i = 0; i < set->n; i++)
        pl_free(set->s[i]);
    pl_free(set->s);
    pl_names_free(&set->ix);
}

static parley_status load_dict(builder *b, const char *path)
{
    parley_status st;
    size_t len;
    if ((st = pl_read_file(path, (size_t)1 << 28, &b->dict_text, &len)) != PARLEY_OK)
        return pl_wrap(st, "the pronunciation dictionary");
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += b->dict_text[i] == '\n';
    if ((st = pl_names_reserve(&b->dict, n + 1)) != PARLEY_OK)
        return st;
    for (char *line = b->dict_text; line && *line;) {
        char *next = strchr(line, '\n');
        size_t w = strcspn(line, " \t\n(");
        if (w && (line[w] == ' ' || line[w] == '\t'))
            pl_names_add(&b->dict, line, w, (int)(line - b->dict_text)); /* skips "word(2)" */
        line = next ? next + 1 : NULL;
    }
    return PARLEY_OK;
}

static const char *const ones[] = { "zero",    "one",     "two",       "three",    "four",
                                    "five",    "six",     "seven",     "eight",    "nine",
                                    "ten",     "eleven",  "twelve",    "thirteen", "fourteen",
                                    "fifteen", "sixteen", "seventeen", "eighteen", "nineteen" };
static const char *const tens[] = { "",      "",      "twenty",  "thirty", "forty",
                                    "fifty", "sixty", "seventy", "eighty", "ninety" };

/* n (0-9999) in English words, each preceded by a space. */
static void spell(pl_strbuf *o, int n)
{
    if (n >= 1000) {
        spell(o, n / 1000);
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

/* Appends one written word to b->word as spoken words; 0 when a word is not in the
 * dictionary. Lower case; punctuation dropped but apostrophes inside; hyphens split. */
static int add_word(builder *b, const char *w, size_t len)
{
    char tok[256];
    size_t i = 0;
    while (i < len) {
        size_t n = 0;
        while (i < len && n + 1 < sizeof tok &&
               (isalnum((unsigned char)w[i]) || w[i] == '\'' || (unsigned char)w[i] >= 0x80))
            tok[n++] = (char)tolower((unsigned char)w[i++]);
        if (i < len && n + 1 >= sizeof tok)
            return 0;
        while (n && tok[n - 1] == '\'')
            n--;
        size_t at = 0;
        while (at < n && tok[at] == '\'')
            at++;
        tok[n] = 0;
        if (at < n) {
            const char *t = tok + at;
            if (strspn(t, "0123456789") == n - at) {
                if (n - at > 4)
                    return 0;
                spell(&b->word, atoi(t));
            } else if (pl_names_find(&b->dict, t, n - at) >= 0) {
                pl_strbuf_printf(&b->word, " %s", t);
            } else {
                pl_log(PARLEY_LOG_WARN, "asr grammar: '%s' is not in the dictionary", t);
                return 0;
            }
        }
        while (i < len &&
               !(isalnum((unsigned char)w[i]) || w[i] == '\'' || (unsigned char)w[i] >= 0x80))
            i++;
    }
    return 1;
}

/* The words [from, to) as one spoken phrase: 1 with *out owned (NULL when the words are only
 * punctuation), or 0 when a word is missing from the dictionary (counted in dropped). A
 * failed allocation sets b->word.failed. */
static int phrase(builder *b, char *const *words, int from, int to, char **out)
{
    *out = NULL;
    b->word.len = 0;
    for (int i = from; i < to; i++)
        if (!add_word(b, words[i], strlen(words[i]))) {
            b->dropped++;
            return 0;
        }
    if (b->word.len && !b->word.failed && !(*out = pl_strdup(b->word.s + 1)))
        b->word.failed = 1;
    return 1;
}

static int add_value(builder *b, int slot, char *const *words, int n)
{
    char *v;
    if (!phrase(b, words, 0, n, &v) || !v)
        return !b->word.failed;
    return set_add(&b->classes[slot], v);
}

/* Adds a string's whitespace-separated words as a value of slot. */
static int add_text_value(builder *b, int slot, const char *text)
{
    char *copy = pl_strdup(text), *words[64], *save = NULL;
    int n = 0, ok = copy != NULL;
    for (char *w = copy ? strtok_r(copy, " \t", &save) : NULL; w && n < 64;
         w = strtok_r(NULL, " \t", &save))
        words[n++] = w;
    if (ok && n)
        ok = add_value(b, slot, words, n);
    pl_free(copy);
    return ok;
}

static int in_class(builder *b, int slot, const char *text)
{
    b->word.len = 0; /* a word missing from the dictionary is in no class */
    return add_word(b, text, strlen(text)) && b->word.len &&
           pl_names_find(&b->classes[slot].ix, b->word.s + 1, b->word.len - 1) >= 0;
}

static int collect_values(builder *b)
{
    const ds_dataset *ds = b->ds;
    for (int e = 0; e < ds->n_examples; e++) {
        const ds_example *ex = &ds->examples[e];
        for (int k = 0; k < ex->n_spans; k++) {
            const ds_span *sp = &ex->spans[k];
            if (!add_value(b, sp->slot, ex->words + sp->start, sp->end - sp->start))
                return 0;
        }
    }
    for (int s = 0; s < ds->n_slots; s++) {
        const ds_values *l = ds_lookup_for(ds, ds->slots[s]);
        for (int i = 0; l && i < l->n; i++)
            if (!add_text_value(b, s, l->values[i]))
                return 0;
    }
    /* a synonym group joins a class when one of its forms is in it */
    for (int g = 0; g < ds->n_synonyms; g++) {
        const ds_values *syn = &ds->synonyms[g];
        for (int s = 0; s < ds->n_slots; s++) {
            int hit = in_class(b, s, syn->name);
            for (int i = 0; !hit && i < syn->n; i++)
                hit = in_class(b, s, syn->values[i]);
            if (!hit)
                continue;
            if (!add_text_value(b, s, syn->name))
                return 0;
            for (int i = 0; i < syn->n; i++)
                if (!add_text_value(b, s, syn->values[i]))
                    return 0;
        }
    }
    return 1;
}

/* One sentence pattern per example (owned strings in b->sentences). */
static int collect_sentences(builder *b)
{
    pl_strbuf t = { 0 };
    for (int e = 0; e < b->ds->n_examples; e++) {
        const ds_example *ex = &b->ds->examples[e];
        int ok = 1, k = 0;
        t.len = 0;
        for (int i = 0; i < ex->n_words && ok;) {
            if (k < ex->n_spans && ex->spans[k].start == i) {
                int slot = ex->spans[k].slot;
                ok = b->classes[slot].n > 0;
                pl_strbuf_printf(&t, " <c_%d>", slot);
                i = ex->spans[k++].end;
                continue;
            }
            char *w;
            ok = phrase(b, ex->words, i, i + 1, &w);
            if (w)
                pl_strbuf_printf(&t, " %s", w);
            pl_free(w);
            i++;
        }
        if (t.failed || b->word.failed) {
            pl_free(t.s);
            return 0;
        }
        if (ok && t.len && !set_add(&b->sentences, pl_strdup(t.s + 1))) {
            pl_free(t.s);
            return 0;
        }
    }
    pl_free(t.s);
    return 1;
}

static char *render(builder *b, svc_grammar_info *info)
{
    pl_strbuf o = { 0 };
    for (int s = 0; s < b->ds->n_slots; s++) {
        info->classes += b->classes[s].n > 0;
        info->values += b->classes[s].n;
    }
    info->sentences = b->sentences.n;
    info->dropped = b->dropped;
    pl_strbuf_printf(&o, "#JSGF V1.0;\n// %s: sentences %d classes %d values %d dropped %d\n",
                     GRAMMAR_VERSION, info->sentences, info->classes, info->values, info->dropped);
    pl_strbuf_printf(&o, "// built by parley from %s\ngrammar parley;\n\npublic <utterance> =",
                     b->ds->source);
    for (int i = 0; i < b->sentences.n; i++)
        pl_strbuf_printf(&o, "%s\n    ( %s )", i ? " |" : "", b->sentences.s[i]);
    pl_strbuf_printf(&o, ";\n");
    for (int s = 0; s < b->ds->n_slots; s++) {
        const strset *c = &b->classes[s];
        if (!c->n)
            continue;
        pl_strbuf_printf(&o, "\n// slot %s\n<c_%d> =", b->ds->slots[s], s);
        for (int i = 0; i < c->n; i++)
            pl_strbuf_printf(&o, "%s %s", i ? " |" : "", c->s[i]);
        pl_strbuf_printf(&o, ";\n");
    }
    if (o.failed) {
        pl_free(o.s);
        return NULL;
    }
    return o.s;
}

/* Appends the dictionary lines of word w[0, n) (its variants "w(2)" follow it). */
static void dict_lines(builder *b, pl_strbuf *o, const char *w, size_t n)
{
    int at = pl_names_find(&b->dict, w, n);
    for (const char *line = at >= 0 ? b->dict_text + at : NULL;
         line && !strncmp(line, w, n) && (line[n] == ' ' || line[n] == '\t' || line[n] == '(');) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        pl_strbuf_printf(o, "%.*s\n", (int)len, line);
        line = end ? end + 1 : NULL;
    }
}

/* The dictionary of the grammar's words only: a decoder loads it in a fraction of the time
 * and memory of the whole one. */
static char *render_dict(builder *b, const char *grammar)
{
    pl_strbuf o = { 0 };
    strset seen = { 0 };
    int ok = 1;
    const char *p = strstr(grammar, "public <utterance> =");
    for (p = p ? p + 20 : NULL; p && *p && ok;) {
        size_t n = strcspn(p, " \t\n()|;=");
        if (n && p[0] != '<' && p[0] != '/') {
            char *w = pl_strndup(p, n);
            int before = seen.n;
            ok = w && set_add(&seen, w);
            if (ok && seen.n > before)
                dict_lines(b, &o, p, n);
        } else if (p[0] == '/') { /* a comment line */
            n = strcspn(p, "\n");
        }
        p += n ? n : 1;
    }
    set_free(&seen);
    if (!ok || o.failed || !o.s) {
        pl_free(o.s);
        return NULL;
    }
    return o.s;
}

static parley_status write_file(const char *path, const char *text)
{
    parley_status st;
    pl_atomic a;
    if ((st = pl_atomic_begin(&a, path)) != PARLEY_OK)
        return st;
    if ((st = pl_atomic_write(&a, text, strlen(text))) != PARLEY_OK) {
        pl_atomic_abort(&a);
        return st;
    }
    return pl_atomic_commit(&a);
}

/* Where grammars are cached when no folder is given (see svc_grammar_build). */
static void default_dir(char *dir, size_t size)
{
    if (!pl_cache_dir("asr", dir, size))
        snprintf(dir, size, "/tmp/parley-asr");
}

static parley_status build(const char *nlu, const char *dict, svc_grammar_info *info)
{
    parley_status st;
    builder b = { 0 };
    char *text = NULL, *words = NULL;
    ds_dataset *ds = NULL;
    if ((st = ds_load(nlu, &ds)) != PARLEY_OK || (st = load_dict(&b, dict)) != PARLEY_OK)
        goto out;
    b.ds = ds;
    if (!(b.classes = pl_calloc((size_t)ds->n_slots + 1, sizeof *b.classes)) ||
        !collect_values(&b) || !collect_sentences(&b) || b.word.failed ||
        !(text = render(&b, info)) || !(words = render_dict(&b, text))) {
        st = pl_nomem("the grammar of %s", nlu);
        goto out;
    }
    if (!b.sentences.n) {
        st = pl_fail(PARLEY_ERR_CONFIG,
                     "%s: no example gives a sentence the recognizer can "
                     "say (every one has a word missing from %s)",
                     nlu, dict);
        goto out;
    }
    /* the dictionary first: a grammar on disk always has its dictionary */
    if ((st = write_file(info->dict, words)) == PARLEY_OK)
        st = write_file(info->path, text);
out:
    pl_free(text);
    pl_free(words);
    for (int s = 0; b.classes && s < ds->n_slots; s++)
        set_free(&b.classes[s]);
    pl_free(b.classes);
    set_free(&b.sentences);
    pl_free(b.word.s);
    pl_names_free(&b.dict);
    pl_free(b.dict_text);
    ds_free(ds);
    return st;
}

parley_status svc_grammar_build(const char *nlu, const char *dict, const char *cache_dir,
                                svc_grammar_info *info)
{
    parley_status st;
    char *src = NULL, dir[4096];
    size_t len;
    memset(info, 0, sizeof *info);
    if ((st = pl_read_file(nlu, (size_t)1 << 30, &src, &len)) != PARLEY_OK)
        return st;
    uint64_t h = pl_fnv(PL_FNV_SEED, GRAMMAR_VERSION, strlen(GRAMMAR_VERSION));
    h = pl_fnv(pl_fnv(h, dict, strlen(dict) + 1), src, len);
    pl_free(src);
    if (!cache_dir || !*cache_dir)
        default_dir(dir, sizeof dir);
    else
        snprintf(dir, sizeof dir, "%s", cache_dir);
    const char *base = strrchr(nlu, '/') ? strrchr(nlu, '/') + 1 : nlu;
    int stem = (int)strcspn(base, ".");
    if (snprintf(info->path, sizeof info->path, "%s/%.*s-%016llx.gram", dir,
                 stem > 200 ? 200 : stem, base, (unsigned long long)h) >= (int)sizeof info->path)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "grammar cache folder '%s': path too long", dir);
    snprintf(info->dict, sizeof info->dict, "%.*s.dict", (int)strlen(info->path) - 5, info->path);
    FILE *f = fopen(info->path, "re");
    if (f) {
        char line[256];
        info->cached = fgets(line, sizeof line, f) && fgets(line, sizeof line, f) &&
                       sscanf(line,
                              "// " GRAMMAR_VERSION ": sentences %d classes %d values %d "
                              "dropped %d",
                              &info->sentences, &info->classes, &info->values, &info->dropped) == 4;
        fclose(f);
        if (info->cached && access(info->dict, R_OK) == 0)
            return PARLEY_OK;
    }
    if ((st = pl_make_dirs(dir)) != PARLEY_OK)
        return st;
    return build(nlu, dict, info);
}
