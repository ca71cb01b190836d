/* sync.c — locks and condition variables whose creation failures are reported (see sync.h).
 *
 * Only creation lives here; locking stays plain pthread calls at each site.
 */
#include <string.h>
#include <time.h>

#include "sdk/base/error.h"
#include "sdk/base/sync.h"

parley_status pl_mutex_init(pthread_mutex_t *mu, const char *what)
{
    int rc = pthread_mutex_init(mu, NULL);
    return rc ? pl_fail(PARLEY_ERR_NOMEM, "%s: cannot create a lock (%s)", what, strerror(rc))
              : PARLEY_OK;
}

parley_status pl_cond_init(pthread_cond_t *c, const char *what)
{
    pthread_condattr_t ca;
    int rc = pthread_condattr_init(&ca);
    if (rc == 0) {
        rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        if (rc == 0)
            rc = pthread_cond_init(c, &ca);
        pthread_condattr_destroy(&ca);
    }
    return rc ? pl_fail(PARLEY_ERR_NOMEM, "%s: cannot create a condition variable (%s)", what,
                        strerror(rc))
              : PARLEY_OK;
}
