/* asr_lang.c — the recognizer's knowledge of one bot, built from its nlu.yaml and cached on
 * disk (services/asr.h): a class n-gram language model (the default) or a JSGF grammar,
 * with a dictionary of exactly the words it uses.
 *
 * Each example becomes a sentence pattern in which every annotated slot value is replaced by
 * that slot's class: all the values the slot takes in the examples, its lookup table and the
 * synonyms of those values (asr_lang.h), in two classes where the examples tag one of them in
 * the plural (split_plurals). Words are lower-cased, punctuation is dropped,
 * digits are spelled out ("42" → "forty two", sdk/base/numwords.h), a word the dictionary lacks is
 * pronounced from its spelling (asr_lts.h), the bot's own lexicon (asr_lexicon.c) is heard
 * before the dictionary's pronunciations or the guess, and a phrase with a word that has no
 * pronunciation even so is dropped with a warning (it could never be recognized). This file reads,
 * collects and caches; asr_ngram.c and asr_jsgf.c render; asr_pocketsphinx.c decodes.
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
#include "sdk/base/numwords.h"
#include "sdk/base/strbuf.h"
#include "services/asr.h"
#include "services/asr_lang.h"
#include "services/asr_lts.h"

#define LANG_VERSION "parley-asr-11"

/* cmudict's pronunciations of "um", "uh" and "hmm". */
const svc_hesitation svc_hesitations[] = { { "<um>", "AH M" },
                                           { "<uh>", "AH" },
                                           { "<hmm>", "HH M" } };
const int svc_n_hesitations = (int)(sizeof svc_hesitations / sizeof *svc_hesitations);

typedef struct builder {
    svc_lang l;
    ds_dataset *ds;
    pl_names dict; /* the dictionary's names ("a", "a(2)") → their line's offset (dict_text) */
    char *dict_text;
    pl_names own; /* the lexicon's words → their first line's offset (in own_text) */
    char *own_text;
    svc_strset guesses; /* "word PHONES" of the words pronounced from their spelling */
    pl_names guess_ix;  /* their words → their index in guesses */
    svc_strset said;    /* "member spoken words": a member's numbers read in pairs */
    pl_names said_ix;   /* their members → their index in said */
    int pairs;          /* add_word reads a number in pairs where it can (pl_number_pairs) */
    /* a phrase the bot did not write as such (a plural made here, a value spoken again): one
     * with a word without a pronunciation is left out unannounced and uncounted */
    int quiet;
    svc_strset spoken; /* the words of the patterns and values (generic words are others) */
    pl_strbuf word;    /* scratch: one normalized phrase */
} builder;

int svc_strset_add(svc_strset *set, char *s)
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

void svc_strset_free(svc_strset *set)
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
        size_t w = strcspn(line, " \t\n");
        if (w && (line[w] == ' ' || line[w] == '\t'))
            pl_names_add(&b->dict, line, w, (int)(line - b->dict_text));
        line = next ? next + 1 : NULL;
    }
    return PARLEY_OK;
}

/* Adds `line` (taken) to set, found in ix by its first key_len bytes; 0 when memory ran out. */
static int keep_line(svc_strset *set, pl_names *ix, pl_strbuf *line, size_t key_len)
{
    int at = set->n;
    if (!line->s || line->failed) {
        pl_free(line->s);
        return 0;
    }
    if (!svc_strset_add(set, line->s) || pl_names_reserve(ix, (size_t)set->n) != PARLEY_OK)
        return 0;
    pl_names_add(ix, set->s[at], key_len, at);
    return 1;
}

/* Whether word t[0, n) has a pronunciation: in the dictionary, or guessed now from its
 * spelling (kept in b->guesses), or in the lexicon (a word the dictionary lacks is guessed
 * even so: the lexicon's pronunciations come first, the spelling's after). */
static int pronounced(builder *b, const char *t, size_t n)
{
    if (pl_names_find(&b->dict, t, n) >= 0 || pl_names_find(&b->guess_ix, t, n) >= 0)
        return 1;
    char *phones = svc_lts_guess(t);
    if (!phones && pl_names_find(&b->own, t, n) >= 0)
        return 1;
    pl_strbuf line = { 0 };
    if (phones)
        pl_strbuf_printf(&line, "%.*s %s", (int)n, t, phones);
    pl_free(phones);
    int at = b->guesses.n;
    if (!keep_line(&b->guesses, &b->guess_ix, &line, n))
        return 0;
    b->l.guessed++;
    pl_log(PARLEY_LOG_INFO, "asr: '%s' is not in the dictionary: said %s, from its spelling", t,
           b->guesses.s[at] + n + 1);
    return 1;
}

/* Appends one written word to b->word as spoken words; 0 when a word has no
 * pronunciation. Lower case; punctuation dropped but apostrophes inside; hyphens split. */
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
                if (!b->pairs || !pl_number_pairs(&b->word, atoi(t)))
                    pl_number_spell(&b->word, atoi(t));
            } else if (pronounced(b, t, n - at)) {
                pl_strbuf_printf(&b->word, " %s", t);
            } else {
                if (!b->quiet)
                    pl_log(PARLEY_LOG_WARN,
                           "asr: '%s' is not in the dictionary and has no pronunciation", t);
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
            b->l.dropped += !b->quiet;
            return 0;
        }
    if (b->word.len && !b->word.failed && !(*out = pl_strdup(b->word.s + 1)))
        b->word.failed = 1;
    return 1;
}

/* The compound word of a new member of class `cls`: its written words, lower-cased and
 * joined by '_', then ":c_N"; its spoken words when the written ones hold a character a
 * dictionary word cannot ('_', ':', parentheses, controls) or name another member already. */
static char *member_name(const builder *b, int cls, char *const *words, int n, const char *spoken)
{
    pl_strbuf o = { 0 };
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        pl_strbuf_printf(&o, "%s", i ? "_" : "");
        for (const unsigned char *p = (const unsigned char *)words[i]; *p && ok; p++) {
            ok = !strchr("_:()", *p) && *p >= 0x20 && *p != 0x7f;
            pl_strbuf_printf(&o, "%c", (char)tolower(*p));
        }
    }
    if (!o.failed && (!ok || !o.len || pl_names_find(&b->l.members[cls].ix, o.s, o.len) >= 0)) {
        o.len = 0;
        for (const char *p = spoken; *p; p++)
            pl_strbuf_printf(&o, "%c", *p == ' ' ? '_' : *p);
    }
    pl_strbuf_printf(&o, ":c_%d", cls);
    if (o.failed) {
        pl_free(o.s);
        return NULL;
    }
    return o.s;
}

/* Keeps member `name`'s other spoken form where a number of it reads in pairs, as people say
 * house numbers and years ("1600 pennsylvania avenue": "sixteen hundred pennsylvania
 * avenue"), for member_lines; `spoken` is its form spelled out. */
static int said_in_pairs(builder *b, const char *name, char *const *words, int n,
                         const char *spoken)
{
    char *pairs;
    b->pairs = 1;
    int ok = phrase(b, words, 0, n, &pairs);
    b->pairs = 0;
    if (!ok || !pairs || !strcmp(pairs, spoken)) {
        pl_free(pairs);
        return !b->word.failed;
    }
    pl_strbuf line = { 0 };
    pl_strbuf_printf(&line, "%s %s", name, pairs);
    pl_free(pairs);
    return keep_line(&b->said, &b->said_ix, &line, strlen(name));
}

static int add_value(builder *b, int slot, char *const *words, int n)
{
    char *v;
    if (!phrase(b, words, 0, n, &v) || !v)
        return !b->word.failed;
    svc_strset *c = &b->l.classes[slot];
    if (pl_names_find(&c->ix, v, strlen(v)) >= 0) {
        pl_free(v);
        return 1;
    }
    char *name = member_name(b, slot, words, n, v);
    return name && svc_strset_add(c, v) && svc_strset_add(&b->l.members[slot], name) &&
           said_in_pairs(b, name, words, n, v);
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
    b->word.len = 0; /* a word without a pronunciation is in no class */
    return add_word(b, text, strlen(text)) && b->word.len &&
           pl_names_find(&b->l.classes[slot].ix, b->word.s + 1, b->word.len - 1) >= 0;
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

/* phrase() of a value spoken again, so a word without a pronunciation is neither announced
 * nor counted again: collect_values did. */
static int phrase_quietly(builder *b, char *const *words, int from, int to, char **out)
{
    b->quiet = 1;
    int ok = phrase(b, words, from, to, out);
    b->quiet = 0;
    return ok;
}

/* The plural of a phrase, its last word's: "latte" → "lattes", "glass" → "glasses", "berry" →
 * "berries"; owned, NULL when memory ran out. */
static char *plural(const char *v)
{
    size_t n = strlen(v);
    const char *last = strrchr(v, ' ');
    size_t k = n - (size_t)((last ? last + 1 : v) - v);
    char end = n ? v[n - 1] : 0, before = k >= 2 ? v[n - 2] : 0;
    pl_strbuf o = { 0 };
    if (end == 'y' && before && !strchr("aeiou", before))
        pl_strbuf_printf(&o, "%.*sies", (int)n - 1, v);
    else if (end && (strchr("sxz", end) || (end == 'h' && before && strchr("cs", before))))
        pl_strbuf_printf(&o, "%ses", v);
    else
        pl_strbuf_printf(&o, "%ss", v);
    if (o.failed) {
        pl_free(o.s);
        return NULL;
    }
    return o.s;
}

/* A member's value as the bot writes it, from its compound word ("flat_white:c_1" → "flat
 * white"); owned, NULL when memory ran out. */
static char *written(const char *member)
{
    char *v = pl_strdup(member);
    if (v) {
        *strrchr(v, ':') = 0;
        for (char *p = v; *p; p++)
            *p = *p == '_' ? ' ' : *p;
    }
    return v;
}

/* Where slot s's examples tag a value in the plural, its values in the plural become class
 * n_slots + s, and every value in the singular is also said in the plural there. */
static int split_plurals(builder *b, int s)
{
    svc_strset *c = &b->l.classes[s];
    int *plural_at = pl_calloc((size_t)c->n + 1, sizeof *plural_at), any = 0;
    for (int j = 0; plural_at && j < c->n; j++) { /* a member that is another's plural */
        char *p = plural(c->s[j]);
        if (!p) {
            pl_free(plural_at);
            return 0;
        }
        int i = pl_names_find(&c->ix, p, strlen(p));
        pl_free(p);
        if (i >= 0 && i != j)
            any = plural_at[i] = 1;
    }
    if (!plural_at || !any) {
        pl_free(plural_at);
        return plural_at != NULL;
    }
    svc_strset values = *c, members = b->l.members[s];
    memset(c, 0, sizeof *c);
    memset(&b->l.members[s], 0, sizeof b->l.members[s]);
    int ok = 1, pl_class = b->l.n_slots + s;
    for (int i = 0; i < values.n && ok; i++) {
        char *w = written(members.s[i]), *many = w && !plural_at[i] ? plural(w) : NULL;
        ok = w && add_text_value(b, plural_at[i] ? pl_class : s, w);
        if (ok && !plural_at[i]) { /* left out where a word of it has no pronunciation */
            b->quiet = 1;
            ok = many && add_text_value(b, pl_class, many);
            b->quiet = 0;
        }
        pl_free(w);
        pl_free(many);
    }
    pl_free(plural_at);
    svc_strset_free(&values);
    svc_strset_free(&members);
    return ok;
}

/* One sentence pattern per example (owned strings in b->l.sentences). */
static int collect_sentences(builder *b)
{
    pl_strbuf t = { 0 };
    for (int e = 0; e < b->ds->n_examples; e++) {
        const ds_example *ex = &b->ds->examples[e];
        int ok = 1, k = 0;
        t.len = 0;
        for (int i = 0; i < ex->n_words && ok;) {
            if (k < ex->n_spans && ex->spans[k].start == i) {
                int cls = ex->spans[k].slot, many = b->l.n_slots + cls;
                char *v = NULL;
                if (b->l.classes[many].n && phrase_quietly(b, ex->words, i, ex->spans[k].end, &v) &&
                    v && pl_names_find(&b->l.classes[many].ix, v, strlen(v)) >= 0)
                    cls = many;
                pl_free(v);
                ok = b->l.classes[cls].n > 0;
                pl_strbuf_printf(&t, " <c_%d>", cls);
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
        if (ok && t.len && !svc_strset_add(&b->l.sentences, pl_strdup(t.s + 1))) {
            pl_free(t.s);
            return 0;
        }
    }
    pl_free(t.s);
    return 1;
}

/* The phones of the k-th line (0: the first) of word w[0, n) from `line` on (a dictionary
 * text's: "w PHONES", then "w(2) PHONES"...), *len long; NULL past its last. */
static const char *nth_line(const char *line, const char *w, size_t n, int k, size_t *len)
{
    for (int i = 0;
         line && !strncmp(line, w, n) && (line[n] == ' ' || line[n] == '\t' || line[n] == '(');
         i++) {
        const char *end = strchr(line, '\n');
        if (i == k) {
            size_t ph = strcspn(line, " \t");
            ph += strspn(line + ph, " \t");
            *len = (end ? (size_t)(end - line) : strlen(line)) - ph;
            return line + ph;
        }
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

/* Whether `own` (the lexicon's lines of w[0, n)) has the pronunciation ph[0, len). */
static int own_has(const char *own, const char *w, size_t n, const char *ph, size_t len)
{
    size_t l;
    const char *o;
    for (int i = 0; (o = nth_line(own, w, n, i, &l)); i++)
        if (l == len && !strncmp(o, ph, len))
            return 1;
    return 0;
}

/* The phones of the dictionary's k-th pronunciation (0: the first) of w[0, n), *len long,
 * found by its line's name, "w" or "w(K)" for K = k + 1: cmudict's order does not keep a
 * word's lines together ("a's" stands between "a" and "a(2)"). NULL: none. */
static const char *dict_variant(const builder *b, const char *w, size_t n, int k, size_t *len)
{
    char name[300];
    int m = k ? snprintf(name, sizeof name, "%.*s(%d)", (int)n, w, k + 1) : (int)n;
    if (m < 0 || (size_t)m >= sizeof name)
        return NULL;
    int at = pl_names_find(&b->dict, k ? name : w, (size_t)m);
    return at >= 0 ? nth_line(b->dict_text + at, w, n, 0, len) : NULL;
}

/* The k-th pronunciation (0: the first) of word w[0, n): the lexicon's first, then the
 * dictionary's others or, where the dictionary lacks the word, the one guessed from its
 * spelling: its phones, *len long; NULL past the last. */
static const char *variant(const builder *b, const char *w, size_t n, int k, size_t *len)
{
    int at = pl_names_find(&b->own, w, n), i = 0;
    const char *own = at >= 0 ? b->own_text + at : NULL, *ph;
    for (; (ph = nth_line(own, w, n, i, len)); i++)
        if (i == k)
            return ph;
    const int known = pl_names_find(&b->dict, w, n) >= 0;
    const char *guess =
            !known && (at = pl_names_find(&b->guess_ix, w, n)) >= 0 ? b->guesses.s[at] : NULL;
    for (int j = 0; (ph = known ? dict_variant(b, w, n, j, len) : nth_line(guess, w, n, j, len));
         j++)
        if (!(own && own_has(own, w, n, ph, *len)) && i++ == k)
            return ph;
    return NULL;
}

/* How many pronunciations word w[0, n) has; 1 for one with none, so that combinations of a
 * phrase's words stay whole. */
static int n_variants(const builder *b, const char *w, size_t n)
{
    size_t len;
    int k = 0;
    while (variant(b, w, n, k, &len))
        k++;
    return k ? k : 1;
}

/* The dictionary lines of word w[0, n): "w PHONES", then "w(2) PHONES"... */
static void dict_lines(const builder *b, pl_strbuf *o, const char *w, size_t n)
{
    size_t len;
    const char *ph;
    for (int k = 0; (ph = variant(b, w, n, k, &len)); k++) {
        pl_strbuf_printf(o, "%.*s", (int)n, w);
        if (k)
            pl_strbuf_printf(o, "(%d)", k + 1);
        pl_strbuf_printf(o, " %.*s\n", (int)len, ph);
    }
}

/* The most pronunciations one class member gets: the combinations of its words' variants,
 * the first word's changing fastest, up to this many (a long value could make dozens). */
#define MEMBER_VARIANTS 8

/* The lines of member `name` said as the words of `spoken`: one per combination of the
 * words' pronunciations, at most `most`, numbered on from *k ("name", "name(2)", ...). */
static void spoken_lines(const builder *b, pl_strbuf *o, const char *name, const char *spoken,
                         int most, int *k)
{
    int combos = 1;
    for (const char *p = spoken; *p && combos < most;) {
        size_t n = strcspn(p, " ");
        int v = n_variants(b, p, n);
        combos = combos * v < most ? combos * v : most;
        p += n + (p[n] == ' ');
    }
    for (int c = 0; c < combos; c++, ++*k) {
        int rest = c;
        pl_strbuf_printf(o, "%s", name);
        if (*k)
            pl_strbuf_printf(o, "(%d)", *k + 1);
        for (const char *p = spoken; *p;) {
            size_t n = strcspn(p, " "), len = 0;
            int v = n_variants(b, p, n);
            const char *ph = variant(b, p, n, rest % v, &len);
            rest /= v;
            if (ph)
                pl_strbuf_printf(o, " %.*s", (int)len, ph);
            p += n + (p[n] == ' ');
        }
        pl_strbuf_printf(o, "\n");
    }
}

/* The dictionary lines of class member `name`, said as the words of `spoken` and, where its
 * numbers read in pairs, as those (said_in_pairs): every pronunciation the dictionary gives
 * the words is a variant ("espresso:c_0" EH S P R EH S OW, then "espresso:c_0(2)" EH K S P R
 * EH S OW), so a value is heard however people say it. */
static void member_lines(const builder *b, pl_strbuf *o, const char *name, const char *spoken)
{
    int k = 0, at = pl_names_find(&b->said_ix, name, strlen(name));
    const char *pairs = at >= 0 ? b->said.s[at] + strlen(name) + 1 : NULL;
    spoken_lines(b, o, name, spoken, pairs ? MEMBER_VARIANTS / 2 : MEMBER_VARIANTS, &k);
    if (pairs)
        spoken_lines(b, o, name, pairs, MEMBER_VARIANTS / 2, &k);
}

/* The words of `text` (space-separated) not seen yet: added to seen, and with their
 * pronunciations to o when o is not NULL. */
static int words_lines(const builder *b, pl_strbuf *o, svc_strset *seen, const char *text)
{
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, " ");
        if (n && p[0] != '<') {
            char *w = pl_strndup(p, n);
            int before = seen->n;
            if (!w || !svc_strset_add(seen, w))
                return 0;
            if (o && seen->n > before)
                dict_lines(b, o, p, n);
        }
        p += n + (p[n] == ' ');
    }
    return 1;
}

/* The dictionary of the model's words only (a decoder loads it in a fraction of the time and
 * memory of the whole one): the patterns' words, and each class member as its words (for a
 * grammar) or as one compound word with their pronunciations in a row (for the n-gram
 * model's classes: member_lines). */
static char *render_dict(const builder *b, int compound)
{
    pl_strbuf o = { 0 };
    svc_strset seen = { 0 };
    int ok = 1;
    for (int i = 0; i < b->l.sentences.n && ok; i++)
        ok = words_lines(b, &o, &seen, b->l.sentences.s[i]);
    for (int c = 0; c < b->l.n_classes && ok; c++)
        for (int i = 0; i < b->l.classes[c].n && ok; i++) {
            const char *v = b->l.classes[c].s[i];
            if (!compound) {
                ok = words_lines(b, &o, &seen, v);
                continue;
            }
            member_lines(b, &o, b->l.members[c].s[i], v);
        }
    for (int i = 0; compound && i < svc_n_hesitations; i++)
        pl_strbuf_printf(&o, "%s %s\n", svc_hesitations[i].word, svc_hesitations[i].phones);
    for (int i = 0; i < b->l.generic.n; i++)
        dict_lines(b, &o, b->l.generic.s[i], strlen(b->l.generic.s[i]));
    svc_strset_free(&seen);
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

/* Where models are cached when no folder is given (see svc_lang_build). */
static void default_dir(char *dir, size_t size)
{
    if (!pl_cache_dir("asr", dir, size))
        snprintf(dir, size, "/tmp/parley-asr");
}

#define INFO_FORMAT "%s sentences %d classes %d values %d dropped %d guessed %d\n"

static void count(const builder *b, svc_lang_info *info)
{
    for (int s = 0; s < b->l.n_classes; s++) {
        info->classes += b->l.classes[s].n > 0;
        info->values += b->l.classes[s].n;
    }
    info->sentences = b->l.sentences.n;
    info->dropped = b->l.dropped;
    info->guessed = b->l.guessed;
}

/* How many of the generic model's words a class model takes in (svc_lang_params'
 * generic_weight): its 300 most frequent that the bot lacks are the function words and
 * common verbs of any request ("just", "gonna", "do"); more brings rarer words, which
 * mostly take the place of the bot's own in noise (bench/RESULTS.md#voice-generic). */
#define GENERIC_WORDS 300

/* svc_generic_words' filter: a plain lower-case word the dictionary pronounces, none of
 * the bot's words (a value's words stay in its class: "two" is heard as the quantity) and
 * no hesitation (the model has its own, asr_lang.h). */
static int generic_word(void *ctx, const char *w)
{
    builder *b = ctx;
    size_t n = strlen(w);
    if (!n || strspn(w, "abcdefghijklmnopqrstuvwxyz'") != n || pl_names_find(&b->dict, w, n) < 0 ||
        pl_names_find(&b->spoken.ix, w, n) >= 0)
        return 0;
    for (int i = 0; i < svc_n_hesitations; i++)
        if (strlen(svc_hesitations[i].word) == n + 2 && !strncmp(svc_hesitations[i].word + 1, w, n))
            return 0;
    return 1;
}

/* The generic model's words the class model takes in, at p's weight. */
static parley_status mix_generic(builder *b, const svc_lang_params *p)
{
    int ok = 1;
    for (int i = 0; i < b->l.sentences.n && ok; i++)
        ok = words_lines(b, NULL, &b->spoken, b->l.sentences.s[i]);
    for (int c = 0; c < b->l.n_classes && ok; c++)
        for (int i = 0; i < b->l.classes[c].n && ok; i++)
            ok = words_lines(b, NULL, &b->spoken, b->l.classes[c].s[i]);
    if (!ok)
        return pl_nomem("the words of %s", b->l.source);
    b->l.generic_weight = p->generic_weight;
    return svc_generic_words(p->generic_lm, GENERIC_WORDS, generic_word, b, &b->l.generic,
                             &b->l.generic_p);
}

/* lexicon: the text of p->lexicon, NULL for none (cut up here). */
static parley_status build(const char *nlu, const svc_lang_params *p, char *lexicon,
                           svc_lang_info *info, const char *info_path)
{
    parley_status st;
    builder b = { 0 };
    char *model = NULL, *words = NULL, *classdef = NULL, *about = NULL;
    int ngram = info->kind == SVC_LANG_NGRAM;
    if ((st = ds_load(nlu, &b.ds)) != PARLEY_OK || (st = load_dict(&b, p->dict)) != PARLEY_OK ||
        (lexicon && (st = svc_lexicon_load(p->lexicon, lexicon, b.dict_text, &b.own_text,
                                           &b.own)) != PARLEY_OK))
        goto out;
    b.l.source = b.ds->source;
    b.l.n_slots = b.ds->n_slots;
    b.l.n_classes = 2 * b.ds->n_slots;
    b.l.slot = b.ds->slots;
    int ok = (b.l.classes = pl_calloc((size_t)b.l.n_classes + 1, sizeof *b.l.classes)) &&
             (b.l.members = pl_calloc((size_t)b.l.n_classes + 1, sizeof *b.l.members)) &&
             collect_values(&b);
    for (int s = 0; s < b.l.n_slots && ok; s++)
        ok = split_plurals(&b, s);
    if (!ok || !collect_sentences(&b) || b.word.failed) {
        st = pl_nomem("the language of %s", nlu);
        goto out;
    }
    if (!b.l.sentences.n) {
        st = pl_fail(PARLEY_ERR_CONFIG,
                     "%s: no example gives a sentence the recognizer can "
                     "say (every one has a word missing from %s)",
                     nlu, p->dict);
        goto out;
    }
    if (ngram && p->generic_weight > 0 && (st = mix_generic(&b, p)) != PARLEY_OK)
        goto out;
    count(&b, info);
    pl_strbuf a = { 0 };
    pl_strbuf_printf(&a, INFO_FORMAT, LANG_VERSION, info->sentences, info->classes, info->values,
                     info->dropped, info->guessed);
    about = a.failed ? NULL : a.s;
    if (!about || !(words = render_dict(&b, ngram)) ||
        !(model = ngram ? svc_lang_arpa(&b.l) : svc_lang_jsgf(&b.l)) ||
        (ngram && !(classdef = svc_lang_classdef(&b.l)))) {
        if (!about)
            pl_free(a.s);
        st = pl_nomem("the language of %s", nlu);
        goto out;
    }
    /* the summary last: a model whose summary is on disk has all its files */
    if ((st = write_file(info->dict, words)) == PARLEY_OK &&
        (!ngram || (st = write_file(info->classdef, classdef)) == PARLEY_OK) &&
        (st = write_file(info->path, model)) == PARLEY_OK)
        st = write_file(info_path, about);
out:
    pl_free(model);
    pl_free(words);
    pl_free(classdef);
    pl_free(about);
    for (int s = 0; b.l.classes && s < b.l.n_classes; s++)
        svc_strset_free(&b.l.classes[s]);
    for (int s = 0; b.l.members && s < b.l.n_classes; s++)
        svc_strset_free(&b.l.members[s]);
    pl_free(b.l.classes);
    pl_free(b.l.members);
    svc_strset_free(&b.l.sentences);
    svc_strset_free(&b.l.generic);
    pl_free(b.l.generic_p);
    svc_strset_free(&b.spoken);
    pl_free(b.word.s);
    pl_names_free(&b.dict);
    pl_free(b.dict_text);
    pl_names_free(&b.own);
    pl_free(b.own_text);
    svc_strset_free(&b.guesses);
    pl_names_free(&b.guess_ix);
    svc_strset_free(&b.said);
    pl_names_free(&b.said_ix);
    ds_free(b.ds);
    return st;
}

/* 1 when the summary at path names this version and its files are all there. */
static int find_cached(svc_lang_info *info, const char *path)
{
    char version[64];
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    int ok = fscanf(f, "%63s sentences %d classes %d values %d dropped %d guessed %d", version,
                    &info->sentences, &info->classes, &info->values, &info->dropped,
                    &info->guessed) == 6 &&
             !strcmp(version, LANG_VERSION);
    fclose(f);
    return ok && access(info->path, R_OK) == 0 && access(info->dict, R_OK) == 0 &&
           (info->kind != SVC_LANG_NGRAM || access(info->classdef, R_OK) == 0);
}

parley_status svc_lang_build(const char *nlu, const svc_lang_params *p, svc_lang_info *info)
{
    parley_status st;
    char *src = NULL, dir[4096], base[4000], about[4100];
    size_t len;
    svc_lang_kind kind = p->kind;
    memset(info, 0, sizeof *info);
    info->kind = kind;
    if (!(p->generic_weight >= 0 && p->generic_weight <= 0.5))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "generic weight %g: it is a share from 0 to 0.5",
                       p->generic_weight);
    if (p->generic_weight > 0 && kind != SVC_LANG_NGRAM)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "a generic weight mixes words into the class model, not a grammar");
    if ((st = pl_read_file(nlu, (size_t)1 << 30, &src, &len)) != PARLEY_OK)
        return st;
    uint64_t h = pl_fnv(PL_FNV_SEED, LANG_VERSION, strlen(LANG_VERSION));
    h = pl_fnv(pl_fnv(pl_fnv(h, &kind, sizeof kind), p->dict, strlen(p->dict) + 1), src, len);
    if (p->generic_weight > 0) /* a model without generic words keeps its name */
        h = pl_fnv(pl_fnv(h, &p->generic_weight, sizeof p->generic_weight), p->generic_lm,
                   strlen(p->generic_lm) + 1);
    pl_free(src);
    char *lexicon = NULL; /* its content: an edited lexicon makes another model */
    if (p->lexicon && *p->lexicon) {
        if ((st = pl_read_file(p->lexicon, SVC_LEXICON_MAX, &lexicon, &len)) != PARLEY_OK)
            return pl_wrap(st, "the lexicon");
        h = pl_fnv(pl_fnv(h, "lexicon", 8), lexicon, len);
    }
    if (!p->cache_dir || !*p->cache_dir)
        default_dir(dir, sizeof dir);
    else
        snprintf(dir, sizeof dir, "%s", p->cache_dir);
    const char *name = strrchr(nlu, '/') ? strrchr(nlu, '/') + 1 : nlu;
    int stem = (int)strcspn(name, ".");
    if (snprintf(base, sizeof base, "%s/%.*s-%016llx", dir, stem > 200 ? 200 : stem, name,
                 (unsigned long long)h) >= (int)sizeof base) {
        pl_free(lexicon);
        return pl_fail(PARLEY_ERR_INVALID_ARG, "speech model cache folder '%s': path too long",
                       dir);
    }
    snprintf(info->path, sizeof info->path, "%s.%s", base, kind == SVC_LANG_NGRAM ? "lm" : "gram");
    snprintf(info->dict, sizeof info->dict, "%s.dict", base);
    if (kind == SVC_LANG_NGRAM)
        snprintf(info->classdef, sizeof info->classdef, "%s.classdef", base);
    snprintf(about, sizeof about, "%s.info", base);
    if (!(info->cached = find_cached(info, about)) && (st = pl_make_dirs(dir)) == PARLEY_OK)
        st = build(nlu, p, lexicon, info, about);
    pl_free(lexicon);
    return info->cached ? PARLEY_OK : st;
}
