/* dialog.c — the dialog manager's entry points: open, close, and one turn.
 *
 * A turn reads the user's context from the store, starts a new session when the last one
 * expired, lets policy.c decide, and writes the context and the history row back in one
 * transaction. Nothing is kept in memory between turns, so any number of processes and
 * restarts see one consistent conversation per user. What to say is policy.c's business;
 * the store (SQLite or PostgreSQL) is store.h's.
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dialog/dialog_impl.h"
#include "sdk/base/alloc.h"
#include "sdk/base/sync.h"

parley_status dm_open(const dm_params *p, dm_manager **out)
{
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "dm_open: NULL out");
    *out = NULL;
    if (!p || !p->domain_path || !p->store_path)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "dm_open: the domain and store paths are required");
    dm_manager *dm = pl_calloc(1, sizeof *dm);
    if (!dm)
        return pl_nomem("opening the dialog manager");
    parley_status st = pl_mutex_init(&dm->hooks_mu, "the dialog manager");
    if (st != PARLEY_OK) {
        pl_free(dm);
        return st;
    }
    dm_known known = { p->known_intents, p->n_known_intents, p->known_slots, p->n_known_slots };
    dm_problems problems = { p->on_problem, p->problem_ctx, 0 };
    st = dm_domain_load_all(p->domain_path, &known, p->on_problem ? &problems : NULL, &dm->domain);
    if (st != PARLEY_OK)
        goto fail;
    dm->hooks = pl_calloc(dm->domain->n_actions ? dm->domain->n_actions : 1, sizeof *dm->hooks);
    if (!dm->hooks) {
        st = pl_nomem("opening the dialog manager");
        goto fail;
    }
    for (size_t a = 0; a < dm->domain->n_actions && !dm->domain_json; a++)
        if (dm->domain->actions[a].endpoint &&
            (st = dm_domain_json(dm->domain, &dm->domain_json)) != PARLEY_OK)
            goto fail;
    dm_store_params sp = { .busy_ms = p->busy_timeout_ms, .pool_size = p->pool_size };
    if ((st = dm_store_open(p->store_path, &sp, &dm->store)) != PARLEY_OK)
        goto fail;
    *out = dm;
    return PARLEY_OK;
fail:
    dm_close(dm);
    return st;
}

parley_status dm_warnings(const dm_manager *dm, void (*fn)(void *ctx, const char *message),
                          void *ctx)
{
    return dm_domain_lint(dm->domain, fn, ctx);
}

int dm_uses_action_servers(const dm_manager *dm)
{
    return dm->domain_json != NULL;
}

void dm_close(dm_manager *dm)
{
    if (!dm)
        return;
    dm_store_close(dm->store);
    dm_domain_free(dm->domain);
    pl_free(dm->hooks);
    pl_free(dm->domain_json);
    pthread_mutex_destroy(&dm->hooks_mu);
    pl_free(dm);
}

static void call_free(dm_action_call *call)
{
    pl_free(call->action);
    pl_free(call->url);
    pl_free(call->body);
}

void dm_turn_out_free(dm_turn_out *out)
{
    if (!out)
        return;
    pl_free(out->reply);
    pl_free(out->session_id);
    pl_free(out->intent);
    pl_free(out->active_form);
    pl_free(out->requested_slot);
    pl_free(out->action);
    dm_slots_free(out->slots, out->n_slots);
    call_free(&out->call);
    *out = (dm_turn_out){ 0 };
}

void dm_slots_free(parley_slot *slots, size_t n)
{
    for (size_t i = 0; slots && i < n; i++) {
        pl_free((char *)slots[i].name);
        pl_free((char *)slots[i].value);
    }
    pl_free(slots);
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static parley_status check_input(const dm_turn_in *in)
{
    if (!in || !in->user_id || !*in->user_id)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "dm_turn: a user id is required");
    if (in->n_entities && !in->entities)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "dm_turn: n_entities without entities");
    for (size_t i = 0; i < in->n_entities; i++)
        if (!in->entities[i].name || !in->entities[i].value)
            return pl_fail(PARLEY_ERR_INVALID_ARG, "dm_turn: entity %zu has no name or value", i);
    return PARLEY_OK;
}

/* The user's stored context in domain terms. Slots and forms the domain no longer has
 * (it was edited between runs) are dropped. */
static parley_status ctx_from_user(dm_ctx *c, const dm_user *u)
{
    const dm_domain *d = c->d;
    for (size_t i = 0; i < u->n_slots; i++) {
        int k = dm_domain_slot(d, u->slots[i].name);
        if (k >= 0 && !(c->values[k] = pl_strdup(u->slots[i].value)))
            return pl_nomem("loading slots");
    }
    c->form = dm_domain_form(d, u->form);
    c->requested = c->form >= 0 ? dm_domain_slot(d, u->requested_slot) : -1;
    c->confirming = c->form >= 0 && u->confirming;
    return PARLEY_OK;
}

/* A session id unique per user and session: a hash of both and the start time. */
static parley_status new_session(dm_user *u, const char *user_id, int64_t now)
{
    char key[64];
    int n = snprintf(key, sizeof key, "%" PRId64 ":%" PRId64, u->session_no + 1, now);
    uint64_t h = pl_fnv(pl_fnv(PL_FNV_SEED, user_id, strlen(user_id)), key, (size_t)n);
    char id[17];
    snprintf(id, sizeof id, "%016" PRIx64, h);
    char *s = pl_strdup(id);
    if (!s)
        return pl_nomem("a session id");
    pl_free(u->session_id);
    u->session_id = s;
    u->session_no++;
    u->session_start_ms = now;
    return PARLEY_OK;
}

/* Copies the decided context back into the store's terms. */
static parley_status user_from_ctx(dm_user *u, const dm_ctx *c)
{
    const dm_domain *d = c->d;
    dm_slots_free(u->slots, u->n_slots);
    u->slots = NULL;
    u->n_slots = 0;
    pl_free(u->form);
    pl_free(u->requested_slot);
    u->form = u->requested_slot = NULL;
    u->slots = pl_calloc(d->n_slots ? d->n_slots : 1, sizeof *u->slots);
    if (!u->slots)
        return pl_nomem("saving slots");
    for (size_t k = 0; k < d->n_slots; k++) {
        if (!c->values[k])
            continue;
        parley_slot *s = &u->slots[u->n_slots++];
        s->name = pl_strdup(d->slots[k].name);
        s->value = pl_strdup(c->values[k]);
        if (!s->name || !s->value)
            return pl_nomem("saving slots");
    }
    if (c->form >= 0 && !(u->form = pl_strdup(d->forms[c->form].name)))
        return pl_nomem("saving the form");
    if (c->requested >= 0 && !(u->requested_slot = pl_strdup(d->slots[c->requested].name)))
        return pl_nomem("saving the form");
    u->confirming = c->confirming;
    return PARLEY_OK;
}

/* The NLU's entities as a JSON array for the history row; owned by the caller (pl_free). */
static parley_status entities_json(const dm_turn_in *in, char **out)
{
    *out = NULL;
    cJSON *arr = cJSON_CreateArray();
    int ok = arr != NULL;
    for (size_t i = 0; ok && i < in->n_entities; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            ok = 0;
            break;
        }
        ok = cJSON_AddStringToObject(o, "name", in->entities[i].name) &&
             cJSON_AddStringToObject(o, "value", in->entities[i].value);
    }
    char *text = ok ? cJSON_PrintUnformatted(arr) : NULL;
    cJSON_Delete(arr);
    if (!text)
        return pl_nomem("the turn's history");
    *out = pl_strdup(text);
    cJSON_free(text);
    return *out ? PARLEY_OK : pl_nomem("the turn's history");
}

static char *dup_or_null(const char *s, int *failed)
{
    if (!s)
        return NULL;
    char *d = pl_strdup(s);
    *failed |= !d;
    return d;
}

static parley_status fill_out(dm_turn_out *out, const dm_ctx *c, const dm_user *u, char *reply,
                              int new_sess)
{
    const dm_domain *d = c->d;
    int failed = 0;
    out->reply = reply;
    out->session_id = dup_or_null(u->session_id, &failed);
    out->turn_id = c->turn_id;
    out->new_session = new_sess;
    out->intent = dup_or_null(c->intent, &failed);
    out->confidence = c->in->confidence;
    out->active_form = dup_or_null(c->form >= 0 ? d->forms[c->form].name : NULL, &failed);
    out->requested_slot =
            dup_or_null(c->requested >= 0 ? d->slots[c->requested].name : NULL, &failed);
    out->action = dup_or_null(c->action >= 0 ? d->actions[c->action].name : NULL, &failed);
    out->slots = pl_calloc(d->n_slots ? d->n_slots : 1, sizeof *out->slots);
    failed |= !out->slots;
    for (size_t k = 0; !failed && k < d->n_slots; k++) {
        if (!c->values[k])
            continue;
        parley_slot *s = &out->slots[out->n_slots++];
        s->name = dup_or_null(d->slots[k].name, &failed);
        s->value = dup_or_null(c->values[k], &failed);
    }
    return failed ? pl_nomem("the turn's result") : PARLEY_OK;
}

parley_status dm_turn(dm_manager *dm, const dm_turn_in *in, dm_turn_out *out)
{
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "dm_turn: NULL out");
    *out = (dm_turn_out){ 0 };
    if (!dm)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "dm_turn: NULL manager");
    parley_status st = check_input(in);
    if (st != PARLEY_OK)
        return st;
    const dm_domain *d = dm->domain;
    int64_t now = in->now_ms ? in->now_ms : wall_ms();
    dm_user u = { 0 };
    dm_store_turn txn = { 0 };
    char *ents = NULL, *reply = NULL;
    dm_ctx c = { .dm = dm, .d = d, .in = in, .form = -1, .requested = -1, .action = -1 };
    c.values = pl_calloc(d->n_slots ? d->n_slots : 1, sizeof *c.values);
    c.rejected = pl_calloc(d->n_slots ? d->n_slots : 1, 1);
    if (!c.values || !c.rejected) {
        pl_free(c.values);
        pl_free(c.rejected);
        return pl_nomem("a turn");
    }
    /* From here to the commit the user's lock is held (PostgreSQL): a turn of the same user
     * in another process waits, then reads what this one wrote. */
    int64_t t_begin = monotonic_ns();
    if ((st = dm_store_begin(dm->store, in->user_id, &txn, &u)) != PARLEY_OK)
        goto done;
    int64_t begin_ns = monotonic_ns() - t_begin;
    int expired =
            u.exists && d->session_expire_ms > 0 && now - u.last_active_ms > d->session_expire_ms;
    int new_sess = !u.exists || expired || in->restart;
    if (!new_sess || (expired && !in->restart && d->carry_over_slots)) {
        if ((st = ctx_from_user(&c, &u)) != PARLEY_OK)
            goto done;
    }
    if (new_sess) {
        /* A new session forgets the form, and the slots unless the domain carries them
         * (never on a restart). */
        c.form = c.requested = -1;
        c.confirming = 0;
        if ((st = new_session(&u, in->user_id, now)) != PARLEY_OK)
            goto done;
    }
    c.session_id = u.session_id;
    c.turn_id = u.turns + 1;
    st = dm_decide(&c);
    if (c.call.action) {
        /* An action server must answer first: nothing is stored, and the user's lock is
         * let go while the caller waits. */
        out->call = c.call;
        out->call.now_ms = now;
        c.call = (dm_action_call){ 0 };
        st = PARLEY_OK;
        goto done;
    }
    if (st != PARLEY_OK)
        goto done;
    if (!(reply = dm_text_take(&c.reply))) {
        st = pl_nomem("a reply");
        goto done;
    }
    if ((st = user_from_ctx(&u, &c)) != PARLEY_OK || (st = entities_json(in, &ents)) != PARLEY_OK)
        goto done;
    u.turns = c.turn_id;
    u.last_active_ms = now;
    dm_turn_row row = {
        .turn_id = c.turn_id,
        .session_id = u.session_id,
        .text = in->text,
        .nlu_intent = in->intent,
        .confidence = in->confidence,
        .entities_json = ents,
        .intent = c.intent,
        .action = c.action >= 0 ? d->actions[c.action].name : NULL,
        .reply = reply,
        .form = c.form >= 0 ? d->forms[c.form].name : NULL,
        .t_in_ms = now,
        /* A turn run again after an action server answered replays the first run's clock
         * (now_ms), but its reply is made now. */
        .t_reply_ms = in->now_ms && !in->n_results ? now : wall_ms(),
    };
    /* The result is built before the save, so a turn that fails leaves the store as it was. */
    st = fill_out(out, &c, &u, reply, new_sess);
    reply = NULL;
    if (st == PARLEY_OK) {
        int64_t t0 = monotonic_ns();
        st = dm_store_commit(&txn, in->user_id, &u, &row, d->history_limit);
        txn.store = NULL; /* the commit ended the turn, whether it worked or not */
        out->store_ns = begin_ns + monotonic_ns() - t0;
    }
    if (st != PARLEY_OK)
        dm_turn_out_free(out);
done:
    if (txn.store)
        dm_store_abort(&txn);
    pl_free(reply);
    pl_free(ents);
    dm_text_free(&c.reply);
    call_free(&c.call);
    for (size_t k = 0; k < d->n_slots; k++)
        pl_free(c.values[k]);
    pl_free(c.values);
    pl_free(c.rejected);
    dm_user_clear(&u);
    return st;
}
