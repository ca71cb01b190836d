/* pipeline_bench.c — turns per second and turn latency of a whole pipeline on the CPU.
 *
 * usage: pipeline_bench GRAPH.yaml MODEL_DIR [SECONDS_PER_LEVEL] [--set X=Y]...
 *
 * For 1, 10, 100 and 1000 concurrent users, each user talks in a closed loop: it sends a
 * turn, waits for the reply, sends the next (a user never has two turns in flight). The
 * graph must have an `api` node. Per level it prints turns/s, p50/p99 latency from submit
 * to reply, the mean NLU batch size, and the share of the turn time spent in NLU, in the
 * dialog (manager + SQLite store) and elsewhere (queues, hand-offs). It measures; it does
 * not judge: the targets are in bench/RESULTS.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_turns.h"
#include "parley/pipeline.h"

static int submit(parley_pipeline *p, int user, unsigned long n)
{
    char id[32];
    snprintf(id, sizeof id, "bench-%d", user);
    if (parley_pipeline_submit(p, id, bench_utterance(user, n), NULL) == PARLEY_OK)
        return 0;
    fprintf(stderr, "pipeline_bench: submit: %s\n", parley_errmsg());
    return -1;
}

static int level(parley_pipeline *p, int users, double seconds, int print)
{
    size_t cap = 1 << 20, n = 0;
    double *lat = malloc(cap * sizeof *lat);
    unsigned long *sent = calloc((size_t)users, sizeof *sent);
    double nlu = 0, dialog = 0, total = 0, batch = 0;
    long errors = 0;
    if (!lat || !sent)
        return -1;
    for (int u = 0; u < users; u++)
        if (submit(p, u, sent[u]++))
            return -1;
    double t0 = bench_now_s(), t_end = t0 + seconds;
    long in_flight = users;
    while (in_flight > 0) {
        parley_reply *r = NULL;
        if (parley_pipeline_poll(p, 60000, &r) != PARLEY_OK) {
            fprintf(stderr, "pipeline_bench: no reply in 60 s: %s\n", parley_errmsg());
            return -1;
        }
        in_flight--;
        if (r->status != PARLEY_OK)
            errors++;
        if (n < cap)
            lat[n++] = r->latency_ms;
        nlu += r->nlu_ms;
        dialog += r->dialog_ms;
        total += r->latency_ms;
        batch += r->nlu_batch;
        int u = atoi(r->user + 6);
        parley_reply_free(r);
        if (bench_now_s() < t_end) {
            if (submit(p, u, sent[u]++))
                return -1;
            in_flight++;
        }
    }
    double dt = bench_now_s() - t0;
    qsort(lat, n, sizeof *lat, bench_cmp_double);
    if (print)
        printf("| %5d | %7zu | %8.1f | %7.2f | %7.2f | %5.1f | %4.0f%% | %4.0f%% | %4.0f%% | %ld "
               "|\n",
               users, n, (double)n / dt, lat[n / 2], lat[(size_t)((double)n * 0.99)],
               batch / (double)n, 100 * nlu / total, 100 * dialog / total,
               100 * (total - nlu - dialog) / total, errors);
    fflush(stdout);
    free(lat);
    free(sent);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr,
                "usage: pipeline_bench GRAPH.yaml MODEL_DIR [SECONDS_PER_LEVEL] [--set X=Y]...\n");
        return 2;
    }
    double seconds = argc > 3 && argv[3][0] != '-' ? atof(argv[3]) : 3;
    const char *sets[32];
    char model[2048];
    int ns = 0;
    snprintf(model, sizeof model, "nlu.bert.model=%s", argv[2]);
    sets[ns++] = model;
    for (int i = 3; i < argc; i++)
        if (!strcmp(argv[i], "--set") && i + 1 < argc && ns < 31)
            sets[ns++] = argv[++i];
    sets[ns] = NULL;
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.overrides = sets;
    pp.queue_size = 1024;
    parley_pipeline *p = NULL;
    if (parley_pipeline_open(argv[1], &pp, &p)) {
        fprintf(stderr, "pipeline_bench: %s\n", parley_errmsg());
        return 1;
    }
    /* Warm up: the first passes allocate scratch memory. */
    if (level(p, 4, 0.3, 0) < 0)
        return 1;
    printf("\n| users | turns | turns/s | p50 ms | p99 ms | batch | NLU | dialog | queues | errors "
           "|\n"
           "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    int users[] = { 1, 10, 100, 1000 };
    for (size_t i = 0; i < sizeof users / sizeof *users; i++)
        if (level(p, users[i], seconds, 1) < 0)
            return 1;
    parley_pipeline_close(p);
    return 0;
}
