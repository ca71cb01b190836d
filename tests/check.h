/* check.h — the tiny assertion kit every C test uses.
 *
 * CHECK(cond, fmt, ...) records a failure with file:line and a message and goes on, so one
 * run reports every broken case; check_done() prints the tally and gives the exit code.
 * Tests return 77 (meson's "skipped") when what they need is absent.
 */
#ifndef TESTS_CHECK_H
#define TESTS_CHECK_H

#include <math.h>
#include <stdio.h>

static int check_failures, check_count;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        check_count++;                                                               \
        if (!(cond)) {                                                               \
            check_failures++;                                                        \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
        }                                                                            \
    } while (0)

/* |a - b| <= atol + rtol * |b| for every element; returns the worst excess ratio. */
static inline double check_close(const float *a, const float *b, size_t n, double rtol, double atol,
                                 size_t *worst_i)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        double tol = atol + rtol * fabs((double)b[i]);
        double r = isnan(d) ? INFINITY : d / tol;
        if (r > worst) {
            worst = r;
            if (worst_i)
                *worst_i = i;
        }
    }
    return worst;
}

static inline int check_done(void)
{
    printf("%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
