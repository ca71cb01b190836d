/* graph.c — the running graph: worker threads, routing, the event bus, drain and close.
 *
 * Every node with inputs gets `workers` threads, each popping its own bounded queue; a
 * message goes to the queue picked by a hash of its user, so one user's turns stay in
 * order through every node while different users run in parallel. pl_node_emit() blocks
 * on a full queue (backpressure). Sources run on threads of their own. Closing stops the
 * sources, waits until no message is in flight, then closes the queues and joins.
 * Loading and checking the YAML is pipeline/graph_load.c; node kinds live elsewhere.
 */
#include <string.h>

#include "pipeline/graph_impl.h"
#include "sdk/base/alloc.h"

parley_status pl_graph_load(const char *path, const pl_graph_opts *opts, pl_graph **out)
{
    if (!path || !out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "pl_graph_load: NULL argument");
    return pl_graph_build(path, opts, 1, out);
}

parley_status pl_graph_check(const char *path)
{
    pl_graph *g = NULL;
    if (!path)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "pl_graph_check: NULL path");
    parley_status st = pl_graph_build(path, NULL, 0, &g);
    pl_graph_free(g);
    return st;
}

parley_status pl_graph_subscribe(pl_graph *g, pl_event_fn fn, void *user)
{
    if (g->started || g->n_subs == PL_MAX_SUBSCRIBERS)
        return pl_fail(PARLEY_ERR_UNSUPPORTED, "event subscribers are set before start, at most %d",
                       PL_MAX_SUBSCRIBERS);
    g->sub_fn[g->n_subs] = fn;
    g->sub_user[g->n_subs++] = user;
    return PARLEY_OK;
}

void pl_graph_post(pl_graph *g, const pl_event *ev)
{
    for (int i = 0; i < g->n_subs; i++)
        g->sub_fn[i](ev, g->sub_user[i]);
}

static int has_inputs(const pl_node *nd)
{
    for (int p = 0; nd->kind->ports[p].name; p++)
        if (nd->kind->ports[p].dir == PL_IN)
            return 1;
    return 0;
}

void pl_node_error(pl_node *nd, parley_status st)
{
    pl_event ev = { PL_EV_NODE_ERROR, nd->name, NULL, st, parley_errmsg() };
    pl_graph_post(nd->g, &ev);
}

/* Sinks see failed turns (to answer them); other nodes pass them through untouched. */
static int is_sink(const pl_node *nd)
{
    if (nd->kind->ends_turns)
        return 1;
    for (int p = 0; nd->kind->ports[p].name; p++)
        if (nd->kind->ports[p].dir == PL_OUT)
            return 0;
    return 1;
}

static int first_linked_out(const pl_node *nd)
{
    for (int p = 0; nd->kind->ports[p].name; p++)
        if (nd->kind->ports[p].dir == PL_OUT && nd->outs[p].n)
            return p;
    return -1;
}

/* A failed turn on its way to the sink: through the first linked output, or ended here. */
static void pass_failed(pl_node *nd, pl_msg *msg)
{
    int p = first_linked_out(nd);
    if (p >= 0)
        pl_node_emit(nd, p, msg);
    else
        pl_node_turn_done(nd, msg);
}

static void run_batch(pl_worker *w, size_t n)
{
    pl_node *nd = w->nd;
    parley_status st = nd->kind->process_batch(nd, nd->state, w->msgs, n);
    if (st)
        pl_node_error(nd, st);
}

static void *worker_main(void *arg)
{
    pl_worker *w = arg;
    pl_node *nd = w->nd;
    int sink = is_sink(nd);
    size_t n;
    while ((n = pl_queue_pop(w->q, w->items, (size_t)nd->max_batch, nd->delay_us))) {
        size_t batched = 0;
        for (size_t i = 0; i < n; i++) {
            pl_msg *m = w->items[i].msg;
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
                if (st)
                    pl_node_error(nd, st);
            }
        }
        if (batched)
            run_batch(w, batched);
    }
    return NULL;
}

static void *source_main(void *arg)
{
    pl_node *nd = arg;
    parley_status st = nd->kind->run(nd, nd->state);
    if (st)
        pl_node_error(nd, st);
    return NULL;
}

static parley_status start_workers(pl_node *nd)
{
    size_t qcap = nd->g->queue_size;
    nd->w = pl_calloc((size_t)nd->workers, sizeof *nd->w);
    if (!nd->w)
        return pl_fail(PARLEY_ERR_NOMEM, "out of memory");
    for (int i = 0; i < nd->workers; i++) {
        pl_worker *w = &nd->w[i];
        w->nd = nd;
        w->q = pl_queue_new(qcap);
        w->items = pl_calloc((size_t)nd->max_batch, sizeof *w->items);
        w->msgs = pl_calloc((size_t)nd->max_batch, sizeof *w->msgs);
        if (!w->q || !w->items || !w->msgs)
            return pl_fail(PARLEY_ERR_NOMEM, "out of memory");
        if (pthread_create(&w->t, NULL, worker_main, w))
            return pl_fail(PARLEY_ERR_NOMEM, "node '%s': cannot start a worker thread", nd->name);
        w->running = 1;
    }
    return PARLEY_OK;
}

static void stop_workers(pl_node *nd)
{
    for (int i = 0; nd->w && i < nd->workers; i++)
        if (nd->w[i].q)
            pl_queue_close(nd->w[i].q);
    for (int i = 0; nd->w && i < nd->workers; i++) {
        pl_worker *w = &nd->w[i];
        if (w->running)
            pthread_join(w->t, NULL);
        w->running = 0;
    }
}

parley_status pl_graph_start(pl_graph *g)
{
    if (g->started)
        return pl_fail(PARLEY_ERR_UNSUPPORTED, "the graph is already started");
    g->started = 1;
    /* Consumers first, so a source never feeds a node that is not listening yet. */
    for (size_t i = g->n_nodes; i-- > 0;) {
        pl_node *nd = g->nodes[i];
        parley_status st;
        if (has_inputs(nd) && (st = start_workers(nd)))
            return st;
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        pl_node *nd = g->nodes[i];
        if (!nd->kind->run)
            continue;
        if (pthread_create(&nd->run_thread, NULL, source_main, nd))
            return pl_fail(PARLEY_ERR_NOMEM, "node '%s': cannot start its thread", nd->name);
        nd->has_run = 1;
    }
    return PARLEY_OK;
}

void pl_graph_wait_sources(pl_graph *g)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        pl_node *nd = g->nodes[i];
        if (nd->has_run)
            pthread_join(nd->run_thread, NULL);
        nd->has_run = 0;
    }
}

void pl_graph_stop(pl_graph *g)
{
    atomic_store(&g->stopping, 1);
    for (size_t i = 0; i < g->n_nodes; i++) {
        pl_node *nd = g->nodes[i];
        if (nd->kind->stop && nd->created)
            nd->kind->stop(nd->state);
    }
}

void pl_graph_drain(pl_graph *g)
{
    pthread_mutex_lock(&g->mu);
    while (g->live > 0)
        pthread_cond_wait(&g->idle, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

void pl_graph_close(pl_graph *g)
{
    if (!g)
        return;
    if (g->started) {
        pl_graph_stop(g);
        pl_graph_wait_sources(g);
        pl_graph_drain(g);
        for (size_t i = 0; i < g->n_nodes; i++)
            stop_workers(g->nodes[i]);
    }
    pl_graph_free(g);
}

void pl_graph_free(pl_graph *g)
{
    if (!g)
        return;
    for (size_t i = 0; g->nodes && i < g->n_nodes; i++) {
        pl_node *nd = g->nodes[i];
        if (!nd)
            continue;
        stop_workers(nd); /* a start that failed halfway leaves some running */
        if (nd->created && nd->kind->destroy)
            nd->kind->destroy(nd->state);
        for (int k = 0; nd->w && k < nd->workers; k++) {
            pl_queue_free(nd->w[k].q);
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
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->idle);
    pl_free(g);
}

/* ---- What nodes call ---- */

const char *pl_node_name(const pl_node *nd) { return nd->name; }
pl_graph *pl_node_graph(const pl_node *nd) { return nd->g; }
void *pl_node_state(const pl_node *nd) { return nd->state; }
int pl_node_stopping(const pl_node *nd) { return atomic_load(&nd->g->stopping); }

static const pl_pval *param(const pl_node *nd, const char *name)
{
    for (size_t i = 0; i < nd->n_params; i++)
        if (!strcmp(nd->kind->params[i].name, name))
            return &nd->params[i];
    return NULL;
}

const char *pl_node_param_str(const pl_node *nd, const char *name)
{
    const pl_pval *v = param(nd, name);
    return v ? v->s : NULL;
}

long long pl_node_param_int(const pl_node *nd, const char *name)
{
    const pl_pval *v = param(nd, name);
    return v ? v->i : 0;
}

double pl_node_param_double(const pl_node *nd, const char *name)
{
    const pl_pval *v = param(nd, name);
    return v ? v->d : 0;
}

int pl_node_param_bool(const pl_node *nd, const char *name)
{
    const pl_pval *v = param(nd, name);
    return v ? v->b : 0;
}

void pl_node_set_batch(pl_node *nd, int max_batch, long max_delay_us)
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

parley_status pl_node_emit(pl_node *nd, int port, pl_msg *msg)
{
    pl_out *o = &nd->outs[port];
    if (o->n == 0) {
        /* An output nobody listens to ends the turn where the graph's author put the end. */
        pl_node_turn_done(nd, msg);
        return PARLEY_OK;
    }
    for (size_t i = 0; i < o->n; i++) {
        pl_msg *m = i + 1 < o->n ? pl_msg_clone(msg) : msg;
        if (!m) {
            /* No memory for this branch's copy: it misses the turn, and the bus says so. */
            parley_status st = pl_fail(PARLEY_ERR_NOMEM, "out of memory for a copy of the turn "
                                       "for node '%s'", o->t[i].node->name);
            pl_event ev = { PL_EV_TURN_ERROR, nd->name, msg, st, parley_errmsg() };
            pl_graph_post(nd->g, &ev);
            continue;
        }
        pl_node *dst = o->t[i].node;
        pl_worker *w = &dst->w[user_hash(m->user_id) % (unsigned)dst->workers];
        if (pl_queue_push(w->q, (pl_qitem){ m, o->t[i].port })) {
            if (m != msg)
                pl_msg_free(m);
            /* Nowhere to go: the error event is all that is left of the turn. */
            parley_status st = pl_fail(PARLEY_ERR_UNSUPPORTED, "the graph is closing");
            pl_event ev = { PL_EV_TURN_ERROR, nd->name, msg, st, parley_errmsg() };
            pl_graph_post(nd->g, &ev);
            pl_msg_free(msg);
            return st;
        }
    }
    return PARLEY_OK;
}

void pl_node_turn_done(pl_node *nd, pl_msg *msg)
{
    msg->t_out = pl_now_ns();
    pl_event ev = { PL_EV_TURN_DONE, nd->name, msg, PARLEY_OK, "" };
    pl_graph_post(nd->g, &ev);
    pl_msg_free(msg);
}

void pl_node_fail_turn(pl_node *nd, pl_msg *msg, parley_status st)
{
    msg->status = st ? st : PARLEY_ERR_INTERNAL;
    pl_free(msg->error);
    msg->error = pl_strdup(parley_errmsg()); /* NULL when out of memory: the status stays */
    pl_event ev = { PL_EV_TURN_ERROR, nd->name, msg, msg->status, parley_errmsg() };
    pl_graph_post(nd->g, &ev);
    pass_failed(nd, msg);
}

pl_node *pl_graph_find_kind(pl_graph *g, const char *kind)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!strcmp(g->nodes[i]->kind->name, kind))
            return g->nodes[i];
    return NULL;
}

parley_status pl_graph_register_action(pl_graph *g, const char *name, pl_fn fn, void *user)
{
    int found = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        pl_node *nd = g->nodes[i];
        if (!nd->kind->action)
            continue;
        found = 1;
        parley_status st = nd->kind->action(nd, nd->state, name, fn, user);
        if (st)
            return pl_wrap(st, "node '%s'", nd->name);
    }
    return found ? PARLEY_OK
                 : pl_fail(PARLEY_ERR_NOT_FOUND, "action '%s': no node in the graph takes actions",
                           name);
}
