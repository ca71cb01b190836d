/* policy.c — what the dialog does with one turn: fallback, rules, forms.
 *
 * The order of decisions, written once here:
 *   1. No intent, an out-of-scope intent (out_of_scope or nlu_fallback, trained from
 *      examples of what the bot does not cover), or confidence under the domain's
 *      threshold: the fallback reply (and, in a form, its question again). Entities of such
 *      a turn are not trusted, so not used, but for one: where a form asked for a slot (it
 *      asks none while confirming) and the turn holds a value for it that the slot accepts,
 *      the slot takes it as from any turn (a list all its values) and the form goes on
 *      without the fallback ("i'll go with six" read as out of scope, six tagged count).
 *   2. The turn's entities fill their slots (a refused value is remembered for the form).
 *   3. In a form: a cancel intent ends it; while confirming, a yes completes it and a no
 *      gets the on_no reply (unless the same turn changed a slot: then it confirms again);
 *      a rule for another form switches to it; a rule's reply or action is done (unless
 *      the rule says in_forms: false) and the form goes on; then the form asks for its
 *      next missing slot, asks to confirm, or completes.
 *   4. Not in a form: the intent's rule (reply, action or form), or the fallback reply when
 *      the intent has none.
 * Loading and saving the context is dialog.c's job; running actions is action.c's.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "dialog/dialog_impl.h"
#include "dialog/slot_value.h"
#include "sdk/base/alloc.h"

/* Whether a and b are the same words: ASCII case and the whitespace between words aside, as
 * dm_words(x, 1) compares them. */
static int same_words(const char *a, const char *b)
{
    for (int started = 0;; started = 1) {
        int space_a = 0, space_b = 0;
        for (; isspace((unsigned char)*a); a++)
            space_a = 1;
        for (; isspace((unsigned char)*b); b++)
            space_b = 1;
        if (!*a || !*b)
            return !*a && !*b;
        if ((started && space_a != space_b) ||
            tolower((unsigned char)*a++) != tolower((unsigned char)*b++))
            return 0;
    }
}

static int conditions_hold(char *const *values, const dm_variation *v)
{
    for (size_t i = 0; i < v->n_conds; i++) {
        const char *now = values[v->conds[i].slot], *want = v->conds[i].value;
        if (want ? !now || !same_words(now, want) : now != NULL)
            return 0;
    }
    return 1;
}

/* The template response r says now: the first variation with conditions that all hold,
 * else plain variation number h among the plain ones, else NULL. */
static const char *variation(char *const *values, const dm_response *r, uint64_t h)
{
    for (size_t i = 0; i < r->n_vars; i++)
        if (r->vars[i].n_conds && conditions_hold(values, &r->vars[i]))
            return r->vars[i].text;
    size_t pick = r->n_plain ? (size_t)(h % r->n_plain) : 0;
    for (size_t i = 0; i < r->n_vars; i++)
        if (!r->vars[i].n_conds && pick-- == 0)
            return r->vars[i].text;
    return NULL;
}

parley_status dm_say(dm_ctx *c, int r)
{
    return dm_say_values(c, r, c->values);
}

parley_status dm_say_values(dm_ctx *c, int r, char *const *values)
{
    const dm_response *resp = &c->d->responses[r];
    /* A hash of (user, turn, part), so the choice is reproducible. */
    uint64_t h = pl_fnv(PL_FNV_SEED, c->in->user_id, strlen(c->in->user_id));
    h = pl_fnv(h, &c->turn_id, sizeof c->turn_id);
    h = pl_fnv(h, &c->parts, sizeof c->parts);
    const char *tmpl = variation(values, resp, h);
    if (!tmpl) {
        pl_log(PARLEY_LOG_WARN,
               "dialog: response '%s': no variation's condition holds and it has no plain "
               "variation, so nothing is said",
               resp->name);
        return PARLEY_OK;
    }
    parley_status st = PARLEY_OK;
    if (c->parts++ > 0)
        st = dm_text_puts(&c->reply, " ");
    return st != PARLEY_OK ? st : dm_template_render(c->d, tmpl, values, 0, &c->reply);
}

static int has(const int *list, size_t n, int v)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == v)
            return 1;
    return 0;
}

static void clear_slot(dm_ctx *c, int k)
{
    pl_free(c->values[k]);
    c->values[k] = NULL;
}

parley_status dm_fill_slot(dm_ctx *c, int k, const char *const *raw, size_t n)
{
    const dm_slot_def *s = &c->d->slots[k];
    char **vals = pl_calloc(n ? n : 1, sizeof *vals);
    if (!vals)
        return pl_nomem("a slot value");
    parley_status st = PARLEY_OK;
    if (s->list) {
        for (size_t i = 0; i < n && st == PARLEY_OK; i++)
            st = dm_slot_normalize(s, raw[i], &vals[i]);
    } else {
        /* One value: the last one said that the slot accepts ("large ... extra cheese" with
         * "extra" tagged as a size too means large); refused only when none is accepted. */
        size_t i = n;
        do
            st = dm_slot_normalize(s, raw[--i], &vals[n - 1]);
        while (st == PARLEY_ERR_INVALID_ARG && i > 0);
    }
    /* A list keeps each value once, in the order said; another slot keeps the one above. */
    dm_text joined = { 0 };
    pl_names seen = { 0 };
    char *value = NULL;
    if (st == PARLEY_OK && s->list)
        st = pl_names_reserve(&seen, n);
    for (size_t i = 0; st == PARLEY_OK && s->list && i < n; i++) {
        if (pl_names_add(&seen, vals[i], strlen(vals[i]), (int)i) >= 0)
            continue;
        if (joined.len)
            st = dm_text_puts(&joined, ", ");
        if (st == PARLEY_OK)
            st = dm_text_puts(&joined, vals[i]);
        if (st == PARLEY_OK && joined.len > DM_SLOT_VALUE_MAX)
            st = pl_fail(PARLEY_ERR_UNSUPPORTED,
                         "slot '%s': its values joined make more than the %d bytes a slot value "
                         "may have",
                         s->name, DM_SLOT_VALUE_MAX);
    }
    pl_names_free(&seen);
    if (st == PARLEY_OK && s->list && !(value = dm_text_take(&joined)))
        st = pl_nomem("a slot value");
    if (st == PARLEY_OK && !s->list) {
        value = vals[n - 1];
        vals[n - 1] = NULL;
    }
    dm_text_free(&joined);
    for (size_t i = 0; i < n; i++)
        pl_free(vals[i]);
    pl_free(vals);
    if (st != PARLEY_OK)
        return st;
    pl_free(c->values[k]);
    c->values[k] = value;
    return PARLEY_OK;
}

/* Fills slot k from this turn's entities of its entity, if any (raw: room for all of them);
 * with last_only, from the last value said. A value the slot refuses marks it rejected. */
static parley_status fill_from_entities(dm_ctx *c, size_t k, int last_only, const char **raw)
{
    const dm_turn_in *in = c->in;
    const char *entity = c->d->slots[k].entity;
    size_t n = 0;
    for (size_t i = 0; entity && i < in->n_entities; i++)
        if (!strcmp(in->entities[i].name, entity))
            raw[n++] = in->entities[i].value;
    if (!n)
        return PARLEY_OK;
    char *before = c->values[k] ? pl_strdup(c->values[k]) : NULL;
    if (c->values[k] && !before)
        return pl_nomem("a slot value");
    parley_status st =
            last_only ? dm_fill_slot(c, (int)k, raw + n - 1, 1) : dm_fill_slot(c, (int)k, raw, n);
    c->changed |= !st && (!before || strcmp(before, c->values[k]) != 0);
    pl_free(before);
    if (st == PARLEY_ERR_INVALID_ARG) {
        c->rejected[k] = 1;
        st = PARLEY_OK;
    }
    return st;
}

/* Fills the entity-mapped slots from this turn's entities: every one (all), or only the slot
 * the form asked for; with last_only, a slot takes only the last value said for it. */
static parley_status apply_entities(dm_ctx *c, int all, int last_only)
{
    const char **raw = NULL;
    parley_status st = PARLEY_OK;
    if (c->in->n_entities && !(raw = pl_malloc(c->in->n_entities * sizeof *raw)))
        return pl_nomem("a turn's entities");
    for (size_t k = 0; k < c->d->n_slots && st == PARLEY_OK; k++)
        if (all || (int)k == c->requested)
            st = fill_from_entities(c, k, last_only, raw);
    pl_free(raw);
    return st;
}

/* Whether this turn holds a value for the slot the form asked for (its entity). */
static int answers_request(const dm_ctx *c)
{
    const char *entity = c->requested >= 0 ? c->d->slots[c->requested].entity : NULL;
    for (size_t i = 0; entity && i < c->in->n_entities; i++)
        if (!strcmp(c->in->entities[i].name, entity))
            return 1;
    return 0;
}

/* Ends the active form with its completion reply or action. */
static parley_status complete(dm_ctx *c)
{
    const dm_form *f = &c->d->forms[c->form];
    int form = c->form;
    c->form = c->requested = -1;
    c->confirming = 0;
    parley_status st = f->on_complete.kind == DM_DO_ACTION
                               ? dm_run_action(c, f->on_complete.index, form)
                               : dm_say(c, f->on_complete.index);
    if (st == PARLEY_OK && !f->keep_slots)
        for (size_t i = 0; i < f->n_required; i++)
            clear_slot(c, f->required[i]);
    return st;
}

/* Says why a value was refused, then asks for the next missing slot, asks to confirm, or
 * completes the form. */
static parley_status form_step(dm_ctx *c)
{
    const dm_form *f = &c->d->forms[c->form];
    parley_status st;
    for (size_t i = 0; i < f->n_required; i++)
        if (c->rejected[f->required[i]] && f->invalid[i] >= 0 &&
            (st = dm_say(c, f->invalid[i])) != PARLEY_OK)
            return st;
    /* A slot whose new value was refused is asked for again, even if it held an old one. */
    for (size_t i = 0; i < f->n_required; i++)
        if (!c->values[f->required[i]] || c->rejected[f->required[i]]) {
            c->requested = f->required[i];
            c->confirming = 0;
            return dm_say(c, f->ask[i]);
        }
    if (f->confirm >= 0) {
        c->requested = -1;
        c->confirming = 1;
        return dm_say(c, f->confirm);
    }
    return complete(c);
}

static parley_status form_turn(dm_ctx *c, int intent)
{
    const dm_form *f = &c->d->forms[c->form];
    parley_status st;
    if (intent >= 0 && has(f->cancel_intents, f->n_cancel, intent)) {
        for (size_t i = 0; i < f->n_required; i++)
            clear_slot(c, f->required[i]);
        c->form = c->requested = -1;
        c->confirming = 0;
        return dm_say(c, f->on_cancel >= 0 ? f->on_cancel : c->d->fallback);
    }
    if (c->confirming && intent >= 0 && has(f->yes_intents, f->n_yes, intent))
        return complete(c);
    /* "No, make it large" already says what to change: confirm again with it. */
    if (c->confirming && !c->changed && intent >= 0 && has(f->no_intents, f->n_no, intent))
        return dm_say(c, f->on_no >= 0 ? f->on_no : f->confirm);
    dm_do rule = { DM_DO_NONE, 0 };
    if (intent >= 0 && c->d->rule_of_intent[intent].in_forms)
        rule = c->d->rule_of_intent[intent].act;
    if (rule.kind == DM_DO_FORM && rule.index != c->form) {
        c->form = rule.index;
        c->confirming = 0;
    } else if (rule.kind == DM_DO_REPLY && (st = dm_say(c, rule.index)) != PARLEY_OK) {
        return st;
    } else if (rule.kind == DM_DO_ACTION && (st = dm_run_action(c, rule.index, -1)) != PARLEY_OK) {
        return st;
    }
    return c->form >= 0 ? form_step(c) : PARLEY_OK;
}

/* Whether the NLU said "none of this bot's intents": Rasa's two names for that intent. */
static int out_of_scope(const char *intent)
{
    return !strcmp(intent, "out_of_scope") || !strcmp(intent, "nlu_fallback");
}

parley_status dm_decide(dm_ctx *c)
{
    const dm_domain *d = c->d;
    const char *name = c->in->intent;
    if (!isfinite(c->in->confidence)) /* NaN would pass the threshold below */
        return pl_fail(PARLEY_ERR_INVALID_ARG, "confidence %g is not a number to decide on",
                       (double)c->in->confidence);
    if (!name || !*name || out_of_scope(name) || c->in->confidence < d->threshold) {
        /* The answer to the form's question, though the intent is not read: its value, where
         * the slot accepts it (one it refuses says nothing of the turn: the fallback). */
        if (c->form >= 0 && answers_request(c)) {
            parley_status st = apply_entities(c, 0, 0);
            if (st != PARLEY_OK)
                return st;
            if (!c->rejected[c->requested]) {
                c->intent = name && *name ? name : "fallback";
                return form_step(c);
            }
            c->rejected[c->requested] = 0;
        }
        c->intent = "fallback";
        parley_status st = dm_say(c, d->fallback);
        return st || c->form < 0 ? st : form_step(c);
    }
    c->intent = name;
    int intent = dm_domain_intent(d, name);
    parley_status st =
            apply_entities(c, 1, intent >= 0 && d->rule_of_intent[intent].last_entity_wins);
    if (st != PARLEY_OK)
        return st;
    if (c->form >= 0)
        return form_turn(c, intent);
    dm_do rule = intent >= 0 ? d->rule_of_intent[intent].act : (dm_do){ DM_DO_NONE, 0 };
    switch (rule.kind) {
    case DM_DO_REPLY: return dm_say(c, rule.index);
    case DM_DO_ACTION: return dm_run_action(c, rule.index, -1);
    case DM_DO_FORM:
        c->form = rule.index;
        c->confirming = 0;
        return form_step(c);
    case DM_DO_NONE: break;
    }
    return dm_say(c, d->fallback);
}
