/* ws_conn.h — what the websocket server keeps per connection, and the turns in flight.
 *
 * A ws_conn is one client: its user id, the message it is reassembling from frames, its
 * audio (services/ws_voice.h), the messages waiting to be written to it (JSON, or a reply's
 * speech as a binary frame) (each with `pre` bytes of headroom before it, as
 * lws_write wants), and its counters. A ws_turns table maps the sequence number of every
 * turn in flight to the connection that asked (and the client's id for it), so a reply goes
 * to the connection that asked and a reply for a closed connection finds nothing.
 * What a connection holds is counted (ws_conn_held): its unwritten messages, the buffer of
 * the message it is sending, and room kept for the answers of its turns in flight, so the
 * server can bound every connection's memory by one figure. No socket, no lws:
 * services/ws_server.c does the I/O. Threading: none of these functions locks; the server
 * calls them under its one mutex (the service thread and the graph's workers share them).
 */
#ifndef SERVICES_WS_CONN_H
#define SERVICES_WS_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "parley/pipeline.h"
#include "parley/status.h"

struct cJSON;

/* One message waiting to be written: data[pre, pre + len) is the payload. */
typedef struct ws_out {
    struct ws_out *next;
    size_t len;
    int binary;           /* a binary frame (a reply's speech), else JSON text */
    unsigned char data[]; /* pre bytes of headroom, then len bytes */
} ws_out;

typedef struct ws_conn {
    void *wsi;                               /* the lws connection (borrowed) */
    struct ws_conn *prev, *next;             /* the server's list of open connections */
    struct ws_conn *dirty_next;              /* the server's list of those with news */
    char user[PARLEY_MAX_USER_ID_BYTES + 1]; /* the connection's user id */
    int64_t since;                           /* when it took that user (pipe_now_ns) */
    int authorized;                          /* presented the node's token */
    int sample_rate;                         /* of its audio, Hz */
    int turns;                               /* turns started (a config after one is an error) */
    int inflight;                            /* turns sent into the graph, not yet answered */
    size_t answer_bytes;                     /* room kept for their answers (ws_turns_add) */
    size_t held;                             /* ws_conn_held when the server last counted */
    int64_t audio_due;                       /* when its audio so far is due at real time */
    size_t over_memory;                      /* != 0: held this many bytes, to be dropped */
    int errors;                              /* protocol errors so far */
    int audio_refused;                       /* this utterance's audio was answered already */
    struct ws_voice *voice;                  /* its audio cut into utterances, or NULL */
    void *server;                            /* the server's state (for callbacks without a wsi) */
    uint64_t last_utt_seq;                   /* the turn of its last utterance sent */
    int eof;                                 /* the client sent {"eof":1}: close once answered */
    int paused;                              /* reading from it is stopped (rx flow control) */
    int dirty;                               /* on the dirty list */
    int close_code;                          /* != 0: close with this code once written */
    char close_reason[96];                   /* ... and this reason */
    /* the message being reassembled */
    unsigned char *rx;
    size_t rx_len, rx_cap;
    int rx_binary;
    /* what waits to be written */
    ws_out *out_head, *out_tail;
    size_t out_bytes;
    size_t pre;
} ws_conn;

/* A new connection for lws connection `wsi`, with `pre` bytes of headroom in every queued
 * message; NULL when out of memory. */
ws_conn *ws_conn_new(void *wsi, size_t pre);
/* Frees c and what it holds. NULL is a no-op. */
void ws_conn_free(ws_conn *c);

/* Appends a frame's bytes to the message being reassembled. PARLEY_ERR_INVALID_ARG when the
 * message would pass max bytes, PARLEY_ERR_NOMEM when out of memory. */
parley_status ws_conn_rx_add(ws_conn *c, const void *data, size_t len, size_t max);
/* Forgets the reassembled message (keeping its buffer for the next one when it is small). */
void ws_conn_rx_reset(ws_conn *c);

/* Queues a copy of json[0, len) to be written; PARLEY_ERR_NOMEM when out of memory. */
parley_status ws_conn_push(ws_conn *c, const char *json, size_t len);
/* Queues a copy of data[0, len) to be written as one binary frame; PARLEY_ERR_NOMEM. */
parley_status ws_conn_push_binary(ws_conn *c, const void *data, size_t len);
/* Takes the oldest queued message (owned by the caller: pl_free), or NULL. */
ws_out *ws_conn_pop(ws_conn *c);
/* The bytes c holds: unwritten messages, the message being reassembled, the room kept for
 * the answers of its turns in flight. */
size_t ws_conn_held(const ws_conn *c);
/* The room kept for the answer to a turn of text_len bytes with an id of id_len bytes: the
 * answer echoes both, escaped in JSON (at most 6 bytes for one), beside what it adds. */
size_t ws_answer_room(size_t text_len, size_t id_len);

/* ---- The turns in flight ---- */

typedef struct ws_turns ws_turns;

/* An empty table; NULL when out of memory. */
ws_turns *ws_turns_new(void);
/* Frees the table and the ids it holds. NULL is a no-op. */
void ws_turns_free(ws_turns *t);
/* Records turn `seq` for c with the client's id (copied; may be NULL), keeping `room` bytes
 * of c's count for its answer until it is taken. PARLEY_ERR_NOMEM. */
parley_status ws_turns_add(ws_turns *t, uint64_t seq, ws_conn *c, const struct cJSON *id,
                           size_t room);
/* Removes turn `seq` and returns 1, with its connection in *conn (NULL when it is gone) and
 * the client's id in *id (owned by the caller: cJSON_Delete; NULL when none); 0 when the
 * table has no such turn. */
int ws_turns_take(ws_turns *t, uint64_t seq, ws_conn **conn, struct cJSON **id);
/* Detaches every turn of connection c (it is closing): their replies will be dropped. */
void ws_turns_drop_conn(ws_turns *t, const ws_conn *c);

#endif
