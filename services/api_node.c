/* api_node.c — the `api` node and the public pipeline API (parley/pipeline.h) around it.
 *
 * The embedding application's texts enter the graph at the api node's `text` output and
 * the finished turns come back at its `reply` input — failed ones too, in their user's
 * order (the engine passes them through) — so each submitted turn gets exactly one reply. Replies
 * go to the application's callback or into a queue it polls. Graph loading and threads are
 * pipeline/; this file only converts between messages and parley_reply.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "parley/pipeline.h"
#include "pipeline/graph.h"
#include "sdk/base/alloc.h"
#include "sdk/base/sync.h"

typedef struct reply_box {
    parley_reply r; /* first, so a parley_reply * is a reply_box * */
    struct reply_box *next;
    parley_reply_slot *slots;
} reply_box;

typedef struct api_state {
    parley_reply_fn fn;
    void *user_data;
    pthread_mutex_t mu;
    pthread_cond_t ready;
    reply_box *head, *tail;
} api_state;

struct parley_pipeline {
    pipe_graph *g;
    pipe_node *api;
    api_state *s;
};

static const pipe_port_spec ports[] = {
    { "text", PIPE_OUT, PIPE_T_TEXT, 0, "texts the application submits" },
    { "reply", PIPE_IN, PIPE_T_REPLY | PIPE_T_NLU | PIPE_T_TEXT, 1,
      "replies (or NLU results, or transcripts) handed back to the application" },
    { NULL, 0, 0, 0, NULL },
};

void parley_reply_free(parley_reply *r)
{
    reply_box *b = (reply_box *)r;
    if (!b)
        return;
    pl_free((char *)r->error);
    pl_free((char *)r->user);
    pl_free((char *)r->session);
    pl_free((char *)r->text);
    pl_free((char *)r->reply);
    pl_free((char *)r->intent);
    for (size_t i = 0; i < r->n_slots; i++) {
        pl_free((char *)b->slots[i].name);
        pl_free((char *)b->slots[i].value);
    }
    pl_free(b->slots);
    pl_free(b);
}

static const char *dup_or_empty(const char *s, int *ok)
{
    char *d = pl_strdup(s ? s : "");
    *ok &= d != NULL;
    return d;
}

/* An owned reply for msg; NULL when out of memory. */
static reply_box *make_reply(const pipe_msg *m, parley_status st, const char *error)
{
    reply_box *b = pl_calloc(1, sizeof *b);
    if (!b)
        return NULL;
    parley_reply *r = &b->r;
    int ok = 1;
    int is_reply = m->type == PIPE_T_REPLY;
    r->status = st;
    r->id = m->seq;
    r->turn = m->turn_id;
    r->error = dup_or_empty(error, &ok);
    r->user = dup_or_empty(m->user_id, &ok);
    r->session = dup_or_empty(m->session_id, &ok);
    r->text = dup_or_empty(m->text, &ok);
    r->reply = dup_or_empty(is_reply ? m->reply : NULL, &ok);
    r->intent = dup_or_empty(is_reply ? m->intent : m->nlu ? m->nlu->intent : NULL, &ok);
    r->confidence = is_reply ? m->confidence : m->nlu ? m->nlu->confidence : 0;
    size_t n = is_reply ? m->n_slots : m->nlu ? (size_t)m->nlu->n_slots : 0;
    if (ok && n && !(b->slots = pl_calloc(n, sizeof *b->slots)))
        ok = 0;
    for (size_t i = 0; ok && i < n; i++, r->n_slots++) {
        b->slots[i].name = dup_or_empty(is_reply ? m->slots[i].name : m->nlu->slots[i].slot, &ok);
        b->slots[i].value =
                dup_or_empty(is_reply ? m->slots[i].value : m->nlu->slots[i].value, &ok);
    }
    if (!ok && n && b->slots && r->n_slots < n)
        r->n_slots++; /* free the half-made slot too */
    r->slots = b->slots;
    int64_t end = m->t_out ? m->t_out : pipe_now_ns();
    r->latency_ms = (double)(end - m->t_in) / 1e6;
    r->nlu_ms = (double)m->nlu_ns / 1e6;
    r->nlu_batch = m->nlu_batch;
    r->dialog_ms = (double)m->dialog_ns / 1e6;
    if (!ok) {
        parley_reply_free(r);
        return NULL;
    }
    return b;
}

static void deliver(api_state *s, const pipe_msg *m, parley_status st, const char *error)
{
    reply_box *b = make_reply(m, st, error);
    if (!b) {
        /* Out of memory: a bare reply still tells the application the turn is over. */
        static const char oom[] = "out of memory";
        reply_box bare = { .r = { PARLEY_ERR_NOMEM, oom, m->user_id, m->seq, m->turn_id, "", "", "",
                                  "", 0, 0, NULL, 0, 0, 0, 0 } };
        if (s->fn)
            s->fn(&bare.r, s->user_data);
        return;
    }
    if (s->fn) {
        s->fn(&b->r, s->user_data);
        parley_reply_free(&b->r);
        return;
    }
    pthread_mutex_lock(&s->mu);
    if (s->tail)
        s->tail->next = b;
    else
        s->head = b;
    s->tail = b;
    pthread_cond_signal(&s->ready);
    pthread_mutex_unlock(&s->mu);
}

static parley_status api_create(pipe_node *node, void **out)
{
    api_state *s = pl_calloc(1, sizeof *s);
    if (!s)
        return pl_nomem(NULL);
    parley_status st = pl_mutex_init(&s->mu, pipe_node_name(node));
    if (st == PARLEY_OK && (st = pl_cond_init(&s->ready, pipe_node_name(node))) != PARLEY_OK)
        pthread_mutex_destroy(&s->mu);
    if (st != PARLEY_OK) {
        pl_free(s);
        return st;
    }
    *out = s;
    return PARLEY_OK;
}

static parley_status api_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    (void)port;
    msg->t_out = pipe_now_ns();
    deliver(state, msg, msg->status,
            msg->status ? (msg->error ? msg->error : parley_status_str(msg->status)) : NULL);
    pipe_node_turn_done(node, msg);
    return PARLEY_OK;
}

static void api_destroy(void *state)
{
    api_state *s = state;
    if (!s)
        return;
    while (s->head) {
        reply_box *b = s->head;
        s->head = b->next;
        parley_reply_free(&b->r);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->ready);
    pl_free(s);
}

const pipe_kind svc_kind_api = {
    .name = "api",
    .doc = "the embedding application's door: parley_pipeline_submit() in, replies out",
    .ports = ports,
    .workers = 2,
    .ends_turns = 1,
    .create = api_create,
    .process = api_process,
    .destroy = api_destroy,
};

/* ---- parley/pipeline.h ---- */

parley_pipeline_params parley_pipeline_params_default(void)
{
    return (parley_pipeline_params){ NULL, NULL, 64, NULL };
}

parley_status parley_pipeline_open(const char *graph_path, const parley_pipeline_params *params,
                                   parley_pipeline **out)
{
    if (!graph_path || !out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_pipeline_open: NULL argument");
    *out = NULL;
    parley_pipeline_params pp = params ? *params : parley_pipeline_params_default();
    pipe_graph_opts opts = { .queue_size = pp.queue_size, .set = pp.overrides };
    parley_pipeline *p = pl_calloc(1, sizeof *p);
    if (!p)
        return pl_nomem(NULL);
    parley_status st = pipe_graph_load(graph_path, &opts, &p->g);
    if (st != PARLEY_OK)
        goto fail;
    if (!(p->api = pipe_graph_find_kind(p->g, "api"))) {
        st = pl_fail(PARLEY_ERR_CONFIG, "%s: the graph has no node of kind 'api'", graph_path);
        goto fail;
    }
    p->s = pipe_node_state(p->api);
    p->s->fn = pp.on_reply;
    p->s->user_data = pp.user_data;
    if ((st = pipe_graph_start(p->g)) != PARLEY_OK)
        goto fail;
    *out = p;
    return PARLEY_OK;
fail:
    pipe_graph_close(p->g);
    pl_free(p);
    return st;
}

parley_status parley_pipeline_register_action(parley_pipeline *p, const char *name,
                                              parley_action_fn fn, void *user_data)
{
    if (!p || !name)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_pipeline_register_action: NULL argument");
    return pipe_graph_register_action(p->g, name, (pipe_fn)fn, user_data);
}

parley_status parley_pipeline_submit(parley_pipeline *p, const char *user, const char *text,
                                     uint64_t *id)
{
    if (!p || !user || !text)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_pipeline_submit: NULL argument");
    pipe_msg *m = pipe_msg_new(p->g, user, text);
    if (!m)
        return pl_nomem(NULL);
    if (id)
        *id = m->seq;
    /* A turn that cannot enter the graph is failed, and so still gets its reply. */
    return pipe_node_emit(p->api, 0, m);
}

parley_status parley_pipeline_poll(parley_pipeline *p, int timeout_ms, parley_reply **out)
{
    if (!p || !out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_pipeline_poll: NULL argument");
    *out = NULL;
    api_state *s = p->s;
    if (s->fn)
        return pl_fail(PARLEY_ERR_UNSUPPORTED, "parley_pipeline_poll: replies go to the callback");
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (timeout_ms > 0) {
        long long ns = until.tv_nsec + timeout_ms * 1000000LL;
        until.tv_sec += ns / 1000000000LL;
        until.tv_nsec = ns % 1000000000LL;
    }
    pthread_mutex_lock(&s->mu);
    while (!s->head && timeout_ms != 0) {
        if (timeout_ms < 0)
            pthread_cond_wait(&s->ready, &s->mu);
        else if (pthread_cond_timedwait(&s->ready, &s->mu, &until) == ETIMEDOUT)
            break;
    }
    reply_box *b = s->head;
    if (b) {
        s->head = b->next;
        if (!s->head)
            s->tail = NULL;
        b->next = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    if (!b)
        return pl_fail(PARLEY_ERR_NOT_FOUND, "parley_pipeline_poll: no reply within %d ms",
                       timeout_ms);
    *out = &b->r;
    return PARLEY_OK;
}

void parley_pipeline_close(parley_pipeline *p)
{
    if (!p)
        return;
    pipe_graph_close(p->g);
    pl_free(p);
}
