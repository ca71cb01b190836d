/* graph_impl.h — the graph and node structures shared by the loader and the engine.
 * Private to pipeline/: nodes see only pipeline/node.h.
 */
#ifndef PIPELINE_GRAPH_IMPL_H
#define PIPELINE_GRAPH_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "pipeline/audio_hint.h"
#include "pipeline/graph.h"
#include "pipeline/metrics.h"
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
    pipe_gauge *queue_depth;    /* set at start for nodes with inputs */
    pipe_histogram *batch_size; /* set at start for batching nodes */
    int has_run;                /* a run() thread was started and not yet joined */
    pthread_t run_thread;
};

enum { PIPE_MAX_SUBSCRIBERS = 8 };

/* The registry of a graph's metrics (metrics.c). */
typedef struct pipe_metrics pipe_metrics;

enum { PIPE_STAGE_NLU, PIPE_STAGE_DIALOG, PIPE_STAGE_STORE, PIPE_STAGES };
enum { PIPE_N_STATUS = PARLEY_ERR_INTERNAL + 1 };

/* The engine's own metrics (graph_metrics.c). */
typedef struct pipe_engine_metrics {
    pipe_counter *turns_ok, *turns_error;
    pipe_counter *errors[PIPE_N_STATUS]; /* by status; [0] unused */
    pipe_histogram *turn_seconds;
    pipe_histogram *stage_seconds[PIPE_STAGES];
    pipe_gauge *in_flight;
} pipe_engine_metrics;

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
    long live;        /* messages in flight */
    int queues_up;    /* guarded by mu: every worker queue exists (metrics may read them) */
    atomic_int state; /* a pipe_graph_state */
    pipe_metrics *metrics;
    pipe_engine_metrics em;
    pipe_hint_board *hints; /* the audio segmenters by user (audio_hint.h) */
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

/* metrics.c: a new empty registry (*out owned by the caller), and freeing one (NULL: no-op). */
parley_status pipe_metrics_new(pipe_metrics **out);
void pipe_metrics_free(pipe_metrics *m);

/* graph_metrics.c */
/* Registers the engine's turn metrics in g->metrics (when the graph is built). */
parley_status pipe_metrics_engine_init(pipe_graph *g);
/* Registers a node's queue gauges and, for batching nodes, its batch histogram (at start). */
parley_status pipe_metrics_node_init(pipe_node *nd);
/* Counts a turn that ended (at its sink, or dropped while the graph closed). */
void pipe_metrics_turn_end(pipe_graph *g, const pipe_msg *m);
/* Sets the sampled gauges (turns in flight, queue depths) before a render. */
void pipe_metrics_sample(pipe_graph *g);

#endif
