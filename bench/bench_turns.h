/* bench_turns.h — what the pipeline benchmarks send and how they time it: the pizza
 * utterances a benchmark user says (turn n of user u: a fixed, varied pick), a monotonic
 * clock in seconds, and the comparison that sorts latencies for their percentiles. Shared by
 * pipeline_bench (in-process) and ws_bench (over a websocket or a graph's stdin), so their
 * figures compare the same turns. Header-only: each benchmark stays one program.
 */
#ifndef BENCH_TURNS_H
#define BENCH_TURNS_H

#include <time.h>

static const char *const bench_utterances[] = {
    "i want a large pizza with mushrooms",
    "deliver to 5 main street",
    "a small pepperoni pizza please",
    "make it two pizzas",
    "hello",
    "thanks",
    "add olives",
    "can i get a medium pizza with ham and pineapple",
    "cancel my order",
};

static inline const char *bench_utterance(int user, unsigned long n)
{
    return bench_utterances[(n * 7 + (unsigned long)user) %
                            (sizeof bench_utterances / sizeof *bench_utterances)];
}

static inline double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
