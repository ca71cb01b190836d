/* ws_msg.h — one text message a websocket client sends, read into a typed command.
 *
 * The ws.server node's protocol (docs/websocket.md#the-protocol-version-1): a client text frame is
 * a JSON object that is exactly one of {"config": {"user": ID, "sample_rate": N}},
 * {"text": "...", "id": ID}, {"eof": 1} or {"end": 1} (the end of an utterance). This module only
 * reads and checks one message; what a command does to a connection is services/ws_server.c's.
 * Pure: no I/O, no graph, any thread.
 */
#ifndef SERVICES_WS_MSG_H
#define SERVICES_WS_MSG_H

#include <stddef.h>

#include "parley/status.h"

struct cJSON;

/* The sample rates a client may configure for its audio, in Hz. */
enum { WS_RATE_MIN = 8000, WS_RATE_MAX = 48000, WS_RATE_DEFAULT = 16000 };
/* The longest string id a turn may carry: each turn in flight keeps it, and its answer
 * echoes it, so it counts against a connection's memory. */
enum { WS_ID_MAX_BYTES = 256 };

typedef enum ws_cmd_type {
    WS_CMD_CONFIG = 0, /* user and/or sample_rate */
    WS_CMD_TEXT = 1,   /* a typed turn: text, and id when given */
    WS_CMD_EOF = 2,    /* end of the utterance and of the stream */
    WS_CMD_END = 3,    /* end of the utterance; the stream goes on */
} ws_cmd_type;

typedef struct ws_cmd {
    ws_cmd_type type;
    const char *user;       /* CONFIG: the id asked for, checked by pipe_check_user_id; or NULL */
    int sample_rate;        /* CONFIG: WS_RATE_MIN..WS_RATE_MAX, or 0 when not given */
    const char *text;       /* TEXT: checked by pipe_check_text */
    const struct cJSON *id; /* TEXT: the client's id (a string or a number) or NULL */
    struct cJSON *json;     /* owned: what the pointers above borrow from (ws_cmd_clear) */
} ws_cmd;

/* Reads message data[0, len) (need not end in a NUL). On PARLEY_OK *out holds a valid
 * command. On failure (PARLEY_ERR_FORMAT, PARLEY_ERR_INVALID_ARG, PARLEY_ERR_UTF8 or
 * PARLEY_ERR_NOMEM) parley_errmsg() says what is wrong in words for the client, and out->id
 * is the message's id when it could be read (so the error can carry it). Call
 * ws_cmd_clear(out) afterwards in every case. */
parley_status ws_msg_parse(const char *data, size_t len, ws_cmd *out);

/* Frees what out holds; its pointers die. */
void ws_cmd_clear(ws_cmd *out);

/* Whether id has the form of the user ids the websocket server hands out: "u-" and 32
 * lowercase hex digits. */
int ws_is_issued_id(const char *id);

#endif
