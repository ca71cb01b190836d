/* fuzz_graph.c — libFuzzer target for the pipeline graph loader (pipeline/graph_load.c).
 *
 * The input is a graph YAML file. Its leading lines of the form "#set TARGET.PARAM=VALUE"
 * (YAML comments, so the file stays the same) also become --set overrides, up to four, so
 * the override parser is fuzzed with the graph it applies to. The graph is built without
 * creating nodes (as pipe_graph_check does: no model is opened, no store or file other than
 * the graph is touched), against the library's table of kinds (sdk/lib/kinds.h). A refusal
 * must carry a message; a graph that loads must be what the loader promises: named nodes of
 * those kinds, names unique, every link between existing nodes and going forward (sources
 * first) except into a node that ends turns.
 */
#include <string.h>

#include "pipeline/graph_impl.h"
#include "sdk/lib/kinds.h"
#include "tests/fuzz/fuzz_input.h"

enum { MAX_SETS = 4 };

static void check_graph(const pipe_graph *g)
{
    FUZZ_EXPECT(g->n_nodes > 0 && g->nodes, "a loaded graph has nodes");
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pipe_node *nd = g->nodes[i];
        FUZZ_EXPECT(nd && nd->kind && nd->name && *nd->name, "node %zu is named, of a kind", i);
        size_t k = 0;
        while (lib_kinds[k] && lib_kinds[k] != nd->kind)
            k++;
        FUZZ_EXPECT(lib_kinds[k] != NULL, "node %s: a kind of the table it was loaded with",
                    nd->name);
        FUZZ_EXPECT(!nd->created && !nd->state, "node %s: not created by a check", nd->name);
        for (size_t j = 0; j < i; j++)
            FUZZ_EXPECT(strcmp(g->nodes[j]->name, nd->name), "node name %s twice", nd->name);
        for (size_t p = 0; nd->outs && p < nd->n_ports; p++)
            for (size_t t = 0; t < nd->outs[p].n; t++) {
                const pipe_node *to = nd->outs[p].t[t].node;
                size_t k = 0;
                while (k < g->n_nodes && g->nodes[k] != to)
                    k++;
                FUZZ_EXPECT(k < g->n_nodes, "node %s links to a node outside the graph", nd->name);
                FUZZ_EXPECT(k > i || to->kind->ends_turns, "link %s -> %s goes backward", nd->name,
                            to->name);
            }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *sets[MAX_SETS + 1] = { 0 };
    size_t n_sets = 0, at = 0;
    while (n_sets < MAX_SETS && size - at > 5 && !memcmp(data + at, "#set ", 5)) {
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        size_t end = nl ? (size_t)(nl - data) : size;
        sets[n_sets] = strndup((const char *)data + at + 5, end - at - 5);
        FUZZ_EXPECT(sets[n_sets] != NULL, "strndup");
        n_sets++;
        at = nl ? end + 1 : size;
    }
    pipe_graph_opts opts = { .set = (const char *const *)sets, .kinds = lib_kinds };
    pipe_graph *g = NULL;
    parley_status st = pipe_graph_build(fuzz_write("graph.yaml", data, size), &opts, 0, &g);
    if (st == PARLEY_OK) {
        FUZZ_EXPECT(g != NULL, "OK without a graph");
        check_graph(g);
    } else {
        FUZZ_EXPECT(g == NULL, "a refused graph is not handed out");
        fuzz_expect_refusal(st);
    }
    pipe_graph_free(g);
    for (size_t i = 0; i < n_sets; i++)
        free(sets[i]);
    return 0;
}
