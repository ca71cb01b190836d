/* pipeline.c — the public pipeline API (parley/pipeline.h): a graph opened, started and fed
 * through its `api` node, or left to its own sources; its events passed on.
 *
 * Loading, threads and turn order are the engine's (pipeline/); turning messages into
 * parley_reply and queueing them is the api node's (services/api_node.c). This file only
 * checks the application's arguments (a submitted turn with the engine's pipe_msg_new, the
 * one check every source shares), joins the two and translates the engine's events. The
 * node kinds' descriptions are kind_info.c's.
 */
#include <string.h>

#include "parley/pipeline.h"
#include "pipeline/graph.h"
#include "pipeline/metrics.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/lib/kinds.h"
#include "services/api_node.h"

struct parley_pipeline {
    pipe_graph *g;
    pipe_node *api; /* where replies come back (the api node or its text.stdout stand-in);
                       NULL: the graph has none */
    pipe_node *in;  /* where submitted turns enter (the same node, or text.stdin's stand-in) */
    parley_event_fn on_event;
    void *user_data;
};

parley_pipeline_params parley_pipeline_params_default(void)
{
    return (parley_pipeline_params){ .queue_size = 64 }; /* named: fields may be added */
}

/* An engine event as the application sees it (a pipe_event_fn; user is the pipeline). */
static void pass_event(const pipe_event *ev, void *user)
{
    static const parley_event_type types[] = {
        [PIPE_EV_TURN_DONE] = PARLEY_EVENT_TURN_DONE,
        [PIPE_EV_TURN_ERROR] = PARLEY_EVENT_TURN_FAILED,
        [PIPE_EV_NODE_ERROR] = PARLEY_EVENT_NODE_ERROR,
    };
    const parley_pipeline *p = user;
    parley_event e = { types[ev->type],
                       ev->node,
                       ev->msg ? ev->msg->user_id : NULL,
                       ev->msg ? ev->msg->seq : 0,
                       ev->status,
                       ev->message ? ev->message : "" };
    p->on_event(&e, p->user_data);
}

parley_status parley_pipeline_open(const char *graph_path, const parley_pipeline_params *params,
                                   parley_pipeline **out)
{
    if (!graph_path || !out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_pipeline_open: NULL argument");
    *out = NULL;
    parley_pipeline_params pp = params ? *params : parley_pipeline_params_default();
    pipe_graph_opts opts = { .queue_size = pp.queue_size,
                             .set = pp.overrides,
                             .kinds = pp.text_io ? lib_kinds_text_io : lib_kinds,
                             .need_output = 1 };
    parley_pipeline *p = pl_calloc(1, sizeof *p);
    if (!p)
        return pl_nomem(NULL);
    p->on_event = pp.on_event;
    p->user_data = pp.user_data;
    parley_status st = pipe_graph_load(graph_path, &opts, &p->g);
    if (st != PARLEY_OK)
        goto fail;
    p->api = p->in = pipe_graph_find_kind(p->g, "api");
    if (pp.text_io) {
        p->in = pipe_graph_find_kind(p->g, "text.stdin");
        p->api = pipe_graph_find_kind(p->g, "text.stdout");
        if (!p->in || !p->api) {
            st = pl_fail(PARLEY_ERR_CONFIG,
                         "%s: a text.stdin and a text.stdout node are needed to "
                         "drive this graph from a program",
                         graph_path);
            goto fail;
        }
    }
    if (p->api)
        svc_api_set_callback(p->api, pp.on_reply, pp.user_data);
    if (p->on_event && (st = pipe_graph_subscribe(p->g, pass_event, p)) != PARLEY_OK)
        goto fail;
    if ((st = pipe_graph_start(p->g)) != PARLEY_OK)
        goto fail;
    *out = p;
    return PARLEY_OK;
fail:
    pipe_graph_close(p->g);
    pl_free(p);
    return st;
}

parley_status parley_pipeline_check(const char *graph_path)
{
    return pipe_graph_check(graph_path, lib_kinds);
}

parley_status parley_pipeline_register_action(parley_pipeline *p, const char *name,
                                              parley_action_fn fn, void *user_data)
{
    if (!p || !name)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_pipeline_register_action: NULL argument");
    return pipe_graph_register_action(p->g, name, (pipe_fn)fn, user_data);
}

/* What submit and poll answer on a graph without an api node. */
static parley_status no_api(const char *who)
{
    return pl_fail(PARLEY_ERR_UNSUPPORTED,
                   "%s: the graph has no api node (its own sources feed it)", who);
}

parley_status parley_user_id_check(const char *user)
{
    if (!user)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "user id: NULL");
    return pipe_check_user_id(user, strlen(user));
}

parley_status parley_pipeline_submit(parley_pipeline *p, const char *user, const char *text,
                                     uint64_t *id)
{
    return parley_pipeline_submit_flags(p, user, text, 0, id);
}

parley_status parley_pipeline_submit_flags(parley_pipeline *p, const char *user, const char *text,
                                           unsigned flags, uint64_t *id)
{
    if (!p || !user || !text)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_pipeline_submit: NULL argument");
    if (!p->api)
        return no_api("parley_pipeline_submit");
    pipe_msg *m;
    parley_status st = pipe_msg_new(p->g, user, text, &m);
    if (st != PARLEY_OK)
        return pl_wrap(st, "parley_pipeline_submit");
    if (id)
        *id = m->seq;
    m->new_session = (flags & PARLEY_SUBMIT_NEW_SESSION) != 0;
    /* A turn that cannot enter the graph is failed, and so still gets its reply. */
    return pipe_node_emit(p->in, 0, m);
}

parley_status parley_pipeline_poll(parley_pipeline *p, int timeout_ms, parley_reply **out)
{
    if (!p || !out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_pipeline_poll: NULL argument");
    *out = NULL;
    if (!p->api)
        return no_api("parley_pipeline_poll");
    return svc_api_poll(p->api, timeout_ms, out);
}

parley_status parley_pipeline_metrics(parley_pipeline *p, char **text, size_t *len)
{
    if (!p || !text)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_pipeline_metrics: NULL argument");
    return pipe_metrics_render(p->g, text, len);
}

void parley_metrics_free(char *text)
{
    pl_free(text);
}

void parley_pipeline_wait(parley_pipeline *p)
{
    if (p)
        pipe_graph_wait_sources(p->g);
}

void parley_pipeline_stop(parley_pipeline *p)
{
    if (p)
        pipe_graph_stop(p->g);
}

void parley_pipeline_close(parley_pipeline *p)
{
    if (!p)
        return;
    pipe_graph_close(p->g);
    pl_free(p);
}
