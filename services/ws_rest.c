/* ws_rest.c — Rasa's HTTP API on the `ws.server` node's port (see ws_rest.h): the routes,
 * the request bodies read through lws's HTTP body callbacks, the answers written through
 * lws's header helpers, and a webhook's turn sent into the graph like a websocket turn.
 * Built only with libwebsockets. Not here: the JSON (services/ws_rest_msg.c), the lws
 * context and the websocket side (services/ws_server.c).
 *
 * A webhook turn: the body is read, the sender checked against the token rules, the turn
 * recorded in the server's table for a ws_conn that stands for this request (never on the
 * server's list of websocket connections), then emitted at the node's text output. The
 * request stays open; the reply comes back through the server's process(), which queues the
 * websocket reply to that ws_conn and wakes the service thread, which asks for the request's
 * writeable callback, where the reply becomes Rasa's answer.
 */
#include <cjson/cJSON.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/graph.h"
#include "sdk/base/alloc.h"
#include "services/ws_msg.h"
#include "services/ws_rest.h"
#include "services/ws_rest_msg.h"
#include "services/ws_server.h"

enum { R_WEBHOOK, R_PARSE, R_VERSION, R_STATUS };

/* The most body a refused request may send: it is read and dropped so that the client gets
 * the answer; past it the answer is given at once and the connection closed. */
#define DROP_MAX ((size_t)16 << 20)

static const struct route {
    const char *path;
    int method; /* LWSHUMETH_GET or LWSHUMETH_POST */
    int open;   /* answered without the token */
} routes[] = {
    [R_WEBHOOK] = { "/webhooks/rest/webhook", LWSHUMETH_POST, 0 },
    [R_PARSE] = { "/model/parse", LWSHUMETH_POST, 0 },
    [R_VERSION] = { "/version", LWSHUMETH_GET, 1 },
    [R_STATUS] = { "/status", LWSHUMETH_GET, 0 },
};
enum { N_ROUTES = sizeof routes / sizeof routes[0] };

/* The route label of the metrics: the routes', then "other" for every other API path. */
static const char *const route_names[N_ROUTES + 1] = { "webhook", "parse", "version", "status",
                                                       "other" };

/* The first segments of the paths Rasa's API uses: under them every path is the API's (a
 * JSON 404 or 405), never a static file. */
static const char *const api_roots[] = { "webhooks", "model", "conversations", "version",
                                         "status" };

struct ws_rest {
    ws_rest_host h;
    parley_nlu *nlu;   /* the graph's NLU model, for /model/parse, or NULL */
    int waiting;       /* webhook requests whose turn is in the graph or whose answer is not
                          written yet (service thread) */
    const char *model; /* its folder (the nlu.bert node's param), or NULL */
    /* Requests answered, and those answered with an error (4xx, 5xx), by route_names. */
    pipe_counter *requests[N_ROUTES + 1], *errors[N_ROUTES + 1];
};

struct ws_rest_req {
    ws_rest *api;
    int route;           /* in routes, or -1 */
    unsigned char *body; /* the request body so far */
    size_t body_len, body_cap;
    ws_conn *conn; /* a webhook's turn in flight: its reply is queued here */
    int answered;  /* the answer's headers are written */
    int close;     /* close after the answer (a HEAD request, or a body not all read) */
    int coming;    /* a body is still to be read */
    /* A refusal decided before the body is read waits for its end (the body is read and
     * dropped): a connection closed with unread data is reset, and the client loses the
     * answer. */
    unsigned refusal;   /* its status, 0 when none */
    const char *allow;  /* its Allow header, or NULL */
    char *refusal_json; /* its body (cJSON_free) */
    size_t dropped;     /* bytes of body read and dropped */
    unsigned char *out; /* the answer's body, after LWS_PRE bytes of headroom */
    size_t out_len;
};

parley_status ws_rest_open(const ws_rest_host *host, ws_rest **out)
{
    ws_rest *r = pl_calloc(1, sizeof *r);
    if (!r)
        return pl_nomem("the REST API");
    r->h = *host;
    for (int i = 0; i <= N_ROUTES; i++)
        if (!(r->requests[i] = host->counter(host->server, "parley_ws_rest_requests_total",
                                             "requests of Rasa's HTTP API answered, by route",
                                             "route", route_names[i])) ||
            !(r->errors[i] = host->counter(host->server, "parley_ws_rest_errors_total",
                                           "requests of Rasa's HTTP API answered with an error "
                                           "(4xx, 5xx), by route",
                                           "route", route_names[i]))) {
            pl_free(r);
            return pl_wrap(PARLEY_ERR_NOMEM, "the REST API's metrics");
        }
    pipe_node *nlu = pipe_graph_find_kind(pipe_node_graph(host->node), "nlu.bert");
    r->model = nlu ? pipe_node_param_str(nlu, "model") : NULL;
    if (r->model) {
        /* A copy of its own on the CPU, one thread: /model/parse runs on the service thread
         * and must not contend with the NLU node's workers for cores. */
        parley_nlu_params p = parley_nlu_params_default();
        p.device = "cpu";
        p.threads = 1;
        p.top_k = 10;
        parley_status st = parley_nlu_open(r->model, &p, &r->nlu);
        if (st != PARLEY_OK) {
            pl_free(r);
            return pl_wrap(st, "the model for /model/parse");
        }
    }
    *out = r;
    return PARLEY_OK;
}

void ws_rest_close(ws_rest *r)
{
    if (!r)
        return;
    parley_nlu_close(r->nlu);
    pl_free(r);
}

void ws_rest_req_free(ws_rest *r, ws_rest_req *req)
{
    if (!req)
        return;
    if (req->conn) {
        r->waiting--;
        pthread_mutex_lock(r->h.mu);
        r->h.forget(r->h.server, req->conn);
        pthread_mutex_unlock(r->h.mu);
        ws_conn_free(req->conn);
    }
    pl_free(req->body);
    pl_free(req->out);
    cJSON_free(req->refusal_json);
    pl_free(req);
}

/* ---- Answers ---- */

/* Answers with status and JSON body json (owned: freed here; NULL means out of memory: 500
 * with no body), plus an Allow header when allow is not NULL. The headers are written now,
 * the body at the next writeable callback. -1 closes. */
static int answer(struct lws *wsi, ws_rest_req *req, unsigned status, const char *allow, char *json)
{
    unsigned char head[LWS_PRE + 512], *start = head + LWS_PRE, *p = start;
    unsigned char *end = head + sizeof head - 1;
    size_t len = json ? strlen(json) : 0;
    if (!json)
        status = HTTP_STATUS_INTERNAL_SERVER_ERROR;
    req->out = pl_malloc(LWS_PRE + len + 1);
    if (req->out) {
        memcpy(req->out + LWS_PRE, json ? json : "", len);
        req->out_len = len;
    }
    cJSON_free(json);
    req->answered = 1;
    int counted = req->route >= 0 ? req->route : N_ROUTES;
    pipe_counter_add(req->api->requests[counted], 1);
    if (status >= 400)
        pipe_counter_add(req->api->errors[counted], 1);
    if (!req->out || lws_add_http_common_headers(wsi, status, "application/json", len, &p, end) ||
        (allow && lws_add_http_header_by_name(
                          wsi, (const unsigned char *)"allow:", (const unsigned char *)allow,
                          (int)strlen(allow), &p, end)) ||
        lws_finalize_write_http_header(wsi, start, &p, end))
        return -1;
    lws_callback_on_writable(wsi);
    return 0;
}

/* Answers {"error": why} with status. */
static int fail(struct lws *wsi, ws_rest_req *req, unsigned status, const char *allow,
                const char *why)
{
    return answer(wsi, req, status, allow, ws_rest_error_json(why));
}

/* Refuses the request with status: now when no body is to come, else once the body is
 * read. */
static int refuse(struct lws *wsi, ws_rest_req *req, unsigned status, const char *allow,
                  const char *why)
{
    if (!req->coming)
        return fail(wsi, req, status, allow, why);
    if (req->refusal) /* the first reason stands */
        return 0;
    req->refusal = status;
    req->allow = allow;
    req->refusal_json = ws_rest_error_json(why);
    return 0;
}

/* The refusal's body (owned by the caller). */
static char *take_refusal(ws_rest_req *req)
{
    char *json = req->refusal_json;
    req->refusal_json = NULL;
    return json;
}

/* The HTTP status for a request refused with st. */
static unsigned bad_request_status(parley_status st)
{
    return st == PARLEY_ERR_NOMEM ? HTTP_STATUS_INTERNAL_SERVER_ERROR : HTTP_STATUS_BAD_REQUEST;
}

static const char *method_name(int m)
{
    static const char *const names[] = { "GET",    "POST",    "OPTIONS", "PUT",  "PATCH",
                                         "DELETE", "CONNECT", "HEAD",    ":path" };
    return m >= 0 && m < (int)(sizeof names / sizeof names[0]) ? names[m] : "this method";
}

/* ---- Routes ---- */

static int is_api_path(const char *path)
{
    for (size_t i = 0; i < sizeof api_roots / sizeof api_roots[0]; i++) {
        size_t n = strlen(api_roots[i]);
        if (path[0] == '/' && !strncmp(path + 1, api_roots[i], n) &&
            (path[n + 1] == '\0' || path[n + 1] == '/'))
            return 1;
    }
    return 0;
}

static int answer_version(struct lws *wsi, ws_rest_req *req)
{
    cJSON *o = cJSON_CreateObject();
    int ok = o && cJSON_AddStringToObject(o, "version", parley_version()) &&
             cJSON_AddStringToObject(o, "minimum_compatible_version", parley_version());
    char *json = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return answer(wsi, req, HTTP_STATUS_OK, NULL, json);
}

static int answer_status(ws_rest *r, struct lws *wsi, ws_rest_req *req)
{
    const char *base = r->model ? strrchr(r->model, '/') : NULL;
    base = base ? base + 1 : r->model;
    cJSON *o = cJSON_CreateObject();
    int ok = o &&
             (r->model ? cJSON_AddStringToObject(o, "model_file", r->model) != NULL
                       : cJSON_AddNullToObject(o, "model_file") != NULL) &&
             (base ? cJSON_AddStringToObject(o, "model_id", base) != NULL
                   : cJSON_AddNullToObject(o, "model_id") != NULL) &&
             cJSON_AddNumberToObject(o, "num_active_training_jobs", 0);
    char *json = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return answer(wsi, req, HTTP_STATUS_OK, NULL, json);
}

static int do_parse(ws_rest *r, struct lws *wsi, ws_rest_req *req)
{
    cJSON *doc = NULL;
    const char *text = NULL;
    parley_nlu_result *res = NULL;
    parley_status st = ws_rest_read_parse((const char *)req->body, req->body_len, &doc, &text);
    int ret;
    if (st != PARLEY_OK)
        ret = fail(wsi, req, bad_request_status(st), NULL, parley_errmsg());
    else if (!r->nlu)
        ret = fail(wsi, req, HTTP_STATUS_CONFLICT, NULL,
                   "this graph has no nlu.bert node: no model to parse with");
    else if ((st = parley_nlu_parse(r->nlu, text, &res)) != PARLEY_OK)
        ret = fail(wsi, req,
                   st == PARLEY_ERR_UTF8 || st == PARLEY_ERR_INVALID_ARG
                           ? HTTP_STATUS_BAD_REQUEST
                           : HTTP_STATUS_INTERNAL_SERVER_ERROR,
                   NULL, parley_errmsg());
    else
        ret = answer(wsi, req, HTTP_STATUS_OK, NULL, ws_rest_parse_answer(res));
    parley_nlu_result_free(res);
    cJSON_Delete(doc);
    return ret;
}

/* A webhook's turn into the graph; its answer comes when the reply does. */
static int do_webhook(ws_rest *r, struct lws *wsi, ws_rest_req *req)
{
    ws_rest_host *h = &r->h;
    cJSON *doc = NULL;
    const char *sender = NULL, *message = NULL;
    pipe_msg *m = NULL;
    int ret = 0;
    parley_status st =
            ws_rest_read_webhook((const char *)req->body, req->body_len, &doc, &sender, &message);
    if (st != PARLEY_OK) {
        ret = fail(wsi, req, bad_request_status(st), NULL, parley_errmsg());
        goto done;
    }
    /* The websocket's rule for naming a user: with the token (checked already) or
     * trust_user_ids any id, else only one of the form the server issues (knowing it is the
     * right to the conversation). */
    if (!h->token[0] && !h->trust_user_ids && !ws_is_issued_id(sender)) {
        ret = fail(wsi, req, HTTP_STATUS_FORBIDDEN, NULL,
                   "\"sender\": without the server's token only an id of the form the server "
                   "issues (u- and 32 lowercase hex digits) may be named");
        goto done;
    }
    if (atomic_load(h->stopping) || !h->takes_text) {
        ret = fail(wsi, req, HTTP_STATUS_SERVICE_UNAVAILABLE, NULL,
                   !h->takes_text ? "this graph takes no typed turns (the server's text output "
                                    "links nowhere)"
                                  : "the server is stopping: no new turns");
        goto done;
    }
    if ((st = pipe_msg_new(pipe_node_graph(h->node), sender, message, &m)) != PARLEY_OK) {
        ret = fail(wsi, req, bad_request_status(st), NULL, parley_errmsg());
        goto done;
    }
    if (!(req->conn = ws_conn_new(wsi, LWS_PRE))) {
        ret = fail(wsi, req, HTTP_STATUS_INTERNAL_SERVER_ERROR, NULL, "out of memory");
        goto done;
    }
    r->waiting++;
    snprintf(req->conn->user, sizeof req->conn->user, "%s", sender);
    uint64_t seq = m->seq;
    pthread_mutex_lock(h->mu);
    if ((st = ws_turns_add(h->turns, seq, req->conn, NULL, ws_answer_room(strlen(message), 0))) ==
        PARLEY_OK) {
        (*h->inflight)++;
        req->conn->inflight++;
    }
    pthread_mutex_unlock(h->mu);
    if (st != PARLEY_OK) {
        ret = fail(wsi, req, HTTP_STATUS_INTERNAL_SERVER_ERROR, NULL, parley_errmsg());
        goto done;
    }
    /* The request waits for its turn at most the node's timeout; lws closes it then. */
    lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, h->timeout);
    if (pipe_node_emit(h->node, WS_PORT_TEXT, m) != PARLEY_OK) {
        m = NULL; /* freed by the emit */
        ws_conn *owner;
        cJSON *id;
        pthread_mutex_lock(h->mu);
        if (ws_turns_take(h->turns, seq, &owner, &id)) {
            (*h->inflight)--;
            req->conn->inflight--;
        }
        pthread_mutex_unlock(h->mu);
        cJSON_Delete(id);
        ret = fail(wsi, req, HTTP_STATUS_SERVICE_UNAVAILABLE, NULL,
                   "the server is stopping: no new turns");
        goto done;
    }
    m = NULL;
done:
    pipe_msg_free(m);
    cJSON_Delete(doc);
    return ret;
}

/* ---- The callbacks ---- */

int ws_rest_http(ws_rest *r, struct lws *wsi, ws_rest_req **slot)
{
    char *uri = NULL, path[256], why[400];
    int ulen = 0;
    int meth = lws_http_get_uri_and_method(wsi, &uri, &ulen);
    snprintf(path, sizeof path, "%.*s", uri && ulen > 0 ? ulen : 0, uri ? uri : "");
    int route = -1;
    for (int i = 0; i < N_ROUTES; i++)
        if (!strcmp(path, routes[i].path))
            route = i;
    ws_rest_req_free(r, *slot); /* lws starts a request once the one before is answered */
    *slot = NULL;
    if (route < 0 && !is_api_path(path) && (meth == LWSHUMETH_GET || meth == LWSHUMETH_HEAD))
        return 1; /* the server's: /healthz, /metrics, the static files */
    ws_rest_req *req = pl_calloc(1, sizeof *req);
    if (!req) {
        lws_return_http_status(wsi, HTTP_STATUS_INTERNAL_SERVER_ERROR, NULL);
        return -1;
    }
    *slot = req;
    req->api = r;
    req->route = route;
    /* A refusal waits for the end of a body to come (refuse), unless the body is longer than
     * DROP_MAX: then it is answered at once and the connection closed (the unread body cannot
     * be told from a next request). */
    char cl[32];
    unsigned long long length = lws_hdr_copy(wsi, cl, sizeof cl, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0
                                        ? strtoull(cl, NULL, 10)
                                        : 0;
    int has_body = length > 0;
    int chunked = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0;
    /* A HEAD request's answer has a body a client does not read: closed after it too. */
    req->close = meth == LWSHUMETH_HEAD;
    req->coming = has_body || chunked;
    if (length > DROP_MAX) {
        req->close = 1;
        snprintf(why, sizeof why, "body: more than %zu bytes", r->h.max_body);
        return fail(wsi, req, HTTP_STATUS_REQ_ENTITY_TOO_LARGE, NULL, why);
    }
    if (route < 0 && !is_api_path(path)) {
        snprintf(why, sizeof why, "%s %s: only GET is served here", method_name(meth), path);
        return refuse(wsi, req, HTTP_STATUS_METHOD_NOT_ALLOWED, "GET", why);
    }
    if (route < 0) {
        snprintf(why, sizeof why,
                 "no such path: %s (this server answers POST /webhooks/rest/webhook, POST "
                 "/model/parse, GET /version and GET /status)",
                 path);
        return refuse(wsi, req, HTTP_STATUS_NOT_FOUND, NULL, why);
    }
    const struct route *rt = &routes[route];
    if (meth != rt->method) {
        snprintf(why, sizeof why, "%s %s: only %s", method_name(meth), path,
                 method_name(rt->method));
        return refuse(wsi, req, HTTP_STATUS_METHOD_NOT_ALLOWED, method_name(rt->method), why);
    }
    if (!rt->open && r->h.token[0] && !r->h.token_ok(r->h.server, wsi))
        return refuse(wsi, req, HTTP_STATUS_UNAUTHORIZED, NULL,
                      "a wrong or missing token (Authorization: Bearer TOKEN, or ?token=TOKEN)");
    if (route == R_VERSION || route == R_STATUS) {
        if (req->coming) /* a GET with a body: answered once it is read */
            return 0;
        return route == R_VERSION ? answer_version(wsi, req) : answer_status(r, wsi, req);
    }
    if (length > r->h.max_body) {
        snprintf(why, sizeof why, "body: more than %zu bytes", r->h.max_body);
        return refuse(wsi, req, HTTP_STATUS_REQ_ENTITY_TOO_LARGE, NULL, why);
    }
    if (!has_body && !chunked)
        return fail(wsi, req, HTTP_STATUS_BAD_REQUEST, NULL,
                    "body: empty (expected a JSON object)");
    return 0; /* the body comes in ws_rest_body */
}

int ws_rest_waiting(const ws_rest *r)
{
    return r ? r->waiting : 0;
}

int ws_rest_body(ws_rest *r, struct lws *wsi, ws_rest_req *req, const void *in, size_t len)
{
    if (req->answered || len == 0)
        return 0;
    if (req->refusal || len > r->h.max_body - req->body_len) {
        char why[64];
        snprintf(why, sizeof why, "body: more than %zu bytes", r->h.max_body);
        req->dropped += len;
        if (req->dropped > DROP_MAX) { /* answered now, and closed */
            req->close = 1;
            if (req->refusal)
                return answer(wsi, req, req->refusal, req->allow, take_refusal(req));
            return fail(wsi, req, HTTP_STATUS_REQ_ENTITY_TOO_LARGE, NULL, why);
        }
        if (!req->refusal)
            refuse(wsi, req, HTTP_STATUS_REQ_ENTITY_TOO_LARGE, NULL, why);
        return 0;
    }
    if (req->body_len + len > req->body_cap) {
        size_t cap = req->body_cap ? req->body_cap : 1024;
        while (cap < req->body_len + len)
            cap *= 2;
        unsigned char *b = pl_realloc(req->body, cap);
        if (!b) {
            req->close = 1;
            return fail(wsi, req, HTTP_STATUS_INTERNAL_SERVER_ERROR, NULL, "out of memory");
        }
        req->body = b;
        req->body_cap = cap;
    }
    memcpy(req->body + req->body_len, in, len);
    req->body_len += len;
    return 0;
}

int ws_rest_body_done(ws_rest *r, struct lws *wsi, ws_rest_req *req)
{
    req->coming = 0;
    if (req->answered)
        return 0;
    if (req->refusal)
        return answer(wsi, req, req->refusal, req->allow, take_refusal(req));
    if (req->route == R_VERSION)
        return answer_version(wsi, req);
    if (req->route == R_STATUS)
        return answer_status(r, wsi, req);
    return req->route == R_PARSE ? do_parse(r, wsi, req) : do_webhook(r, wsi, req);
}

int ws_rest_writeable(ws_rest *r, struct lws *wsi, ws_rest_req **slot)
{
    ws_rest_req *req = *slot;
    if (!req->answered && req->conn) {
        /* The turn's reply, queued by the server's process() (its speech, if any, after it:
         * not carried here). */
        ws_out *o, *reply = NULL;
        pthread_mutex_lock(r->h.mu);
        while ((o = ws_conn_pop(req->conn))) {
            if (!reply && !o->binary)
                reply = o;
            else
                pl_free(o);
        }
        pthread_mutex_unlock(r->h.mu);
        if (!reply)
            return 0;
        int status = 500;
        char *json =
                ws_rest_webhook_answer((const char *)reply->data + LWS_PRE, reply->len, &status);
        pl_free(reply);
        return answer(wsi, req, (unsigned)status, NULL, json);
    }
    if (!req->out)
        return 0;
    int n = lws_write(wsi, req->out + LWS_PRE, req->out_len, LWS_WRITE_HTTP_FINAL);
    int close = req->close;
    ws_rest_req_free(r, req);
    *slot = NULL;
    if (n < 0 || close)
        return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}
