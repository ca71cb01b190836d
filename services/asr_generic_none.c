/* asr_generic_none.c — the generic model's words without pocketsphinx in the build: none
 * (asr_lang.h). */
#include "sdk/base/alloc.h"
#include "services/asr_lang.h"

parley_status svc_generic_words(const char *lm, int n, int (*take)(void *ctx, const char *word),
                                void *ctx, svc_strset *words, double **log10p)
{
    (void)n, (void)take, (void)ctx, (void)words;
    *log10p = NULL;
    return pl_fail(PARLEY_ERR_NOT_BUILT,
                   "the generic model's words (%s): parley was built without pocketsphinx", lm);
}
