/* metrics_bench.c — what the engine's metrics cost a turn: pipe_metrics_turn_end() (a
 * counter, the end-to-end histogram and three stage histograms) called in a loop from 1, 2
 * and 4 threads at once on one graph, and a render of the whole text.
 *
 * usage: metrics_bench GRAPH.yaml [CALLS_PER_THREAD]   (a graph without a model, such as
 * tests/pipeline/engine/echo.yaml). Prints ns per turn per thread, and ms per render.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pipeline/graph_impl.h"
#include "sdk/base/alloc.h"
#include "sdk/lib/kinds.h"

static pipe_graph *g;
static long calls;

static void *turns(void *arg)
{
    (void)arg;
    pipe_msg m = { .t_in = 0, .nlu_batch = 8 };
    for (long i = 0; i < calls; i++) {
        m.t_out = 1000000 + (i & 1023) * 4000; /* 1 ms .. 5 ms */
        m.nlu_ns = 300000 + (i & 255) * 1000;
        m.dialog_ns = 200000;
        m.store_ns = 50000 + (i & 63) * 1000;
        pipe_metrics_turn_end(g, &m);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: metrics_bench GRAPH.yaml [CALLS_PER_THREAD]\n");
        return 2;
    }
    calls = argc > 2 ? atol(argv[2]) : 2000000;
    pipe_graph_opts opts = { .kinds = lib_kinds };
    if (pipe_graph_load(argv[1], &opts, &g) != PARLEY_OK) {
        fprintf(stderr, "metrics_bench: %s\n", parley_errmsg());
        return 1;
    }
    for (int threads = 1; threads <= 4; threads *= 2) {
        pthread_t t[4];
        int64_t t0 = pipe_now_ns();
        for (int i = 0; i < threads; i++)
            pthread_create(&t[i], NULL, turns, NULL);
        for (int i = 0; i < threads; i++)
            pthread_join(t[i], NULL);
        double ns = (double)(pipe_now_ns() - t0) / (double)calls;
        printf("%d thread(s): %.1f ns per turn (wall time / calls per thread)\n", threads, ns);
    }
    int64_t t0 = pipe_now_ns();
    char *text = NULL;
    size_t len = 0;
    for (int i = 0; i < 100; i++) {
        pl_free(text);
        pipe_metrics_render(g, &text, &len);
    }
    printf("render: %.3f ms for %zu bytes\n", (double)(pipe_now_ns() - t0) / 1e8, len);
    pl_free(text);
    pipe_graph_close(g);
    return 0;
}
