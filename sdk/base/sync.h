/* sync.h — creating the library's locks and condition variables, with their failures reported.
 *
 * pthread_mutex_init and pthread_cond_init may fail (EAGAIN, ENOMEM); these wrappers turn a
 * failure into a status with a detail naming what the lock was for. Every condition variable
 * made here times its waits on CLOCK_MONOTONIC, so a wall-clock jump never shortens or
 * stretches a timeout: deadlines for pthread_cond_timedwait come from
 * clock_gettime(CLOCK_MONOTONIC). Destroy them with pthread_mutex_destroy and
 * pthread_cond_destroy as usual.
 */
#ifndef SDK_BASE_SYNC_H
#define SDK_BASE_SYNC_H

#include <pthread.h>

#include "parley/status.h"

/* Initializes `mu` (default attributes). On failure `mu` is untouched and the status is
 * PARLEY_ERR_NOMEM, its detail "<what>: cannot create a lock (<reason>)". */
parley_status pl_mutex_init(pthread_mutex_t *mu, const char *what);

/* Initializes `c` with CLOCK_MONOTONIC for timed waits; failures as pl_mutex_init. */
parley_status pl_cond_init(pthread_cond_t *c, const char *what);

#endif
