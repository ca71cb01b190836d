/* metrics.h — a graph's metrics (counters, gauges, histograms) in the Prometheus text format,
 * and the graph's state for health checks (internal API).
 *
 * Every graph has one registry. The engine registers its own metrics when the graph loads
 * (turns by outcome and error kind, per-stage and end-to-end latency, batch sizes, queue
 * depths, turns in flight: docs/pipelines.md's "Metrics" section lists them) and keeps them up to
 * date as turns go by; a node may add its own from create() (a server its connections).
 * pipe_metrics_render() writes them all in the text exposition format 0.0.4, which the
 * ws.server node serves at GET /metrics and parley_pipeline_metrics() returns.
 *
 * Names. A metric name is "parley_" followed by [a-zA-Z0-9_:] characters; a counter's ends
 * in "_total", and names carry their unit in base units ("_seconds", "_bytes"). `labels` is
 * a fixed label set in the exposition syntax, `node="ws",kind="nlu.bert"`, with `\\`, `\"`
 * and `\n` escaped inside values (pipe_metrics_label() writes one pair escaped), or NULL for
 * none; the label names `le` and `__*` are reserved. Registering the same name with the same
 * labels twice returns the same metric; the same name with another type or another help is
 * an error, as is a malformed name or label set (PARLEY_ERR_INVALID_ARG with pl_fail detail).
 *
 * Ownership and threads. Metrics belong to the graph and stay valid until pipe_graph_close.
 * Registration belongs in a node's create(), on the thread that loads the graph (it takes
 * the registry's lock, so a later one from another thread is safe too); a metric cannot be
 * removed. Updates are lock-free atomics, safe from any number of threads at once; rendering
 * and the state may be read from any thread while the graph runs (a render reads each value
 * atomically, but not all of them at one instant). The engine counts a turn when its sink
 * ends it, just before the PIPE_EV_TURN_DONE event.
 */
#ifndef PIPELINE_METRICS_H
#define PIPELINE_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/node.h"

typedef struct pipe_counter pipe_counter;     /* monotonic, atomic */
typedef struct pipe_gauge pipe_gauge;         /* set/add, atomic */
typedef struct pipe_histogram pipe_histogram; /* fixed buckets, atomic */

/* Registered by a node from create(); name "parley_..." per Prometheus naming, help one
 * line, labels a fixed label set such as "node=\"ws\"" or NULL; owned by the graph, valid
 * until pipe_graph_close. NULL + pl_fail on error. */
pipe_counter *pipe_metrics_counter(pipe_graph *g, const char *name, const char *help,
                                   const char *labels);
pipe_gauge *pipe_metrics_gauge(pipe_graph *g, const char *name, const char *help,
                               const char *labels);
/* A histogram with `n` finite upper bounds, strictly increasing (copied; +Inf is implied).
 * NULL bounds with n = 0: latency buckets from 0.1 ms to 10 s (0.0001, 0.00025, 0.0005,
 * 0.001, ... 5, 10 seconds). */
pipe_histogram *pipe_metrics_histogram(pipe_graph *g, const char *name, const char *help,
                                       const char *labels, const double *bounds, size_t n);

void pipe_counter_add(pipe_counter *c, uint64_t n);
void pipe_gauge_set(pipe_gauge *gauge, double v);
void pipe_gauge_add(pipe_gauge *gauge, double delta);
/* Counts v in the first bucket whose bound is >= v, and adds it to the sum. */
void pipe_histogram_observe(pipe_histogram *h, double v);

/* Current values (tests, and nodes that report their own). */
uint64_t pipe_counter_get(const pipe_counter *c);
double pipe_gauge_get(const pipe_gauge *gauge);

/* Writes `name="value"` with value escaped for the exposition format into a new string,
 * owned by the caller (pl_free); NULL + pl_nomem when out of memory. */
char *pipe_metrics_label(const char *name, const char *value);

/* The whole graph's metrics in the Prometheus text exposition format 0.0.4; *out owned by the
 * caller (pl_free). */
parley_status pipe_metrics_render(pipe_graph *g, char **out, size_t *len);

typedef enum pipe_graph_state {
    PIPE_STATE_STARTING = 0, /* loaded; pipe_graph_start has not started every thread yet */
    PIPE_STATE_RUNNING = 1,  /* every worker and source thread is running */
    PIPE_STATE_STOPPING = 2, /* pipe_graph_stop or pipe_graph_close was called */
} pipe_graph_state;

/* PIPE_STATE_STARTING, PIPE_STATE_RUNNING, PIPE_STATE_STOPPING: for /healthz. */
pipe_graph_state pipe_graph_get_state(const pipe_graph *g);

#endif
