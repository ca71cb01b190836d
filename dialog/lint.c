/* lint.c — the warnings of a loaded domain (dm_domain_lint): what loads, but would say
 * something wrong at some turn. Today one: a response whose variation says a slot that can
 * be unset where the response is said (utter_hours: "On {day} we are open..." said with no
 * day gives "On  we are open...").
 *
 * Where each response is said, and the slots sure to be set there, follow policy.c:
 *   - a form's question for its i-th required slot: the slots it requires before (a form
 *     asks for its first missing slot);
 *   - its confirmation, the reply after a "no", its completion reply and the reply of the
 *     action it completes with: every slot it requires;
 *   - anywhere else (a rule's reply or its action's, the fallback, the reply to a refused
 *     value, the reply after cancelling, which clears the form's slots): none.
 * A response said in several places has the slots sure in all of them. One said nowhere in
 * the domain (an application's action may still say it) is not judged.
 * Variations are judged in the order dm_say picks them: those with conditions in file order,
 * then the plain ones. A slot is covered for the variations after one whose only
 * conditions are that slot unset; a variation that requires a value of the slot says it.
 */
#include <stdio.h>
#include <string.h>

#include "dialog/domain.h"
#include "dialog/template.h"
#include "sdk/base/alloc.h"
#include "sdk/base/strbuf.h"

typedef enum use_kind {
    USE_RULE,     /* index: the intent whose rule says it */
    USE_ACTION,   /* index: the action (run by a rule) whose reply it is */
    USE_FALLBACK, /* the fallback reply */
    USE_ASK,      /* index: the form; slot: the position of the slot it asks for */
    USE_INVALID,  /* index: the form; slot: the position of the slot whose value it refuses */
    USE_FILLED,   /* index: the form, every slot it requires filled */
    USE_CANCEL,   /* index: the form, cancelled */
} use_kind;

typedef struct use {
    int response;
    use_kind kind;
    int index, slot;
} use;

typedef struct uses {
    use *u;
    size_t n, cap;
    int failed;
} uses;

static void add(uses *l, int response, use_kind kind, int index, int slot)
{
    if (response < 0 || l->failed)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        use *u = pl_realloc(l->u, cap * sizeof *u);
        if (!u) {
            l->failed = 1;
            return;
        }
        l->u = u;
        l->cap = cap;
    }
    l->u[l->n++] = (use){ response, kind, index, slot };
}

/* Every place of the domain that says a response. */
static void collect(const dm_domain *d, uses *l)
{
    for (size_t i = 0; i < d->n_intents; i++) {
        const dm_do *a = &d->rule_of_intent[i].act;
        if (a->kind == DM_DO_REPLY)
            add(l, a->index, USE_RULE, (int)i, -1);
        else if (a->kind == DM_DO_ACTION)
            add(l, d->actions[a->index].reply, USE_ACTION, a->index, -1);
    }
    add(l, d->fallback, USE_FALLBACK, -1, -1);
    for (size_t f = 0; f < d->n_forms; f++) {
        const dm_form *F = &d->forms[f];
        for (size_t i = 0; i < F->n_required; i++) {
            add(l, F->ask[i], USE_ASK, (int)f, (int)i);
            add(l, F->invalid[i], USE_INVALID, (int)f, (int)i);
        }
        add(l, F->confirm, USE_FILLED, (int)f, -1);
        add(l, F->on_no, USE_FILLED, (int)f, -1);
        add(l,
            F->on_complete.kind == DM_DO_REPLY    ? F->on_complete.index
            : F->on_complete.kind == DM_DO_ACTION ? d->actions[F->on_complete.index].reply
                                                  : -1,
            USE_FILLED, (int)f, -1);
        add(l, F->on_cancel, USE_CANCEL, (int)f, -1);
    }
}

/* Whether slot k is sure to be set where use u says its response. */
static int sure(const dm_domain *d, const use *u, int k)
{
    if (u->kind != USE_ASK && u->kind != USE_FILLED)
        return 0;
    const dm_form *F = &d->forms[u->index];
    size_t upto = u->kind == USE_ASK ? (size_t)u->slot : F->n_required;
    for (size_t i = 0; i < upto; i++)
        if (F->required[i] == k)
            return 1;
    return 0;
}

/* Where use u says its response, in words. */
static void where(const dm_domain *d, const use *u, pl_strbuf *b)
{
    const char *form = u->index >= 0 && u->kind >= USE_ASK ? d->forms[u->index].name : NULL;
    switch (u->kind) {
    case USE_RULE: pl_strbuf_printf(b, "the rule for intent '%s'", d->intents[u->index]); break;
    case USE_ACTION:
        pl_strbuf_printf(b, "the reply of action '%s'", d->actions[u->index].name);
        break;
    case USE_FALLBACK: pl_strbuf_printf(b, "the fallback"); break;
    case USE_ASK:
    case USE_INVALID:
        pl_strbuf_printf(b, "form '%s' %s slot '%s'", form,
                         u->kind == USE_ASK ? "asking for" : "refusing a value of",
                         d->slots[d->forms[u->index].required[u->slot]].name);
        break;
    case USE_FILLED: pl_strbuf_printf(b, "form '%s'", form); break;
    case USE_CANCEL: pl_strbuf_printf(b, "form '%s' cancelled", form); break;
    }
}

/* The condition of v on slot k: 1 a value, 0 unset, -1 none. */
static int condition_on(const dm_variation *v, int k)
{
    for (size_t i = 0; i < v->n_conds; i++)
        if (v->conds[i].slot == k)
            return v->conds[i].value != NULL;
    return -1;
}

/* Slot k of variation v of response r, which can be unset at use u: the warning. */
static parley_status warn(const dm_domain *d, const dm_response *r, const dm_variation *v, int k,
                          const use *u, dm_warn_fn fn, void *ctx)
{
    pl_strbuf b = { 0 };
    const char *name = d->slots[k].name;
    pl_strbuf_printf(&b,
                     "%s:%d:%d: response '%s' says slot '%s', which can be unset where it is "
                     "said (",
                     d->file, v->line, v->col, r->name, name);
    where(d, u, &b);
    pl_strbuf_printf(&b,
                     "), and no variation before covers it: add one with condition "
                     "[{type: slot, name: %s, value: null}] first",
                     name);
    if (b.failed || !b.s) {
        pl_free(b.s);
        return pl_nomem("a domain warning");
    }
    fn(ctx, b.s);
    pl_free(b.s);
    return PARLEY_OK;
}

/* Judges response r against its uses in l. flags: 3 x n_slots scratch. */
static parley_status judge(const dm_domain *d, int r, const uses *l, unsigned char *flags,
                           dm_warn_fn fn, void *ctx)
{
    const dm_response *R = &d->responses[r];
    const size_t NS = d->n_slots;
    unsigned char *covered = flags, *warned = flags + NS, *says = flags + 2 * NS;
    memset(flags, 0, 2 * NS);
    parley_status st = PARLEY_OK;
    for (int plain = 0; plain < 2; plain++)
        for (size_t i = 0; i < R->n_vars && st == PARLEY_OK; i++) {
            const dm_variation *v = &R->vars[i];
            if ((v->n_conds == 0) != plain)
                continue;
            memset(says, 0, NS);
            dm_template_slots(d, v->text, says);
            for (size_t k = 0; k < NS && st == PARLEY_OK; k++) {
                int cond = condition_on(v, (int)k);
                if (!says[k] || warned[k] || cond == 1 || (cond == -1 && covered[k]))
                    continue;
                const use *unset = NULL;
                for (size_t j = 0; j < l->n && !unset; j++)
                    if (l->u[j].response == r && (cond == 0 || !sure(d, &l->u[j], (int)k)))
                        unset = &l->u[j];
                if (unset) {
                    warned[k] = 1;
                    st = warn(d, R, v, (int)k, unset, fn, ctx);
                }
            }
            int only = v->n_conds ? (int)v->conds[0].slot : -1;
            for (size_t c = 0; c < v->n_conds; c++)
                if (v->conds[c].value || v->conds[c].slot != only)
                    only = -1;
            if (only >= 0)
                covered[only] = 1;
        }
    return st;
}

parley_status dm_domain_lint(const dm_domain *d, dm_warn_fn fn, void *ctx)
{
    uses l = { 0 };
    unsigned char *flags = pl_malloc(3 * d->n_slots + 1), *used = pl_calloc(d->n_responses + 1, 1);
    parley_status st = PARLEY_OK;
    collect(d, &l);
    if (!flags || !used || l.failed)
        st = pl_nomem("judging the domain's responses");
    for (size_t j = 0; st == PARLEY_OK && j < l.n; j++)
        used[l.u[j].response] = 1;
    for (size_t r = 0; st == PARLEY_OK && r < d->n_responses; r++)
        if (used[r])
            st = judge(d, (int)r, &l, flags, fn, ctx);
    pl_free(l.u);
    pl_free(flags);
    pl_free(used);
    return st;
}
