/* dialog_node.c — the `dialog.frames` node: the dialog manager inside a pipeline graph.
 *
 * Each turn arrives with the NLU's intent, confidence and entities; the node hands them to
 * dm_turn() and sends the same message on as a reply, the turn's dm_turn_out its payload:
 * the session and turn ids, the intent acted on and the user's slots after the turn. The engine
 * sends every turn of a user to the same worker, which is the serialization dm_turn() asks of its
 * caller. With `model:` set, the domain is checked against that NLU model's labels at start-up. A
 * turn that reaches an action answered by an action server leaves its worker: the call goes to the
 * node's HTTP client (action_http.h), the user's later turns wait aside in order, and when the
 * answer (or the failure) comes the turn goes back to its worker (pipe_node_resume) and runs again
 * with it. The worker serves other users meanwhile. The dialog itself is dialog.c and policy.c;
 * this file only adapts it to the graph. A spoken turn the recognizer rejected
 * (pipe_msg.asr_rejected) reaches dm_turn() with no intent or entities: the fallback answers.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "dialog/action_http.h"
#include "dialog/dialog.h"
#include "parley/nlu.h"
#include "pipeline/metrics.h"
#include "pipeline/node.h"
#include "sdk/base/alloc.h"
#include "sdk/base/sync.h"

static const pipe_port_spec ports[] = {
    { "nlu", PIPE_IN, PIPE_T_NLU, 1, "the user's text with its intent and slots" },
    { "reply", PIPE_OUT, PIPE_T_REPLY, 0,
      "the reply, with the intent acted on and the user's slots" },
    { NULL, 0, 0, 0, NULL },
};

static const pipe_param_spec params[] = {
    { "domain", PIPE_P_PATH, NULL, 0, 0, "domain.yaml: intents, slots, responses, forms, rules",
      NULL },
    { "store", PIPE_P_PATH, NULL, 0, 0,
      "every user's context: a SQLite file (created if missing) or a postgresql:// URI", NULL },
    { "model", PIPE_P_PATH, "", 0, 0,
      "NLU model directory to check the domain's intents and entities against; empty = the "
      "model of the NLU node linked to its input (none: no check)",
      NULL },
    { "busy_timeout_ms", PIPE_P_INT, "5000", 0, 600000,
      "how long a turn waits for a store another process holds (PostgreSQL: for the user's "
      "lock and for any statement)",
      NULL },
    { "pool_size", PIPE_P_INT, "4", 1, 64, "PostgreSQL connections of this node (SQLite: unused)",
      NULL },
    { "action_timeout_ms", PIPE_P_INT, "5000", 1, 600000,
      "how long an action server may take to answer (connecting included); then the action's "
      "fallback reply",
      NULL },
    { "action_max_bytes", PIPE_P_INT, "1048576", 1024, 1073741824,
      "the longest answer taken from an action server; a longer one gets the fallback reply",
      NULL },
    { "action_connections", PIPE_P_INT, "8", 1, 1024,
      "connections open to one action server at once; more calls to it wait for one (their "
      "timeout running)",
      NULL },
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

/* The reasons an action-server call fails, by dm_http_why, then an answer that is not one
 * the dialog can apply: the `reason` label of parley_action_errors_total. */
enum { WHY_JSON = DM_HTTP_OTHER + 1, N_WHY };
static const char *const why_names[N_WHY] = { "ok",   "timeout", "connect", "http",
                                              "size", "other",   "json" };

typedef struct frames frames;

/* A user whose turn is out at an action server, or is being run again with its answer. */
typedef struct waiting {
    struct waiting *next;
    frames *f;
    char *user;
    pipe_msg *msg;             /* the turn */
    int port;                  /* its input port */
    int64_t now_ms;            /* the clock of its first run, replayed by the others */
    char *action, *url;        /* the call out: its action and server */
    dm_action_result *results; /* (n, room for cap) answers so far; action and body owned */
    size_t n, cap;
    pipe_msg **later; /* (n_later, room for cap_later) the user's next turns, in order */
    size_t n_later, cap_later;
} waiting;

struct frames {
    dm_manager *dm;
    pipe_node *node;
    dm_http *http;      /* NULL when no action has an endpoint */
    pthread_mutex_t mu; /* guards `waiting` and each entry's `later` */
    waiting *waiting;
    pipe_counter *calls, *errors[N_WHY];
};

/* Registers the action-server metrics: calls, and errors by reason (each shown from 0). */
static parley_status action_metrics(frames *f)
{
    pipe_graph *g = pipe_node_graph(f->node);
    char *node = pipe_metrics_label("node", pipe_node_name(f->node));
    if (!node)
        return PARLEY_ERR_NOMEM;
    parley_status st = PARLEY_OK;
    f->calls = pipe_metrics_counter(g, "parley_action_calls_total", "Calls made to action servers",
                                    node);
    for (int i = 1; i < N_WHY && f->calls; i++) {
        char labels[512];
        snprintf(labels, sizeof labels, "%s,reason=\"%s\"", node, why_names[i]);
        if (!(f->errors[i] = pipe_metrics_counter(
                      g, "parley_action_errors_total",
                      "Action-server calls that failed (the user got the action's fallback "
                      "reply), by reason",
                      labels)))
            break;
    }
    if (!f->calls || !f->errors[N_WHY - 1])
        st = PARLEY_ERR_INVALID_ARG; /* the detail is set */
    pl_free(node);
    return st;
}

/* Forgets the answers of the user's last turn (for the next one). */
static void results_clear(waiting *w)
{
    for (size_t i = 0; i < w->n; i++) {
        pl_free((char *)w->results[i].action);
        pl_free((char *)w->results[i].body);
    }
    w->n = 0;
    w->now_ms = 0;
}

static void waiting_free(waiting *w)
{
    results_clear(w);
    pl_free(w->results);
    pl_free(w->later);
    pl_free(w->action);
    pl_free(w->url);
    pl_free(w->user);
    pl_free(w);
}

static void frames_destroy(void *state)
{
    frames *f = state;
    if (!f)
        return;
    dm_http_close(f->http); /* the graph drained: no call is out */
    while (f->waiting) {
        waiting *w = f->waiting;
        f->waiting = w->next;
        waiting_free(w);
    }
    dm_close(f->dm);
    pthread_mutex_destroy(&f->mu);
    pl_free(f);
}

static void out_free(void *payload)
{
    dm_turn_out_free(payload);
    pl_free(payload);
}

/* Moves the turn's result into the message's payload, its values pointing into it. */
static parley_status to_msg(pipe_msg *m, dm_turn_out *o)
{
    dm_turn_out *own = pl_malloc(sizeof *own);
    if (!own)
        return pl_nomem("a reply");
    *own = *o;
    *o = (dm_turn_out){ 0 };
    pipe_msg_set_payload(m, PIPE_T_REPLY, own, out_free);
    m->session_id = own->session_id;
    m->reply = own->reply;
    m->intent = own->intent;
    m->confidence = own->confidence;
    m->n_slots = own->n_slots;
    m->slots = own->slots;
    m->turn_id = own->turn_id;
    m->store_ns = own->store_ns;
    return PARLEY_OK;
}

static parley_status frames_create(pipe_node *node, void **state)
{
    dm_params p = {
        .domain_path = pipe_node_param_str(node, "domain"),
        .store_path = pipe_node_param_str(node, "store"),
        .busy_timeout_ms = (int)pipe_node_param_int(node, "busy_timeout_ms"),
        .pool_size = (int)pipe_node_param_int(node, "pool_size"),
    };
    if (p.busy_timeout_ms == 0)
        p.busy_timeout_ms = -1; /* the param's 0 means "do not wait" */
    const char *model = pipe_node_param_str(node, "model");
    if (!model || !*model) /* the model of the NLU node that feeds this one, if any */
        model = pipe_node_upstream_param(node, "model");
    parley_nlu_labels *labels = NULL;
    parley_status st;
    if (model && *model) {
        if ((st = parley_nlu_labels_read(model, &labels)) != PARLEY_OK)
            return pl_wrap(st, "node %s: checking the domain against model %s",
                           pipe_node_name(node), model);
        p.known_intents = labels->intents;
        p.n_known_intents = (size_t)labels->n_intents;
        p.known_slots = labels->entities;
        p.n_known_slots = (size_t)labels->n_entities;
    }
    frames *f = pl_calloc(1, sizeof *f);
    if (!f) {
        parley_nlu_labels_free(labels);
        return pl_nomem("node %s", pipe_node_name(node));
    }
    f->node = node;
    *state = f;
    if ((st = pl_mutex_init(&f->mu, "the dialog node")) != PARLEY_OK) {
        pl_free(f);
        *state = NULL;
        parley_nlu_labels_free(labels);
        return st;
    }
    st = dm_open(&p, &f->dm);
    parley_nlu_labels_free(labels);
    if (st == PARLEY_OK && dm_uses_action_servers(f->dm)) {
        dm_http_params hp = {
            .timeout_ms = (long)pipe_node_param_int(node, "action_timeout_ms"),
            .max_bytes = (size_t)pipe_node_param_int(node, "action_max_bytes"),
            .max_connections = (long)pipe_node_param_int(node, "action_connections"),
        };
        if ((st = action_metrics(f)) == PARLEY_OK)
            st = dm_http_open(&hp, &f->http);
    }
    if (st == PARLEY_OK)
        return PARLEY_OK;
    st = pl_wrap(st, "node %s", pipe_node_name(node));
    frames_destroy(f); /* the engine owes destroy() only to a node that was created */
    *state = NULL;
    return st;
}

/* Keeps the answer to the call out for the turn's next run (run_turn made room for it
 * before the call went out); a failed call (body NULL) is counted and logged with why. */
static void keep_answer(waiting *w, int why, char *body, const char *detail)
{
    /* A server that is down fails every user's call alike: one line a second says so. */
    static pl_log_gate gate = PL_LOG_GATE_INIT(1000);
    frames *f = w->f;
    if (why != DM_HTTP_OK) {
        pipe_counter_add(f->errors[why], 1);
        pl_log_gated(&gate, PARLEY_LOG_WARN,
                     "node %s: action '%s' at %s failed (%s: %s): the user gets its fallback reply",
                     pipe_node_name(f->node), w->action, w->url, why_names[why], detail);
    }
    w->results[w->n++] = (dm_action_result){ w->action, body };
    w->action = NULL;
}

/* An action server's answer, or why there is none: kept, and the turn sent back to its
 * worker. On the HTTP client's thread. */
static void on_answer(void *user, dm_http_why why, long status, char *body, const char *detail)
{
    (void)status;
    waiting *w = user;
    int reason = (int)why;
    parley_status st = why == DM_HTTP_OK ? dm_action_answer_check(body) : PARLEY_OK;
    if (st != PARLEY_OK) {
        reason = st == PARLEY_ERR_FORMAT ? WHY_JSON : DM_HTTP_OTHER; /* or out of memory */
        detail = parley_errmsg();
        pl_free(body);
        body = NULL;
    }
    keep_answer(w, reason, body, detail);
    pipe_node_resume(w->f->node, w->port, w->msg);
}

/* Sends the call the turn waits for; PARLEY_OK when it went out (the turn is the client's
 * until on_answer). Takes the call's action and URL from out. */
static parley_status send_call(frames *f, waiting **wp, pipe_msg *msg, int port, dm_turn_out *out)
{
    waiting *w = *wp;
    if (!w) {
        if (!(w = pl_calloc(1, sizeof *w)) || !(w->user = pl_strdup(msg->user_id))) {
            pl_free(w);
            return pl_nomem("a turn waiting for an action server");
        }
        w->f = f;
        pthread_mutex_lock(&f->mu);
        w->next = f->waiting;
        f->waiting = w;
        pthread_mutex_unlock(&f->mu);
        *wp = w;
    }
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 2;
        dm_action_result *r = pl_realloc(w->results, cap * sizeof *r);
        if (!r)
            return pl_nomem("a turn waiting for an action server");
        w->results = r;
        w->cap = cap;
    }
    pl_free(w->action);
    pl_free(w->url);
    w->action = out->call.action;
    w->url = out->call.url;
    out->call.action = out->call.url = NULL;
    w->msg = msg;
    w->port = port;
    w->now_ms = out->call.now_ms;
    pipe_counter_add(f->calls, 1);
    return dm_http_post(f->http, w->url, out->call.body, on_answer, w);
}

/* Runs one turn (again, with the answers in w, when w is set). Returns 1 when the turn went
 * out to an action server, 0 when it was answered or failed here. */
static int run_turn(frames *f, waiting **wp, int port, pipe_msg *msg)
{
    pipe_node *node = f->node;
    dm_turn_out out;
    parley_status st;
    for (;;) {
        waiting *w = *wp;
        dm_turn_in in = {
            .user_id = msg->user_id,
            .text = msg->text,
            .intent = msg->asr_rejected ? NULL : msg->intent,
            .confidence = msg->confidence,
            .n_entities = msg->asr_rejected ? 0 : msg->n_slots,
            .entities = msg->slots,
            .restart = msg->new_session,
            .now_ms = w ? w->now_ms : 0,
            .n_results = w ? w->n : 0,
            .results = w ? w->results : NULL,
        };
        int64_t t0 = pipe_now_ns();
        st = dm_turn(f->dm, &in, &out);
        msg->dialog_ns += pipe_now_ns() - t0;
        if (st != PARLEY_OK || !out.call.action)
            break;
        st = send_call(f, wp, msg, port, &out);
        dm_turn_out_free(&out);
        if (st == PARLEY_OK)
            return 1;
        if (!*wp || !(*wp)->action)
            break; /* no room even for a failed answer: the turn fails */
        /* The call could not go out: the turn goes on at once with a failed answer. */
        keep_answer(*wp, DM_HTTP_OTHER, NULL, parley_errmsg());
    }
    if (st == PARLEY_OK)
        st = to_msg(msg, &out);
    dm_turn_out_free(&out);
    if (st != PARLEY_OK)
        pipe_node_fail_turn(node, msg, st);
    else
        pipe_node_emit(node, 1, msg); /* ports[1]: reply; on shutdown it frees the turn */
    return 0;
}

static waiting *find_waiting(frames *f, const char *user)
{
    for (waiting *w = f->waiting; w; w = w->next)
        if (!strcmp(w->user, user))
            return w;
    return NULL;
}

static parley_status frames_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    frames *f = state;
    waiting *w = NULL;
    if (f->http) {
        pthread_mutex_lock(&f->mu);
        w = find_waiting(f, msg->user_id);
        if (w && w->msg != msg) {
            /* The user's turn before it is out at an action server: this one waits its turn. */
            if (w->n_later == w->cap_later) {
                size_t cap = w->cap_later ? 2 * w->cap_later : 4;
                pipe_msg **later = pl_realloc(w->later, cap * sizeof *later);
                if (!later) {
                    pthread_mutex_unlock(&f->mu);
                    pipe_node_fail_turn(node, msg, pl_nomem("a turn waiting for its user's"));
                    return PARLEY_OK;
                }
                w->later = later;
                w->cap_later = cap;
            }
            w->later[w->n_later++] = msg;
            pthread_mutex_unlock(&f->mu);
            return PARLEY_OK;
        }
        pthread_mutex_unlock(&f->mu);
    }
    /* The turn, then the user's turns that waited for it, until one goes out again. */
    while (!run_turn(f, &w, port, msg) && w) {
        pthread_mutex_lock(&f->mu);
        if (!w->n_later) {
            waiting **pp = &f->waiting;
            while (*pp != w)
                pp = &(*pp)->next;
            *pp = w->next;
            pthread_mutex_unlock(&f->mu);
            waiting_free(w);
            return PARLEY_OK;
        }
        msg = w->later[0];
        memmove(w->later, w->later + 1, --w->n_later * sizeof *w->later);
        w->msg = msg;
        pthread_mutex_unlock(&f->mu);
        results_clear(w);
    }
    return PARLEY_OK;
}

static parley_status frames_action(pipe_node *node, void *state, const char *name, pipe_fn fn,
                                   void *user)
{
    (void)node;
    return dm_register_action(((frames *)state)->dm, name, (parley_action_fn)fn, user);
}

const pipe_kind dm_kind_frames = {
    .name = "dialog.frames",
    .doc = "dialog manager: slots, forms, rules and replies from domain.yaml; context in SQLite "
           "or PostgreSQL; actions of the application or of action servers (HTTP)",
    .ports = ports,
    .params = params,
    .workers = 4,
    .create = frames_create,
    .process = frames_process,
    .action = frames_action,
    .destroy = frames_destroy,
};
