/* domain.h — a loaded domain.yaml: intents, slots, responses, forms, rules, actions.
 *
 * dm_domain_load() reads and checks the whole file up front, so every mistake (an unknown
 * key, intent, slot, response, form or action, a template naming an unknown slot, a
 * categorical slot without values...) is reported once at start-up as "FILE:LINE:COL:
 * message", and a turn never meets a dangling name. In memory every cross-reference is an
 * index into the domain's arrays, and every name is found through a table (names.h), so
 * loading is linear in the file's size and a lookup does not depend on it.
 *
 * A loaded domain is immutable: share it between threads freely.
 */
#ifndef DIALOG_DOMAIN_H
#define DIALOG_DOMAIN_H

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/names.h"
#include "sdk/base/pattern.h"
#include "parley/status.h"

/* A message about a domain, "FILE:LINE:COL: message", borrowed for the call. */
typedef void (*dm_warn_fn)(void *ctx, const char *message);

/* Where a load reports every problem of the file (for parley check): each problem it can go
 * on after (an unknown name or key, a template naming an unknown slot) as it is found, and
 * the one it stops at, if any. */
typedef struct dm_problems {
    dm_warn_fn fn;
    void *ctx;
    int count; /* reported so far */
} dm_problems;

typedef enum dm_slot_type {
    DM_SLOT_TEXT = 0,
    DM_SLOT_NUMBER = 1,
    DM_SLOT_CATEGORICAL = 2,
} dm_slot_type;

/* A variant a user may say and the canonical value it stands for. */
typedef struct dm_synonym {
    char *from; /* case-folded */
    char *to;
} dm_synonym;

typedef struct dm_slot_def {
    char *name;
    dm_slot_type type;
    int list;      /* several values, stored joined with ", " */
    char *entity;  /* the NLU entity that fills it; NULL = only actions set it */
    char **values; /* categorical: the allowed values, as written */
    char **folded; /* (n_values) the same, compared as dm_words(value, 1) */
    size_t n_values;
    pl_names value_ix; /* folded value → its index */
    dm_synonym *synonyms;
    size_t n_synonyms;
    pl_names synonym_ix; /* synonym `from` → its index */
    double min, max;     /* number: the accepted range */
    int integer;         /* number: whole numbers only */
    pl_pattern *pattern; /* text: what the value must contain (pattern.h), or NULL */
} dm_slot_def;

/* A condition of a variation on a slot (Rasa's `condition: [{type: slot, name, value}]`). */
typedef struct dm_condition {
    int slot;    /* index into slots */
    char *value; /* what the slot must hold, as the slot keeps it (compared as
                    dm_words(value, 1)); NULL: the slot must be unset */
} dm_condition;

/* A variation of a response: a template with {slot} references, said when every condition
 * holds (none: a plain variation). */
typedef struct dm_variation {
    char *text;
    dm_condition *conds;
    size_t n_conds;
    int line, col; /* where the variation is written */
} dm_variation;

/* A response: its variations in file order. The first whose conditions all hold is said;
 * when none with conditions does, one of the plain ones, chosen per (user, turn). */
typedef struct dm_response {
    char *name;
    dm_variation *vars;
    size_t n_vars;
    size_t n_plain; /* the variations without conditions */
} dm_response;

/* What a rule or a form completion does. */
typedef enum dm_do_kind {
    DM_DO_NONE = 0,
    DM_DO_REPLY = 1,  /* index: a response */
    DM_DO_FORM = 2,   /* index: a form */
    DM_DO_ACTION = 3, /* index: an action */
} dm_do_kind;

typedef struct dm_do {
    dm_do_kind kind;
    int index;
} dm_do;

/* What an intent triggers. */
typedef struct dm_rule {
    dm_do act;
    int last_entity_wins; /* a list slot keeps only the last value said in the turn
                             ("swap ham for olives") */
    int in_forms;         /* 0: while a form runs, the rule is skipped and the form goes on */
} dm_rule;

typedef struct dm_form {
    char *name;
    size_t n_required;
    int *required;                 /* (n_required) slot indices, in asking order */
    int *ask;                      /* (n_required) the response that asks for each */
    int *invalid;                  /* (n_required) the response for a rejected value, or -1 */
    dm_do on_complete;             /* DM_DO_REPLY or DM_DO_ACTION */
    int keep_slots;                /* 0: the required slots are cleared after completion */
    int confirm;                   /* a response asking to confirm the filled form, or -1 */
    int *yes_intents, *no_intents; /* confirmation answers (intent indices) */
    size_t n_yes, n_no;
    int on_no;           /* the response after a "no", or -1 (then: confirm again) */
    int *cancel_intents; /* intents that abandon the form */
    size_t n_cancel;
    int on_cancel; /* the response after cancelling, or -1 (then: the fallback) */
} dm_form;

typedef struct dm_action_def {
    char *name;
    int reply;      /* the response when no hook is registered or it sets no reply; -1 */
    char *endpoint; /* the action server's URL (its own `endpoint:` or the domain's
                       `action_endpoint:`), or NULL: a hook or the reply answers it */
    int fallback;   /* the response when its server fails; -1: the domain's fallback */
} dm_action_def;

typedef struct dm_domain {
    char *file;
    char **intents;
    size_t n_intents;
    dm_slot_def *slots;
    size_t n_slots;
    dm_response *responses;
    size_t n_responses;
    dm_form *forms;
    size_t n_forms;
    dm_action_def *actions;
    size_t n_actions;
    dm_rule *rule_of_intent;   /* (n_intents) the rule of each intent; DM_DO_NONE = none */
    double threshold;          /* fallback under this confidence */
    int fallback;              /* the fallback response */
    int64_t session_expire_ms; /* 0 = sessions never expire */
    int carry_over_slots;      /* keep slots in a new session */
    long history_limit;        /* turns kept per user; 0 = all */
    /* Each name → its index in the array above. */
    pl_names intent_ix, slot_ix, response_ix, form_ix, action_ix;
    dm_problems *problems; /* while a dm_domain_load_all runs; NULL otherwise */
} dm_domain;

/* The NLU model's labels to check against; either list may be NULL (no check). */
typedef struct dm_known {
    const char *const *intents;
    size_t n_intents;
    const char *const *entities;
    size_t n_entities;
} dm_known;

/* Loads and checks `path`. On success *out is owned by the caller (dm_domain_free). */
parley_status dm_domain_load(const char *path, const dm_known *known, dm_domain **out);
/* The same, reporting every problem to `problems` (not NULL): the load goes on after each
 * one it can and fails at the end (PARLEY_ERR_CONFIG, "FILE: N problems") if any was found,
 * or at the first it cannot go on after, which is reported too. */
parley_status dm_domain_load_all(const char *path, const dm_known *known, dm_problems *problems,
                                 dm_domain **out);
/* For the loader's parts (template.c): st, a problem at a node of the file being loaded (the
 * message set), is reported and the load goes on (PARLEY_OK) when d is loaded by
 * dm_domain_load_all and st is PARLEY_ERR_CONFIG; else st is returned. */
parley_status dm_domain_problem(const dm_domain *d, parley_status st);
/* NULL is a no-op. */
void dm_domain_free(dm_domain *d);

/* The warnings of a loaded domain, each "FILE:LINE:COL: message" given to fn: a response
 * whose variation says a slot that can be unset where the response is said, with no
 * variation before it for the slot unset (dialog/lint.c). */
parley_status dm_domain_lint(const dm_domain *d, dm_warn_fn fn, void *ctx);

/* Index of a name (NULL: none), or -1. */
int dm_domain_intent(const dm_domain *d, const char *name);
int dm_domain_slot(const dm_domain *d, const char *name);
int dm_domain_action(const dm_domain *d, const char *name);
int dm_domain_form(const dm_domain *d, const char *name);

#endif
