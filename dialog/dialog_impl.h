/* dialog_impl.h — what dialog.c, policy.c and action.c share inside the dialog manager.
 *
 * A turn is decided on a dm_ctx: the user's context in domain terms (slot values by slot
 * index, the active form by index) plus the reply being built. dialog.c loads it from the
 * store and saves it back; policy.c decides; action.c runs application actions.
 */
#ifndef DIALOG_DIALOG_IMPL_H
#define DIALOG_DIALOG_IMPL_H

#include <pthread.h>

#include "dialog/dialog.h"
#include "dialog/domain.h"
#include "dialog/store.h"
#include "dialog/template.h"

typedef struct dm_hook {
    parley_action_fn fn;
    void *user;
} dm_hook;

struct dm_manager {
    dm_domain *domain;
    char *domain_json; /* the domain as action servers are sent it, or NULL: no action has
                          an endpoint */
    dm_store *store;
    pthread_mutex_t hooks_mu;
    dm_hook *hooks; /* (domain->n_actions) registered actions; fn NULL = none */
};

typedef struct dm_ctx {
    dm_manager *dm;
    const dm_domain *d;
    const dm_turn_in *in;
    const char *session_id;
    uint64_t turn_id;
    char **values;           /* (n_slots) owned canonical values, NULL = unset */
    unsigned char *rejected; /* (n_slots) 1 when this turn's entity for it was refused */
    int changed;             /* this turn's entities changed a slot's value */
    int form;                /* active form index, or -1 */
    int requested;           /* slot index the form asked for, or -1 */
    int confirming;
    const char *intent; /* the intent acted on (borrowed: the input's or "fallback") */
    int action;         /* the action that ran, or -1 */
    unsigned parts;     /* responses said so far this turn */
    dm_text reply;
    size_t calls;        /* action-server calls reached so far this turn */
    int followups;       /* actions run as a server's followup this turn */
    dm_action_call call; /* the call the turn waits for (action NULL: none) */
} dm_ctx;

/* policy.c: decides the turn: fills c->reply and changes c's context. */
parley_status dm_decide(dm_ctx *c);

/* Appends a variation of response r (chosen from user, turn and position) to the reply. */
parley_status dm_say(dm_ctx *c, int r);
/* The same with `values` (n_slots, NULL = unset) in place of the user's slots: an action
 * server's response variables. */
parley_status dm_say_values(dm_ctx *c, int r, char *const *values);

/* Sets slot k from `n` raw values: a list slot joins them, and any value it refuses fails
 * the fill; another slot keeps the last value it accepts, and fails only when it accepts
 * none. A failed fill returns PARLEY_ERR_INVALID_ARG and leaves the slot as it was. */
parley_status dm_fill_slot(dm_ctx *c, int k, const char *const *raw, size_t n);

/* action.c: runs action a (its hook, else its action server, else its domain reply); `form`
 * is the form that just completed, or -1. */
parley_status dm_run_action(dm_ctx *c, int a, int form);

/* action_server.c: runs action a, which its action server answers (Rasa's protocol): with
 * the turn's next answer in c->in->results, or else by setting c->call and failing, which
 * ends the turn's run (dm_turn then hands the call to its caller). */
parley_status dm_run_remote(dm_ctx *c, int a);
/* The domain as action servers are sent it (intents, entities, slots, responses, actions);
 * *out owned by the caller (pl_free). */
parley_status dm_domain_json(const dm_domain *d, char **out);

#endif
