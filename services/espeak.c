/* espeak.c — the lock and the one-time initialization of the process's espeak-ng
 * (services/espeak.h).
 */
#include <pthread.h>

#include "sdk/base/error.h"
#include "services/espeak.h"

#include <espeak-ng/speak_lib.h>

static pthread_mutex_t espeak_mu = PTHREAD_MUTEX_INITIALIZER;
static int espeak_rate; /* samples per second, once initialized; -1 when that failed */

parley_status svc_espeak_lock(void)
{
    pthread_mutex_lock(&espeak_mu);
    if (!espeak_rate) {
        espeak_rate =
                espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, NULL, espeakINITIALIZE_DONT_EXIT);
        if (espeak_rate <= 0)
            espeak_rate = -1;
    }
    if (espeak_rate > 0)
        return PARLEY_OK;
    pthread_mutex_unlock(&espeak_mu);
    return pl_fail(PARLEY_ERR_NOT_FOUND, "espeak-ng cannot start (is espeak-ng-data installed?)");
}

void svc_espeak_unlock(void)
{
    pthread_mutex_unlock(&espeak_mu);
}

int svc_espeak_rate(void)
{
    return espeak_rate;
}
