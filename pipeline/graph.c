/* graph.c — the running graph: worker threads, routing, the event bus, drain and close.
 *
 * Every node with inputs gets `workers` threads, each popping its own bounded queue; a
 * message goes to the queue picked by a hash of its user, so one user's turns stay in
 * order through every node while different users run in parallel. pipe_node_emit() blocks
 * on a full queue (backpressure). Sources run on threads of their own. Closing stops the
 * sources, waits until no message is in flight, then closes the queues and joins.
 * Loading and checking the YAML is pipeline/graph_load.c; node kinds live elsewhere.
 */
#include <string.h>

#include "pipeline/graph_impl.h"
#include "sdk/base/alloc.h"

parley_status pipe_graph_load(const char *path, const pipe_graph_opts *opts, pipe_graph **out)
{
    if (!path || !out || !opts || !opts->kinds)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "pipe_graph_load: NULL argument");
    return pipe_graph_build(path, opts, 1, out);
}

parley_status pipe_graph_check(const char *path, const pipe_kind *const *kinds)
{
    pipe_graph *g = NULL;
    if (!path || !kinds)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "pipe_graph_check: NULL argument");
    pipe_graph_opts opts = { .kinds = kinds, .need_output = 1 };
    parley_status st = pipe_graph_build(path, &opts, 0, &g);
    pipe_graph_free(g);
    return st;
}

parley_status pipe_graph_subscribe(pipe_graph *g, pipe_event_fn fn, void *user)
{
    if (g->started || g->n_subs == PIPE_MAX_SUBSCRIBERS)
        return pl_fail(PARLEY_ERR_UNSUPPORTED, "event subscribers are set before start, at most %d",
                       PIPE_MAX_SUBSCRIBERS);
    g->sub_fn[g->n_subs] = fn;
    g->sub_user[g->n_subs++] = user;
    return PARLEY_OK;
}

void pipe_graph_post(pipe_graph *g, const pipe_event *ev)
{
    for (int i = 0; i < g->n_subs; i++)
        g->sub_fn[i](ev, g->sub_user[i]);
}

static int has_inputs(const pipe_node *nd)
{
    for (int p = 0; nd->kind->ports[p].name; p++)
        if (nd->kind->ports[p].dir == PIPE_IN)
            return 1;
    return 0;
}

void pipe_node_error(pipe_node *nd, parley_status st)
{
    pipe_event ev = { PIPE_EV_NODE_ERROR, nd->name, NULL, st, parley_errmsg() };
    pipe_graph_post(nd->g, &ev);
}

/* Sinks see failed turns (to answer them); other nodes pass them through untouched. */
static int is_sink(const pipe_node *nd)
{
    if (nd->kind->ends_turns)
        return 1;
    for (int p = 0; nd->kind->ports[p].name; p++)
        if (nd->kind->ports[p].dir == PIPE_OUT)
            return 0;
    return 1;
}

static int first_linked_out(const pipe_node *nd)
{
    for (int p = 0; nd->kind->ports[p].name; p++)
        if (nd->kind->ports[p].dir == PIPE_OUT && nd->outs[p].n)
            return p;
    return -1;
}

/* A failed turn on its way to the sink: through the first linked output, or ended here. */
static void pass_failed(pipe_node *nd, pipe_msg *msg)
{
    int p = first_linked_out(nd);
    if (p >= 0)
        pipe_node_emit(nd, p, msg);
    else
        pipe_node_turn_done(nd, msg);
}

static void run_batch(pipe_worker *w, size_t n)
{
    pipe_node *nd = w->nd;
    if (nd->batch_size)
        pipe_histogram_observe(nd->batch_size, (double)n);
    parley_status st = nd->kind->process_batch(nd, nd->state, w->msgs, n);
    if (st != PARLEY_OK)
        pipe_node_error(nd, st);
}

static void *worker_main(void *arg)
{
    pipe_worker *w = arg;
    pipe_node *nd = w->nd;
    int sink = is_sink(nd);
    size_t n;
    while ((n = pipe_queue_pop(w->q, w->items, (size_t)nd->max_batch, nd->delay_us))) {
        size_t batched = 0;
        for (size_t i = 0; i < n; i++) {
            pipe_msg *m = w->items[i].msg;
            if (m->status && !sink) {
                /* Keep the user's order: what came before it in the batch goes first. */
                if (batched)
                    run_batch(w, batched);
                batched = 0;
                pass_failed(nd, m);
            } else if (nd->kind->process_batch) {
                w->msgs[batched++] = m;
            } else {
                parley_status st = nd->kind->process(nd, nd->state, w->items[i].port, m);
                if (st != PARLEY_OK)
                    pipe_node_error(nd, st);
            }
        }
        if (batched)
            run_batch(w, batched);
    }
    return NULL;
}

static void *source_main(void *arg)
{
    pipe_node *nd = arg;
    parley_status st = nd->kind->run(nd, nd->state);
    if (st != PARLEY_OK)
        pipe_node_error(nd, st);
    return NULL;
}

static parley_status start_workers(pipe_node *nd)
{
    size_t qcap = nd->g->queue_size;
    parley_status st;
    /* Before the threads, which read the batch histogram. */
    if ((st = pipe_metrics_node_init(nd)) != PARLEY_OK)
        return st;
    nd->w = pl_calloc((size_t)nd->workers, sizeof *nd->w);
    if (!nd->w)
        return pl_nomem(NULL);
    for (int i = 0; i < nd->workers; i++) {
        pipe_worker *w = &nd->w[i];
        w->nd = nd;
        w->q = pipe_queue_new(qcap);
        w->items = pl_calloc((size_t)nd->max_batch, sizeof *w->items);
        w->msgs = pl_calloc((size_t)nd->max_batch, sizeof *w->msgs);
        if (!w->q || !w->items || !w->msgs)
            return pl_nomem("node '%s': a worker's queue", nd->name);
        if (pthread_create(&w->t, NULL, worker_main, w))
            return pl_fail(PARLEY_ERR_NOMEM, "node '%s': cannot start a worker thread", nd->name);
        w->running = 1;
    }
    return PARLEY_OK;
}

static void stop_workers(pipe_node *nd)
{
    for (int i = 0; nd->w && i < nd->workers; i++)
        if (nd->w[i].q)
            pipe_queue_close(nd->w[i].q);
    for (int i = 0; nd->w && i < nd->workers; i++) {
        pipe_worker *w = &nd->w[i];
        if (w->running)
            pthread_join(w->t, NULL);
        w->running = 0;
    }
}

parley_status pipe_graph_start(pipe_graph *g)
{
    if (g->started)
        return pl_fail(PARLEY_ERR_UNSUPPORTED, "the graph is already started");
    g->started = 1;
    /* Consumers first, so a source never feeds a node that is not listening yet. */
    for (size_t i = g->n_nodes; i-- > 0;) {
        pipe_node *nd = g->nodes[i];
        parley_status st;
        if (has_inputs(nd) && (st = start_workers(nd)) != PARLEY_OK)
            return st;
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        pipe_node *nd = g->nodes[i];
        if (!nd->kind->run)
            continue;
        if (pthread_create(&nd->run_thread, NULL, source_main, nd))
            return pl_fail(PARLEY_ERR_NOMEM, "node '%s': cannot start its thread", nd->name);
        nd->has_run = 1;
    }
    pthread_mutex_lock(&g->mu);
    g->queues_up = 1;
    pthread_mutex_unlock(&g->mu);
    int starting = PIPE_STATE_STARTING;
    atomic_compare_exchange_strong(&g->state, &starting, PIPE_STATE_RUNNING);
    return PARLEY_OK;
}

void pipe_graph_wait_sources(pipe_graph *g)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        pipe_node *nd = g->nodes[i];
        if (nd->has_run)
            pthread_join(nd->run_thread, NULL);
        nd->has_run = 0;
    }
}

void pipe_graph_stop(pipe_graph *g)
{
    atomic_store(&g->stopping, 1);
    atomic_store(&g->state, PIPE_STATE_STOPPING);
    for (size_t i = 0; i < g->n_nodes; i++) {
        pipe_node *nd = g->nodes[i];
        if (nd->kind->stop && nd->created)
            nd->kind->stop(nd->state);
    }
}

void pipe_graph_drain(pipe_graph *g)
{
    pthread_mutex_lock(&g->mu);
    while (g->live > 0)
        pthread_cond_wait(&g->idle, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

void pipe_graph_close(pipe_graph *g)
{
    if (!g)
        return;
    if (g->started) {
        pipe_graph_stop(g);
        pipe_graph_wait_sources(g);
        pipe_graph_drain(g);
        pthread_mutex_lock(&g->mu);
        g->queues_up = 0; /* the metrics stop reading the queues before they go */
        pthread_mutex_unlock(&g->mu);
        for (size_t i = 0; i < g->n_nodes; i++)
            stop_workers(g->nodes[i]);
    }
    pipe_graph_free(g);
}

void pipe_graph_free(pipe_graph *g)
{
    if (!g)
        return;
    for (size_t i = 0; g->nodes && i < g->n_nodes; i++) {
        pipe_node *nd = g->nodes[i];
        if (!nd)
            continue;
        stop_workers(nd); /* a start that failed halfway leaves some running */
        if (nd->created && nd->kind->destroy)
            nd->kind->destroy(nd->state);
        for (int k = 0; nd->w && k < nd->workers; k++) {
            pipe_queue_free(nd->w[k].q);
            pl_free(nd->w[k].items);
            pl_free(nd->w[k].msgs);
        }
        pl_free(nd->w);
        for (size_t p = 0; nd->outs && p < nd->n_ports; p++)
            pl_free(nd->outs[p].t);
        pl_free(nd->outs);
        for (size_t p = 0; nd->params && p < nd->n_params; p++)
            pl_free(nd->params[p].s);
        pl_free(nd->params);
        pl_free(nd->name);
        pl_free(nd);
    }
    pl_free(g->nodes);
    pl_free(g->dir);
    pipe_metrics_free(g->metrics);
    pipe_hint_board_free(g->hints);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->idle);
    pl_free(g);
}

/* ---- What nodes call ---- */

const char *pipe_node_name(const pipe_node *nd)
{
    return nd->name;
}
pipe_graph *pipe_node_graph(const pipe_node *nd)
{
    return nd->g;
}
void *pipe_node_state(const pipe_node *nd)
{
    return nd->state;
}
int pipe_node_stopping(const pipe_node *nd)
{
    return atomic_load(&nd->g->stopping);
}

static const pipe_pval *param(const pipe_node *nd, const char *name)
{
    for (size_t i = 0; i < nd->n_params; i++)
        if (!strcmp(nd->kind->params[i].name, name))
            return &nd->params[i];
    return NULL;
}

const char *pipe_node_param_str(const pipe_node *nd, const char *name)
{
    const pipe_pval *v = param(nd, name);
    return v ? v->s : NULL;
}

const char *pipe_node_upstream_param(const pipe_node *nd, const char *name)
{
    for (size_t i = 0; i < nd->g->n_nodes; i++) {
        const pipe_node *from = nd->g->nodes[i];
        for (size_t p = 0; p < from->n_ports; p++)
            for (size_t t = 0; from->outs && t < from->outs[p].n; t++)
                if (from->outs[p].t[t].node == nd && pipe_node_param_str(from, name))
                    return pipe_node_param_str(from, name);
    }
    return NULL;
}

long long pipe_node_param_int(const pipe_node *nd, const char *name)
{
    const pipe_pval *v = param(nd, name);
    return v ? v->i : 0;
}

double pipe_node_param_double(const pipe_node *nd, const char *name)
{
    const pipe_pval *v = param(nd, name);
    return v ? v->d : 0;
}

int pipe_node_param_bool(const pipe_node *nd, const char *name)
{
    const pipe_pval *v = param(nd, name);
    return v ? v->b : 0;
}

void pipe_node_set_batch(pipe_node *nd, int max_batch, long max_delay_us)
{
    nd->max_batch = max_batch > 0 ? max_batch : 1;
    nd->delay_us = max_delay_us > 0 ? max_delay_us : 0;
}

static unsigned user_hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* A turn that found its queue closed: the error event is all that is left of it. */
static parley_status closed_turn(pipe_node *nd, pipe_msg *msg)
{
    parley_status st = pl_fail(PARLEY_ERR_UNSUPPORTED, "the graph is closing");
    pipe_event ev = { PIPE_EV_TURN_ERROR, nd->name, msg, st, parley_errmsg() };
    pipe_graph_post(nd->g, &ev);
    msg->status = st;
    msg->t_out = pipe_now_ns();
    pipe_metrics_turn_end(nd->g, msg);
    pipe_msg_free(msg);
    return st;
}

parley_status pipe_node_resume(pipe_node *nd, int port, pipe_msg *msg)
{
    pipe_worker *w = &nd->w[user_hash(msg->user_id) % (unsigned)nd->workers];
    return pipe_queue_push(w->q, (pipe_qitem){ msg, port }) ? closed_turn(nd, msg) : PARLEY_OK;
}

parley_status pipe_node_emit(pipe_node *nd, int port, pipe_msg *msg)
{
    pipe_out *o = &nd->outs[port];
    if (o->n == 0) {
        /* An output nobody listens to ends the turn where the graph's author put the end. */
        pipe_node_turn_done(nd, msg);
        return PARLEY_OK;
    }
    for (size_t i = 0; i < o->n; i++) {
        pipe_msg *m = i + 1 < o->n ? pipe_msg_clone(msg) : msg;
        if (!m) {
            /* No memory for this branch's copy: it misses the turn, and the bus says so. */
            parley_status st = pl_nomem("a copy of the turn"
                                        "for node '%s'",
                                        o->t[i].node->name);
            pipe_event ev = { PIPE_EV_TURN_ERROR, nd->name, msg, st, parley_errmsg() };
            pipe_graph_post(nd->g, &ev);
            continue;
        }
        pipe_node *dst = o->t[i].node;
        pipe_worker *w = &dst->w[user_hash(m->user_id) % (unsigned)dst->workers];
        if (pipe_queue_push(w->q, (pipe_qitem){ m, o->t[i].port })) {
            if (m != msg)
                pipe_msg_free(m);
            return closed_turn(nd, msg);
        }
    }
    return PARLEY_OK;
}

size_t pipe_node_out_links(const pipe_node *nd, int port)
{
    return nd->outs[port].n;
}

void pipe_node_turn_done(pipe_node *nd, pipe_msg *msg)
{
    msg->t_out = pipe_now_ns();
    pipe_metrics_turn_end(nd->g, msg);
    pipe_event ev = { PIPE_EV_TURN_DONE, nd->name, msg, PARLEY_OK, "" };
    pipe_graph_post(nd->g, &ev);
    pipe_msg_free(msg);
}

void pipe_node_fail_turn(pipe_node *nd, pipe_msg *msg, parley_status st)
{
    msg->status = st != PARLEY_OK ? st : PARLEY_ERR_INTERNAL;
    pl_free(msg->error);
    msg->error = pl_strdup(parley_errmsg()); /* NULL when out of memory: the status stays */
    pipe_event ev = { PIPE_EV_TURN_ERROR, nd->name, msg, msg->status, parley_errmsg() };
    pipe_graph_post(nd->g, &ev);
    pass_failed(nd, msg);
}

pipe_node *pipe_graph_find_kind(pipe_graph *g, const char *kind)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i]->kind->name, kind))
            return g->nodes[i];
    return NULL;
}

parley_status pipe_graph_register_action(pipe_graph *g, const char *name, pipe_fn fn, void *user)
{
    int found = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        pipe_node *nd = g->nodes[i];
        if (!nd->kind->action)
            continue;
        found = 1;
        parley_status st = nd->kind->action(nd, nd->state, name, fn, user);
        if (st != PARLEY_OK)
            return pl_wrap(st, "node '%s'", nd->name);
    }
    return found ? PARLEY_OK
                 : pl_fail(PARLEY_ERR_NOT_FOUND, "action '%s': no node in the graph takes actions",
                           name);
}
