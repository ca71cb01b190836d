/* error.h — internal helpers that set the per-thread detail message and log.
 *
 * pl_fail() is the one way library code reports a failure: it records the detail for
 * parley_errmsg() and returns the status, so error paths read `return pl_fail(...)`.
 * pl_log() hands a line to the application's callback; pl_log_gated() too, without floods.
 */
#ifndef SDK_BASE_ERROR_H
#define SDK_BASE_ERROR_H

#include <pthread.h>
#include <time.h>

#include "parley/status.h"

#if defined(__GNUC__)
#define PL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PL_PRINTF(a, b)
#endif

/* Sets this thread's detail message and returns `st`. */
parley_status pl_fail(parley_status st, const char *fmt, ...) PL_PRINTF(2, 3);

/* Reports a failed allocation: sets the detail to "<what>: out of memory" (just "out of
 * memory" when `fmt` is NULL) and returns PARLEY_ERR_NOMEM. `fmt` names what was being
 * allocated or done, e.g. pl_nomem("%s: the tag table", path). */
parley_status pl_nomem(const char *fmt, ...) PL_PRINTF(1, 2);

/* Prefixes the current detail message with more context ("loading model/x: ...").
 * Returns `st` so callers can `return pl_wrap(st, ...)`. */
parley_status pl_wrap(parley_status st, const char *fmt, ...) PL_PRINTF(2, 3);

/* Clears the detail message (successful calls leave it as it was). */
void pl_clear_error(void);

void pl_log(parley_log_level level, const char *fmt, ...) PL_PRINTF(2, 3);

/* A guard against floods of one line (a failure that repeats in a loop): a line equal to
 * the last one logged through the gate, less than interval_ms after it, is dropped and
 * counted; the count is logged ("the line above was repeated N more times") before the
 * next line the gate lets through. Initialize with PL_LOG_GATE_INIT(ms); any thread. */
typedef struct pl_log_gate {
    pthread_mutex_t mu;
    int interval_ms;
    char last[256];         /* the last line logged (cut to fit) */
    unsigned long repeats;  /* equal lines dropped since */
    struct timespec logged; /* when it was logged (CLOCK_MONOTONIC) */
} pl_log_gate;
#define PL_LOG_GATE_INIT(ms)                    \
    {                                           \
        PTHREAD_MUTEX_INITIALIZER, (ms), "", 0, \
        {                                       \
            0, 0                                \
        }                                       \
    }
void pl_log_gated(pl_log_gate *g, parley_log_level level, const char *fmt, ...) PL_PRINTF(3, 4);

#endif
