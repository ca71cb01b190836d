/* test_status.c — status names, per-thread error detail, log callback and its gate against
 * floods, allocator hook. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parley/parley.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "tests/check.h"

static void *thread_main(void *arg)
{
    (void)arg;
    pl_fail(PARLEY_ERR_IO, "thread detail");
    return NULL;
}

static int log_calls;
static char last_line[256], before_last[256];
static void log_cb(parley_log_level level, const char *msg, void *ud)
{
    (void)level;
    log_calls += *(int *)ud;
    snprintf(before_last, sizeof before_last, "%s", last_line);
    snprintf(last_line, sizeof last_line, "%s", msg);
}

/* A line repeated in a loop goes through a gate once per interval, then its count; other
 * lines go through at once. */
static void test_log_gate(void)
{
    static pl_log_gate gate = PL_LOG_GATE_INIT(200);
    int weight = 1;
    log_calls = 0;
    parley_log_set(log_cb, &weight, PARLEY_LOG_WARN);
    for (int i = 0; i < 100000; i++)
        pl_log_gated(&gate, PARLEY_LOG_ERROR, "accept: errno %d", 24);
    CHECK(log_calls == 1 && !strcmp(last_line, "accept: errno 24"),
          "100,000 equal lines: %d logged", log_calls);
    pl_log_gated(&gate, PARLEY_LOG_ERROR, "another");
    CHECK(log_calls == 3 && !strcmp(before_last, "the line above was repeated 99999 more times") &&
                  !strcmp(last_line, "another"),
          "the count, then a new line: %d, '%s', '%s'", log_calls, before_last, last_line);
    pl_log_gated(&gate, PARLEY_LOG_ERROR, "another");
    struct timespec pause = { 0, 250 * 1000000L };
    nanosleep(&pause, NULL);
    pl_log_gated(&gate, PARLEY_LOG_ERROR, "another");
    CHECK(log_calls == 5 && !strcmp(before_last, "the line above was repeated 1 more times"),
          "after the interval the line goes through again: %d '%s'", log_calls, before_last);
    parley_log_set(NULL, NULL, PARLEY_LOG_DEBUG);
}

static int allocs;
static void *count_malloc(size_t n, void *ud)
{
    (void)ud;
    allocs++;
    return malloc(n);
}
static void *count_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    allocs++;
    return realloc(p, n);
}
static void count_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

int main(void)
{
    for (int s = 0; s <= PARLEY_ERR_INTERNAL; s++)
        CHECK(strncmp(parley_status_str((parley_status)s), "PARLEY_", 7) == 0, "status %d", s);
    CHECK(strstr(parley_status_str((parley_status)999), "unknown") != NULL, "unknown status name");

    CHECK(pl_fail(PARLEY_ERR_FORMAT, "bad %s at %d", "thing", 7) == PARLEY_ERR_FORMAT,
          "pl_fail returns");
    CHECK(strcmp(parley_errmsg(), "bad thing at 7") == 0, "detail: %s", parley_errmsg());
    pl_wrap(PARLEY_ERR_FORMAT, "loading %s", "x.json");
    CHECK(strcmp(parley_errmsg(), "loading x.json: bad thing at 7") == 0, "wrap: %s",
          parley_errmsg());

    /* Another thread's failure does not touch this thread's detail. */
    pthread_t t;
    pthread_create(&t, NULL, thread_main, NULL);
    pthread_join(t, NULL);
    CHECK(strcmp(parley_errmsg(), "loading x.json: bad thing at 7") == 0, "thread-local detail");

    int weight = 1;
    pl_log(PARLEY_LOG_ERROR, "dropped without a callback");
    parley_log_set(log_cb, &weight, PARLEY_LOG_WARN);
    pl_log(PARLEY_LOG_INFO, "below the level");
    pl_log(PARLEY_LOG_WARN, "kept %d", 42);
    CHECK(log_calls == 1 && strcmp(last_line, "kept 42") == 0, "log: %d '%s'", log_calls,
          last_line);
    parley_log_set(NULL, NULL, PARLEY_LOG_DEBUG);

    parley_allocator bad = { count_malloc, NULL, count_free, NULL };
    CHECK(parley_set_allocator(&bad) == PARLEY_ERR_INVALID_ARG, "incomplete allocator refused");
    parley_allocator a = { count_malloc, count_realloc, count_free, NULL };
    CHECK(parley_set_allocator(&a) == PARLEY_OK, "set allocator");
    char *s = pl_strdup("hello");
    s = pl_realloc(s, 64);
    CHECK(allocs == 2 && s && strcmp(s, "hello") == 0, "allocations routed: %d", allocs);
    pl_free(s);
    CHECK(pl_calloc((size_t)-1, 16) == NULL, "calloc overflow gives NULL");
    CHECK(parley_set_allocator(NULL) == PARLEY_OK, "restore allocator");
    CHECK(strcmp(parley_version(), PARLEY_VERSION) == 0, "version");
    test_log_gate();
    return check_done();
}
