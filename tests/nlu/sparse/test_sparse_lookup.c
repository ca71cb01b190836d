/* test_sparse_lookup.c — a lookup table's compact index (nlu/sparse/sparse_lookup.c) held to a
 * plain reference: on random tables (repeats, twin letters, spaces, two- and three-byte UTF-8),
 * every value is found, every query is a value or a slip exactly when a scan of the values
 * says so, the values come back in the order added, and allocation failures are clean.
 * Also the cap on a table's values (SF_MAX_LOOKUP_VALUES), refused naming the table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/sparse/sparse_impl.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/slip.h"
#include "tests/check.h"
#include "tests/fault.h"
#include "tests/utf8_starts.h"

enum { N_VALUES = 1500, N_QUERIES = 10000, MAX_BYTES = 128 };

/* Code points values are made of: twins are likely ("aa"), a space now and then. */
static const char *const pieces[] = { "a", "b", "c", "a", "s", " ", "é", "ü", "中" };
enum { N_PIECES = sizeof pieces / sizeof pieces[0] };

static unsigned rng = 12345;
static unsigned next(void)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) & 0xffffff;
}

/* A random value of 1 to 14 code points, no space at either end nor two in a row. */
static void random_value(char *out)
{
    int n = 1 + (int)(next() % 14);
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        const char *p = pieces[next() % N_PIECES];
        if (p[0] == ' ' && (i == 0 || i == n - 1 || out[len - 1] == ' '))
            p = "b";
        memcpy(out + len, p, strlen(p));
        len += strlen(p);
    }
    out[len] = '\0';
}

/* s with code point k left out (offsets at), into out. */
static void left_out(const char *s, const size_t *at, int k, char *out)
{
    memcpy(out, s, at[k]);
    strcpy(out + at[k], s + at[k + 1]);
}

/* A query near value v: v itself, or a code point left out, added, changed or swapped. */
static void random_query(const char *v, char *out)
{
    size_t at[MAX_BYTES];
    int n = utf8_starts(v, at), k = (int)(next() % (unsigned)n);
    const char *p = pieces[next() % N_PIECES];
    switch (next() % 5) {
    case 0: strcpy(out, v); break;
    case 1: left_out(v, at, k, out); break;
    case 2:
        memcpy(out, v, at[k]);
        strcpy(out + at[k], p);
        strcat(out, v + at[k]);
        break;
    case 3:
        memcpy(out, v, at[k]);
        strcpy(out + at[k], p);
        strcat(out, v + at[k + 1]);
        break;
    default:
        if (k + 1 < n) {
            memcpy(out, v, at[k]);
            size_t a = at[k + 1] - at[k], b = at[k + 2] - at[k + 1];
            memcpy(out + at[k], v + at[k + 1], b);
            memcpy(out + at[k] + b, v + at[k], a);
            strcpy(out + at[k] + a + b, v + at[k + 2]);
        } else {
            strcpy(out, v);
        }
    }
}

typedef struct table {
    char (*values)[MAX_BYTES];
    int n;
} table;

static int ref_has(const table *t, const char *q)
{
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->values[i], q))
            return 1;
    return 0;
}

/* Whether q is a value of PL_SLIP_MIN to PL_SLIP_MAX code points with one code point, not a
 * space, left out. */
static int ref_has_slip(const table *t, const char *q)
{
    char buf[MAX_BYTES];
    size_t at[MAX_BYTES];
    for (int i = 0; i < t->n; i++) {
        int n = utf8_starts(t->values[i], at);
        for (int k = 0; n >= PL_SLIP_MIN && n <= PL_SLIP_MAX && k < n; k++) {
            if (t->values[i][at[k]] == ' ')
                continue;
            left_out(t->values[i], at, k, buf);
            if (!strcmp(buf, q))
                return 1;
        }
    }
    return 0;
}

static parley_status build(const table *t, sf_lookup *l)
{
    memset(l, 0, sizeof *l);
    parley_status st = PARLEY_OK;
    if (!(l->name = pl_strdup("random")))
        return PARLEY_ERR_NOMEM;
    for (int i = 0; i < t->n && st == PARLEY_OK; i++)
        st = sf_lookup_add(l, t->values[i], strlen(t->values[i]), 1, 1);
    if (st != PARLEY_OK)
        sf_lookup_free(l);
    return st;
}

static void test_against_reference(void)
{
    table t = { calloc(N_VALUES, MAX_BYTES), N_VALUES };
    for (int i = 0; i < t.n; i++)
        random_value(t.values[i]);
    sf_lookup l;
    CHECK(build(&t, &l) == PARLEY_OK, "build: %s", parley_errmsg());
    /* Distinct values, in the order they were first added. */
    int distinct = 0;
    for (int i = 0; i < t.n; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++)
            first = strcmp(t.values[i], t.values[j]) != 0;
        if (first) {
            CHECK(distinct < l.n && !strcmp(sf_lookup_value(&l, distinct), t.values[i]),
                  "value %d: \"%s\", want \"%s\"", distinct,
                  distinct < l.n ? sf_lookup_value(&l, distinct) : "(none)", t.values[i]);
            distinct++;
        }
        CHECK(sf_lookup_has(&l, t.values[i], strlen(t.values[i])), "\"%s\" not found", t.values[i]);
    }
    CHECK(distinct == l.n, "%d values kept, want %d", l.n, distinct);
    int agree = 0, slips = 0;
    char q[2 * MAX_BYTES];
    for (int i = 0; i < N_QUERIES; i++) {
        if (i % 10 == 9)
            random_value(q);
        else
            random_query(t.values[next() % (unsigned)t.n], q);
        int has = sf_lookup_has(&l, q, strlen(q)), slip = sf_lookup_has_slip(&l, q, strlen(q));
        int want_has = ref_has(&t, q), want_slip = ref_has_slip(&t, q);
        CHECK(has == want_has && slip == want_slip, "\"%s\": value %d slip %d, want %d %d", q, has,
              slip, want_has, want_slip);
        agree += has == want_has && slip == want_slip;
        slips += want_slip;
    }
    CHECK(slips > N_QUERIES / 10, "only %d of the queries were slips: the test tests little",
          slips);
    printf("compact lookup: %d of %d queries agree with the scan (%d slips), %d values\n", agree,
           N_QUERIES, slips, l.n);
    sf_lookup_free(&l);
    free(t.values);
}

static parley_status build_small(void *ctx)
{
    sf_lookup l;
    parley_status st = build(ctx, &l);
    if (st == PARLEY_OK)
        sf_lookup_free(&l);
    return st;
}

static void test_allocation_failures(void)
{
    table t = { calloc(300, MAX_BYTES), 300 };
    for (int i = 0; i < t.n; i++)
        random_value(t.values[i]);
    long n = fault_sweep("a lookup table of 300 values", build_small, &t);
    CHECK(n >= 4, "only %ld allocations swept", n);
    free(t.values);
}

/* A table over the cap is refused before anything is built, naming it and its count. */
static void test_cap(void)
{
    const int n = SF_MAX_LOOKUP_VALUES + 1;
    const char **values = malloc((size_t)n * sizeof *values);
    for (int i = 0; i < n; i++)
        values[i] = "x";
    sf_featurizer *f = NULL;
    CHECK(sf_featurizer_new(1, 0, &f) == PARLEY_OK, "new: %s", parley_errmsg());
    parley_status st = sf_featurizer_add_lookup(f, "city", n, values);
    CHECK(st == PARLEY_ERR_CONFIG && strstr(parley_errmsg(), "\"city\"") &&
                  strstr(parley_errmsg(), "1000001"),
          "%d values: %s (%s)", n, parley_status_str(st), parley_errmsg());
    CHECK(sf_featurizer_add_lookup(f, "city", n - 1, values) == PARLEY_OK, "at the cap: %s",
          parley_errmsg());
    sf_free(f);
    free(values);
}

int main(void)
{
    test_against_reference();
    test_allocation_failures();
    test_cap();
    return check_done();
}
