/* action_http.h — POSTs to action servers without blocking the caller (libcurl's multi API).
 *
 * A dm_http owns one thread that drives every call in flight through one curl multi handle:
 * dm_http_post() only hands the call over and returns, and the answer comes back later
 * through a callback on that thread. It is how the dialog.frames node calls an action
 * server (Rasa's protocol, dialog/action_server.c) while its workers go on with other users.
 * It knows nothing of the dialog: a URL and a body in, a status and a body out.
 *
 * Threading: dm_http_post() may be called from any number of threads at once. Callbacks
 * run on the client's thread, one at a time, and must not block for long (they delay every
 * other call's progress). dm_http_close() must not race with a post.
 * Without libcurl (built with -Dcurl=disabled or without libcurl4-openssl-dev) dm_http_open
 * answers PARLEY_ERR_NOT_BUILT (action_http_none.c).
 */
#ifndef DIALOG_ACTION_HTTP_H
#define DIALOG_ACTION_HTTP_H

#include <stddef.h>

#include "parley/status.h"

typedef struct dm_http dm_http;

typedef struct dm_http_params {
    long timeout_ms;      /* a call's whole time, connecting included; 0 = 5000 */
    size_t max_bytes;     /* an answer's body; longer ones fail (DM_HTTP_SIZE); 0 = 1 MiB */
    long max_connections; /* open at once to one server (host and port); more calls to it
                             wait their turn, their timeout running; 0 = 8 */
} dm_http_params;

/* Why a call ended. */
typedef enum dm_http_why {
    DM_HTTP_OK = 0,      /* a 2xx answer, its body given */
    DM_HTTP_TIMEOUT = 1, /* no whole answer within timeout_ms */
    DM_HTTP_CONNECT = 2, /* no connection: refused, unreachable, unknown host */
    DM_HTTP_STATUS = 3,  /* an answer with a status other than 2xx */
    DM_HTTP_SIZE = 4,    /* an answer longer than max_bytes */
    DM_HTTP_OTHER = 5,   /* anything else libcurl reports (the detail says what) */
} dm_http_why;

/* What a call's callback gets: why it ended, the HTTP status (0 without an answer), the
 * body (owned by the callback, pl_free; NULL unless DM_HTTP_OK) and a detail line (borrowed
 * for the call). */
typedef void (*dm_http_done_fn)(void *user, dm_http_why why, long status, char *body,
                                const char *detail);

/* Starts the client's thread. On success *out is owned by the caller (dm_http_close). */
parley_status dm_http_open(const dm_http_params *p, dm_http **out);

/* Sends `body` (copied, JSON) to `url` (http or https) as a POST. Returns at once; `fn` is
 * called exactly once later, on the client's thread, unless this call fails (NOMEM). */
parley_status dm_http_post(dm_http *h, const char *url, const char *body, dm_http_done_fn fn,
                           void *user);

/* Waits for the calls in flight to end (each gets its callback), stops the thread, frees.
 * NULL is a no-op. */
void dm_http_close(dm_http *h);

#endif
