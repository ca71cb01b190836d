/* ws_client.h — a websocket client (libwebsockets): many connections on one event loop.
 *
 * What `parley stream` and the websocket benchmark talk to a server with: connect to ws:// or
 * wss:// URLs (a CA file, or `insecure` for self-signed certificates), send an
 * `Authorization: Bearer` header, queue text and binary messages, receive whole messages
 * (fragments are put back together) and learn how each connection ended: refused, handshake
 * refused with its HTTP status, closed with a code and a reason, dropped. It knows nothing of
 * parley's protocol (JSON, turns, users): that is the caller's.
 *
 * Threads: none of its own. The caller drives the loop with svc_ws_client_service(); every
 * call on one client and its connections must come from that one thread, and the event
 * callback runs on it, inside svc_ws_client_service() (or inside svc_ws_connect() when a
 * connection fails at once). The callback may call svc_ws_send() and svc_ws_close(). Two
 * clients on two threads are independent.
 *
 * Without libwebsockets in the build, svc_ws_client_open() answers PARLEY_ERR_NOT_BUILT.
 */
#ifndef SERVICES_WS_CLIENT_H
#define SERVICES_WS_CLIENT_H

#include <stddef.h>

#include "parley/status.h"

typedef struct svc_ws_client svc_ws_client;
typedef struct svc_ws_conn svc_ws_conn;

typedef enum {
    SVC_WS_OPEN,    /* the handshake succeeded: the connection may send */
    SVC_WS_MESSAGE, /* a whole message arrived */
    SVC_WS_CLOSED,  /* the connection is over (the last event of a connection) */
} svc_ws_event_type;

typedef struct {
    svc_ws_event_type type;
    /* SVC_WS_MESSAGE: the payload (borrowed for the callback; NUL-terminated for
     * convenience, the NUL not counted in len) and whether it came as a binary message. */
    const char *data;
    size_t len;
    int binary;
    /* SVC_WS_CLOSED: PARLEY_OK when a closing handshake took place (either side began it,
     * any code); PARLEY_ERR_IO when the connection could not be made, the handshake was
     * refused or the connection dropped; PARLEY_ERR_FORMAT when the server sent a message
     * over max_message_bytes (the client then closed with 1009); PARLEY_ERR_NOMEM when
     * there was no memory for a message received (the connection was dropped). */
    parley_status status;
    int close_code;   /* the close code (the server's, or ours when we began); 0 if none */
    int by_server;    /* the server began the closing handshake */
    int http_status;  /* the handshake's HTTP status when the server refused it, else 0 */
    const char *text; /* the close reason, or why the connection failed (never NULL) */
} svc_ws_event;

/* Receives every event of every connection, with the connection's user pointer. */
typedef void (*svc_ws_event_fn)(svc_ws_conn *conn, const svc_ws_event *ev, void *user);

typedef struct {
    svc_ws_event_fn on_event; /* required */
    const char *token;        /* sent as `Authorization: Bearer TOKEN` when not NULL (copied) */
    const char *ca_file;      /* wss: PEM file of the CAs to trust (default: the system's) */
    int insecure;             /* wss: accept any certificate (self-signed, other host name) */
    int connect_timeout_s;    /* to connect and finish the handshake (0 = 10) */
    size_t max_message_bytes; /* a bigger incoming message closes with 1009 (0 = 16 MiB) */
} svc_ws_client_params;

svc_ws_client_params svc_ws_client_params_default(void);

/* Creates a client (one libwebsockets context). *out is owned by the caller: close it with
 * svc_ws_client_close(). */
parley_status svc_ws_client_open(const svc_ws_client_params *p, svc_ws_client **out);

/* Drops every connection at once (no closing handshake) and frees them all, with the
 * client. NULL is a no-op. No events are delivered. */
void svc_ws_client_close(svc_ws_client *c);

/* Starts connecting to `url` (ws://HOST[:PORT][/PATH[?QUERY]] or wss://...). *out (may be
 * NULL) is owned by the client and valid until svc_ws_client_close(), after its
 * SVC_WS_CLOSED too. `user` is passed to every event of the connection. A malformed URL is
 * PARLEY_ERR_INVALID_ARG with no connection made; a connection that fails later reports
 * SVC_WS_CLOSED. */
parley_status svc_ws_connect(svc_ws_client *c, const char *url, void *user, svc_ws_conn **out);

/* Queues a message (copied) to go out in order once the connection is open. Fails with
 * PARLEY_ERR_INVALID_ARG on a connection that is closed or closing. */
parley_status svc_ws_send(svc_ws_conn *k, const void *data, size_t len, int binary);

/* Begins the closing handshake once the queued messages are out: `code` (1000 = normal) and
 * a short `reason` (cut at 120 bytes). SVC_WS_CLOSED follows. No-op when already closing. */
void svc_ws_close(svc_ws_conn *k, int code, const char *reason);

/* How many messages of `k` are queued and not yet written. Pacing is the caller's: send each
 * message when it is due (svc_ws_client_service() waits until then) and keep this small, as
 * `parley stream` does with 100 ms of audio every 100 ms. */
size_t svc_ws_pending(const svc_ws_conn *k);

/* Runs the event loop until something happened or `wait_ms` passed (0: only what is ready
 * now); events are delivered from inside. Fails only when the loop itself fails. */
parley_status svc_ws_client_service(svc_ws_client *c, int wait_ms);

#endif
