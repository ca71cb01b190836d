/* node.h — what a node kind implements, and what the graph engine offers it.
 *
 * A node kind (text.stdin, nlu.bert, dialog.frames, ...) is one static pipe_kind: its ports
 * and params as static tables (they drive YAML validation, defaults and `parley inspect`)
 * and a few callbacks. Concrete kinds live in their own modules (services/, nlu/, dialog/);
 * sdk/lib/kinds.c lists them by extern name, `<module prefix>_kind_<what>`:
 * `dm_kind_frames` (dialog/dialog_node.c, "dialog.frames"), `nlu_kind_bert` ("nlu.bert"),
 * `svc_kind_stdin`, ... pipeline/ itself holds no concrete node.
 *
 * Data flow. A turn travels through the graph as one pipe_msg: a source creates it
 * (pipe_msg_new), each node fills in its part (the NLU's or the dialog's values, in a payload
 * of its own: pipe_msg_set_payload) and hands the same message on with pipe_node_emit().
 * Ownership moves with it: process() owns the message it gets and must either emit it or hand
 * it to pipe_node_fail_turn() — a turn is never dropped silently. A failed turn still travels on to
 * the sink, in its user's order: the engine passes a message with status != OK straight through
 * every node that has outputs, and delivers it to process() only in sinks (no outputs, or
 * ends_turns), which answer it as an error. A sink (text.stdout, api) ends the turn with
 * pipe_node_turn_done(), which posts the per-turn event and frees the message.
 *
 * What users send is checked where it enters, by every source alike: pipe_msg_new() refuses
 * a user id or text that breaks the rules of parley/pipeline.h (valid UTF-8, no control
 * characters in ids, no NUL in text, PARLEY_MAX_USER_ID_BYTES and PARLEY_MAX_TEXT_BYTES);
 * a source that reads strings with a length of their own (a line, a JSON string) checks
 * them first with pipe_check_user_id() and pipe_check_text(), so a NUL inside is refused
 * instead of cutting the string. Input a source refuses still gets its answer: the source
 * makes a turn with pipe_msg_new_refused() and fails it (pipe_node_fail_turn), so the
 * error reaches the sink like any failed turn, in the order of its user when one is known.
 *
 * Threading. Each node with inputs has `workers` threads (the kind's default, or the YAML
 * key `workers:`), each with its own bounded queue; a message goes to the queue chosen by
 * its user, so the turns of one user reach every node in order, and different users run in
 * parallel. process() may therefore run concurrently on the same state for DIFFERENT users
 * when workers > 1; it is never called concurrently for the same user. pipe_node_emit()
 * blocks while the next node's queue is full (backpressure); it never drops.
 * A source kind has run(): the engine calls it on a thread of its own until it returns
 * (end of input) or stop() asks it to return.
 *
 * Audio. Ports are typed (PIPE_T_AUDIO, PIPE_T_TEXT, PIPE_T_NLU, PIPE_T_REPLY). Speech travels
 * as PIPE_T_AUDIO messages, each one piece (about 100 ms) of one utterance of its user: 16 kHz
 * mono 16-bit PCM in msg->pcm, the user's utterance number in msg->utt, and on the last piece
 * msg->utt_end saying why the utterance ended. Pieces of a user arrive in order like turns
 * (one worker per user) and wait in bounded queues (backpressure). Sources cut utterances
 * with pipeline/audio.h; a recognizer consumes the pieces and turns the last one into the
 * utterance's text turn. A reply may carry its speech in the same fields (tts.*).
 */
#ifndef PIPELINE_NODE_H
#define PIPELINE_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "parley/pipeline.h"
#include "parley/status.h"
#include "sdk/base/error.h"

/* ---- Port and message types -------------------------------------------------------- */

/* Bit flags: an output port has exactly one type; an input port accepts a set. */
typedef enum pipe_type {
    PIPE_T_AUDIO = 1, /* a piece of an utterance: msg->pcm, msg->utt, msg->utt_end */
    PIPE_T_TEXT = 2,  /* user text: msg->text */
    PIPE_T_NLU = 4,   /* msg->text + the NLU's msg->intent, msg->confidence, msg->slots */
    PIPE_T_REPLY = 8, /* msg->text + msg->reply and the dialog's intent, confidence, slots */
} pipe_type;

/* "audio", "text", "nlu", "reply"; for a set, the first bit's name. */
const char *pipe_type_name(unsigned types);

typedef enum pipe_dir { PIPE_IN = 0, PIPE_OUT = 1 } pipe_dir;

typedef struct pipe_port_spec {
    const char *name; /* NULL ends the table */
    pipe_dir dir;
    unsigned types; /* pipe_type bits: one for outputs, a set for inputs */
    int required;   /* inputs only: the graph must link it */
    const char *doc;
} pipe_port_spec;

typedef enum pipe_param_type {
    PIPE_P_STRING = 0,
    PIPE_P_PATH = 1,   /* a string; relative paths are resolved from the graph file's folder */
    PIPE_P_INT = 2,    /* range [lo, hi] */
    PIPE_P_DOUBLE = 3, /* range [lo, hi] */
    PIPE_P_BOOL = 4,
} pipe_param_type;

typedef struct pipe_param_spec {
    const char *name; /* NULL ends the table */
    pipe_param_type type;
    const char *def; /* default as YAML text; NULL = required param */
    double lo, hi;   /* numeric range (ignored for strings and bools) */
    const char *doc;
    /* PIPE_P_STRING: the values allowed, separated by '|' ("json|chat"); a choice that ends
     * in ":N" stands for its prefix followed by a decimal number ("auto|cpu|cuda|cuda:N").
     * The loader refuses any other value at its FILE:LINE:COL. NULL: any string. */
    const char *choices;
} pipe_param_spec;

typedef struct pipe_graph pipe_graph;

/* Why an utterance ended (pipe_msg.utt_end on its last piece); 0 on the other pieces. */
typedef enum pipe_utt_end {
    PIPE_UTT_MORE = 0,     /* not the last piece */
    PIPE_UTT_SILENCE = 1,  /* trailing silence (the endpoint) */
    PIPE_UTT_EXPLICIT = 2, /* the source said so (end of file, the client's eof) */
    PIPE_UTT_MAX = 3,      /* the utterance reached its maximum length */
    PIPE_UTT_DROPPED = 4,  /* the source went away mid-utterance: no turn comes of it */
} pipe_utt_end;

/* One turn on its way through the graph. Every pointer is owned by the message, but for the
 * turn's values, which point into its payload. */
typedef struct pipe_msg {
    pipe_type type; /* which payload is current */
    /* correlation */
    char *user_id;          /* never NULL; "" only on a refused turn whose user was unreadable */
    const char *session_id; /* NULL until the dialog sets it (in its payload) */
    uint64_t turn_id;       /* the user's turn number as the dialog counts it; 0 before */
    uint64_t seq;           /* unique in the graph, set by pipe_msg_new (the API returns it) */
    long line;              /* the input line it came from (text.stdin), 0 when none */
    int new_session;        /* set by the source: the dialog starts the user's session anew with
                               this turn, forgetting form and slots (`parley chat`'s /restart) */
    int asr_rejected;       /* set by an ASR node: the recognizer doubts the transcript (under
                               its reject_below), so the dialog reads no intent or entities in
                               it and answers with its fallback */
    int no_answer;          /* set by an ASR node on the failed turn of an utterance its
                               source cut by itself in which it heard no words (a cough, a
                               door, the room): sinks end the turn and answer nothing */
    /* timestamps and costs, CLOCK_MONOTONIC nanoseconds */
    int64_t t_in;         /* when the source created the turn */
    int64_t t_out;        /* when the sink ended it */
    int64_t nlu_ns;       /* the NLU batch call this turn was part of */
    int nlu_batch;        /* how many turns that batch held */
    int64_t dialog_ns;    /* dialog manager + store */
    int64_t store_ns;     /* the store's transaction for the turn (part of dialog_ns) */
    pipe_graph *graph;    /* internal: the graph that counts it in flight */
    int *payload_refs;    /* internal: how many clones share the payload */
    parley_status status; /* PARLEY_OK, or why the turn failed (pipe_node_fail_turn) */
    char *error;          /* the failure's detail message, or NULL */
    char *text;           /* PIPE_T_TEXT and later: the user's words */
    /* The payload: what the node that decided the turn's values below holds them in (the NLU
     * node its result, the dialog its decision), with the function that frees it; read-only,
     * shared by clones (pipe_msg_set_payload). */
    void *payload;
    void (*payload_free)(void *payload);
    /* The turn's values, pointing into the payload: the NLU's in PIPE_T_NLU, the dialog's in
     * PIPE_T_REPLY; NULL and 0 before. */
    const char *intent; /* the best intent, or the one the dialog acted on */
    float confidence;   /* its probability */
    size_t n_slots;     /* PIPE_T_NLU: the entities found; PIPE_T_REPLY: the user's slots */
    const parley_slot *slots;
    const char *reply; /* PIPE_T_REPLY: the answer */
    /* audio: a piece of an utterance (PIPE_T_AUDIO), or a reply's speech (tts.*) */
    int16_t *pcm; /* mono 16-bit samples, or NULL */
    size_t n_pcm; /* samples in pcm */
    int rate;     /* samples per second of pcm (PIPE_T_AUDIO: always PIPE_AUDIO_RATE) */
    uint32_t utt; /* the user's utterance number (from 1), kept by the text turn it becomes */
    pipe_utt_end utt_end; /* PIPE_T_AUDIO: set on the utterance's last piece */
    int pause; /* PIPE_T_AUDIO: the speaker paused after this piece, and the source holds the
                  pause back: a recognizer may say how the words so far read (pipe_seg_hint,
                  pipeline/audio.h), and the endpoint follows */
} pipe_msg;

/* The sample rate of every PIPE_T_AUDIO message: what speech recognizers read. */
#define PIPE_AUDIO_RATE 16000

/* ---- Node kinds ---------------------------------------------------------------------- */

typedef struct pipe_node pipe_node;

/* A generic function pointer: actions travel through the engine as this and are cast
 * back to parley_action_fn (parley/dialog.h) by the node that calls them. */
typedef void (*pipe_fn)(void);

typedef struct pipe_kind {
    const char *name;              /* "nlu.bert" */
    const char *doc;               /* one line for `parley inspect` */
    const pipe_port_spec *ports;   /* ended by a NULL name */
    const pipe_param_spec *params; /* ended by a NULL name; may be NULL */
    int workers;                   /* default worker threads for inputs; 0 = 1 */
    int ends_turns;                /* turns end at its inputs, so links into it never close a
                                      cycle (the api node is both where turns start and end) */

    /* Reads params (pipe_node_param_*), opens resources, sets *state. Runs on the thread
     * that opens the graph. On failure it returns a status with pl_fail() detail. */
    parley_status (*create)(pipe_node *node, void **state);
    /* One message that arrived on input port `port` (index into ports). Owns msg. */
    parley_status (*process)(pipe_node *node, void *state, int port, pipe_msg *msg);
    /* Optional, replaces process: up to the node's batch size of messages at once (see
     * pipe_node_set_batch), all from one worker queue, oldest first. Owns them all. */
    parley_status (*process_batch)(pipe_node *node, void *state, pipe_msg **msgs, size_t n);
    /* Sources: produce turns until end of input (return PARLEY_OK) or until stop(). */
    parley_status (*run)(pipe_node *node, void *state);
    /* Sources: make run() return soon. Called from another thread; may be NULL. */
    void (*stop)(void *state);
    /* Optional: an application action registered through the pipeline API. */
    parley_status (*action)(pipe_node *node, void *state, const char *name, pipe_fn fn, void *user);
    /* Frees the state; after every worker has stopped. NULL state is possible. */
    void (*destroy)(void *state);
} pipe_kind;

/* ---- What the engine offers a node ----------------------------------------------------- */

const char *pipe_node_name(const pipe_node *node);
pipe_graph *pipe_node_graph(const pipe_node *node);

/* Params as validated and defaulted by the loader (call from create). Strings and paths
 * are borrowed for the graph's lifetime; a path is resolved against the graph file's folder. */
const char *pipe_node_param_str(const pipe_node *node, const char *name);
/* The string param `name` of a node linked into this one's inputs (the first found that has
 * it), or NULL: a dialog takes the model of the NLU node that feeds it. From create on. */
const char *pipe_node_upstream_param(const pipe_node *node, const char *name);
long long pipe_node_param_int(const pipe_node *node, const char *name);
double pipe_node_param_double(const pipe_node *node, const char *name);
int pipe_node_param_bool(const pipe_node *node, const char *name);

/* For process_batch kinds, from create: at most max_batch messages per call, waiting up
 * to max_delay_us after the first one for more to arrive. */
void pipe_node_set_batch(pipe_node *node, int max_batch, long max_delay_us);

/* Hands msg (owned) to every input linked to output port `port`; blocks while a queue is
 * full. After the graph stops accepting work, fails with PARLEY_ERR_UNSUPPORTED and frees. */
parley_status pipe_node_emit(pipe_node *node, int port, pipe_msg *msg);

/* Hands msg (owned) back to this node's own input `port`, to the worker of its user, to be
 * given to process() again: for a node that set a turn aside while something outside the
 * graph answered it (an action server), so that no worker waits meanwhile. The node keeps
 * the user's later turns aside until then (it alone knows the turn is out). Any thread;
 * blocks while that queue is full. The turn stays in flight all the while, so drain and
 * close wait for it. After the graph stops accepting work, ends the turn as failed. */
parley_status pipe_node_resume(pipe_node *node, int port, pipe_msg *msg);

/* How many inputs output port `port` is linked to (links are made before create()). */
size_t pipe_node_out_links(const pipe_node *node, int port);

/* Sinks: stamps t_out, posts the per-turn event on the bus, frees msg. */
void pipe_node_turn_done(pipe_node *node, pipe_msg *msg);

/* Marks msg's turn as failed (status + this thread's parley_errmsg()), posts an error
 * event, and sends it on towards the sink like pipe_node_emit() (through the first linked
 * output; a node without one ends the turn). Use it when process() cannot go on. */
void pipe_node_fail_turn(pipe_node *node, pipe_msg *msg, parley_status st);

/* Posts a node error (status + this thread's parley_errmsg()) on the bus: for trouble that
 * is not one turn's, such as an unreadable input line. */
void pipe_node_error(pipe_node *node, parley_status st);

/* True once the graph is shutting down (sources should return). */
int pipe_node_stopping(const pipe_node *node);

/* ---- Messages ------------------------------------------------------------------------ */

/* Makes `payload` the message's (its node decided the turn's values in it) and the message
 * `type` (PIPE_T_NLU or PIPE_T_REPLY). The message frees it with destroy (NULL: nothing to
 * free) when it and every clone sharing it are freed. The payload of before is released, and
 * the turn's values and session_id that pointed into it are cleared: the caller points them
 * into the new one. */
void pipe_msg_set_payload(pipe_msg *msg, pipe_type type, void *payload,
                          void (*destroy)(void *payload));

/* The rules pipe_check_field applies beyond size and UTF-8. */
enum { PIPE_NO_NUL = 1, PIPE_NO_CONTROL = 2 };
/* Checks a string of `len` bytes named `what`: min to max bytes of valid UTF-8, without NUL
 * (PIPE_NO_NUL) or without any control character (PIPE_NO_CONTROL: Unicode category Cc, NUL
 * included). PARLEY_ERR_INVALID_ARG or PARLEY_ERR_UTF8 with a detail that starts with
 * `what` and names the byte offset. */
parley_status pipe_check_field(const char *what, const char *s, size_t len, size_t min, size_t max,
                               int rules);
/* Checks a user id of `len` bytes: not empty, at most PARLEY_MAX_USER_ID_BYTES, valid
 * UTF-8, no control character (Unicode category Cc, NUL included). PARLEY_ERR_INVALID_ARG
 * or PARLEY_ERR_UTF8 with a detail that starts "user id" and names the byte offset. */
parley_status pipe_check_user_id(const char *user, size_t len);
/* Checks a turn's text of `len` bytes: at most PARLEY_MAX_TEXT_BYTES, valid UTF-8, no NUL
 * (other control characters are the tokenizer's business). The detail starts "text". */
parley_status pipe_check_text(const char *text, size_t len);
/* The length of the longest prefix of s[0, len) that is valid UTF-8. */
size_t pipe_utf8_valid_len(const char *s, size_t len);

/* A new PIPE_T_TEXT turn for `user` (copied) with a copy of `text`, both checked as above
 * (with strlen); stamps t_in and seq. On success *out is owned by the caller. A refused
 * input is an error (INVALID_ARG or UTF8), as is a failed allocation (NOMEM); *out is NULL
 * then. */
parley_status pipe_msg_new(pipe_graph *g, const char *user, const char *text, pipe_msg **out);
/* The turn that answers input a source refused: for `user` (a checked id, or NULL when the
 * user could not be read: the message gets ""), with empty text; stamps t_in and seq. The
 * source hands it to pipe_node_fail_turn() while parley_errmsg() still says why. NULL when
 * out of memory. */
pipe_msg *pipe_msg_new_refused(pipe_graph *g, const char *user);
/* A new PIPE_T_AUDIO piece for `user` (checked as above): a copy of n samples of pcm at
 * PIPE_AUDIO_RATE, utterance utt, utt_end as given; stamps t_in and seq. *out is owned by the
 * caller; NULL on failure (INVALID_ARG, UTF8 or NOMEM). */
parley_status pipe_msg_new_audio(pipe_graph *g, const char *user, const int16_t *pcm, size_t n,
                                 uint32_t utt, pipe_utt_end end, pipe_msg **out);
/* Replaces msg's audio with a copy of n samples of pcm at `rate` (NULL, 0 clears it). */
parley_status pipe_msg_set_pcm(pipe_msg *msg, const int16_t *pcm, size_t n, int rate);
/* NULL is a no-op. */
void pipe_msg_free(pipe_msg *msg);
/* What a sink reports for msg: NULL for a turn that succeeded, else its detail message (or
 * the status's name when it has none). Borrowed from msg. */
const char *pipe_msg_error(const pipe_msg *msg);
/* A deep copy (fan-out to several inputs); NULL when out of memory. */
pipe_msg *pipe_msg_clone(const pipe_msg *msg);

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t pipe_now_ns(void);

#endif
