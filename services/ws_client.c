/* ws_client.c — the websocket client of ws_client.h over libwebsockets 4.1.
 *
 * One lws context without a listening port; each connection is a client wsi bound to the
 * one protocol below, with its svc_ws_conn as the wsi's opaque user data. Outgoing messages
 * wait in a per-connection list and leave one per WRITEABLE callback (libwebsockets allows
 * one lws_write there); incoming fragments are gathered until the final one. lws logs go to
 * the library's log at debug level: the events say what happened. It is not a server, and
 * it does not speak parley's protocol. Built with libwebsockets only; ws_client_none.c
 * stands in without it.
 */
#include "services/ws_client.h"

#include <stdio.h>
#include <string.h>

#include <libwebsockets.h>

#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

#define RX_CHUNK            65536
#define DEFAULT_MAX_MESSAGE (16u << 20)

typedef struct out_msg {
    struct out_msg *next;
    size_t len;
    int binary;
    unsigned char buf[]; /* LWS_PRE bytes of headroom, then the payload */
} out_msg;

struct svc_ws_conn {
    svc_ws_client *client;
    svc_ws_conn *next; /* every connection of the client, newest first */
    struct lws *wsi;   /* NULL once libwebsockets let go of it */
    void *user;
    char *url;        /* a copy of the URL, cut up in place by lws_parse_uri */
    char *path;       /* "/" + the URL's path and query */
    const char *host; /* in url */
    int port, tls;
    out_msg *head, *tail;
    size_t n_out;
    char *rx; /* the message being gathered */
    size_t rx_len, rx_cap;
    int open, done, closing, close_code, by_server;
    parley_status failed; /* why this side dropped the connection: FORMAT, NOMEM (else OK) */
    char reason[128];
};

struct svc_ws_client {
    svc_ws_client_params p;
    char *bearer;  /* "Bearer TOKEN", or NULL */
    char *ca_file; /* a copy: libwebsockets may read it when the first wss:// connection starts */
    struct lws_context *ctx;
    lws_sorted_usec_list_t wake;
    svc_ws_conn *conns;
};

static void log_lws(int level, const char *line)
{
    size_t n = strlen(line);
    pl_log(PARLEY_LOG_DEBUG, "libwebsockets (%d): %.*s", level,
           (int)(n && line[n - 1] == '\n' ? n - 1 : n), line);
}

static void emit_closed(svc_ws_conn *k, parley_status st, int http_status, const char *text)
{
    if (k->done)
        return;
    k->done = 1;
    k->open = 0;
    k->wsi = NULL; /* libwebsockets frees it after this callback: never touched again */
    svc_ws_event ev = { .type = SVC_WS_CLOSED,
                        .status = st,
                        .close_code = k->close_code,
                        .by_server = k->by_server,
                        .http_status = http_status,
                        .text = text };
    k->client->p.on_event(k, &ev, k->user);
}

/* Why a connection that never opened failed, in words a user can act on. */
static void connection_error(svc_ws_conn *k, struct lws *wsi, const char *why)
{
    char text[200];
    int http = (int)lws_http_client_http_response(wsi);
    if (http && http != 101)
        snprintf(text, sizeof text, "the server refused the websocket handshake: HTTP %d", http);
    else if (k->tls && why && strstr(why, "SSL"))
        snprintf(text, sizeof text,
                 "cannot connect to %s:%d: the TLS handshake failed (a certificate not trusted, "
                 "or no TLS there): %s",
                 k->host, k->port, why);
    else
        snprintf(text, sizeof text, "cannot connect to %s:%d: %s", k->host, k->port,
                 why && *why ? why : "no reason given");
    emit_closed(k, PARLEY_ERR_IO, http != 101 ? http : 0, text);
}

/* Appends a received fragment; delivers the message when it is whole. A message over the
 * size limit ends the connection (1009): the rest of what arrives is dropped unread and lws
 * closes it from its loop (LWS_TO_KILL_ASYNC), since dropping it inside this callback, with
 * more of the message still in lws's buffer, crashed lws. Returns -1 to drop the connection
 * when out of memory. */
static int receive(svc_ws_conn *k, struct lws *wsi, const void *in, size_t len)
{
    size_t max = k->client->p.max_message_bytes;
    if (k->failed != PARLEY_OK)
        return 0;
    if (k->rx_len + len > max) {
        static const char why[] = "message too big";
        k->failed = PARLEY_ERR_FORMAT;
        k->close_code = LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE;
        snprintf(k->reason, sizeof k->reason, "a message from the server is over %zu bytes", max);
        lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, (unsigned char *)why,
                         sizeof why - 1);
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC);
        pl_free(k->rx);
        k->rx = NULL;
        k->rx_len = k->rx_cap = 0;
        return 0;
    }
    if (k->rx_len + len + 1 > k->rx_cap) {
        size_t cap = k->rx_len + len + 1 > RX_CHUNK ? k->rx_len + len + 1 : RX_CHUNK;
        char *rx = pl_realloc(k->rx, cap);
        if (!rx) {
            k->failed = PARLEY_ERR_NOMEM;
            snprintf(k->reason, sizeof k->reason, "out of memory for a received message");
            return -1;
        }
        k->rx = rx;
        k->rx_cap = cap;
    }
    memcpy(k->rx + k->rx_len, in, len);
    k->rx_len += len;
    if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi))
        return 0;
    k->rx[k->rx_len] = '\0';
    svc_ws_event ev = { .type = SVC_WS_MESSAGE,
                        .data = k->rx,
                        .len = k->rx_len,
                        .binary = lws_frame_is_binary(wsi),
                        .text = "" };
    k->rx_len = 0;
    k->client->p.on_event(k, &ev, k->user);
    return 0;
}

/* Writes the next queued message, or begins the close once the queue is empty. */
static int writeable(svc_ws_conn *k, struct lws *wsi)
{
    out_msg *m = k->head;
    if (!m) {
        if (!k->closing)
            return 0;
        lws_close_reason(wsi, (enum lws_close_status)k->close_code, (unsigned char *)k->reason,
                         strlen(k->reason));
        return -1;
    }
    k->head = m->next;
    if (!k->head)
        k->tail = NULL;
    k->n_out--;
    int n = lws_write(wsi, m->buf + LWS_PRE, m->len, m->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);
    int failed = n < (int)m->len;
    pl_free(m);
    if (failed) {
        snprintf(k->reason, sizeof k->reason, "writing to the connection failed");
        return -1;
    }
    if (k->head || k->closing)
        lws_callback_on_writable(wsi);
    return 0;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
    svc_ws_conn *k = lws_get_opaque_user_data(wsi);
    (void)user;
    if (!k)
        return 0;
    switch (reason) {
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER: {
        const char *bearer = k->client->bearer;
        unsigned char **p = in, *end = *p + len;
        if (bearer && lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION,
                                                   (const unsigned char *)bearer,
                                                   (int)strlen(bearer), p, end))
            return -1;
        return 0;
    }
    case LWS_CALLBACK_CLIENT_ESTABLISHED: {
        k->open = 1;
        svc_ws_event ev = { .type = SVC_WS_OPEN, .text = "" };
        k->client->p.on_event(k, &ev, k->user);
        if (k->head || k->closing)
            lws_callback_on_writable(wsi);
        return 0;
    }
    case LWS_CALLBACK_CLIENT_RECEIVE: return receive(k, wsi, in, len);
    case LWS_CALLBACK_CLIENT_WRITEABLE: return writeable(k, wsi);
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE: {
        const unsigned char *b = in;
        k->by_server = 1;
        k->close_code = len >= 2 ? b[0] << 8 | b[1] : LWS_CLOSE_STATUS_NO_STATUS;
        snprintf(k->reason, sizeof k->reason, "%.*s", len > 2 ? (int)(len - 2) : 0,
                 len > 2 ? (const char *)b + 2 : "");
        return 0;
    }
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR: connection_error(k, wsi, in); return 0;
    case LWS_CALLBACK_CLIENT_CLOSED:
    case LWS_CALLBACK_WSI_DESTROY:
        if (k->failed != PARLEY_OK)
            emit_closed(k, k->failed, 0, k->reason);
        else if (k->by_server || k->closing)
            emit_closed(k, PARLEY_OK, 0, k->reason);
        else if (k->open || reason == LWS_CALLBACK_CLIENT_CLOSED)
            emit_closed(k, PARLEY_ERR_IO, 0,
                        *k->reason ? k->reason
                                   : "the connection dropped without a closing handshake");
        else
            emit_closed(k, PARLEY_ERR_IO, 0, "cannot connect: the connection ended");
        if (reason == LWS_CALLBACK_WSI_DESTROY)
            lws_set_opaque_user_data(wsi, NULL);
        return 0;
    default: return 0;
    }
}

static const struct lws_protocols protocols[] = {
    { "parley-client", callback, 0, RX_CHUNK, 0, NULL, 0 },
    { NULL, NULL, 0, 0, 0, NULL, 0 },
};

svc_ws_client_params svc_ws_client_params_default(void)
{
    return (svc_ws_client_params){ .connect_timeout_s = 10,
                                   .max_message_bytes = DEFAULT_MAX_MESSAGE };
}

parley_status svc_ws_client_open(const svc_ws_client_params *p, svc_ws_client **out)
{
    parley_status st = PARLEY_OK;
    if (!p || !p->on_event || !out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "svc_ws_client_open: no params, callback or out");
    *out = NULL;
    svc_ws_client *c = pl_calloc(1, sizeof *c);
    if (!c)
        return pl_nomem("websocket client");
    c->p = *p;
    if (!c->p.connect_timeout_s)
        c->p.connect_timeout_s = 10;
    if (!c->p.max_message_bytes)
        c->p.max_message_bytes = DEFAULT_MAX_MESSAGE;
    c->p.token = c->p.ca_file = NULL; /* the caller's strings are not kept: copies below */
    if (p->ca_file && !(c->ca_file = pl_strdup(p->ca_file))) {
        st = pl_nomem("websocket client: the CA file's name");
        goto fail;
    }
    if (p->token) {
        size_t n = strlen(p->token) + sizeof "Bearer ";
        if (!(c->bearer = pl_malloc(n))) {
            st = pl_nomem("websocket client: the bearer token");
            goto fail;
        }
        snprintf(c->bearer, n, "Bearer %s", p->token);
    }
    lws_set_log_level(LLL_ERR | LLL_WARN | LLL_NOTICE, log_lws);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.protocols = protocols;
    info.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
    info.client_ssl_ca_filepath = c->ca_file;
    info.connect_timeout_secs = (unsigned)c->p.connect_timeout_s;
    info.timeout_secs = (unsigned)c->p.connect_timeout_s;
    info.gid = (gid_t)-1;
    info.uid = (uid_t)-1;
    if (!(c->ctx = lws_create_context(&info))) {
        st = pl_fail(PARLEY_ERR_IO,
                     "websocket client: cannot create the libwebsockets context%s%s%s",
                     c->ca_file ? " (is the CA file " : "", c->ca_file ? c->ca_file : "",
                     c->ca_file ? " readable PEM?)" : "");
        goto fail;
    }
    *out = c;
    return PARLEY_OK;
fail:
    svc_ws_client_close(c);
    return st;
}

void svc_ws_client_close(svc_ws_client *c)
{
    if (!c)
        return;
    /* Destroying the context destroys every wsi; their callbacks must not reach the
     * connections, which are freed below, so they are unhooked first. */
    for (svc_ws_conn *k = c->conns; k; k = k->next) {
        k->done = 1;
        if (k->wsi)
            lws_set_opaque_user_data(k->wsi, NULL);
    }
    if (c->ctx)
        lws_context_destroy(c->ctx);
    while (c->conns) {
        svc_ws_conn *k = c->conns;
        c->conns = k->next;
        while (k->head) {
            out_msg *m = k->head;
            k->head = m->next;
            pl_free(m);
        }
        pl_free(k->rx);
        pl_free(k->url);
        pl_free(k->path);
        pl_free(k);
    }
    pl_free(c->bearer);
    pl_free(c->ca_file);
    pl_free(c);
}

parley_status svc_ws_connect(svc_ws_client *c, const char *url, void *user, svc_ws_conn **out)
{
    const char *prot = NULL, *ads = NULL, *path = NULL;
    int port = 0;
    if (out)
        *out = NULL;
    if (!c || !url)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "svc_ws_connect: no client or URL");
    int tls = !strncmp(url, "wss://", 6);
    if (!tls && strncmp(url, "ws://", 5))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "URL '%s': it must begin with ws:// or wss://", url);
    svc_ws_conn *k = pl_calloc(1, sizeof *k);
    if (!k || !(k->url = pl_strdup(url))) {
        pl_free(k);
        return pl_nomem("websocket connection to %s", url);
    }
    k->client = c;
    k->user = user;
    k->next = c->conns;
    c->conns = k;
    if (lws_parse_uri(k->url, &prot, &ads, &port, &path) || !*ads || port <= 0 || port > 65535)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "URL '%s': no host, or a bad port", url);
    size_t n = strlen(path) + 2;
    if (!(k->path = pl_malloc(n)))
        return pl_nomem("websocket connection to %s", url);
    snprintf(k->path, n, "/%s", path);
    k->host = ads;
    k->port = port;
    k->tls = tls;

    struct lws_client_connect_info ci;
    memset(&ci, 0, sizeof ci);
    ci.context = c->ctx;
    ci.address = ads;
    ci.port = port;
    ci.path = k->path;
    ci.host = ads;
    ci.origin = ads;
    ci.ietf_version_or_minus_one = -1;
    ci.local_protocol_name = protocols[0].name;
    ci.opaque_user_data = k;
    ci.pwsi = &k->wsi;
    if (tls)
        ci.ssl_connection =
                LCCSCF_USE_SSL |
                (c->p.insecure ? LCCSCF_ALLOW_SELFSIGNED | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK |
                                         LCCSCF_ALLOW_EXPIRED | LCCSCF_ALLOW_INSECURE
                               : 0);
    if (out)
        *out = k;
    if (!lws_client_connect_via_info(&ci)) {
        k->wsi = NULL;
        emit_closed(k, PARLEY_ERR_IO, 0, "cannot connect: the connection could not be started");
    }
    return PARLEY_OK;
}

parley_status svc_ws_send(svc_ws_conn *k, const void *data, size_t len, int binary)
{
    if (!k || (!data && len))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "svc_ws_send: no connection or data");
    if (k->done || k->closing)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "svc_ws_send: the connection is %s",
                       k->done ? "closed" : "closing");
    out_msg *m = pl_malloc(sizeof *m + LWS_PRE + len);
    if (!m)
        return pl_nomem("a websocket message of %zu bytes", len);
    m->next = NULL;
    m->len = len;
    m->binary = binary;
    if (len)
        memcpy(m->buf + LWS_PRE, data, len);
    if (k->tail)
        k->tail->next = m;
    else
        k->head = m;
    k->tail = m;
    k->n_out++;
    if (k->open && k->wsi)
        lws_callback_on_writable(k->wsi);
    return PARLEY_OK;
}

void svc_ws_close(svc_ws_conn *k, int code, const char *reason)
{
    if (!k || k->done || k->closing)
        return;
    k->closing = 1;
    k->close_code = code;
    snprintf(k->reason, sizeof k->reason, "%.120s", reason ? reason : "");
    if (k->open && k->wsi)
        lws_callback_on_writable(k->wsi);
}

size_t svc_ws_pending(const svc_ws_conn *k)
{
    return k ? k->n_out : 0;
}

static void wake(lws_sorted_usec_list_t *sul)
{
    (void)sul; /* only there to end the wait of lws_service */
}

parley_status svc_ws_client_service(svc_ws_client *c, int wait_ms)
{
    if (!c)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "svc_ws_client_service: no client");
    /* lws_service ignores its timeout (any value >= 0 waits for the next event or timer;
     * < 0 does not wait), so a timer bounds the wait. */
    if (wait_ms > 0)
        lws_sul_schedule(c->ctx, 0, &c->wake, wake, (lws_usec_t)wait_ms * LWS_US_PER_MS);
    int n = lws_service(c->ctx, wait_ms > 0 ? 0 : -1);
    if (wait_ms > 0)
        lws_sul_schedule(c->ctx, 0, &c->wake, NULL, LWS_SET_TIMER_USEC_CANCEL);
    if (n < 0)
        return pl_fail(PARLEY_ERR_IO, "websocket client: the event loop failed");
    return PARLEY_OK;
}
