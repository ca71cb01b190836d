/* graph.h — a loaded pipeline graph: load, start, drain, close (internal API).
 *
 * pl_graph_load() parses and checks a graph YAML file (every error names FILE:LINE:COL)
 * and creates its nodes; pl_graph_start() starts worker and source threads;
 * pl_graph_close() stops the sources, waits for every in-flight turn to finish (nothing is
 * dropped), joins the threads and destroys the nodes. The public face is
 * parley/pipeline.h; the CLI, the api node, tests and the benchmark use this one.
 *
 * Threading: load, start, subscribe and close belong to one controlling thread; the other
 * calls here are safe from any thread while the graph runs.
 */
#ifndef PIPELINE_GRAPH_H
#define PIPELINE_GRAPH_H

#include "pipeline/node.h"

typedef enum pl_event_type {
    PL_EV_TURN_DONE = 0,  /* a sink ended a turn: msg is set */
    PL_EV_TURN_ERROR = 1, /* a node failed a turn: msg, status and message are set */
    PL_EV_NODE_ERROR = 2, /* a node failed outside a turn: status and message are set */
} pl_event_type;

typedef struct pl_event {
    pl_event_type type;
    const char *node;      /* the node that posted it */
    const pl_msg *msg;     /* borrowed for the call; NULL for node errors */
    parley_status status;
    const char *message;   /* borrowed for the call; "" when none */
} pl_event;

/* Called on the posting thread, concurrently from several: it must be thread-safe and
 * quick. It must not call back into the graph. */
typedef void (*pl_event_fn)(const pl_event *ev, void *user);

typedef struct pl_graph_opts {
    size_t queue_size;  /* capacity of each worker queue; 0 = 64 */
    /* NULL-terminated "TARGET.PARAM=VALUE" strings overriding the YAML (`--set`), where
     * TARGET is a node name or a node kind ("text.stdin.user=bob"); may be NULL. */
    const char *const *set;
} pl_graph_opts;

/* Loads `path` (opts may be NULL). On success *out is owned by the caller (pl_graph_close). */
parley_status pl_graph_load(const char *path, const pl_graph_opts *opts, pl_graph **out);
/* Checks the graph like pl_graph_load but creates no node (no model is opened). */
parley_status pl_graph_check(const char *path);

/* Adds an event subscriber (before pl_graph_start; at most 8). */
parley_status pl_graph_subscribe(pl_graph *g, pl_event_fn fn, void *user);

parley_status pl_graph_start(pl_graph *g);
/* Blocks until every source's run() has returned (end of input, or pl_graph_stop). */
void pl_graph_wait_sources(pl_graph *g);
/* Asks the sources to stop (async-signal-unsafe: call from a normal thread). */
void pl_graph_stop(pl_graph *g);
/* Blocks until no turn is in flight. */
void pl_graph_drain(pl_graph *g);
/* Stops, drains, joins and frees. NULL is a no-op. */
void pl_graph_close(pl_graph *g);

/* The first node of kind `kind`, or NULL. */
pl_node *pl_graph_find_kind(pl_graph *g, const char *kind);
/* Calls the action callback of every node kind that has one; NOT_FOUND when none does. */
parley_status pl_graph_register_action(pl_graph *g, const char *name, pl_fn fn, void *user);
/* The node's state (for the public API wrapping the api node). */
void *pl_node_state(const pl_node *node);

/* Posts an event to every subscriber. */
void pl_graph_post(pl_graph *g, const pl_event *ev);

/* ---- The registry of node kinds (sdk/api/kinds.c) ---- */
const pl_kind *pl_kind_find(const char *name);
/* The i-th kind, or NULL past the end. */
const pl_kind *pl_kind_at(size_t i);

#endif
