/* graph_impl.h — the graph and node structures shared by the loader and the engine.
 * Private to pipeline/: nodes see only pipeline/node.h.
 */
#ifndef PIPELINE_GRAPH_IMPL_H
#define PIPELINE_GRAPH_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "pipeline/graph.h"
#include "pipeline/queue.h"

typedef struct pipe_pval {
    char *s; /* strings and paths (owned) */
    long long i;
    double d; /* also set for ints */
    int b;
} pipe_pval;

typedef struct pipe_target {
    pipe_node *node;
    int port;
} pipe_target;

typedef struct pipe_out {
    size_t n;
    pipe_target *t;
} pipe_out;

typedef struct pipe_worker {
    pipe_node *nd;
    pipe_queue *q;
    pipe_qitem *items; /* (max_batch) */
    pipe_msg **msgs;   /* (max_batch) */
    pthread_t t;
    int running;
} pipe_worker;

struct pipe_node {
    pipe_graph *g;
    const pipe_kind *kind;
    char *name;
    void *state;
    int created; /* create() succeeded: destroy() is owed */
    size_t n_params;
    pipe_pval *params; /* (n_params) parallel to kind->params */
    size_t n_ports;
    pipe_out *outs; /* (n_ports) targets of each output port */
    int workers;
    pipe_worker *w; /* (workers) when the node has inputs and the graph started */
    int max_batch;
    long delay_us;
    int has_run; /* a run() thread was started and not yet joined */
    pthread_t run_thread;
};

enum { PIPE_MAX_SUBSCRIBERS = 8 };

struct pipe_graph {
    char *dir; /* folder of the graph file, for relative paths */
    size_t queue_size;
    size_t n_nodes;
    pipe_node **nodes; /* sources first: an order where every link goes forward */
    atomic_ullong seq;
    atomic_int stopping;
    int started;
    pthread_mutex_t mu; /* guards live */
    pthread_cond_t idle;
    long live; /* messages in flight */
    int n_subs;
    pipe_event_fn sub_fn[PIPE_MAX_SUBSCRIBERS];
    void *sub_user[PIPE_MAX_SUBSCRIBERS];
};

/* Loader (graph_load.c): parses and validates; with create=0 no node is created. */
parley_status pipe_graph_build(const char *path, const pipe_graph_opts *opts, int create,
                               pipe_graph **out);
/* Frees nodes and graph memory (threads must be joined). */
void pipe_graph_free(pipe_graph *g);

/* msg.c */
void pipe_msg_live_add(pipe_graph *g, long delta);

#endif
