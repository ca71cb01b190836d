/* pipeline_metrics.c — runs USERS x TURNS pizza turns through a graph with an api node and
 * prints the graph's metrics (Prometheus text) once every turn is counted.
 *
 * The users submit from 4 threads (tests/users.h: each user's turns in order); the replies
 * are counted, failed ones reported on stderr. tests/e2e/test_metrics.py reads the text
 * with a parser of its own, holds the numbers to the turns it asked for, and runs
 * `promtool check metrics` on it.
 *
 * usage: pipeline_metrics GRAPH.yaml USERS TURNS [NODE.PARAM=VALUE ...]
 * exit: 0 with the metrics on stdout; 1 when the graph fails to open or a turn fails.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "parley/pipeline.h"
#include "tests/metrics_text.h"
#include "tests/users.h"

static atomic_long failed;

static void on_reply(const parley_reply *r, void *ud)
{
    (void)ud;
    if (r->status != PARLEY_OK) {
        atomic_fetch_add(&failed, 1);
        fprintf(stderr, "%s: %s\n", r->user, r->error);
    }
}

static void say(int u, int k, char *buf, size_t cap)
{
    static const char *const lines[] = { "i want a large pizza with mushrooms", "2 pizzas",
                                         "deliver to 5 main street", "hello" };
    (void)u;
    snprintf(buf, cap, "%s", lines[k % 4]);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: pipeline_metrics GRAPH.yaml USERS TURNS [NODE.PARAM=VALUE ...]\n");
        return 2;
    }
    int users = atoi(argv[2]), turns = atoi(argv[3]);
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.on_reply = on_reply;
    pp.overrides = (const char *const *)argv + 4; /* argv ends with NULL */
    parley_pipeline *p = NULL;
    if (parley_pipeline_open(argv[1], &pp, &p) != PARLEY_OK) {
        fprintf(stderr, "pipeline_metrics: %s\n", parley_errmsg());
        return 1;
    }
    long refused = users_submit(p, users, turns, 4, say);
    char *text = metrics_settled(p, (double)users * turns - (double)refused);
    if (text)
        fputs(text, stdout);
    else
        fprintf(stderr, "pipeline_metrics: %s\n", parley_errmsg());
    parley_metrics_free(text);
    parley_pipeline_close(p);
    return text && !refused && !atomic_load(&failed) ? 0 : 1;
}
