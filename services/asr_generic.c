/* asr_generic.c — the generic English language model's most frequent words, for the class
 * model's share of speech outside the bot (asr_lang.h, svc_generic_words): its unigrams read
 * through sphinxbase, which reads every format pocketsphinx does. Once per model build; the
 * model is freed before it returns.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sphinxbase/logmath.h>
#include <sphinxbase/ngram_model.h>

#include "sdk/base/alloc.h"
#include "services/asr.h"
#include "services/asr_lang.h"

typedef struct unigram {
    double p; /* log10 */
    const char *w;
} unigram;

static int more_likely(const void *a, const void *b)
{
    const unigram *x = a, *y = b;
    return x->p > y->p ? -1 : x->p < y->p ? 1 : strcmp(x->w, y->w);
}

parley_status svc_generic_words(const char *lm, int n, int (*take)(void *ctx, const char *word),
                                void *ctx, svc_strset *words, double **log10p)
{
    parley_status st = PARLEY_OK;
    *log10p = NULL;
    svc_ps_log_off();
    logmath_t *lmath = logmath_init(1.0001, 0, 0);
    ngram_model_t *model = lmath ? ngram_model_read(NULL, lm, NGRAM_AUTO, lmath) : NULL;
    if (!model) {
        logmath_free(lmath);
        return pl_fail(PARLEY_ERR_IO, "%s: not a language model pocketsphinx reads", lm);
    }
    size_t total = ngram_model_get_counts(model)[0], k = 0;
    unigram *u = pl_malloc((total ? total : 1) * sizeof *u);
    if (!u)
        st = pl_nomem("the %zu words of %s", total, lm);
    for (size_t wid = 0; u && wid < total; wid++) { /* unigram ids run from 0 */
        const char *w = ngram_word(model, (int32)wid);
        if (w && take(ctx, w))
            u[k++] = (unigram){ logmath_log_to_log10(lmath, ngram_probv(model, w, NULL)), w };
    }
    if (st == PARLEY_OK) {
        qsort(u, k, sizeof *u, more_likely);
        k = k < (size_t)n ? k : (size_t)n;
        double sum = 0;
        for (size_t i = 0; i < k; i++)
            sum += pow(10, u[i].p);
        if (!(*log10p = pl_malloc((k ? k : 1) * sizeof **log10p)))
            st = pl_nomem("the words of %s", lm);
        for (size_t i = 0; st == PARLEY_OK && i < k; i++) {
            char *w = pl_strdup(u[i].w);
            if (!w || !svc_strset_add(words, w))
                st = pl_nomem("the words of %s", lm);
            (*log10p)[words->n - 1] = u[i].p - log10(sum);
        }
    }
    pl_free(u);
    ngram_model_free(model);
    logmath_free(lmath);
    if (st != PARLEY_OK) {
        pl_free(*log10p);
        *log10p = NULL;
    }
    return st;
}
