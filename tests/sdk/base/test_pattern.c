/* test_pattern.c — patterns (sdk/base/pattern.h): the dialect, match spans, and bounded
 * cost.
 *
 * The dialect checks hold what docs/dialog.md promises (PCRE2 syntax, searched anywhere in the
 * value, case-insensitive, UTF-8). The cost checks run patterns that backtrack without end
 * on long values and want the step budget's error back, never a verdict: the bound is a
 * count of steps, not a time, and a regression to an unbounded matcher would run for
 * minutes or more, which the test's timeout catches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/base/pattern.h"
#include "sdk/base/alloc.h"
#include "tests/check.h"
#include "tests/fault.h"

/* 1 found, 0 not found, -1 an error (its status in *st when st is given). */
static int search(const char *pattern, const char *value, size_t len, parley_status *st_out)
{
    pl_pattern *p;
    size_t where;
    parley_status st = pl_pattern_compile(pattern, strlen(pattern), &p, &where);
    CHECK(st == PARLEY_OK, "compiling '%s': %s", pattern, parley_errmsg());
    if (st != PARLEY_OK)
        return -1;
    int found = 0;
    st = pl_pattern_match(p, value, len, &found);
    pl_pattern_free(p);
    if (st_out)
        *st_out = st;
    return st == PARLEY_OK ? found : -1;
}

static int finds(const char *pattern, const char *value)
{
    return search(pattern, value, strlen(value), NULL);
}

static void test_dialect(void)
{
    /* Searched anywhere in the value, unless anchored. */
    CHECK(finds("[0-9]", "12 Baker Street") == 1, "unanchored search");
    CHECK(finds("[0-9]", "Baker Street") == 0, "no digit");
    CHECK(finds("^BK-[0-9]+$", "BK-42") == 1 && finds("^BK-[0-9]+$", "my BK-42") == 0 &&
                  finds("^BK-[0-9]+$", "BK-42 please") == 0,
          "^ and $ hold the whole value");
    /* Case-insensitive, also beyond ASCII; POSIX classes; \d and back-references. */
    CHECK(finds("^bk-[0-9]+$", "Bk-7") == 1, "case-insensitive");
    CHECK(finds("^\xc3\xa9mile$", "\xc3\x89MILE") == 1, "case folding of UTF-8 letters");
    CHECK(finds("^[[:digit:]]{5}$", "75001") == 1 && finds("^\\d{5}$", "7500") == 0,
          "POSIX classes and \\d");
    CHECK(finds("^(a+)b\\1$", "aabaa") == 1 && finds("^(a+)b\\1$", "aabaaa") == 0,
          "back-references");
    /* `$` is the end of the value only, not before a final newline. */
    CHECK(finds("^a$", "a\n") == 0, "$ before a final newline");
    /* Invalid UTF-8 in a value is never matched, and is no error. */
    CHECK(finds(".", "\xff\xfe") == 0, "invalid UTF-8 matched");
    CHECK(finds("b", "a\xff"
                     "b") == 1,
          "valid text beside invalid bytes");
    /* A value with a NUL byte is searched to its given length. */
    CHECK(search("^a\\x00b$", "a\0b", 3, NULL) == 1, "NUL inside the value");
}

static void test_refused_at_compile(void)
{
    static const struct {
        const char *pattern;
        const char *says;
    } bad[] = {
        { "(a", "missing closing parenthesis" },
        { "a\\Cb", "\\C (one byte of a character) is not allowed" },
        { "((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))",
          "nested deeper than the 32 levels" },
        { "((a{1,100}){1,100}){1,100}", "too large once compiled" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pl_pattern *p = NULL;
        size_t where = 99999;
        parley_status st = pl_pattern_compile(bad[i].pattern, strlen(bad[i].pattern), &p, &where);
        CHECK(st == PARLEY_ERR_CONFIG && !p && strstr(parley_errmsg(), bad[i].says) &&
                      where <= strlen(bad[i].pattern),
              "'%s': %s %s (at %zu)", bad[i].pattern, parley_status_str(st), parley_errmsg(),
              where);
        pl_pattern_free(p);
    }
    char longest[PL_PATTERN_MAX_BYTES + 2];
    memset(longest, 'a', sizeof longest);
    pl_pattern *p = NULL;
    size_t where;
    CHECK(pl_pattern_compile(longest, PL_PATTERN_MAX_BYTES, &p, &where) == PARLEY_OK,
          "a pattern of the largest length: %s", parley_errmsg());
    pl_pattern_free(p);
    p = NULL;
    parley_status st = pl_pattern_compile(longest, PL_PATTERN_MAX_BYTES + 1, &p, &where);
    CHECK(st == PARLEY_ERR_CONFIG && !p && where == 0 && strstr(parley_errmsg(), "1025 bytes"),
          "one byte longer: %s", parley_errmsg());
    pl_pattern_free(p);
}

/* `unit` repeated to at least n bytes, then `tail`. Owned by the caller (free). */
static char *repeat(const char *unit, size_t n, const char *tail, size_t *len)
{
    size_t u = strlen(unit), t = strlen(tail), reps = (n + u - 1) / u;
    char *s = malloc(reps * u + t + 1);
    if (!s)
        return NULL;
    for (size_t i = 0; i < reps; i++)
        memcpy(s + i * u, unit, u);
    memcpy(s + reps * u, tail, t + 1);
    *len = reps * u + t;
    return s;
}

/* Patterns that backtrack exponentially (or for ever) on these values: each search must
 * stop at a limit and say so. */
static void test_catastrophic(void)
{
    static const struct {
        const char *pattern, *unit, *tail;
        size_t n;
    } cases[] = {
        { "(a+)+$", "a", "b", 1000 }, /* nested quantifiers */
        { "((a+)+)+$", "a", "!", 1000 },
        { "(a|a)*b", "a", "cb", 1000 }, /* overlapping alternatives */
        { "(a|aa)+$", "a", "b", 1000 },
        { "(a*)*\\1$", "a", "c", 1000 }, /* back-references */
        { "(a+)+\\1$", "a", "c", 2000 },
        { "(?:(a*)\\1)*$", "a", "c", 1000 },
        { "(.*a){12}$", "a", "b", 1000 }, /* polynomial: L^12 */
        { "(\\w+\\s?)*$", "hello world ", "!", 1000 },
        /* Blocks that each stay under PCRE2's own per-start-position limit: only a budget
         * over the whole search stops this one (about 15 million steps otherwise). */
        { "(a+)+$", "aaaaaaaaaaaaaab", "", 1000 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t len;
        char *value = repeat(cases[i].unit, cases[i].n, cases[i].tail, &len);
        if (!value)
            continue;
        parley_status st = PARLEY_OK;
        int r = search(cases[i].pattern, value, len, &st);
        CHECK(r == -1 && st == PARLEY_ERR_UNSUPPORTED && strstr(parley_errmsg(), "100000 steps"),
              "'%s' on %zu bytes: result %d, %s %s", cases[i].pattern, len, r,
              parley_status_str(st), parley_errmsg());
        free(value);
    }
}

/* The other two limits: backtracking points open at once, and their memory. Values this
 * long never reach a pattern from a turn (slot values are capped); the unit is tested on
 * its own. */
static void test_depth_and_heap(void)
{
    size_t len;
    char *value = repeat("a", 20000, "", &len);
    parley_status st = PARLEY_OK;
    int r = search("^(a|b)*$", value, len, &st);
    CHECK(r == -1 && st == PARLEY_ERR_UNSUPPORTED && strstr(parley_errmsg(), "10000 nested"),
          "depth: result %d, %s %s", r, parley_status_str(st), parley_errmsg());
    free(value);
    /* Many captures make each backtracking point large. */
    char pattern[600] = "^(?:";
    for (int i = 0; i < 100; i++)
        strcat(pattern, "(a)?");
    strcat(pattern, "(b|a))*$");
    value = repeat("a", 3000, "", &len);
    r = search(pattern, value, len, &st);
    CHECK(r == -1 && st == PARLEY_ERR_UNSUPPORTED && strstr(parley_errmsg(), "4096 KiB"),
          "heap: result %d, %s %s", r, parley_status_str(st), parley_errmsg());
    free(value);
}

/* Every allocation of compiling and matching goes through parley's allocator, and each
 * failure comes back as PARLEY_ERR_NOMEM with nothing left behind. */
static parley_status compile_and_match(void *ctx)
{
    (void)ctx;
    static const char pattern[] = "^(bk|ref)-([0-9]+)\\2?$";
    pl_pattern *p;
    size_t where;
    parley_status st = pl_pattern_compile(pattern, strlen(pattern), &p, &where);
    if (st != PARLEY_OK)
        return st;
    int found = 0;
    st = pl_pattern_match(p, "BK-4242", 7, &found);
    pl_pattern_free(p);
    if (st == PARLEY_OK && !found)
        st = PARLEY_ERR_INTERNAL;
    return st;
}

/* pl_pattern_find: the first match from a start, as a byte span, and the next ones after it. */
static void test_spans(void)
{
    pl_pattern *p = NULL;
    size_t where, span[2] = { 0, 0 };
    const char *text = "call 555-1234 or 555-9876 now";
    int found = 0;
    CHECK(pl_pattern_compile("\\d{3}-\\d{4}", 11, &p, &where) == PARLEY_OK, "compile: %s",
          parley_errmsg());
    if (!p)
        return;
    CHECK(pl_pattern_find(p, text, strlen(text), 0, &found, span) == PARLEY_OK && found &&
                  span[0] == 5 && span[1] == 13,
          "first match [%zu, %zu)", span[0], span[1]);
    CHECK(pl_pattern_find(p, text, strlen(text), span[1], &found, span) == PARLEY_OK && found &&
                  span[0] == 17 && span[1] == 25,
          "second match [%zu, %zu)", span[0], span[1]);
    CHECK(pl_pattern_find(p, text, strlen(text), span[1], &found, span) == PARLEY_OK && !found,
          "no third match");
    pl_pattern_free(p);
}

int main(void)
{
    test_dialect();
    test_spans();
    test_refused_at_compile();
    test_catastrophic();
    test_depth_and_heap();
    long points = fault_sweep("compile and match a pattern", compile_and_match, NULL);
    CHECK(points >= 4, "only %ld allocation points", points);
    printf("allocation sweep: %ld failure points\n", points);
    return check_done();
}
