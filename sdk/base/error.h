/* error.h — internal helpers that set the per-thread detail message and log.
 *
 * pl_fail() is the one way library code reports a failure: it records the detail for
 * parley_errmsg() and returns the status, so error paths read `return pl_fail(...)`.
 */
#ifndef SDK_BASE_ERROR_H
#define SDK_BASE_ERROR_H

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

#endif
