/* fault.h — allocation-failure sweeps in the manner of SQLite's malloc tests.
 *
 * fault_sweep() runs an operation again and again through parley_set_allocator(), with its
 * Nth allocation failing for N = 1, 2, ... until a run needs fewer than N allocations and
 * so succeeds untouched. Every failed run must return PARLEY_ERR_NOMEM and free everything
 * it allocated (the sweep counts live blocks), so each error path is walked once.
 */
#ifndef TESTS_FAULT_H
#define TESTS_FAULT_H

#include <stdlib.h>

#include "parley/status.h"
#include "tests/check.h"

static long fault_fail_at, fault_calls, fault_live;

static void *fault_malloc(size_t n, void *ud)
{
    (void)ud;
    if (++fault_calls == fault_fail_at)
        return NULL;
    void *p = malloc(n);
    fault_live += p != NULL;
    return p;
}

static void *fault_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    if (++fault_calls == fault_fail_at)
        return NULL;
    void *q = realloc(p, n);
    fault_live += q && !p;
    return q;
}

static void fault_free(void *p, void *ud)
{
    (void)ud;
    fault_live -= p != NULL;
    free(p);
}

/* Routes the library's allocations through the counting allocator, with allocation number
 * `fail_at` failing (0: none), for a test that walks the failures itself; fault_off() puts
 * the default allocator back. fault_calls and fault_live count from here. */
static inline void fault_on(long fail_at)
{
    static const parley_allocator a = { fault_malloc, fault_realloc, fault_free, NULL };
    fault_fail_at = fail_at;
    fault_calls = fault_live = 0;
    parley_set_allocator(&a);
}

static inline void fault_off(void)
{
    parley_set_allocator(NULL);
}

/* The operation under test: it must free all it made before returning, success or not. */
typedef parley_status (*fault_op)(void *ctx);

/* Sweeps `op`; records CHECK failures naming `what` and returns the number of failure
 * points walked (callers may check it is large enough to mean something). */
static inline long fault_sweep(const char *what, fault_op op, void *ctx)
{
    long n;
    for (n = 1; n < 1000000; n++) {
        fault_on(n);
        parley_status st = op(ctx);
        fault_off();
        if (st == PARLEY_OK && fault_calls < n)
            break;
        if (st != PARLEY_ERR_NOMEM || fault_live != 0) {
            CHECK(0, "%s, allocation %ld failing: %s, %ld blocks left (%s)", what, n,
                  parley_status_str(st), fault_live, parley_errmsg());
            break;
        }
    }
    return n - 1;
}

#endif
