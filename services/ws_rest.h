/* ws_rest.h — Rasa's HTTP API on the `ws.server` node's port: the REST channel
 * (POST /webhooks/rest/webhook), POST /model/parse, GET /version and GET /status.
 *
 * services/ws_server.c owns the lws context and hands the HTTP callbacks of these paths
 * here; it also lends what a webhook turn needs to travel like a websocket turn (the server's
 * lock, its table of turns in flight, its count of them): a webhook's turn is recorded for a
 * ws_conn standing for the HTTP request, so the server's process() queues the reply to it as
 * to a websocket connection and wakes the service thread, and the answer is written from the
 * HTTP writeable callback. The service thread never waits for a turn. The JSON is
 * services/ws_rest_msg.c. Threads: every function here runs on the service thread, but
 * ws_rest_open and ws_rest_close (the node's create and destroy).
 */
#ifndef SERVICES_WS_REST_H
#define SERVICES_WS_REST_H

#include <pthread.h>
#include <stdatomic.h>

#include "pipeline/metrics.h"
#include "pipeline/node.h"
#include "services/ws_conn.h"

struct lws;

/* What the websocket server lends the REST API (all borrowed for the API's lifetime). */
typedef struct ws_rest_host {
    pipe_node *node;     /* the ws.server node */
    pthread_mutex_t *mu; /* the server's lock: guards *inflight, turns and every ws_conn */
    ws_turns *turns;     /* the turns in flight */
    int *inflight;       /* how many: a stop waits for them */
    atomic_int *stopping;
    int takes_text;     /* the node's text output links somewhere */
    int trust_user_ids; /* any sender may be named without the token */
    const char *token;  /* the node's token, "" when none */
    size_t max_body;    /* the largest request body (the node's max_message_bytes) */
    int timeout;        /* seconds a request may wait for its turn */
    void *server;       /* passed to the two callbacks */
    /* Whether the request on wsi presents the token (header or ?token=). */
    int (*token_ok)(void *server, struct lws *wsi);
    /* Forgets c (closing): its turns' replies are dropped, it leaves the list of connections
     * with news. Called under *mu. */
    void (*forget)(void *server, ws_conn *c);
    /* A counter of the server's metrics, labelled with the node and key="value"; NULL when
     * out of memory. */
    pipe_counter *(*counter)(void *server, const char *name, const char *help, const char *key,
                             const char *value);
} ws_rest_host;

typedef struct ws_rest ws_rest;
/* One HTTP request on an API path, kept in lws's per-connection data. */
typedef struct ws_rest_req ws_rest_req;

/* The API for a server: host is copied; the graph's first nlu.bert node's model is opened
 * again for /model/parse, on the CPU with one thread (none when the graph has no such node);
 * its metrics are registered (parley_ws_rest_requests_total and parley_ws_rest_errors_total,
 * by route). PARLEY_ERR_NOMEM, or the model's open error. */
parley_status ws_rest_open(const ws_rest_host *host, ws_rest **out);
/* NULL is a no-op. */
void ws_rest_close(ws_rest *r);

/* LWS_CALLBACK_HTTP: takes the request when its path is the API's (*req is set) or any
 * method but GET (405). Returns 1 when the path is not the API's and the method is GET (the
 * server serves it: /healthz, /metrics, static files), else lws's answer (0, or -1 to close). */
int ws_rest_http(ws_rest *r, struct lws *wsi, ws_rest_req **req);
/* LWS_CALLBACK_HTTP_BODY and LWS_CALLBACK_HTTP_BODY_COMPLETION of a request taken. */
int ws_rest_body(ws_rest *r, struct lws *wsi, ws_rest_req *req, const void *in, size_t len);
int ws_rest_body_done(ws_rest *r, struct lws *wsi, ws_rest_req *req);
/* LWS_CALLBACK_HTTP_WRITEABLE of a request taken: writes its answer when it has one; done
 * with it, frees it and sets *req NULL. */
int ws_rest_writeable(ws_rest *r, struct lws *wsi, ws_rest_req **req);
/* How many webhook requests wait for their turn's answer to be written: a stop waits for
 * them as for the websocket connections. */
int ws_rest_waiting(const ws_rest *r);
/* The connection closed: frees the request (its turn's reply will be dropped). NULL no-op. */
void ws_rest_req_free(ws_rest *r, ws_rest_req *req);

#endif
