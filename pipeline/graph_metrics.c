/* graph_metrics.c — what the engine itself measures: turns by outcome and error kind,
 * end-to-end and per-stage latency, batch sizes, queue depths and turns in flight, and the
 * graph's state.
 *
 * The turn metrics are fed at the end of each turn from what its message carries (t_in,
 * t_out, nlu_ns, dialog_ns, store_ns, status), batch sizes where a worker hands a batch to
 * its node, and the gauges are sampled from the queues when the metrics are rendered. The
 * names are docs/pipelines.md's "Metrics" section; keep the two alike. The registry and the text
 * format are metrics.c's.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/graph_impl.h"
#include "sdk/base/alloc.h"

static const char *const stage_names[PIPE_STAGES] = { "nlu", "dialog", "store" };

/* "invalid_arg" for PARLEY_ERR_INVALID_ARG: the status's name, lower case. */
static void kind_label(parley_status st, char *buf, size_t cap)
{
    const char *s = parley_status_str(st) + strlen("PARLEY_ERR_");
    size_t n = 0;
    n += (size_t)snprintf(buf, cap, "kind=\"");
    while (*s && *s != ':' && n + 2 < cap)
        buf[n++] = (char)tolower((unsigned char)*s++);
    snprintf(buf + n, cap - n, "\"");
}

parley_status pipe_metrics_engine_init(pipe_graph *g)
{
    pipe_engine_metrics *e = &g->em;
    char label[64];
    const char *turns = "Turns that reached the end of the graph, by outcome";
    e->turns_ok = pipe_metrics_counter(g, "parley_turns_total", turns, "outcome=\"ok\"");
    e->turns_error = pipe_metrics_counter(g, "parley_turns_total", turns, "outcome=\"error\"");
    if (!e->turns_ok || !e->turns_error)
        return PARLEY_ERR_NOMEM;
    for (int st = 1; st < PIPE_N_STATUS; st++) {
        kind_label((parley_status)st, label, sizeof label);
        if (!(e->errors[st] = pipe_metrics_counter(g, "parley_turn_errors_total",
                                                   "Failed turns by the kind of error", label)))
            return PARLEY_ERR_NOMEM;
    }
    if (!(e->turn_seconds = pipe_metrics_histogram(
                  g, "parley_turn_duration_seconds",
                  "Turn latency from the source that made it to the sink that ended it", NULL, NULL,
                  0)))
        return PARLEY_ERR_NOMEM;
    for (int k = 0; k < PIPE_STAGES; k++) {
        snprintf(label, sizeof label, "stage=\"%s\"", stage_names[k]);
        if (!(e->stage_seconds[k] = pipe_metrics_histogram(
                      g, "parley_stage_duration_seconds",
                      "Time a turn spent in a stage: nlu (its batch's pass), dialog (manager and "
                      "store), store (the turn's transaction)",
                      label, NULL, 0)))
            return PARLEY_ERR_NOMEM;
    }
    if (!(e->in_flight = pipe_metrics_gauge(g, "parley_turns_in_flight",
                                            "Turn messages inside the graph now", NULL)))
        return PARLEY_ERR_NOMEM;
    return PARLEY_OK;
}

parley_status pipe_metrics_node_init(pipe_node *nd)
{
    parley_status st = PARLEY_OK;
    char *label = pipe_metrics_label("node", nd->name);
    if (!label)
        return PARLEY_ERR_NOMEM;
    nd->queue_depth = pipe_metrics_gauge(nd->g, "parley_queue_depth",
                                         "Messages waiting in a node's input queues", label);
    pipe_gauge *cap = pipe_metrics_gauge(nd->g, "parley_queue_capacity",
                                         "How many messages a node's input queues hold", label);
    if (!nd->queue_depth || !cap) {
        st = PARLEY_ERR_NOMEM;
        goto done;
    }
    pipe_gauge_set(cap, (double)nd->g->queue_size * nd->workers);
    if (nd->kind->process_batch && nd->max_batch > 1) {
        double bounds[32];
        size_t n = 0;
        for (long b = 1; b < nd->max_batch && n < 31; b *= 2)
            bounds[n++] = (double)b;
        bounds[n++] = nd->max_batch;
        if (!(nd->batch_size = pipe_metrics_histogram(
                      nd->g, "parley_batch_size",
                      "Messages per batch handed to a batching node (nlu.bert: one forward pass)",
                      label, bounds, n)))
            st = PARLEY_ERR_NOMEM;
    }
done:
    pl_free(label);
    return st;
}

void pipe_metrics_turn_end(pipe_graph *g, const pipe_msg *m)
{
    pipe_engine_metrics *e = &g->em;
    if (m->status == PARLEY_OK) {
        pipe_counter_add(e->turns_ok, 1);
    } else {
        pipe_counter_add(e->turns_error, 1);
        int k = m->status > 0 && (int)m->status < PIPE_N_STATUS ? (int)m->status
                                                                : PARLEY_ERR_INTERNAL;
        pipe_counter_add(e->errors[k], 1);
    }
    pipe_histogram_observe(e->turn_seconds, (double)(m->t_out - m->t_in) / 1e9);
    if (m->nlu_batch > 0)
        pipe_histogram_observe(e->stage_seconds[PIPE_STAGE_NLU], (double)m->nlu_ns / 1e9);
    if (m->dialog_ns > 0)
        pipe_histogram_observe(e->stage_seconds[PIPE_STAGE_DIALOG], (double)m->dialog_ns / 1e9);
    if (m->store_ns > 0)
        pipe_histogram_observe(e->stage_seconds[PIPE_STAGE_STORE], (double)m->store_ns / 1e9);
}

void pipe_metrics_sample(pipe_graph *g)
{
    pthread_mutex_lock(&g->mu);
    pipe_gauge_set(g->em.in_flight, (double)g->live);
    for (size_t i = 0; g->queues_up && i < g->n_nodes; i++) {
        pipe_node *nd = g->nodes[i];
        size_t depth = 0;
        for (int k = 0; nd->w && k < nd->workers; k++)
            depth += pipe_queue_len(nd->w[k].q);
        if (nd->queue_depth)
            pipe_gauge_set(nd->queue_depth, (double)depth);
    }
    pthread_mutex_unlock(&g->mu);
}

pipe_graph_state pipe_graph_get_state(const pipe_graph *g)
{
    return (pipe_graph_state)atomic_load(&((pipe_graph *)g)->state);
}
