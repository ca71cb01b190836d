/* parley/pipeline.h — a whole pipeline (NLU, dialog, ...) inside your application.
 *
 * Open a graph YAML file that has one node of kind `api`; the api node is where your text
 * enters (parley_pipeline_submit) and where the replies come back, either to a callback
 * or to a queue you poll. The graph runs on its own threads from open to close. A graph
 * without an api node runs on its own sources instead (text.stdin reading a file or
 * standard input, text.stdout writing one) until their input ends: parley_pipeline_wait().
 * Events (turns done or failed, node errors) go to an optional callback; the node kinds a
 * graph can use are described at the end of this file.
 *
 *   parley_pipeline *p;
 *   if (parley_pipeline_open("samples/pizza/pipeline_api.yaml", NULL, &p)) error...
 *   uint64_t id;
 *   parley_pipeline_submit(p, "alice", "a large pizza please", &id);
 *   parley_reply *r;
 *   parley_pipeline_poll(p, -1, &r);   // r->reply, r->intent, r->slots ...
 *   parley_reply_free(r);
 *   parley_pipeline_close(p);          // waits for turns still in flight
 *
 * Order: the replies of one user come back in the order that user's texts were submitted;
 * different users run in parallel and their replies interleave. Every submitted turn gets
 * exactly one reply; a turn that failed gets one with status != PARLEY_OK and an error text.
 *
 * What a turn may hold (the same rules for every way into a pipeline: this API, the lines
 * of text.stdin, and later servers): a user id is 1 to PARLEY_MAX_USER_ID_BYTES bytes of
 * valid UTF-8 without control characters (U+0000-U+001F, U+007F-U+009F), and ids are
 * compared byte for byte; a text is at most PARLEY_MAX_TEXT_BYTES bytes of valid UTF-8
 * (no NUL: a C string cannot carry one). Nothing is cut or repaired: a turn that breaks a
 * rule is refused whole with an error that says which rule and at which byte.
 *
 * Threading: parley_pipeline_submit() and parley_pipeline_poll() may be called from any
 * threads at once. Submit blocks while the graph's queues are full (backpressure: nothing is
 * dropped). The reply callback runs on the graph's threads, possibly several at once: it
 * must be thread-safe, quick, and must not call parley_pipeline_close(); so must the event
 * callback. Registering actions, waiting and closing belong to the thread that opened the
 * pipeline, with no submit running; parley_pipeline_stop() may come from any thread.
 */
#ifndef PARLEY_PIPELINE_H
#define PARLEY_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "parley/dialog.h"
#include "parley/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct parley_pipeline parley_pipeline;

/* The longest user id, in bytes of UTF-8. */
#define PARLEY_MAX_USER_ID_BYTES 128
/* The longest text of one turn, in bytes of UTF-8 (64 KiB). */
#define PARLEY_MAX_TEXT_BYTES 65536

/* Checks a user id against the rules above, as parley_pipeline_submit does: PARLEY_OK, or
 * PARLEY_ERR_INVALID_ARG / PARLEY_ERR_UTF8 with a detail naming the rule and the byte
 * offset. For a program that takes an id once and uses it for many turns. Any thread. */
PARLEY_API parley_status parley_user_id_check(const char *user);

/* One finished turn. In a callback it is borrowed for the call; from poll it is owned by
 * the caller (parley_reply_free). Every string inside belongs to the reply. */
typedef struct parley_reply {
    parley_status status; /* PARLEY_OK, or why the turn failed */
    const char *error;    /* "" when status is OK */
    const char *user;     /* the user id given to submit */
    uint64_t id;          /* the id submit returned */
    uint64_t turn;        /* the user's turn number as the dialog counts it (0 without one) */
    const char *session;  /* the dialog's session id, or "" */
    const char *text;     /* what the user said */
    const char *reply;    /* the answer, or "" (a graph with no dialog gives NLU only) */
    const char *intent;   /* or "" */
    float confidence;
    size_t n_slots;
    const parley_slot *slots; /* the user's slots after the turn (parley/dialog.h); the NLU's
                                 entities in a graph without a dialog */
    double latency_ms;        /* submit to reply */
    double nlu_ms;            /* NLU time of the batch the turn was in */
    int nlu_batch;            /* that batch's size */
    double dialog_ms;         /* time in the dialog manager and its store */
} parley_reply;

typedef void (*parley_reply_fn)(const parley_reply *reply, void *user_data);

typedef enum parley_event_type {
    PARLEY_EVENT_TURN_DONE = 0,   /* a turn reached the end of the graph and was answered
                                     (a failed one too, after its TURN_FAILED) */
    PARLEY_EVENT_TURN_FAILED = 1, /* a node failed a turn (the turn still gets its reply, but
                                     for an utterance an audio source cut by itself in which
                                     the recognizer heard no words: a cough or the room's
                                     noise is answered by nothing) */
    PARLEY_EVENT_NODE_ERROR = 2,  /* a node failed outside any turn (a bad input line, a read
                                     error, a store that went away) */
} parley_event_type;

/* Borrowed for the call, with every string inside. */
typedef struct parley_event {
    parley_event_type type;
    const char *node;     /* the node that posted it */
    const char *user;     /* the turn's user; NULL for a node error */
    uint64_t id;          /* the turn's id (what submit returned, for the api node's turns);
                             0 for a node error */
    parley_status status; /* PARLEY_OK for a turn done */
    const char *message;  /* what went wrong; "" when nothing did */
} parley_event;

typedef void (*parley_event_fn)(const parley_event *event, void *user_data);

typedef struct parley_pipeline_params {
    parley_reply_fn on_reply; /* NULL: replies queue up for parley_pipeline_poll() */
    void *user_data;          /* passed back to on_reply */
    size_t queue_size;        /* capacity of each queue between nodes; 0 = 64 */
    /* NULL-terminated "TARGET.PARAM=VALUE" strings that override the graph file's params,
     * TARGET being a node name or a kind ("nlu.model=models/x", "dialog.frames.store=a.db");
     * NULL for none. Borrowed for the call to open. */
    const char *const *overrides;
    parley_event_fn on_event; /* NULL: events are not reported; user_data is passed back */
    /* 1: the graph's text.stdin node stands for the api node (parley_pipeline_submit's
     * turns enter there) and its text.stdout node hands the replies back instead of
     * writing them, so a bot's graph made for the terminal can be driven from a program
     * (`parley chat` and `parley test` do). The graph must then have one of each and no
     * api node. Their params are checked as usual and otherwise unused. */
    int text_io;
} parley_pipeline_params;

PARLEY_API parley_pipeline_params parley_pipeline_params_default(void);

/* Loads the graph at `graph_path` (errors name FILE:LINE:COL), opens its nodes (models,
 * databases) and starts it. params may be NULL. On success *out is owned by the caller
 * (parley_pipeline_close). The graph holds one `api` node, or none (then submit and poll
 * answer PARLEY_ERR_UNSUPPORTED and the graph's own sources feed it). */
PARLEY_API parley_status parley_pipeline_open(const char *graph_path,
                                              const parley_pipeline_params *params,
                                              parley_pipeline **out);

/* Checks the graph at `graph_path` as parley_pipeline_open would (FILE:LINE:COL errors),
 * without opening its nodes: no model is loaded and no store created. */
PARLEY_API parley_status parley_pipeline_check(const char *graph_path);

/* Registers the application's action `name` (see parley/dialog.h) with every node of the
 * graph that runs actions (the dialog.frames node); the domain must declare it. `name` is
 * copied; user_data is passed back to fn. NOT_FOUND when the graph has no such node. */
PARLEY_API parley_status parley_pipeline_register_action(parley_pipeline *p, const char *name,
                                                         parley_action_fn fn, void *user_data);

/* Submits `text` (UTF-8, copied) as the next turn of `user` (copied). *id (may be NULL)
 * receives the turn's id, which its reply carries. Blocks while the graph is full.
 * Both are checked first (see the rules above): a user id or text that breaks them is
 * refused with PARLEY_ERR_INVALID_ARG (empty, too long, a control character) or
 * PARLEY_ERR_UTF8, and parley_errmsg() names the rule and the byte offset; a refused turn
 * is not submitted, gets no reply and leaves the user's other turns as they were. */
PARLEY_API parley_status parley_pipeline_submit(parley_pipeline *p, const char *user,
                                                const char *text, uint64_t *id);

/* Flags of parley_pipeline_submit_flags. */
#define PARLEY_SUBMIT_NEW_SESSION                                  \
    1u /* the dialog starts the user's session anew with this turn \
          (no form, no slots), as after a long silence */

/* parley_pipeline_submit with flags (0 or PARLEY_SUBMIT_NEW_SESSION); the same rules. */
PARLEY_API parley_status parley_pipeline_submit_flags(parley_pipeline *p, const char *user,
                                                      const char *text, unsigned flags,
                                                      uint64_t *id);

/* Takes the oldest queued reply (poll mode only). timeout_ms: 0 = do not wait, -1 = wait
 * for ever. No reply in time: PARLEY_ERR_NOT_FOUND and *out = NULL. */
PARLEY_API parley_status parley_pipeline_poll(parley_pipeline *p, int timeout_ms,
                                              parley_reply **out);

/* NULL is a no-op. */
PARLEY_API void parley_reply_free(parley_reply *reply);

/* Blocks until the graph's own sources (text.stdin, ...) have reached the end of their
 * input or were stopped; returns at once when the graph has none (the api node is not a
 * source). Turns still in flight may remain: close waits for them. */
PARLEY_API void parley_pipeline_wait(parley_pipeline *p);

/* Asks the graph's sources to stop reading; parley_pipeline_wait() then returns promptly.
 * Any thread, also while another waits; not from a signal handler. */
PARLEY_API void parley_pipeline_stop(parley_pipeline *p);

/* The graph's metrics (turns by outcome and error kind, latency histograms per stage and end
 * to end, batch sizes, queue depths, turns in flight; docs/pipelines.md's "Metrics" section) in the
 * Prometheus text exposition format 0.0.4: what a ws.server node serves at GET /metrics, for
 * applications that publish it their own way. On success *text (NUL-terminated, *len bytes
 * without the NUL; len may be NULL) is owned by the caller: free it with
 * parley_metrics_free(). Any thread, while the pipeline is open. A turn is counted just
 * after its reply is delivered, before its PARLEY_EVENT_TURN_DONE event. */
PARLEY_API parley_status parley_pipeline_metrics(parley_pipeline *p, char **text, size_t *len);

/* Frees what parley_pipeline_metrics() returned. NULL is a no-op. */
PARLEY_API void parley_metrics_free(char *text);

/* Waits until every submitted turn has its reply, stops the graph and frees it. In poll
 * mode, replies not yet polled are freed. NULL is a no-op. */
PARLEY_API void parley_pipeline_close(parley_pipeline *p);

/* ---- Node kinds ----------------------------------------------------------------------
 * What a graph file can use: each kind's ports and params, as `parley inspect` lists them,
 * for tools that write or check graphs. */

typedef struct parley_port_info {
    const char *name;
    int input;         /* 1: an input port, linked in the graph's `inputs`; 0: an output */
    const char *types; /* the message types it takes or gives, "|" between them: "text",
                          "text|nlu|reply" (of audio, text, nlu, reply) */
    int required;      /* an input the graph must link */
    const char *doc;
} parley_port_info;

typedef struct parley_param_info {
    const char *name;
    const char *type; /* "string", "path" (relative to the graph file), "int",
                         "number" or "bool" */
    int has_range;    /* int and number params: a value must lie in [lo, hi] */
    double lo, hi;
    const char *default_value; /* as YAML text ("" is a default too); NULL: required */
    const char *doc;
} parley_param_info;

/* One node kind. Everything inside stays valid until parley_kind_info_free(). */
typedef struct parley_kind_info {
    const char *name; /* "nlu.bert" */
    const char *doc;  /* one line */
    int n_ports;
    const parley_port_info *ports;
    int n_params;
    const parley_param_info *params;
} parley_kind_info;

/* The name of the i-th node kind this library has (0, 1, ...), or NULL past the last one.
 * A static string. Any thread. */
PARLEY_API const char *parley_kind_name(size_t i);

/* Describes the node kind `name`. On success *out is owned by the caller
 * (parley_kind_info_free); PARLEY_ERR_NOT_FOUND when there is no such kind. Any thread. */
PARLEY_API parley_status parley_kind_describe(const char *name, parley_kind_info **out);

/* NULL is a no-op. */
PARLEY_API void parley_kind_info_free(parley_kind_info *info);

#ifdef __cplusplus
}
#endif
#endif
