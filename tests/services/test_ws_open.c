/* test_ws_open.c — opening and closing a graph with a ws.server node when allocations fail:
 * every failure of the Nth allocation (N = 1, 2, ...) is PARLEY_ERR_NOMEM with nothing left
 * allocated; a started graph closes at once (stop() wakes the service loop). The network
 * itself is tested from Python (tests/services/ws/).
 * Graph: ws/audio_only.yaml (ws.server and asr.stub, no model). Skips (77) in a build
 * without libwebsockets.
 */
#include <stdio.h>
#include <string.h>

#include "parley_config.h"
#include "pipeline/graph.h"
#include "sdk/lib/kinds.h"
#include "tests/check.h"
#include "tests/fault.h"

static parley_status open_close(void *path)
{
    pipe_graph *g = NULL;
    parley_status st = pipe_graph_load(path, &(pipe_graph_opts){ .kinds = lib_kinds }, &g);
    pipe_graph_close(g);
    return st;
}

int main(int argc, char **argv)
{
    if (!PARLEY_HAVE_WEBSOCKETS) {
        printf("no libwebsockets in this build: skipped\n");
        return 77;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/audio_only.yaml", argc > 1 ? argv[1] : "tests/services/ws");
    long points = fault_sweep("open a ws.server graph", open_close, path);
    CHECK(points >= 10, "only %ld allocation points", points);

    /* Started, then closed at once: stop() wakes the service loop, which returns. */
    pipe_graph *g = NULL;
    CHECK(pipe_graph_load(path, &(pipe_graph_opts){ .kinds = lib_kinds }, &g) == PARLEY_OK,
          "open: %s", parley_errmsg());
    CHECK(g && pipe_graph_start(g) == PARLEY_OK, "start: %s", parley_errmsg());
    pipe_graph_close(g);
    return check_done();
}
