/* lowercase.c — lower-case copies of the examples whose slot values are written with capitals
 * (ds_augment_lowercase, dataset.h).
 *
 * The encoder reads text lower-cased, but the sparse word features keep each word's shape
 * ("Xxxx" for "Street"): a bot whose examples write addresses with capitals learns the
 * capitals as a sign of the slot and misses "5 main street" typed in lower case. A copy in
 * lower case teaches the other cues (the words around, the n-grams). Code points are
 * lower-cased one by one (utf8proc's simple mapping), so a word stays one word.
 */
#include <string.h>

#include <utf8proc.h>

#include "nlu/data/dataset.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

/* Whether word w has a code point that lower-casing changes. */
static int has_upper(const char *w)
{
    const utf8proc_uint8_t *s = (const utf8proc_uint8_t *)w;
    utf8proc_int32_t cp;
    for (utf8proc_ssize_t n; *s && (n = utf8proc_iterate(s, -1, &cp)) > 0; s += n)
        if (utf8proc_tolower(cp) != cp)
            return 1;
    return 0;
}

/* Whether a word inside one of e's slot values has capitals. */
static int value_has_upper(const ds_example *e)
{
    for (int s = 0; s < e->n_spans; s++)
        for (int w = e->spans[s].start; w < e->spans[s].end; w++)
            if (has_upper(e->words[w]))
                return 1;
    return 0;
}

/* Appends word w lower-cased to buf (at most 4 bytes per code point, as it came in). */
static size_t lower_word(const char *w, char *buf)
{
    const utf8proc_uint8_t *s = (const utf8proc_uint8_t *)w;
    size_t len = 0;
    utf8proc_int32_t cp;
    for (utf8proc_ssize_t n; *s && (n = utf8proc_iterate(s, -1, &cp)) > 0; s += n)
        len += (size_t)utf8proc_encode_char(utf8proc_tolower(cp), (utf8proc_uint8_t *)buf + len);
    return len;
}

parley_status ds_augment_lowercase(ds_dataset *ds, int *added)
{
    parley_status st = PARLEY_OK;
    const char **words = NULL;
    size_t *lens = NULL;
    char *text = NULL;
    int count = 0, cap = 0;
    if (added)
        *added = 0;
    if (!ds->finished)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "ds_augment_lowercase: dataset not finished");
    const int n0 = ds->n_examples;
    for (int i = 0; i < n0 && st == PARLEY_OK; i++) {
        /* A copy: ds_add may move the examples array, not what the pointers point to. */
        const ds_example e = ds->examples[i];
        if (e.untagged || !value_has_upper(&e))
            continue;
        if (e.n_words > cap) {
            pl_free(words);
            pl_free(lens);
            cap = e.n_words;
            words = pl_malloc((size_t)cap * sizeof *words);
            lens = pl_malloc((size_t)cap * sizeof *lens);
        }
        pl_free(text);
        /* tolower never needs more than 4 bytes per code point, nor more code points */
        text = pl_malloc(4 * strlen(e.text) + 4);
        if (!words || !lens || !text) {
            st = pl_nomem("%s: lower-case copies", ds->source);
            break;
        }
        char *p = text;
        for (int w = 0; w < e.n_words; w++) {
            words[w] = p;
            lens[w] = lower_word(e.words[w], p);
            p += lens[w];
        }
        int appended = 0;
        st = ds_add(ds, e.n_words, words, lens, e.tags, e.intent, e.n_spans, e.spans,
                    DS_DROP_SAME_TEXT, NULL, &appended);
        if (appended)
            ds->examples[ds->n_examples - 1].variant_of = e.variant_of >= 0 ? e.variant_of : i;
        count += appended;
    }
    if (added)
        *added = count;
    pl_free(words);
    pl_free(lens);
    pl_free(text);
    return st;
}
