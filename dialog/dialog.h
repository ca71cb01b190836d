/* dialog.h — the dialog manager: a domain file, a context store, and one call per turn.
 *
 * dm_open() loads a domain.yaml (intents, slots, responses, forms, rules, fallback,
 * sessions: see docs/dialog.md) and opens or creates the context store. dm_turn() takes
 * one user's NLU result, loads that user's context from the store, decides the reply (rule,
 * form step, action or fallback), and writes the new context and the turn's history row
 * back in one transaction. Nothing is cached between turns, so a restarted process
 * continues every conversation where the store left it.
 *
 * Threading: dm_turn() may be called from many threads at once for DIFFERENT users; the
 * calls for one user must be serialized by the caller (the pipeline sends every turn of a
 * user to the same worker). dm_register_action() may be called at any time, also while
 * turns run. dm_open() and dm_close() must not race with any other call on the manager.
 *
 * Time: `now_ms` fields are wall-clock milliseconds since the Unix epoch (sessions expire
 * across restarts, so a monotonic clock would not do); 0 means "read the clock".
 */
#ifndef DIALOG_DIALOG_H
#define DIALOG_DIALOG_H

#include <stddef.h>
#include <stdint.h>

#include "parley/dialog.h"
#include "parley/status.h"

typedef struct dm_manager dm_manager;

typedef struct dm_params {
    const char *domain_path; /* domain.yaml; required */
    const char *store_path;  /* SQLite file, created when missing, or a postgresql:// URI
                                (store.h); required */
    int busy_timeout_ms;     /* how long to wait for a store another process holds;
                                0 = 5000, negative = do not wait */
    int pool_size;           /* PostgreSQL connections; 0 = 4 */
    /* The NLU model's labels, to check the domain against (NULL = no check). Intents are
     * intent labels; slots are slot names without the B-/I- prefix. Every intent the
     * domain names must be one of known_intents, and every slot filled from an entity
     * must name an entity in known_slots. Borrowed for the call. */
    const char *const *known_intents;
    size_t n_known_intents;
    const char *const *known_slots;
    size_t n_known_slots;
    /* With on_problem, every problem of the domain file is given to it as found,
     * "FILE:LINE:COL: message", and dm_open fails after the last (for parley check; see
     * dm_domain_load_all). NULL: dm_open fails at the first. */
    void (*on_problem)(void *ctx, const char *message);
    void *problem_ctx;
} dm_params;

/* An action server's answer to one call of a turn (dm_turn_out.call). */
typedef struct dm_action_result {
    const char *action; /* the action it answers */
    const char *body;   /* the server's JSON answer, or NULL: the call failed, and the action's
                           fallback reply is said */
} dm_action_result;

/* One user turn. Every pointer is borrowed for the call. */
typedef struct dm_turn_in {
    const char *user_id; /* required, any non-empty UTF-8 string */
    const char *text;    /* the user's words (stored in the history); may be NULL */
    const char *intent;  /* the NLU's best intent; NULL or "" counts as no intent */
    float confidence;    /* its probability; under the domain's threshold → fallback;
                            NaN or infinite → the turn fails (PARLEY_ERR_INVALID_ARG) */
    size_t n_entities;
    const parley_slot *entities; /* the NLU's, in text order: a slot name and the canonical
                                    value of what the user wrote */
    int64_t now_ms;              /* 0 = the clock */
    int restart;                 /* 1: start a new session with this turn, forgetting the form
                                    and the slots (whatever the domain carries over) */
    /* The answers to this turn's action-server calls so far, in the order it made them:
     * empty on its first run, then one more on each run again (see dm_turn_out.call). */
    size_t n_results;
    const dm_action_result *results;
} dm_turn_in;

/* A call to an action server the turn waits for. Owned by the dm_turn_out that holds it. */
typedef struct dm_action_call {
    char *action;   /* the action to run, NULL when the turn needs no call */
    char *url;      /* its server */
    char *body;     /* the request, Rasa's action server protocol (action_server.c) */
    int64_t now_ms; /* the clock this run of the turn read: give it again as in.now_ms */
} dm_action_call;

/* What a turn decided. Every pointer is owned by the struct (dm_turn_out_free). */
typedef struct dm_turn_out {
    char *reply;      /* the text for the user; never NULL after success */
    char *session_id; /* the user's current session */
    uint64_t turn_id; /* the user's turn number, from 1, across sessions */
    int new_session;  /* 1 when this turn started a session (first or expired) */
    char *intent;     /* the intent acted on: the NLU's, or "fallback" */
    float confidence;
    char *active_form;    /* the form still running after the turn, or NULL */
    char *requested_slot; /* the slot that form asked for, or NULL */
    char *action;         /* the action that ran this turn, or NULL */
    size_t n_slots;       /* every slot with a value after the turn, in domain order */
    parley_slot *slots;   /* names and values owned here (dm_slots_free) */
    int64_t store_ns;     /* the store's read and write for the turn, a user's lock wait
                             included (CLOCK_MONOTONIC ns) */
    /* Set when the turn reached an action that an action server answers and in.results
     * holds no answer for it yet: then nothing was decided or stored and the fields above
     * are empty. The caller makes the call (without holding anything of the store), then
     * runs the same turn again with the same now_ms and the answer appended to results; the
     * turn replays its decisions up to that action and goes on from its answer. */
    dm_action_call call;
} dm_turn_out;

/* Loads the domain and opens the store. On success *out is owned by the caller
 * (dm_close). Domain errors fail with PARLEY_ERR_CONFIG (or FORMAT for bad YAML) and
 * "FILE:LINE:COL: message"; store errors name the store file and say what to do: a
 * read-only file (PARLEY_ERR_IO), one locked by another process past the busy timeout
 * (PARLEY_ERR_IO), not a database, corrupt or another application's database
 * (PARLEY_ERR_FORMAT), a schema newer than this version knows (PARLEY_ERR_UNSUPPORTED).
 * The store file is never modified on failure, except that an older schema is migrated in
 * one transaction. */
parley_status dm_open(const dm_params *p, dm_manager **out);

/* NULL is a no-op. Waits for nothing: no dm_turn may be running. */
void dm_close(dm_manager *dm);

/* Gives fn each warning about the domain, "FILE:LINE:COL: message" (borrowed for the call):
 * what loads but would say something wrong at some turn, such as a response that says a
 * slot that can be unset there (for `parley check`). Fails only when out of memory. */
parley_status dm_warnings(const dm_manager *dm, void (*fn)(void *ctx, const char *message),
                          void *ctx);

/* Runs one turn. On success *out is filled (the caller frees it with dm_turn_out_free;
 * it is zeroed first), or holds only the action-server call the turn waits for
 * (out->call). On failure *out is zeroed, the store is as it was before the turn, and
 * parley_errmsg() says why (a locked or read-only store, a failed action, a slot value over
 * a limit: PARLEY_ERR_UNSUPPORTED, see slot_value.h, ...). */
parley_status dm_turn(dm_manager *dm, const dm_turn_in *in, dm_turn_out *out);

/* Whether an action of the domain is answered by an action server (dm_turn_out.call). */
int dm_uses_action_servers(const dm_manager *dm);

/* Whether an action server's answer is one the dialog can apply: a JSON object whose
 * `events` and `responses`, where given, are arrays of objects (else PARLEY_ERR_FORMAT, the
 * detail saying what is wrong; PARLEY_ERR_NOMEM when out of memory). What the events and
 * responses say is checked as they are applied: an unknown slot, response or event kind is
 * logged and left out. Any thread. */
parley_status dm_action_answer_check(const char *body);

/* Frees what dm_turn put in *out and zeroes it. NULL is a no-op. */
void dm_turn_out_free(dm_turn_out *out);
/* Frees n slots, their strings and their array (NULL is a no-op). */
void dm_slots_free(parley_slot *slots, size_t n);

/* Registers (or replaces, or with fn NULL removes) the application's action `name`, which
 * the domain must declare under `actions:` (NOT_FOUND otherwise). `name` is copied;
 * user_data is passed back to fn. Safe to call while turns run. */
parley_status dm_register_action(dm_manager *dm, const char *name, parley_action_fn fn,
                                 void *user_data);

#endif
