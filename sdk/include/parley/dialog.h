/* parley/dialog.h — application actions for the dialog manager.
 *
 * A domain file (domain.yaml, see docs/dialog.md) may name actions: in a rule
 * (`intent: turn_on` → `action: switch_device`) or as a form's completion
 * (`on_complete: {action: place_order}`). The embedding application implements an action
 * as a parley_action_fn and registers it by name (through the pipeline API, which hands it
 * to the `dialog.frames` node). When the dialog reaches the action, it calls the function
 * with the user's context; the function answers with a reply and slot changes through
 * parley_action_reply() and parley_action_set_slot(). An action the application did not
 * register goes to its action server when the domain gives it an endpoint (docs/dialog.md,
 * "Actions on an action server"), else falls back to the `reply` the domain gives it, so a
 * sample bot also runs from the command line with no application at all.
 *
 * Threading: an action may be called from several dialog worker threads at once, for
 * DIFFERENT users (never twice at once for the same user): it must be thread-safe. It runs
 * outside the store's lock, so a slow action delays only its own user.
 */
#ifndef PARLEY_DIALOG_H
#define PARLEY_DIALOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "parley/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One slot of a turn and its value: the one form a turn's slots take wherever a turn is
 * read (an action's context, a pipeline's reply, the JSON of text.stdout and the servers).
 * The value is canonical: an entity the NLU found holds the canonical value of the synonym
 * typed (parley_nlu_slot.canonical); a dialog slot holds its domain's form of it (a
 * categorical slot its allowed value, a number slot its decimal text, a list slot its values
 * joined with ", "). Who owns the strings is said by the struct that holds the slot. */
typedef struct parley_slot {
    const char *name;
    const char *value;
} parley_slot;

/* What an action sees. Every pointer is borrowed for the duration of the call. */
typedef struct parley_action_ctx {
    const char *action; /* the name the action was registered under */
    const char *user_id;
    const char *session_id;
    uint64_t turn_id;   /* the user's turn number, from 1 */
    const char *text;   /* the user's words this turn */
    const char *intent; /* the intent the dialog acted on */
    float confidence;
    const char *form; /* the form that just completed, or NULL */
    size_t n_slots;   /* the user's slots that have a value, after this turn's entities */
    const parley_slot *slots;
} parley_action_ctx;

/* Where an action writes its answer; owned by the dialog, valid during the call. */
typedef struct parley_action_out parley_action_out;

/* The action's reply to the user. `text` is copied; `{slot}` in it is filled in with the
 * slot values after the action's own updates. A second call replaces the first. An action
 * that sets no reply answers with the reply its domain entry names (if any). */
PARLEY_API parley_status parley_action_reply(parley_action_out *out, const char *text);

/* Sets slot `name` to `value` (copied), or clears it when value is NULL. The slot must be
 * declared in the domain, and the value must pass the slot's type check (a categorical
 * value outside its allowed values fails with PARLEY_ERR_INVALID_ARG). A value over the
 * slot value limit (1024 bytes), or one its pattern cannot judge within its limits, fails
 * with PARLEY_ERR_UNSUPPORTED (see docs/limits.md). */
PARLEY_API parley_status parley_action_set_slot(parley_action_out *out, const char *name,
                                                const char *value);

/* An application action. `user_data` is the pointer given at registration. Return
 * PARLEY_OK, or a failure status (with a message through whatever means the application
 * likes): a failed action fails the turn, and nothing of the turn is stored. */
typedef parley_status (*parley_action_fn)(const parley_action_ctx *ctx, parley_action_out *out,
                                          void *user_data);

/* ---- the context store, for operators (`parley store`) ----------------------------------
 *
 * `where` is what the dialog.frames node's `store` param takes: a SQLite file, or a
 * postgresql:// URI (the password from the URI, PGPASSWORD or ~/.pgpass; never printed).
 * Each call opens the store (creating or migrating its schema, refusing a newer one), does
 * its work and closes it; it may run while parley processes serve from the same store.
 * Failures name the file or server and say why (see docs/dialog.md, "Context
 * store"). */

/* Creates or migrates the schema, and nothing else. */
PARLEY_API parley_status parley_store_migrate(const char *where);

/* Writes every user (byte order of ids) as one JSON line: the context (session, counters,
 * form, slots) and the kept history rows. *n_users (may be NULL): the users written. */
PARLEY_API parley_status parley_store_export(const char *where, FILE *out, long *n_users);

/* Reads JSON lines as parley_store_export writes them and stores each user, replacing what
 * the store held for that user, all in one transaction. Each line is checked as every entry
 * point checks what it is given (docs/limits.md); a bad line fails with its line number
 * (PARLEY_ERR_FORMAT, or the check's status) and nothing is imported. *n_users (may be
 * NULL): the users stored. */
PARLEY_API parley_status parley_store_import(const char *where, FILE *in, long *n_users);

/* Deletes the users last active more than `days` days ago, with their slots and history, in
 * one transaction. *n_users (may be NULL): how many. */
PARLEY_API parley_status parley_store_purge(const char *where, double days, long *n_users);

#ifdef __cplusplus
}
#endif
#endif
