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
} dm_ctx;

/* policy.c: decides the turn: fills c->reply and changes c's context. */
parley_status dm_decide(dm_ctx *c);

/* Appends a variation of response r (chosen from user, turn and position) to the reply. */
parley_status dm_say(dm_ctx *c, int r);

/* Sets slot k from `n` raw values: a list slot joins them, and any value it refuses fails
 * the fill; another slot keeps the last value it accepts, and fails only when it accepts
 * none. A failed fill returns PARLEY_ERR_INVALID_ARG and leaves the slot as it was. */
parley_status dm_fill_slot(dm_ctx *c, int k, const char *const *raw, size_t n);

/* action.c: runs action a (its hook, or its domain reply); `form` is the form that just
 * completed, or -1. */
parley_status dm_run_action(dm_ctx *c, int a, int form);

#endif
