/* asr_lts_none.c — letter to sound without espeak-ng in the build: no guess (asr_lts.h). */
#include <stddef.h>

#include "services/asr_lts.h"

char *svc_lts_guess(const char *word)
{
    (void)word;
    return NULL;
}
