/* graph.h — a loaded pipeline graph: load, start, drain, close (internal API).
 *
 * pipe_graph_load() parses and checks a graph YAML file (every error names FILE:LINE:COL)
 * and creates its nodes; pipe_graph_start() starts worker and source threads;
 * pipe_graph_close() stops the sources, waits for every in-flight turn to finish (nothing is
 * dropped), joins the threads and destroys the nodes. The public face is
 * parley/pipeline.h (the CLI uses it too); sdk/lib, the api node, tests and the benchmark
 * use this one.
 *
 * Threading: load, start, subscribe and close belong to one controlling thread; the other
 * calls here are safe from any thread while the graph runs.
 */
#ifndef PIPELINE_GRAPH_H
#define PIPELINE_GRAPH_H

#include "pipeline/node.h"

typedef enum pipe_event_type {
    PIPE_EV_TURN_DONE = 0,  /* a sink ended a turn: msg is set */
    PIPE_EV_TURN_ERROR = 1, /* a node failed a turn: msg, status and message are set */
    PIPE_EV_NODE_ERROR = 2, /* a node failed outside a turn: status and message are set */
} pipe_event_type;

typedef struct pipe_event {
    pipe_event_type type;
    const char *node;    /* the node that posted it */
    const pipe_msg *msg; /* borrowed for the call; NULL for node errors */
    parley_status status;
    const char *message; /* borrowed for the call; "" when none */
} pipe_event;

/* Called on the posting thread, concurrently from several: it must be thread-safe and
 * quick. It must not call back into the graph. */
typedef void (*pipe_event_fn)(const pipe_event *ev, void *user);

typedef struct pipe_graph_opts {
    size_t queue_size; /* capacity of each worker queue; 0 = 64 */
    /* NULL-terminated "TARGET.PARAM=VALUE" strings overriding the YAML (`--set`), where
     * TARGET is a node name or a node kind ("text.stdin.user=bob"); may be NULL. */
    const char *const *set;
    /* The node kinds a graph may name, NULL-terminated (required): the engine knows none of
     * its own; the library's built-in table is sdk/lib/kinds.h's lib_kinds. */
    const pipe_kind *const *kinds;
    /* 1: refuse a graph in which no node answers turns (no text.stdout, api or other node
     * that ends them), as every graph the public API opens must; 0 lets tests run bare
     * sources. */
    int need_output;
} pipe_graph_opts;

/* Loads `path`. On success *out is owned by the caller (pipe_graph_close). */
parley_status pipe_graph_load(const char *path, const pipe_graph_opts *opts, pipe_graph **out);
/* Checks the graph like pipe_graph_load (with need_output) but creates no node (no model is
 * opened). */
parley_status pipe_graph_check(const char *path, const pipe_kind *const *kinds);

/* Adds an event subscriber (before pipe_graph_start; at most 8). */
parley_status pipe_graph_subscribe(pipe_graph *g, pipe_event_fn fn, void *user);

parley_status pipe_graph_start(pipe_graph *g);
/* Blocks until every source's run() has returned (end of input, or pipe_graph_stop). */
void pipe_graph_wait_sources(pipe_graph *g);
/* Asks the sources to stop (async-signal-unsafe: call from a normal thread). */
void pipe_graph_stop(pipe_graph *g);
/* Blocks until no turn is in flight. */
void pipe_graph_drain(pipe_graph *g);
/* Stops, drains, joins and frees. NULL is a no-op. */
void pipe_graph_close(pipe_graph *g);

/* The first node of kind `kind`, or NULL. */
pipe_node *pipe_graph_find_kind(pipe_graph *g, const char *kind);
/* Calls the action callback of every node kind that has one; NOT_FOUND when none does. */
parley_status pipe_graph_register_action(pipe_graph *g, const char *name, pipe_fn fn, void *user);
/* The node's state (for the public API wrapping the api node). */
void *pipe_node_state(const pipe_node *node);

/* Posts an event to every subscriber. */
void pipe_graph_post(pipe_graph *g, const pipe_event *ev);

#endif
