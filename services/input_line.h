/* input_line.h — one line of input read as a turn: plain text for a default user, or a JSON
 * object {"user": ID, "text": "..."}.
 *
 * text.stdin reads its lines with it, and so will every source that takes turns as text
 * (the websocket server's JSON messages). It checks what parley/pipeline.h promises of ids
 * and texts (pipe_check_user_id, pipe_check_text) and never cuts a string: a NUL, a \u0000
 * escape, bad UTF-8 or an over-long value is refused with a reason. Pure: no graph, no I/O,
 * any thread.
 */
#ifndef SERVICES_INPUT_LINE_H
#define SERVICES_INPUT_LINE_H

#include <stddef.h>

#include "parley/status.h"

struct cJSON;

typedef struct svc_line {
    int blank;          /* spaces and tabs only: no turn and no answer */
    const char *user;   /* the turn's user: borrowed from the line's JSON, idbuf or the default;
                           NULL after a failure that left it unknown */
    const char *text;   /* the turn's text, borrowed from the line or its JSON */
    struct cJSON *json; /* owned: what user and text point into (svc_line_clear) */
    char idbuf[32];     /* a numeric id written in decimal */
} svc_line;

/* Reads `line` (len bytes without its newline, then a NUL: a plain-text turn is handed on as
 * that C string; a trailing '\r' is dropped by writing a NUL over it) for `default_user`. On
 * PARLEY_OK, either out->blank or out->user and out->text hold a valid turn; on failure
 * parley_errmsg() says why and out->user is the user when it could be read. Call
 * svc_line_clear(out) afterwards in every case. */
parley_status svc_line_read(char *line, size_t len, const char *default_user, svc_line *out);

/* Frees what out holds; its pointers die. */
void svc_line_clear(svc_line *out);

/* How many members of object j are named `key` (cJSON keeps duplicates). */
int svc_json_count_key(const struct cJSON *j, const char *key);

#endif
