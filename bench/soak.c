/* soak.c — a long load through a whole pipeline: many users, many turns each, watching
 * throughput and memory as the store grows.
 *
 * usage: soak GRAPH.yaml MODEL_DIR [USERS [TURNS [EVERY]]] [--set X=Y]...
 *        (defaults: 1000 users, 200 turns each, a line every 20000 turns)
 *
 * Every user talks in a closed loop (one turn in flight per user; the next goes in when
 * its reply comes back) through a graph with an `api` node, on a fresh SQLite store in
 * /tmp unless --set names one. Every EVERY finished turns it prints one table row: turns
 * so far, turns/s since the last row and overall, failed turns, the process's RSS and peak
 * RSS, and the store's size on disk (file + WAL). It measures; it does not judge: the
 * figures and what they mean are in bench/RESULTS.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "parley/pipeline.h"

/* A user's conversation: an order that walks the pizza form, then small talk; turn k of
 * user u starts at a different place for each user. */
static const char *const script[] = {
    "hi there",
    "i'd like a medium pizza with olives",
    "two of them",
    "to 12 oak avenue",
    "yes please",
    "what pizzas do you have",
    "a family size pizza with bacon and onions",
    "no",
    "cancel it",
    "thank you",
    "goodbye",
};
enum { SCRIPT_LEN = sizeof script / sizeof *script };

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* VmRSS or VmHWM of this process in MiB, from /proc/self/status; -1 when unknown. */
static double status_mib(const char *key)
{
    char line[256];
    double kib = -1;
    size_t n = strlen(key);
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, n) && line[n] == ':')
            kib = atof(line + n + 1);
    if (f)
        fclose(f);
    return kib < 0 ? -1 : kib / 1024;
}

static double file_mib(const char *path, const char *suffix)
{
    char p[1100];
    struct stat sb;
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return stat(p, &sb) ? 0 : (double)sb.st_size / (1 << 20);
}

static int send_turn(parley_pipeline *p, long user, long k)
{
    char id[32];
    snprintf(id, sizeof id, "soak%ld", user);
    if (parley_pipeline_submit(p, id, script[(user + k) % SCRIPT_LEN], NULL) == PARLEY_OK)
        return 0;
    fprintf(stderr, "soak: submit: %s\n", parley_errmsg());
    return -1;
}

int main(int argc, char **argv)
{
    const char *sets[40] = { 0 }, *args[5] = { 0 };
    char set_model[1100], set_store[1100], store[1024];
    int n_sets = 0, n_args = 0, own_store = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--set") && i + 1 < argc && n_sets < 37) {
            sets[n_sets++] = argv[++i];
            own_store &= !strstr(argv[i], ".store=");
        } else if (n_args < 5) {
            args[n_args++] = argv[i];
        }
    }
    if (n_args < 2) {
        fprintf(stderr,
                "usage: soak GRAPH.yaml MODEL_DIR [USERS [TURNS [EVERY]]] [--set X=Y]...\n");
        return 2;
    }
    long users = n_args > 2 ? atol(args[2]) : 1000, turns = n_args > 3 ? atol(args[3]) : 200;
    long every = n_args > 4 ? atol(args[4]) : 20000;
    if (users <= 0 || turns <= 0 || every <= 0) {
        fprintf(stderr, "soak: USERS, TURNS and EVERY must be positive\n");
        return 2;
    }
    snprintf(set_model, sizeof set_model, "nlu.bert.model=%s", args[1]);
    sets[n_sets++] = set_model;
    snprintf(store, sizeof store, "/tmp/parley-soak-%ld.db", (long)getpid());
    if (own_store) {
        snprintf(set_store, sizeof set_store, "dialog.frames.store=%s", store);
        sets[n_sets++] = set_store;
    }
    long *done = calloc((size_t)users, sizeof *done);
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.overrides = sets;
    pp.queue_size = 1024; /* as bench/pipeline_bench: room for every user's turn */
    parley_pipeline *p = NULL;
    if (!done || parley_pipeline_open(args[0], &pp, &p) != PARLEY_OK) {
        fprintf(stderr, "soak: %s\n", done ? parley_errmsg() : "out of memory");
        return 1;
    }
    printf("soak: %ld users x %ld turns, closed loop, graph %s\n", users, turns, args[0]);
    printf("| turns | turns/s (last %ld) | turns/s (all) | failed | RSS MiB | peak RSS MiB | "
           "store MiB |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
           every);
    int rc = 0;
    long total = users * turns, finished = 0, failed = 0, in_flight = 0;
    for (long u = 0; u < users && !rc; u++)
        if ((rc = send_turn(p, u, 0)) == 0)
            in_flight++;
    double t0 = seconds_now(), t_row = t0;
    while (in_flight > 0) {
        parley_reply *r = NULL;
        if (parley_pipeline_poll(p, 120000, &r) != PARLEY_OK) {
            fprintf(stderr, "soak: no reply in 120 s: %s\n", parley_errmsg());
            rc = 1;
            break;
        }
        long u = atol(r->user + 4);
        failed += r->status != PARLEY_OK;
        parley_reply_free(r);
        in_flight--;
        finished++;
        if (u >= 0 && u < users && ++done[u] < turns && !rc) {
            if ((rc = send_turn(p, u, done[u])) == 0)
                in_flight++;
        }
        if (finished % every == 0 || finished == total) {
            double t = seconds_now();
            long in_row = finished % every ? finished % every : every;
            printf("| %ld | %.0f | %.0f | %ld | %.0f | %.0f | %.1f |\n", finished,
                   (double)in_row / (t - t_row), (double)finished / (t - t0), failed,
                   status_mib("VmRSS"), status_mib("VmHWM"),
                   own_store ? file_mib(store, "") + file_mib(store, "-wal") : -1.0);
            fflush(stdout);
            t_row = t;
        }
    }
    parley_pipeline_close(p);
    free(done);
    if (own_store) {
        const char *sfx[] = { "", "-wal", "-shm" };
        for (int i = 0; i < 3; i++) {
            char path[1100];
            snprintf(path, sizeof path, "%s%s", store, sfx[i]);
            unlink(path);
        }
    }
    return rc || failed ? 1 : 0;
}
