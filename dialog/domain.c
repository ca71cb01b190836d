/* domain.c — reads domain.yaml into a checked dm_domain.
 *
 * The file is parsed whole with sdk/base/yaml_doc.h, then read section by section in an
 * order where every section only refers to sections already read: intents, slots,
 * responses (their templates name slots), actions, forms, rules, and the small settings.
 * Each complaint names the YAML node it is about. This file decides nothing about a
 * conversation; dialog.c does.
 */
#include <stdio.h>
#include <string.h>

#include "dialog/domain.h"
#include "dialog/slot_value.h"
#include "dialog/template.h"
#include "sdk/base/alloc.h"
#include "sdk/base/yaml_doc.h"

typedef struct loader {
    dm_domain *d;
    const dm_known *known;
    const yd_node *root;
    pl_names known_intents, known_entities; /* the NLU model's labels, when given */
    pl_names entities;                      /* the `entities:` list, when given */
    /* While a form loads, by slot index: the slot's place among the form's required slots
     * (-1: not required), and its ask: and invalid: entries (NULL: none). */
    int *required_at;
    const yd_node **ask_of, **invalid_of;
} loader;

static parley_status nomem(void)
{
    return pl_nomem("loading the domain");
}

static parley_status dup_str(const char *s, char **out)
{
    *out = pl_strdup(s);
    return *out ? PARLEY_OK : nomem();
}

/* A non-empty name written as a scalar. */
static parley_status name_of(const yd_node *n, const char *what, const char **out)
{
    parley_status st = yd_str(n, out);
    if (st != PARLEY_OK)
        return st;
    if (!**out)
        return yd_fail(n, PARLEY_ERR_CONFIG, "%s must not be empty", what);
    return PARLEY_OK;
}

/* A table of n names from a list (borrowed; a repeated name is kept once). */
static parley_status list_table(pl_names *t, const char *const *list, size_t n)
{
    parley_status st = pl_names_reserve(t, n);
    for (size_t i = 0; st == PARLEY_OK && i < n; i++)
        pl_names_add(t, list[i], strlen(list[i]), (int)i);
    return st;
}

/* "a, b, c" of a list of names, cut short with "..." to fit buf. */
static const char *join(char *buf, size_t cap, const char *const *list, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", list[i]);
    if (used >= cap && cap > 4)
        memcpy(buf + cap - 4, "...", 4);
    return buf;
}

/* The index of name in t (NULL: none), or -1. */
static int lookup(const pl_names *t, const char *name)
{
    return name ? pl_names_find(t, name, strlen(name)) : -1;
}

int dm_domain_intent(const dm_domain *d, const char *name)
{
    return lookup(&d->intent_ix, name);
}

int dm_domain_slot(const dm_domain *d, const char *name)
{
    return lookup(&d->slot_ix, name);
}

int dm_domain_action(const dm_domain *d, const char *name)
{
    return lookup(&d->action_ix, name);
}

int dm_domain_form(const dm_domain *d, const char *name)
{
    return lookup(&d->form_ix, name);
}

static int find_response(const dm_domain *d, const char *name)
{
    return lookup(&d->response_ix, name);
}

/* Copies name into *copy, the array entry number *count (which it counts, so the domain
 * frees it), and adds it to table t. *earlier (unless NULL: the keys of a mapping, which
 * yaml_doc keeps unique) is the entry an earlier copy of the same name has, or -1. */
static parley_status add_name(pl_names *t, const char *name, char **copy, size_t *count,
                              int *earlier)
{
    parley_status st = dup_str(name, copy);
    if (st != PARLEY_OK)
        return st;
    int e = pl_names_add(t, *copy, strlen(*copy), (int)(*count)++);
    if (earlier)
        *earlier = e;
    return PARLEY_OK;
}

/* Resolves a reference to an intent, slot, response, form or action declared earlier. */
typedef int (*find_fn)(const dm_domain *d, const char *name);

parley_status dm_domain_problem(const dm_domain *d, parley_status st)
{
    if (!d->problems || st != PARLEY_ERR_CONFIG)
        return st;
    d->problems->fn(d->problems->ctx, parley_errmsg());
    d->problems->count++;
    return PARLEY_OK;
}

/* The name of the kind `find` looks up that is nearest to `name`, or NULL (yd_nearest). */
static const char *nearest(const dm_domain *d, find_fn find, const char *name)
{
    size_t n = find == dm_domain_intent   ? d->n_intents
               : find == dm_domain_slot   ? d->n_slots
               : find == dm_domain_form   ? d->n_forms
               : find == dm_domain_action ? d->n_actions
                                          : d->n_responses;
    const char **names = pl_malloc((n ? n : 1) * sizeof *names);
    if (!names)
        return NULL; /* no suggestion rather than another error */
    for (size_t i = 0; i < n; i++)
        names[i] = find == dm_domain_intent   ? d->intents[i]
                   : find == dm_domain_slot   ? d->slots[i].name
                   : find == dm_domain_form   ? d->forms[i].name
                   : find == dm_domain_action ? d->actions[i].name
                                              : d->responses[i].name;
    const char *near = yd_nearest(name, names, n);
    pl_free(names);
    return near;
}

/* *out: the index of the name n gives, or -1 after reporting it unknown to d->problems (the
 * caller then goes on without it). */
static parley_status ref(const dm_domain *d, const yd_node *n, find_fn find, const char *what,
                         const char *section, int *out)
{
    const char *name;
    parley_status st = name_of(n, what, &name);
    if (st != PARLEY_OK)
        return st;
    *out = find(d, name);
    if (*out >= 0)
        return PARLEY_OK;
    const char *near = nearest(d, find, name);
    return dm_domain_problem(d,
                             yd_fail(n, PARLEY_ERR_CONFIG, "unknown %s '%s' (not under %s:)%s%s%s",
                                     what, name, section, near ? "; did you mean '" : "",
                                     near ? near : "", near ? "'?" : ""));
}

/* yd_check_keys, whose unknown key the load goes on after (dm_domain_problem). */
static parley_status check_keys(const dm_domain *d, const yd_node *map, const char *const *allowed)
{
    return dm_domain_problem(d, yd_check_keys(map, allowed));
}

/* A sequence of intent names into a new array. */
static parley_status intent_list(const dm_domain *d, const yd_node *n, int **out, size_t *n_out)
{
    parley_status st = yd_expect(n, YD_SEQ, "a list of intents");
    if (st != PARLEY_OK)
        return st;
    *out = pl_calloc(n->n ? n->n : 1, sizeof **out);
    if (!*out)
        return nomem();
    *n_out = n->n;
    for (size_t i = 0; i < n->n; i++)
        if ((st = ref(d, n->items[i], dm_domain_intent, "intent", "intents", &(*out)[i])) !=
            PARLEY_OK)
            return st;
    return PARLEY_OK;
}

/* ---- intents ------------------------------------------------------------------------- */

static parley_status load_intents(loader *L, const yd_node *n)
{
    dm_domain *d = L->d;
    parley_status st = yd_expect(n, YD_SEQ, "intents");
    if (st != PARLEY_OK)
        return st;
    if (n->n == 0)
        return yd_fail(n, PARLEY_ERR_CONFIG, "intents: lists no intent");
    d->intents = pl_calloc(n->n, sizeof *d->intents);
    if (!d->intents)
        return nomem();
    if ((st = pl_names_reserve(&d->intent_ix, n->n)) != PARLEY_OK)
        return st;
    for (size_t i = 0; i < n->n; i++) {
        const char *name;
        int earlier;
        if ((st = name_of(n->items[i], "an intent name", &name)) != PARLEY_OK ||
            (st = add_name(&d->intent_ix, name, &d->intents[i], &d->n_intents, &earlier)) !=
                    PARLEY_OK)
            return st;
        if (earlier >= 0)
            return yd_fail(n->items[i], PARLEY_ERR_CONFIG, "intent '%s' is listed twice", name);
        if (L->known_intents.entry && lookup(&L->known_intents, name) < 0) {
            char buf[400];
            const char *near = yd_nearest(name, L->known->intents, L->known->n_intents);
            st = yd_fail(n->items[i], PARLEY_ERR_CONFIG,
                         "intent '%s' is not one the NLU model knows (its intents: %s)%s%s%s", name,
                         join(buf, sizeof buf, L->known->intents, L->known->n_intents),
                         near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
            if ((st = dm_domain_problem(L->d, st)) != PARLEY_OK)
                return st;
        }
    }
    return PARLEY_OK;
}

/* ---- slots ----------------------------------------------------------------------------- */

static parley_status load_synonyms(dm_slot_def *s, const yd_node *n)
{
    parley_status st = yd_expect(n, YD_MAP, "synonyms (variant: canonical value)");
    if (st != PARLEY_OK)
        return st;
    s->synonyms = pl_calloc(n->n ? n->n : 1, sizeof *s->synonyms);
    if (!s->synonyms)
        return nomem();
    if ((st = pl_names_reserve(&s->synonym_ix, n->n)) != PARLEY_OK)
        return st;
    for (size_t i = 0; i < n->n; i++) {
        const char *to;
        if ((st = name_of(n->items[i], "a synonym's value", &to)) != PARLEY_OK)
            return st;
        dm_synonym *y = &s->synonyms[s->n_synonyms++];
        y->from = dm_words(n->keys[i]->str, 1);
        if (!y->from || (st = dup_str(to, &y->to)) != PARLEY_OK)
            return y->from ? st : nomem();
        if (pl_names_add(&s->synonym_ix, y->from, strlen(y->from), (int)i) >= 0)
            return yd_fail(n->keys[i], PARLEY_ERR_CONFIG,
                           "synonym '%s' is listed twice (case and spacing do not count)",
                           n->keys[i]->str);
        /* The canonical text must itself be acceptable, or the synonym could never work. */
        char *v = NULL;
        st = dm_slot_accept(s, to, &v);
        pl_free(v);
        if (st == PARLEY_ERR_INVALID_ARG || st == PARLEY_ERR_UNSUPPORTED) {
            char why[300];
            snprintf(why, sizeof why, "%s", parley_errmsg());
            return yd_fail(n->items[i], PARLEY_ERR_CONFIG, "synonym of '%s': %s", n->keys[i]->str,
                           why);
        }
        if (st != PARLEY_OK)
            return st;
    }
    return PARLEY_OK;
}

/* A categorical slot's values, each once (compared as dm_words(value, 1) compares). */
static parley_status load_values(dm_slot_def *s, const yd_node *n)
{
    parley_status st = yd_expect(n, YD_SEQ, "values");
    if (st != PARLEY_OK)
        return st;
    if (n->n == 0)
        return yd_fail(n, PARLEY_ERR_CONFIG, "values: lists no value");
    s->values = pl_calloc(n->n, sizeof *s->values);
    s->folded = pl_calloc(n->n, sizeof *s->folded);
    if (!s->values || !s->folded)
        return nomem();
    if ((st = pl_names_reserve(&s->value_ix, n->n)) != PARLEY_OK)
        return st;
    for (size_t i = 0; i < n->n; i++) {
        const yd_node *v = n->items[i];
        const char *str;
        if ((st = name_of(v, "a value", &str)) != PARLEY_OK)
            return st;
        if (v->len > DM_SLOT_VALUE_MAX)
            return yd_fail(v, PARLEY_ERR_CONFIG,
                           "a value of %zu bytes is longer than the %d a slot value may have",
                           v->len, DM_SLOT_VALUE_MAX);
        if ((st = dup_str(str, &s->values[i])) != PARLEY_OK)
            return st;
        s->n_values++;
        if (!(s->folded[i] = dm_words(str, 1)))
            return nomem();
        int earlier = pl_names_add(&s->value_ix, s->folded[i], strlen(s->folded[i]), (int)i);
        if (earlier >= 0)
            return yd_fail(v, PARLEY_ERR_CONFIG,
                           "value '%s' is listed twice (as '%s'; case and spacing do not count)",
                           str, s->values[earlier]);
    }
    return PARLEY_OK;
}

static parley_status load_slot(loader *L, dm_slot_def *s, const yd_node *key, const yd_node *n)
{
    static const char *const keys[] = { "type",      "values",  "synonyms", "entity",
                                        "filled_by", "list",    "min",      "max",
                                        "integer",   "pattern", NULL };
    parley_status st;
    if (yd_is_null(n))
        n = NULL;
    else if ((st = yd_expect(n, YD_MAP, "a slot")) != PARLEY_OK ||
             (st = check_keys(L->d, n, keys)) != PARLEY_OK)
        return st;
    s->min = -1e300;
    s->max = 1e300;
    const yd_node *v;
    const char *str;
    if ((v = yd_get(n, "type"))) {
        if ((st = yd_str(v, &str)) != PARLEY_OK)
            return st;
        if (!strcmp(str, "text"))
            s->type = DM_SLOT_TEXT;
        else if (!strcmp(str, "number") || !strcmp(str, "float"))
            s->type = DM_SLOT_NUMBER;
        else if (!strcmp(str, "categorical"))
            s->type = DM_SLOT_CATEGORICAL;
        else
            return yd_fail(v, PARLEY_ERR_CONFIG,
                           "unknown slot type '%s' (expected text, number or categorical)", str);
    }
    const yd_node *values = yd_get(n, "values");
    if (s->type == DM_SLOT_CATEGORICAL) {
        if (!values)
            return yd_fail(key, PARLEY_ERR_CONFIG,
                           "categorical slot '%s' needs values: (the allowed values)", s->name);
        if ((st = load_values(s, values)) != PARLEY_OK)
            return st;
    } else if (values) {
        return yd_fail(values, PARLEY_ERR_CONFIG, "values: is only for categorical slots");
    }
    if (s->type == DM_SLOT_NUMBER) {
        double lo = s->min, hi = s->max;
        if ((v = yd_get(n, "min")) && (st = yd_double(v, -1e300, 1e300, &lo)) != PARLEY_OK)
            return st;
        if ((v = yd_get(n, "max")) && (st = yd_double(v, lo, 1e300, &hi)) != PARLEY_OK)
            return st;
        s->min = lo;
        s->max = hi;
        if ((v = yd_get(n, "integer")) && (st = yd_bool(v, &s->integer)) != PARLEY_OK)
            return st;
    } else {
        static const char *const number_only[] = { "min", "max", "integer" };
        for (size_t i = 0; i < 3; i++)
            if ((v = yd_get(n, number_only[i])))
                return yd_fail(v, PARLEY_ERR_CONFIG, "%s: is only for number slots",
                               number_only[i]);
    }
    if ((v = yd_get(n, "pattern"))) {
        if (s->type != DM_SLOT_TEXT)
            return yd_fail(v, PARLEY_ERR_CONFIG, "pattern: is only for text slots");
        if ((st = yd_str(v, &str)) != PARLEY_OK)
            return st;
        size_t where;
        if ((st = pl_pattern_compile(str, v->len, &s->pattern, &where)) == PARLEY_ERR_CONFIG) {
            char why[300];
            snprintf(why, sizeof why, "%s", parley_errmsg());
            return yd_fail_at(v, where, PARLEY_ERR_CONFIG, "pattern: %s", why);
        }
        if (st != PARLEY_OK)
            return st;
    }
    if ((v = yd_get(n, "list")) && (st = yd_bool(v, &s->list)) != PARLEY_OK)
        return st;
    if ((v = yd_get(n, "synonyms")) && (st = load_synonyms(s, v)) != PARLEY_OK)
        return st;

    /* Which entity fills it: the slot's own name unless `entity:` says otherwise, none
     * when `filled_by: action`. */
    int by_action = 0;
    if ((v = yd_get(n, "filled_by"))) {
        if ((st = yd_str(v, &str)) != PARLEY_OK)
            return st;
        if (strcmp(str, "entity") && strcmp(str, "action"))
            return yd_fail(v, PARLEY_ERR_CONFIG, "filled_by: must be entity or action, not '%s'",
                           str);
        by_action = !strcmp(str, "action");
    }
    const yd_node *ent = yd_get(n, "entity");
    if (by_action) {
        if (ent)
            return yd_fail(ent, PARLEY_ERR_CONFIG, "a slot filled_by: action takes no entity:");
        return PARLEY_OK;
    }
    const yd_node *where = ent ? ent : key;
    if (ent && (st = name_of(ent, "an entity name", &str)) != PARLEY_OK)
        return st;
    const char *entity = ent ? str : s->name;
    if (L->entities.entry && lookup(&L->entities, entity) < 0 &&
        (st = dm_domain_problem(
                 L->d, yd_fail(where, PARLEY_ERR_CONFIG,
                               "slot '%s' is filled from entity '%s', which is not under entities:",
                               s->name, entity))) != PARLEY_OK)
        return st;
    if (L->known_entities.entry && lookup(&L->known_entities, entity) < 0) {
        char buf[400];
        st = yd_fail(where, PARLEY_ERR_CONFIG,
                     "slot '%s' is filled from entity '%s', which the NLU model does not tag "
                     "(its slots: %s); say filled_by: action if only actions set it",
                     s->name, entity,
                     join(buf, sizeof buf, L->known->entities, L->known->n_entities));
        if ((st = dm_domain_problem(L->d, st)) != PARLEY_OK)
            return st;
    }
    return dup_str(entity, &s->entity);
}

static parley_status load_slots(loader *L, const yd_node *n, const yd_node *entities)
{
    dm_domain *d = L->d;
    parley_status st = yd_expect(n, YD_MAP, "slots");
    if (st != PARLEY_OK)
        return st;
    if (entities) {
        if ((st = yd_expect(entities, YD_SEQ, "entities")) != PARLEY_OK ||
            (st = pl_names_reserve(&L->entities, entities->n)) != PARLEY_OK)
            return st;
        for (size_t i = 0; i < entities->n; i++)
            if (entities->items[i]->kind == YD_SCALAR)
                pl_names_add(&L->entities, entities->items[i]->str, entities->items[i]->len,
                             (int)i);
    }
    d->slots = pl_calloc(n->n ? n->n : 1, sizeof *d->slots);
    if (!d->slots)
        return nomem();
    if ((st = pl_names_reserve(&d->slot_ix, n->n)) != PARLEY_OK)
        return st;
    for (size_t i = 0; i < n->n; i++) {
        const char *name;
        dm_slot_def *s = &d->slots[i];
        if ((st = name_of(n->keys[i], "a slot name", &name)) != PARLEY_OK ||
            (st = add_name(&d->slot_ix, name, &s->name, &d->n_slots, NULL)) != PARLEY_OK ||
            (st = load_slot(L, s, n->keys[i], n->items[i])) != PARLEY_OK)
            return st;
    }
    return PARLEY_OK;
}

/* ---- responses ----------------------------------------------------------------------- */

/* One condition of a variation: {type: slot, name: SLOT, value: VALUE}, value null for an
 * unset slot; the value as the slot would keep it (a categorical slot's as the domain writes
 * it), so a value the slot refuses can never hold and is an error. */
static parley_status load_condition(const dm_domain *d, const yd_node *n, dm_condition *c)
{
    static const char *const keys[] = { "type", "name", "value", NULL };
    const yd_node *type, *name, *value;
    const char *t, *v;
    parley_status st;
    if ((st = yd_expect(n, YD_MAP, "a condition ({type: slot, name: SLOT, value: VALUE})")) !=
                PARLEY_OK ||
        (st = check_keys(d, n, keys)) != PARLEY_OK ||
        (st = yd_require(n, "type", &type)) != PARLEY_OK || (st = yd_str(type, &t)) != PARLEY_OK ||
        (st = yd_require(n, "name", &name)) != PARLEY_OK ||
        (st = yd_require(n, "value", &value)) != PARLEY_OK)
        return st;
    if (strcmp(t, "slot"))
        return yd_fail(type, PARLEY_ERR_CONFIG,
                       "a condition of type '%s': only conditions on slots are supported "
                       "(type: slot)",
                       t);
    if ((st = ref(d, name, dm_domain_slot, "slot", "slots", &c->slot)) != PARLEY_OK)
        return st;
    if (c->slot < 0 || yd_is_null(value))
        return PARLEY_OK;
    if ((st = yd_str(value, &v)) != PARLEY_OK)
        return st;
    const dm_slot_def *s = &d->slots[c->slot];
    /* A list slot keeps its values joined, which no one value's check accepts. */
    if (s->list)
        return dup_str(v, &c->value);
    if ((st = dm_slot_accept(s, v, &c->value)) == PARLEY_ERR_NOMEM)
        return st;
    if (st != PARLEY_OK)
        return yd_fail(value, PARLEY_ERR_CONFIG, "a condition on slot '%s' that can never hold: %s",
                       s->name, parley_errmsg());
    return PARLEY_OK;
}

/* A variation: a template, or {text: TEMPLATE, condition: [CONDITION, ...]}. */
static parley_status load_variation(dm_domain *d, const yd_node *n, dm_variation *v)
{
    parley_status st;
    const yd_node *t = n, *cond = NULL;
    v->line = n->line;
    v->col = n->col;
    if (n->kind == YD_MAP) {
        static const char *const keys[] = { "text", "condition", NULL };
        if ((st = check_keys(d, n, keys)) != PARLEY_OK ||
            (st = yd_require(n, "text", &t)) != PARLEY_OK)
            return st;
        cond = yd_get(n, "condition");
    }
    if ((st = dm_template_check(d, t)) != PARLEY_OK ||
        (st = dup_str(t->str, &v->text)) != PARLEY_OK)
        return st;
    if (!cond)
        return PARLEY_OK;
    if ((st = yd_expect(cond, YD_SEQ, "a condition (a list of {type: slot, name, value})")) !=
        PARLEY_OK)
        return st;
    if (cond->n == 0)
        return yd_fail(cond, PARLEY_ERR_CONFIG,
                       "an empty condition (leave it out for a plain "
                       "variation)");
    if (!(v->conds = pl_calloc(cond->n, sizeof *v->conds)))
        return nomem();
    for (; v->n_conds < cond->n; v->n_conds++)
        if ((st = load_condition(d, cond->items[v->n_conds], &v->conds[v->n_conds])) != PARLEY_OK) {
            v->n_conds++; /* its value, if any, is freed with the others */
            return st;
        }
    return PARLEY_OK;
}

static parley_status load_response(dm_domain *d, dm_response *r, const yd_node *n)
{
    parley_status st = yd_expect(n, YD_SEQ, "a response (a list of variations)");
    if (st != PARLEY_OK)
        return st;
    if (n->n == 0)
        return yd_fail(n, PARLEY_ERR_CONFIG, "response '%s' has no variation", r->name);
    r->vars = pl_calloc(n->n, sizeof *r->vars);
    if (!r->vars)
        return nomem();
    for (; r->n_vars < n->n; r->n_vars++) {
        dm_variation *v = &r->vars[r->n_vars];
        if ((st = load_variation(d, n->items[r->n_vars], v)) != PARLEY_OK) {
            r->n_vars++; /* freed with the others */
            return st;
        }
        r->n_plain += v->n_conds == 0;
    }
    return PARLEY_OK;
}

static parley_status load_responses(dm_domain *d, const yd_node *n)
{
    parley_status st = yd_expect(n, YD_MAP, "responses");
    if (st != PARLEY_OK)
        return st;
    d->responses = pl_calloc(n->n ? n->n : 1, sizeof *d->responses);
    if (!d->responses)
        return nomem();
    if ((st = pl_names_reserve(&d->response_ix, n->n)) != PARLEY_OK)
        return st;
    for (size_t i = 0; i < n->n; i++) {
        const char *name;
        dm_response *r = &d->responses[i];
        if ((st = name_of(n->keys[i], "a response name", &name)) != PARLEY_OK ||
            (st = add_name(&d->response_ix, name, &r->name, &d->n_responses, NULL)) != PARLEY_OK ||
            (st = load_response(d, r, n->items[i])) != PARLEY_OK)
            return st;
    }
    return PARLEY_OK;
}

/* ---- actions ------------------------------------------------------------------------- */

/* An action server's URL: http:// or https://, checked here so a typo is found at start-up. */
static parley_status endpoint_url(const yd_node *n, char **out)
{
    parley_status st = yd_expect(n, YD_SCALAR, "an endpoint URL");
    if (st != PARLEY_OK)
        return st;
    if (strncmp(n->str, "http://", 7) && strncmp(n->str, "https://", 8))
        return yd_fail(n, PARLEY_ERR_CONFIG, "endpoint '%s' is not an http:// or https:// URL",
                       n->str);
    return dup_str(n->str, out);
}

/* `actions:` is a list of names (Rasa style) or a mapping of name → {reply: RESPONSE,
 * endpoint: URL, fallback: RESPONSE}; `endpoint` (the domain's action_endpoint:, or NULL) is
 * the URL of every action that names neither a reply nor a URL of its own. */
static parley_status load_actions(dm_domain *d, const yd_node *n, const yd_node *endpoint)
{
    parley_status st;
    if (n->kind != YD_SEQ && n->kind != YD_MAP)
        return yd_fail(n, PARLEY_ERR_CONFIG, "actions must be a list of names or a mapping");
    d->actions = pl_calloc(n->n ? n->n : 1, sizeof *d->actions);
    if (!d->actions)
        return nomem();
    if ((st = pl_names_reserve(&d->action_ix, n->n)) != PARLEY_OK)
        return st;
    for (size_t i = 0; i < n->n; i++) {
        const yd_node *name_node = n->kind == YD_MAP ? n->keys[i] : n->items[i];
        const yd_node *body = n->kind == YD_MAP ? n->items[i] : NULL;
        const char *name;
        int earlier;
        dm_action_def *a = &d->actions[i];
        a->reply = -1;
        if ((st = name_of(name_node, "an action name", &name)) != PARLEY_OK ||
            (st = add_name(&d->action_ix, name, &a->name, &d->n_actions, &earlier)) != PARLEY_OK)
            return st;
        if (earlier >= 0)
            return yd_fail(name_node, PARLEY_ERR_CONFIG, "action '%s' is listed twice", name);
        const yd_node *url = NULL;
        a->fallback = -1;
        if (body && !yd_is_null(body)) {
            static const char *const keys[] = { "reply", "endpoint", "fallback", NULL };
            const yd_node *r;
            if ((st = yd_expect(body, YD_MAP, "an action")) != PARLEY_OK ||
                (st = check_keys(d, body, keys)) != PARLEY_OK)
                return st;
            if ((r = yd_get(body, "reply")) &&
                (st = ref(d, r, find_response, "response", "responses", &a->reply)) != PARLEY_OK)
                return st;
            if ((r = yd_get(body, "fallback")) &&
                (st = ref(d, r, find_response, "response", "responses", &a->fallback)) != PARLEY_OK)
                return st;
            url = yd_get(body, "endpoint");
        }
        /* An action with a reply of its own is answered here unless it names its server. */
        if (!url && a->reply < 0)
            url = endpoint;
        if (url && (st = endpoint_url(url, &a->endpoint)) != PARLEY_OK)
            return st;
    }
    return PARLEY_OK;
}

/* ---- forms ----------------------------------------------------------------------------- */

/* {reply: RESPONSE} or {action: ACTION}: what a completed form does. */
static parley_status load_do(dm_domain *d, const yd_node *n, int allow_form, dm_do *out)
{
    static const char *const rule_keys[] = { "rule", "intent",           "reply",    "action",
                                             "form", "last_entity_wins", "in_forms", NULL };
    static const char *const done_keys[] = { "reply", "action", NULL };
    static const char *const what[] = { "reply", "action", "form" };
    const find_fn finds[] = { find_response, dm_domain_action, dm_domain_form };
    static const char *const section[] = { "responses", "actions", "forms" };
    static const char *const noun[] = { "response", "action", "form" };
    const dm_do_kind kinds[] = { DM_DO_REPLY, DM_DO_ACTION, DM_DO_FORM };
    parley_status st = yd_expect(n, YD_MAP, allow_form ? "a rule" : "on_complete");
    if (st != PARLEY_OK || (st = check_keys(d, n, allow_form ? rule_keys : done_keys)) != PARLEY_OK)
        return st;
    out->kind = DM_DO_NONE;
    for (int k = 0; k < 3; k++) {
        const yd_node *v = yd_get(n, what[k]);
        if (!v)
            continue;
        if (k == 2 && !allow_form)
            return yd_fail(v, PARLEY_ERR_CONFIG, "a form cannot start another form on completion");
        if (out->kind != DM_DO_NONE)
            return yd_fail(v, PARLEY_ERR_CONFIG, "give one of reply:, action: or form:, not two");
        out->kind = kinds[k];
        if ((st = ref(d, v, finds[k], noun[k], section[k], &out->index)) != PARLEY_OK)
            return st;
    }
    if (out->kind == DM_DO_NONE)
        return yd_fail(n, PARLEY_ERR_CONFIG,
                       allow_form ? "the rule needs reply:, action: or form:"
                                  : "on_complete needs reply: or action:");
    return PARLEY_OK;
}

/* The response asking for slot k of form f: its ask: entry when given, else
 * utter_ask_<form>_<slot>, else utter_ask_<slot> (Rasa's naming). */
static parley_status form_prompt(const loader *L, const dm_form *f, const yd_node *slot_node, int k,
                                 int *out)
{
    const dm_domain *d = L->d;
    const char *slot = d->slots[k].name;
    if (L->ask_of[k])
        return ref(d, L->ask_of[k], find_response, "response", "responses", out);
    char name[512];
    snprintf(name, sizeof name, "utter_ask_%s_%s", f->name, slot);
    if ((*out = find_response(d, name)) >= 0)
        return PARLEY_OK;
    snprintf(name, sizeof name, "utter_ask_%s", slot);
    if ((*out = find_response(d, name)) >= 0)
        return PARLEY_OK;
    return yd_fail(
            slot_node, PARLEY_ERR_CONFIG,
            "form '%s' has no prompt for slot '%s': add the response %s or ask: {%s: RESPONSE}",
            f->name, slot, name, slot);
}

/* Checks that every key of `map` (ask: or invalid:) is a required slot of form f, and
 * files each value under its slot in of[]. */
static parley_status slot_keys(const loader *L, const dm_form *f, const yd_node *map,
                               const char *what, const yd_node **of)
{
    parley_status st = yd_expect(map, YD_MAP, what);
    if (st != PARLEY_OK)
        return st;
    for (size_t i = 0; i < map->n; i++) {
        int k = dm_domain_slot(L->d, map->keys[i]->str);
        if (k < 0 || L->required_at[k] < 0)
            return yd_fail(map->keys[i], PARLEY_ERR_CONFIG,
                           "'%s' is not a required slot of form '%s'", map->keys[i]->str, f->name);
        of[k] = map->items[i];
    }
    return PARLEY_OK;
}

static parley_status load_confirm(dm_domain *d, dm_form *f, const yd_node *n)
{
    static const char *const keys[] = { "ask", "yes", "no", "on_no", NULL };
    const yd_node *v;
    parley_status st = yd_expect(n, YD_MAP, "confirm");
    if (st != PARLEY_OK || (st = check_keys(d, n, keys)) != PARLEY_OK ||
        (st = yd_require(n, "ask", &v)) != PARLEY_OK ||
        (st = ref(d, v, find_response, "response", "responses", &f->confirm)) != PARLEY_OK)
        return st;
    static const char *const which[2] = { "yes", "no" };
    static const char *const deflt[2] = { "affirm", "deny" };
    for (int k = 0; k < 2; k++) {
        int **list = k ? &f->no_intents : &f->yes_intents;
        size_t *count = k ? &f->n_no : &f->n_yes;
        if ((v = yd_get(n, which[k]))) {
            if ((st = intent_list(d, v, list, count)) != PARLEY_OK)
                return st;
            continue;
        }
        int i = dm_domain_intent(d, deflt[k]);
        if (i < 0)
            return yd_fail(n, PARLEY_ERR_CONFIG,
                           "confirm needs %s: (the intents that answer %s), or an intent '%s'",
                           which[k], which[k], deflt[k]);
        if (!(*list = pl_malloc(sizeof **list)))
            return nomem();
        **list = i;
        *count = 1;
    }
    if ((v = yd_get(n, "on_no")))
        return ref(d, v, find_response, "response", "responses", &f->on_no);
    return PARLEY_OK;
}

static parley_status load_cancel(dm_domain *d, dm_form *f, const yd_node *n)
{
    static const char *const keys[] = { "intents", "reply", NULL };
    const yd_node *v;
    parley_status st = yd_expect(n, YD_MAP, "cancel");
    if (st != PARLEY_OK || (st = check_keys(d, n, keys)) != PARLEY_OK ||
        (st = yd_require(n, "intents", &v)) != PARLEY_OK ||
        (st = intent_list(d, v, &f->cancel_intents, &f->n_cancel)) != PARLEY_OK)
        return st;
    if ((v = yd_get(n, "reply")))
        return ref(d, v, find_response, "response", "responses", &f->on_cancel);
    return PARLEY_OK;
}

/* Loads form f; L's per-slot scratch (required_at, ask_of, invalid_of) is clean before
 * and after. */
static parley_status load_form(loader *L, dm_form *f, const yd_node *n)
{
    dm_domain *d = L->d;
    static const char *const keys[] = { "required_slots", "ask",     "invalid", "on_complete",
                                        "keep_slots",     "confirm", "cancel",  NULL };
    const yd_node *req, *v;
    parley_status st = yd_expect(n, YD_MAP, "a form");
    if (st != PARLEY_OK || (st = check_keys(d, n, keys)) != PARLEY_OK ||
        (st = yd_require(n, "required_slots", &req)) != PARLEY_OK ||
        (st = yd_expect(req, YD_SEQ, "required_slots")) != PARLEY_OK)
        return st;
    f->confirm = f->on_no = f->on_cancel = -1;
    if (req->n == 0)
        return yd_fail(req, PARLEY_ERR_CONFIG, "required_slots: lists no slot");
    f->required = pl_calloc(req->n, sizeof *f->required);
    f->ask = pl_calloc(req->n, sizeof *f->ask);
    f->invalid = pl_calloc(req->n, sizeof *f->invalid);
    if (!f->required || !f->ask || !f->invalid)
        return nomem();
    for (size_t i = 0; i < req->n; i++) {
        int k;
        if ((st = ref(d, req->items[i], dm_domain_slot, "slot", "slots", &k)) != PARLEY_OK)
            return st;
        if (k < 0)
            continue;
        if (L->required_at[k] >= 0)
            return yd_fail(req->items[i], PARLEY_ERR_CONFIG, "slot '%s' is required twice",
                           req->items[i]->str);
        L->required_at[k] = (int)i;
        f->required[f->n_required++] = k;
    }
    const yd_node *ask = yd_get(n, "ask"), *invalid = yd_get(n, "invalid");
    if ((ask && (st = slot_keys(L, f, ask, "ask", L->ask_of)) != PARLEY_OK) ||
        (invalid && (st = slot_keys(L, f, invalid, "invalid", L->invalid_of)) != PARLEY_OK))
        return st;
    for (size_t i = 0; i < f->n_required; i++) {
        int k = f->required[i];
        if ((st = form_prompt(L, f, req->items[i], k, &f->ask[i])) != PARLEY_OK)
            return st;
        char name[512];
        snprintf(name, sizeof name, "utter_invalid_%s", d->slots[k].name);
        f->invalid[i] = find_response(d, name);
        if (L->invalid_of[k] && (st = ref(d, L->invalid_of[k], find_response, "response",
                                          "responses", &f->invalid[i])) != PARLEY_OK)
            return st;
        L->required_at[k] = -1;
        L->ask_of[k] = L->invalid_of[k] = NULL;
    }
    /* Without on_complete the rest of the form can still be checked. */
    if ((st = yd_require(n, "on_complete", &v)) != PARLEY_OK)
        return dm_domain_problem(d, st);
    if ((st = load_do(d, v, 0, &f->on_complete)) != PARLEY_OK)
        return st;
    if ((v = yd_get(n, "keep_slots")) && (st = yd_bool(v, &f->keep_slots)) != PARLEY_OK)
        return st;
    if ((v = yd_get(n, "confirm")) && (st = load_confirm(d, f, v)) != PARLEY_OK)
        return st;
    if ((v = yd_get(n, "cancel")) && (st = load_cancel(d, f, v)) != PARLEY_OK)
        return st;
    return PARLEY_OK;
}

static parley_status load_forms(loader *L, const yd_node *n)
{
    dm_domain *d = L->d;
    parley_status st = yd_expect(n, YD_MAP, "forms");
    if (st != PARLEY_OK)
        return st;
    size_t slots = d->n_slots ? d->n_slots : 1;
    d->forms = pl_calloc(n->n ? n->n : 1, sizeof *d->forms);
    L->required_at = pl_malloc(slots * sizeof *L->required_at);
    L->ask_of = pl_calloc(slots, sizeof *L->ask_of);
    L->invalid_of = pl_calloc(slots, sizeof *L->invalid_of);
    if (!d->forms || !L->required_at || !L->ask_of || !L->invalid_of)
        return nomem();
    for (size_t k = 0; k < slots; k++)
        L->required_at[k] = -1;
    if ((st = pl_names_reserve(&d->form_ix, n->n)) != PARLEY_OK)
        return st;
    /* Names first, so forms may be listed in any order. */
    for (size_t i = 0; i < n->n; i++) {
        const char *name;
        if ((st = name_of(n->keys[i], "a form name", &name)) != PARLEY_OK ||
            (st = add_name(&d->form_ix, name, &d->forms[i].name, &d->n_forms, NULL)) != PARLEY_OK)
            return st;
    }
    for (size_t i = 0; i < n->n; i++)
        if ((st = load_form(L, &d->forms[i], n->items[i])) != PARLEY_OK)
            return st;
    return PARLEY_OK;
}

/* ---- rules and settings ------------------------------------------------------------- */

static parley_status load_rules(dm_domain *d, const yd_node *n)
{
    parley_status st = yd_expect(n, YD_SEQ, "rules");
    if (st != PARLEY_OK)
        return st;
    for (size_t i = 0; i < n->n; i++) {
        const yd_node *r = n->items[i], *v;
        int intent;
        dm_do act;
        if ((st = load_do(d, r, 1, &act)) != PARLEY_OK ||
            (st = yd_require(r, "intent", &v)) != PARLEY_OK ||
            (st = ref(d, v, dm_domain_intent, "intent", "intents", &intent)) != PARLEY_OK)
            return st;
        if (intent < 0)
            continue;
        if ((v = yd_get(r, "rule")) && (st = yd_expect(v, YD_SCALAR, "rule (a name)")) != PARLEY_OK)
            return st;
        dm_rule *rule = &d->rule_of_intent[intent];
        if (rule->act.kind != DM_DO_NONE)
            return yd_fail(r, PARLEY_ERR_CONFIG, "a second rule for intent '%s'",
                           d->intents[intent]);
        rule->act = act;
        rule->in_forms = 1;
        if ((v = yd_get(r, "last_entity_wins")) &&
            (st = yd_bool(v, &rule->last_entity_wins)) != PARLEY_OK)
            return st;
        if ((v = yd_get(r, "in_forms")) && (st = yd_bool(v, &rule->in_forms)) != PARLEY_OK)
            return st;
    }
    return PARLEY_OK;
}

static parley_status load_fallback(dm_domain *d, const yd_node *root)
{
    static const char *const keys[] = { "threshold", "reply", NULL };
    const yd_node *n = yd_get(root, "fallback"), *v;
    parley_status st;
    d->threshold = 0.3;
    d->fallback = find_response(d, "utter_default");
    if (n) {
        if ((st = yd_expect(n, YD_MAP, "fallback")) != PARLEY_OK ||
            (st = check_keys(d, n, keys)) != PARLEY_OK)
            return st;
        if ((v = yd_get(n, "threshold")) && (st = yd_double(v, 0, 1, &d->threshold)) != PARLEY_OK)
            return st;
        if ((v = yd_get(n, "reply")) &&
            (st = ref(d, v, find_response, "response", "responses", &d->fallback)) != PARLEY_OK)
            return st;
    }
    if (d->fallback < 0 && !(n && yd_get(n, "reply"))) /* an unknown one is reported */
        return yd_fail(
                n ? n : root, PARLEY_ERR_CONFIG,
                "no fallback reply: add the response utter_default or fallback: {reply: RESPONSE}");
    return PARLEY_OK;
}

static parley_status load_settings(dm_domain *d, const yd_node *root)
{
    static const char *const keys[] = { "session_expiration_time",
                                        "carry_over_slots_to_new_session", NULL };
    const yd_node *n = yd_get(root, "session_config"), *v;
    parley_status st;
    d->carry_over_slots = 1;
    d->history_limit = 200;
    if (n) {
        double minutes = 0;
        if ((st = yd_expect(n, YD_MAP, "session_config")) != PARLEY_OK ||
            (st = check_keys(d, n, keys)) != PARLEY_OK)
            return st;
        if ((v = yd_get(n, "session_expiration_time")) &&
            (st = yd_double(v, 0, 60.0 * 24 * 365 * 100, &minutes)) != PARLEY_OK)
            return st;
        d->session_expire_ms = (int64_t)(minutes * 60000.0 + 0.5);
        if ((v = yd_get(n, "carry_over_slots_to_new_session")) &&
            (st = yd_bool(v, &d->carry_over_slots)) != PARLEY_OK)
            return st;
    }
    if ((v = yd_get(root, "history_limit"))) {
        long long lim;
        if ((st = yd_int(v, 0, 1000000000, &lim)) != PARLEY_OK)
            return st;
        d->history_limit = (long)lim;
    }
    return PARLEY_OK;
}

/* ---- the whole file -------------------------------------------------------------------- */

static parley_status load_root(loader *L)
{
    static const char *const keys[] = {
        "version",       "intents",         "entities", "slots",    "responses",
        "actions",       "forms",           "rules",    "fallback", "session_config",
        "history_limit", "action_endpoint", NULL
    };
    dm_domain *d = L->d;
    const yd_node *root = L->root, *n;
    parley_status st;
    if (!root)
        return pl_fail(PARLEY_ERR_CONFIG, "%s: the domain file is empty", d->file);
    if ((st = yd_expect(root, YD_MAP, "a domain")) != PARLEY_OK ||
        (st = check_keys(d, root, keys)) != PARLEY_OK)
        return st;
    if ((n = yd_get(root, "version")) && (st = yd_expect(n, YD_SCALAR, "version")) != PARLEY_OK)
        return st;
    if ((st = yd_require(root, "intents", &n)) != PARLEY_OK ||
        (st = load_intents(L, n)) != PARLEY_OK)
        return st;
    d->rule_of_intent = pl_calloc(d->n_intents, sizeof *d->rule_of_intent);
    if (!d->rule_of_intent)
        return nomem();
    if ((n = yd_get(root, "slots")) &&
        (st = load_slots(L, n, yd_get(root, "entities"))) != PARLEY_OK)
        return st;
    if ((st = yd_require(root, "responses", &n)) != PARLEY_OK ||
        (st = load_responses(d, n)) != PARLEY_OK)
        return st;
    /* The domain's action_endpoint is checked even where no action takes it. */
    char *url = NULL;
    if ((n = yd_get(root, "action_endpoint")) && (st = endpoint_url(n, &url)) != PARLEY_OK)
        return st;
    pl_free(url);
    if ((n = yd_get(root, "actions")) &&
        (st = load_actions(d, n, yd_get(root, "action_endpoint"))) != PARLEY_OK)
        return st;
    if ((n = yd_get(root, "forms")) && (st = load_forms(L, n)) != PARLEY_OK)
        return st;
    if ((n = yd_get(root, "rules")) && (st = load_rules(d, n)) != PARLEY_OK)
        return st;
    if ((st = load_fallback(d, root)) != PARLEY_OK || (st = load_settings(d, root)) != PARLEY_OK)
        return st;
    return PARLEY_OK;
}

parley_status dm_domain_load(const char *path, const dm_known *known, dm_domain **out)
{
    return dm_domain_load_all(path, known, NULL, out);
}

parley_status dm_domain_load_all(const char *path, const dm_known *known, dm_problems *problems,
                                 dm_domain **out)
{
    *out = NULL;
    yd_doc *doc = NULL;
    dm_domain *d = pl_calloc(1, sizeof *d);
    if (!d)
        return nomem();
    d->problems = problems;
    loader L = { .d = d, .known = known };
    parley_status st = dup_str(path, &d->file);
    if (st == PARLEY_OK)
        st = yd_parse_file(path, &doc);
    if (st == PARLEY_OK && known && known->intents)
        st = list_table(&L.known_intents, known->intents, known->n_intents);
    if (st == PARLEY_OK && known && known->entities)
        st = list_table(&L.known_entities, known->entities, known->n_entities);
    if (st == PARLEY_OK) {
        L.root = yd_root(doc);
        st = load_root(&L);
    }
    pl_names_free(&L.known_intents);
    pl_names_free(&L.known_entities);
    pl_names_free(&L.entities);
    pl_free(L.required_at);
    pl_free(L.ask_of);
    pl_free(L.invalid_of);
    yd_free(doc);
    if (st != PARLEY_OK && problems) {
        problems->fn(problems->ctx, parley_errmsg());
        problems->count++;
    } else if (st == PARLEY_OK && problems && problems->count) {
        st = pl_fail(PARLEY_ERR_CONFIG, "%s: %d problem(s)", path, problems->count);
    }
    if (st != PARLEY_OK) {
        dm_domain_free(d);
        return st;
    }
    d->problems = NULL;
    *out = d;
    return PARLEY_OK;
}

static void free_slot(dm_slot_def *s)
{
    pl_free(s->name);
    pl_free(s->entity);
    for (size_t i = 0; i < s->n_values; i++) {
        pl_free(s->values[i]);
        pl_free(s->folded[i]);
    }
    pl_free(s->values);
    pl_free(s->folded);
    pl_names_free(&s->value_ix);
    pl_names_free(&s->synonym_ix);
    for (size_t i = 0; i < s->n_synonyms; i++) {
        pl_free(s->synonyms[i].from);
        pl_free(s->synonyms[i].to);
    }
    pl_free(s->synonyms);
    pl_pattern_free(s->pattern);
}

static void free_form(dm_form *f)
{
    pl_free(f->name);
    pl_free(f->required);
    pl_free(f->ask);
    pl_free(f->invalid);
    pl_free(f->yes_intents);
    pl_free(f->no_intents);
    pl_free(f->cancel_intents);
}

void dm_domain_free(dm_domain *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_intents; i++)
        pl_free(d->intents[i]);
    pl_free(d->intents);
    for (size_t i = 0; d->slots && i < d->n_slots; i++)
        free_slot(&d->slots[i]);
    pl_free(d->slots);
    for (size_t i = 0; i < d->n_responses; i++) {
        for (size_t j = 0; j < d->responses[i].n_vars; j++) {
            dm_variation *v = &d->responses[i].vars[j];
            for (size_t k = 0; k < v->n_conds; k++)
                pl_free(v->conds[k].value);
            pl_free(v->conds);
            pl_free(v->text);
        }
        pl_free(d->responses[i].vars);
        pl_free(d->responses[i].name);
    }
    pl_free(d->responses);
    for (size_t i = 0; d->forms && i < d->n_forms; i++)
        free_form(&d->forms[i]);
    pl_free(d->forms);
    for (size_t i = 0; i < d->n_actions; i++) {
        pl_free(d->actions[i].name);
        pl_free(d->actions[i].endpoint);
    }
    pl_free(d->actions);
    pl_free(d->rule_of_intent);
    pl_names_free(&d->intent_ix);
    pl_names_free(&d->slot_ix);
    pl_names_free(&d->response_ix);
    pl_names_free(&d->form_ix);
    pl_names_free(&d->action_ix);
    pl_free(d->file);
    pl_free(d);
}
