/* graph_impl.h — the graph and node structures shared by the loader and the engine.
 * Private to pipeline/: nodes see only pipeline/node.h.
 */
#ifndef PIPELINE_GRAPH_IMPL_H
#define PIPELINE_GRAPH_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "pipeline/graph.h"
#include "pipeline/queue.h"

typedef struct pl_pval {
    char *s;       /* strings and paths (owned) */
    long long i;
    double d;      /* also set for ints */
    int b;
} pl_pval;

typedef struct pl_target {
    pl_node *node;
    int port;
} pl_target;

typedef struct pl_out {
    size_t n;
    pl_target *t;
} pl_out;

typedef struct pl_worker {
    pl_node *nd;
    pl_queue *q;
    pl_qitem *items;     /* (max_batch) */
    pl_msg **msgs;       /* (max_batch) */
    pthread_t t;
    int running;
} pl_worker;

struct pl_node {
    pl_graph *g;
    const pl_kind *kind;
    char *name;
    void *state;
    int created;         /* create() succeeded: destroy() is owed */
    size_t n_params;
    pl_pval *params;     /* (n_params) parallel to kind->params */
    size_t n_ports;
    pl_out *outs;        /* (n_ports) targets of each output port */
    int workers;
    pl_worker *w;        /* (workers) when the node has inputs and the graph started */
    int max_batch;
    long delay_us;
    int has_run;         /* a run() thread was started and not yet joined */
    pthread_t run_thread;
};

enum { PL_MAX_SUBSCRIBERS = 8 };

struct pl_graph {
    char *dir;           /* folder of the graph file, for relative paths */
    size_t queue_size;
    size_t n_nodes;
    pl_node **nodes;     /* sources first: an order where every link goes forward */
    atomic_ullong seq;
    atomic_int stopping;
    int started;
    pthread_mutex_t mu;  /* guards live */
    pthread_cond_t idle;
    long live;           /* messages in flight */
    int n_subs;
    pl_event_fn sub_fn[PL_MAX_SUBSCRIBERS];
    void *sub_user[PL_MAX_SUBSCRIBERS];
};

/* Loader (graph_load.c): parses and validates; with create=0 no node is created. */
parley_status pl_graph_build(const char *path, const pl_graph_opts *opts, int create,
                             pl_graph **out);
/* Frees nodes and graph memory (threads must be joined). */
void pl_graph_free(pl_graph *g);

/* msg.c */
void pl_msg_live_add(pl_graph *g, long delta);

#endif
