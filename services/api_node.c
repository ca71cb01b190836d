/* api_node.c — the `api` node: where the embedding application's turns enter and leave.
 *
 * The embedding application's texts enter the graph at the api node's `text` output and
 * the finished turns come back at its `reply` input — failed ones too, in their user's
 * order (the engine passes them through) — so each submitted turn gets exactly one reply. Replies
 * go to the application's callback or into a queue it polls. Graph loading and threads are
 * pipeline/, the public functions around this node sdk/lib/pipeline.c; this file only
 * converts between messages and parley_reply (and owns parley_reply_free, which knows how a
 * reply is allocated).
 *
 * Two stand-ins let a program drive a graph made for the terminal (parley_pipeline_params
 * .text_io): one named text.stdin that is only the api's `text` output, one named
 * text.stdout that is only its `reply` input. They take the params of the kinds they
 * stand for, so the same graph file checks the same, and ignore them.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "pipeline/graph.h"
#include "services/api_node.h"
#include "sdk/base/alloc.h"
#include "sdk/base/sync.h"

typedef struct reply_box {
    parley_reply r; /* first, so a parley_reply * is a reply_box * */
    struct reply_box *next;
    parley_slot *slots;
} reply_box;

typedef struct api_state {
    parley_reply_fn fn;
    void *user_data;
    pthread_mutex_t mu;
    pthread_cond_t ready;
    reply_box *head, *tail;
} api_state;

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
    r->intent = dup_or_empty(m->intent, &ok);
    r->confidence = m->confidence;
    size_t n = m->n_slots;
    if (ok && n && !(b->slots = pl_calloc(n, sizeof *b->slots)))
        ok = 0;
    for (size_t i = 0; ok && i < n; i++, r->n_slots++) {
        b->slots[i].name = dup_or_empty(m->slots[i].name, &ok);
        b->slots[i].value = dup_or_empty(m->slots[i].value, &ok);
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
    if (!msg->no_answer)
        deliver(state, msg, msg->status, pipe_msg_error(msg));
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

static const pipe_port_spec in_ports[] = {
    { "text", PIPE_OUT, PIPE_T_TEXT, 0, "texts the application submits" },
    { NULL, 0, 0, 0, NULL },
};

static const pipe_port_spec out_ports[] = {
    { "reply", PIPE_IN, PIPE_T_REPLY | PIPE_T_NLU | PIPE_T_TEXT, 1,
      "replies (or NLU results, or transcripts) handed back to the application" },
    { NULL, 0, 0, 0, NULL },
};

const pipe_kind svc_kind_api_stdin = {
    .name = "text.stdin",
    .doc = "stands for text.stdin: parley_pipeline_submit() in",
    .ports = in_ports,
    .params = svc_stdin_params,
};

const pipe_kind svc_kind_api_stdout = {
    .name = "text.stdout",
    .doc = "stands for text.stdout: replies handed back to the application",
    .ports = out_ports,
    .params = svc_stdout_params,
    .workers = 2,
    .ends_turns = 1,
    .create = api_create,
    .process = api_process,
    .destroy = api_destroy,
};

void svc_api_set_callback(pipe_node *api, parley_reply_fn fn, void *user_data)
{
    api_state *s = pipe_node_state(api);
    s->fn = fn;
    s->user_data = user_data;
}

parley_status svc_api_poll(pipe_node *api, int timeout_ms, parley_reply **out)
{
    api_state *s = pipe_node_state(api);
    *out = NULL;
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
