/* action.c — application actions: the registry, the call, and the parley_action_* setters.
 *
 * The hooks table is shared by every turn, so it is read under a mutex and the hook is
 * called after the mutex is released: a slow action delays only its own user. What the
 * hook writes (a reply, slot changes) goes to its turn's dm_ctx only. An action with no hook
 * and an endpoint is its action server's (action_server.c); else its domain reply answers.
 */
#include <string.h>

#include "dialog/dialog_impl.h"
#include "sdk/base/alloc.h"

struct parley_action_out {
    dm_ctx *c;
    char *reply; /* owned; NULL = the action set none */
};

parley_status parley_action_reply(parley_action_out *out, const char *text)
{
    if (!out || !text)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_action_reply: NULL argument");
    char *copy = pl_strdup(text);
    if (!copy)
        return pl_nomem("an action's reply");
    pl_free(out->reply);
    out->reply = copy;
    return PARLEY_OK;
}

parley_status parley_action_set_slot(parley_action_out *out, const char *name, const char *value)
{
    if (!out || !name)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_action_set_slot: NULL argument");
    dm_ctx *c = out->c;
    int k = dm_domain_slot(c->d, name);
    if (k < 0)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_action_set_slot: no slot '%s' in %s", name,
                       c->d->file);
    if (!value) {
        pl_free(c->values[k]);
        c->values[k] = NULL;
        return PARLEY_OK;
    }
    parley_status st = dm_fill_slot(c, k, &value, 1);
    return st == PARLEY_ERR_INVALID_ARG ? pl_wrap(st, "parley_action_set_slot '%s'", name) : st;
}

parley_status dm_register_action(dm_manager *dm, const char *name, parley_action_fn fn,
                                 void *user_data)
{
    if (!dm || !name)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "dm_register_action: NULL argument");
    int a = dm_domain_action(dm->domain, name);
    if (a < 0)
        return pl_fail(PARLEY_ERR_NOT_FOUND, "action '%s' is not declared under actions: in %s",
                       name, dm->domain->file);
    pthread_mutex_lock(&dm->hooks_mu);
    dm->hooks[a] = (dm_hook){ fn, user_data };
    pthread_mutex_unlock(&dm->hooks_mu);
    return PARLEY_OK;
}

/* The user's set slots as the action sees them (pointers into c->values). */
static parley_slot *slot_view(const dm_ctx *c, size_t *n)
{
    parley_slot *v = pl_malloc((c->d->n_slots ? c->d->n_slots : 1) * sizeof *v);
    *n = 0;
    for (size_t k = 0; v && k < c->d->n_slots; k++)
        if (c->values[k])
            v[(*n)++] = (parley_slot){ c->d->slots[k].name, c->values[k] };
    return v;
}

parley_status dm_run_action(dm_ctx *c, int a, int form)
{
    const dm_action_def *def = &c->d->actions[a];
    pthread_mutex_lock(&c->dm->hooks_mu);
    dm_hook hook = c->dm->hooks[a];
    pthread_mutex_unlock(&c->dm->hooks_mu);
    c->action = a;
    if (!hook.fn) {
        if (def->endpoint)
            return dm_run_remote(c, a);
        if (def->reply < 0)
            return pl_fail(PARLEY_ERR_NOT_FOUND,
                           "action '%s' is not registered by the application and has no reply: "
                           "in %s",
                           def->name, c->d->file);
        return dm_say(c, def->reply);
    }
    size_t n;
    parley_slot *slots = slot_view(c, &n);
    if (!slots)
        return pl_nomem("calling action '%s'", def->name);
    parley_action_ctx ctx = {
        .action = def->name,
        .user_id = c->in->user_id,
        .session_id = c->session_id,
        .turn_id = c->turn_id,
        .text = c->in->text,
        .intent = c->intent,
        .confidence = c->in->confidence,
        .form = form >= 0 ? c->d->forms[form].name : NULL,
        .n_slots = n,
        .slots = slots,
    };
    parley_action_out out = { c, NULL };
    parley_status st = hook.fn(&ctx, &out, hook.user);
    pl_free(slots);
    if (st != PARLEY_OK) {
        pl_free(out.reply);
        return pl_fail(st, "action '%s' failed: %s", def->name, parley_status_str(st));
    }
    if (!out.reply)
        return def->reply >= 0 ? dm_say(c, def->reply) : PARLEY_OK;
    if (c->parts++ > 0)
        st = dm_text_puts(&c->reply, " ");
    /* The application's text is a template too, but unchecked: render it leniently. */
    if (st == PARLEY_OK)
        st = dm_template_render(c->d, out.reply, c->values, 1, &c->reply);
    pl_free(out.reply);
    return st;
}
