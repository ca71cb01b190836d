/* action_server.c — actions answered by an action server: Rasa's protocol, both ways.
 *
 * When a turn reaches an action with an endpoint (and no hook of the application), the
 * action's answer is either already in the turn's input (dm_turn_in.results, in call
 * order), and is applied here, or the turn's run ends with the request it needs: the
 * tracker (sender, slots, the latest message with its intent and entities, the active form)
 * and the domain, as Rasa's action server reads them. Applying an answer: its `events`
 * (`slot`, `reset_slots`, `followup`; other kinds are logged and left out), then its
 * `responses` (`text`, or `response` rendered from the domain's response with the given
 * variables in place of the slots of the same names); a followup action then runs like any
 * action, in the same turn. A failed call says the action's fallback reply. Sending the
 * request and waiting for it is the caller's (dialog_node.c, over action_http.c): nothing
 * here blocks.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "dialog/dialog_impl.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/json.h"

/* Followups one turn may chain: a server that names its own action again ends here. */
enum { MAX_FOLLOWUPS = 10 };

static parley_status json_text(cJSON *j, const char *what, char **out)
{
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    *out = text ? pl_strdup(text) : NULL;
    cJSON_free(text);
    return *out ? PARLEY_OK : pl_nomem("%s", what);
}

static cJSON *name_list(char *const *names, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < n; i++)
        if (!cJSON_AddItemToArray(arr, cJSON_CreateString(names[i]))) {
            cJSON_Delete(arr);
            return NULL;
        }
    return arr;
}

/* Adds item (NULL: a failed allocation) to obj under key, or deletes it: 0 when out of memory. */
static int add(cJSON *obj, const char *key, cJSON *item)
{
    if (item && obj && cJSON_AddItemToObject(obj, key, item))
        return 1;
    cJSON_Delete(item);
    return 0;
}

parley_status dm_domain_json(const dm_domain *d, char **out)
{
    static const char *const types[] = { "text", "float", "categorical" };
    cJSON *j = cJSON_CreateObject(), *ents = cJSON_CreateArray(), *slots = cJSON_CreateObject(),
          *resps = cJSON_CreateObject();
    int ok = add(j, "intents", name_list(d->intents, d->n_intents));
    ok = add(j, "entities", ents) && ok;
    ok = add(j, "slots", slots) && ok;
    ok = add(j, "responses", resps) && ok;
    for (size_t k = 0; ok && k < d->n_slots; k++) {
        const dm_slot_def *s = &d->slots[k];
        cJSON *o = cJSON_AddObjectToObject(slots, s->name);
        ok = o && cJSON_AddStringToObject(o, "type", s->list ? "list" : types[s->type]) &&
             (s->type != DM_SLOT_CATEGORICAL ||
              add(o, "values", name_list(s->values, s->n_values))) &&
             (!s->entity || cJSON_AddItemToArray(ents, cJSON_CreateString(s->entity)));
    }
    for (size_t r = 0; ok && r < d->n_responses; r++) {
        cJSON *vars = cJSON_AddArrayToObject(resps, d->responses[r].name);
        for (size_t v = 0; ok && vars && v < d->responses[r].n_vars; v++) {
            cJSON *o = cJSON_CreateObject();
            ok = cJSON_AddItemToArray(vars, o) &&
                 cJSON_AddStringToObject(o, "text", d->responses[r].vars[v].text);
        }
        ok = ok && vars;
    }
    char **names = ok ? pl_calloc(d->n_actions ? d->n_actions : 1, sizeof *names) : NULL;
    for (size_t a = 0; names && a < d->n_actions; a++)
        names[a] = d->actions[a].name;
    cJSON *actions = names ? name_list(names, d->n_actions) : NULL;
    pl_free(names);
    if (!add(j, "actions", actions)) {
        cJSON_Delete(j);
        return pl_nomem("the domain for action servers");
    }
    return json_text(j, "the domain for action servers", out);
}

/* A slot's value as the tracker holds it: a list slot's values as an array, else text. */
static cJSON *slot_json(const dm_slot_def *s, const char *value)
{
    if (!value)
        return cJSON_CreateNull();
    if (!s->list)
        return cJSON_CreateString(value);
    cJSON *arr = cJSON_CreateArray();
    for (const char *p = value; arr && *p;) {
        const char *end = strstr(p, ", ");
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *one = pl_malloc(n + 1);
        cJSON *item = one ? (memcpy(one, p, n), one[n] = '\0', cJSON_CreateString(one)) : NULL;
        pl_free(one);
        if (!cJSON_AddItemToArray(arr, item)) {
            cJSON_Delete(arr);
            return NULL;
        }
        p += n + (end ? 2 : 0);
    }
    return arr;
}

/* The request for action `def`: Rasa's {next_action, sender_id, tracker, domain, version}. */
static parley_status request(const dm_ctx *c, const dm_action_def *def, char **out)
{
    const dm_turn_in *in = c->in;
    cJSON *j = cJSON_CreateObject();
    cJSON *t = cJSON_AddObjectToObject(j, "tracker");
    cJSON *slots = cJSON_AddObjectToObject(t, "slots");
    cJSON *msg = cJSON_AddObjectToObject(t, "latest_message");
    cJSON *intent = cJSON_AddObjectToObject(msg, "intent");
    cJSON *ents = cJSON_AddArrayToObject(msg, "entities");
    cJSON *loop = cJSON_AddObjectToObject(t, "active_loop");
    int ok = j && t && slots && msg && intent && ents && loop &&
             cJSON_AddStringToObject(j, "next_action", def->name) &&
             cJSON_AddStringToObject(j, "sender_id", in->user_id) &&
             cJSON_AddStringToObject(j, "version", PARLEY_VERSION) &&
             cJSON_AddStringToObject(t, "sender_id", in->user_id) &&
             cJSON_AddStringToObject(t, "session_id", c->session_id) &&
             cJSON_AddStringToObject(msg, "text", in->text ? in->text : "") &&
             cJSON_AddStringToObject(intent, "name", in->intent ? in->intent : "") &&
             cJSON_AddNumberToObject(intent, "confidence", in->confidence) &&
             cJSON_AddStringToObject(t, "latest_action_name", "action_listen") &&
             cJSON_AddArrayToObject(t, "events") && cJSON_AddFalseToObject(t, "paused") &&
             cJSON_AddNullToObject(t, "followup_action") &&
             cJSON_AddStringToObject(t, "latest_input_channel", "parley") &&
             (c->form < 0 || cJSON_AddStringToObject(loop, "name", c->d->forms[c->form].name)) &&
             add(j, "domain", cJSON_CreateRaw(c->dm->domain_json));
    for (size_t k = 0; ok && k < c->d->n_slots; k++)
        ok = add(slots, c->d->slots[k].name, slot_json(&c->d->slots[k], c->values[k]));
    for (size_t i = 0; ok && i < in->n_entities; i++) {
        cJSON *e = cJSON_CreateObject();
        ok = cJSON_AddItemToArray(ents, e) &&
             cJSON_AddStringToObject(e, "entity", in->entities[i].name) &&
             cJSON_AddStringToObject(e, "value", in->entities[i].value);
    }
    if (!ok) {
        cJSON_Delete(j);
        return pl_nomem("a request to an action server");
    }
    return json_text(j, "a request to an action server", out);
}

/* A JSON scalar as slot text into *out (owned by the caller); PARLEY_ERR_INVALID_ARG, without
 * a detail, for what is not a scalar. */
static parley_status scalar_text(const cJSON *v, char **out)
{
    char buf[64];
    if (cJSON_IsNumber(v))
        snprintf(buf, sizeof buf, "%.15g", v->valuedouble);
    else if (cJSON_IsBool(v))
        snprintf(buf, sizeof buf, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (!cJSON_IsString(v))
        return PARLEY_ERR_INVALID_ARG;
    *out = pl_strdup(cJSON_IsString(v) ? v->valuestring : buf);
    return *out ? PARLEY_OK : pl_nomem("a slot value");
}

/* A `slot` event: sets the slot as an application action would (null clears it); a value the
 * slot refuses, or a slot the domain lacks, is logged and left out. */
static parley_status slot_event(dm_ctx *c, const char *action, const cJSON *e)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(e, "value");
    int k = cJSON_IsString(name) ? dm_domain_slot(c->d, name->valuestring) : -1;
    if (k < 0) {
        pl_log(PARLEY_LOG_WARN, "dialog: action '%s': its server set slot '%s', which %s lacks",
               action, cJSON_IsString(name) ? name->valuestring : "(no name)", c->d->file);
        return PARLEY_OK;
    }
    if (!value || cJSON_IsNull(value)) {
        pl_free(c->values[k]);
        c->values[k] = NULL;
        return PARLEY_OK;
    }
    int n = cJSON_IsArray(value) ? cJSON_GetArraySize(value) : 1;
    char **raw = pl_calloc(n ? (size_t)n : 1, sizeof *raw);
    if (!raw)
        return pl_nomem("a slot value");
    parley_status st = n == 0 ? PARLEY_ERR_INVALID_ARG : PARLEY_OK;
    for (int i = 0; i < n && st == PARLEY_OK; i++)
        st = scalar_text(cJSON_IsArray(value) ? cJSON_GetArrayItem(value, i) : value, &raw[i]);
    int bad = st == PARLEY_ERR_INVALID_ARG; /* not text, a number or a truth value */
    if (st == PARLEY_OK)
        st = dm_fill_slot(c, k, (const char *const *)raw, (size_t)n);
    for (int i = 0; i < n; i++)
        pl_free(raw[i]);
    pl_free(raw);
    if (st == PARLEY_ERR_NOMEM)
        return st;
    if (st != PARLEY_OK)
        pl_log(PARLEY_LOG_WARN,
               "dialog: action '%s': slot '%s' refuses the value its server set%s%s", action,
               c->d->slots[k].name, bad ? "" : ": ", bad ? "" : parley_errmsg());
    return PARLEY_OK;
}

/* A `response` by name, with the answer's other members as the values of the slots they
 * name (the domain's templates name only slots). */
static parley_status say_response(dm_ctx *c, const char *action, const cJSON *r, const char *name)
{
    int ri = -1;
    for (size_t i = 0; i < c->d->n_responses && ri < 0; i++)
        if (!strcmp(c->d->responses[i].name, name))
            ri = (int)i;
    if (ri < 0) {
        pl_log(PARLEY_LOG_WARN,
               "dialog: action '%s': its server asked for response '%s', which %s lacks", action,
               name, c->d->file);
        return PARLEY_OK;
    }
    size_t n = c->d->n_slots ? c->d->n_slots : 1;
    char **values = pl_malloc(n * sizeof *values);
    char **own = pl_calloc(n, sizeof *own);
    parley_status st = values && own ? PARLEY_OK : pl_nomem("a response's variables");
    for (size_t k = 0; st == PARLEY_OK && k < c->d->n_slots; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, c->d->slots[k].name);
        values[k] = c->values[k];
        if (cJSON_IsNull(v))
            values[k] = NULL;
        else if (v && (st = scalar_text(v, &own[k])) == PARLEY_OK)
            values[k] = own[k];
        else if (st == PARLEY_ERR_INVALID_ARG)
            st = PARLEY_OK; /* not a scalar: the slot's own value */
    }
    if (st == PARLEY_OK)
        st = dm_say_values(c, ri, values);
    for (size_t k = 0; own && k < c->d->n_slots; k++)
        pl_free(own[k]);
    pl_free(own);
    pl_free(values);
    return st;
}

/* Parses an answer and checks its shape: *out owned by the caller (cJSON_Delete) on success;
 * PARLEY_ERR_FORMAT for an answer that is not one to apply, PARLEY_ERR_NOMEM as such. */
static parley_status parse_answer(const char *body, cJSON **out)
{
    static const char *const lists[] = { "events", "responses" };
    cJSON *j = NULL;
    parley_status st = pl_json_parse(body, strlen(body), "the answer", &j);
    if (st != PARLEY_OK)
        return st;
    const char *why = cJSON_IsObject(j) ? NULL : "not a JSON object";
    for (int l = 0; !why && l < 2; l++) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, lists[l]), *e;
        if (arr && !cJSON_IsArray(arr) && !cJSON_IsNull(arr))
            why = l ? "`responses` is not an array" : "`events` is not an array";
        const cJSON *items = cJSON_IsArray(arr) ? arr : NULL;
        cJSON_ArrayForEach(e, items)
        {
            if (!cJSON_IsObject(e))
                why = l ? "a response is not an object" : "an event is not an object";
        }
    }
    if (why) {
        cJSON_Delete(j);
        return pl_fail(PARLEY_ERR_FORMAT, "the answer is %s", why);
    }
    *out = j;
    return PARLEY_OK;
}

parley_status dm_action_answer_check(const char *body)
{
    cJSON *j = NULL;
    parley_status st = parse_answer(body, &j);
    cJSON_Delete(j);
    return st;
}

static parley_status say_fallback(dm_ctx *c, const dm_action_def *def)
{
    return dm_say(c, def->fallback >= 0 ? def->fallback : c->d->fallback);
}

/* Applies a checked answer: events, then responses, then the followup action. */
static parley_status apply(dm_ctx *c, const dm_action_def *def, const cJSON *j)
{
    const cJSON *e, *r;
    int followup = -1;
    parley_status st = PARLEY_OK;
    unsigned said = c->parts;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "events"))
    {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(e, "event");
        const char *k = cJSON_IsString(kind) ? kind->valuestring : "";
        if (!strcmp(k, "slot")) {
            if ((st = slot_event(c, def->name, e)) != PARLEY_OK)
                return st;
        } else if (!strcmp(k, "reset_slots")) {
            for (size_t s = 0; s < c->d->n_slots; s++) {
                pl_free(c->values[s]);
                c->values[s] = NULL;
            }
        } else if (!strcmp(k, "followup")) {
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
            followup = cJSON_IsString(name) ? dm_domain_action(c->d, name->valuestring) : -1;
            if (followup < 0)
                pl_log(PARLEY_LOG_WARN,
                       "dialog: action '%s': its followup '%s' is not an action of %s", def->name,
                       cJSON_IsString(name) ? name->valuestring : "(no name)", c->d->file);
        } else {
            pl_log(PARLEY_LOG_INFO,
                   "dialog: action '%s': event '%s' of its server is not one "
                   "parley applies: left out",
                   def->name, k);
        }
    }
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "responses"))
    {
        const cJSON *text = cJSON_GetObjectItemCaseSensitive(r, "text");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(r, "response");
        if (!name)
            name = cJSON_GetObjectItemCaseSensitive(r, "template"); /* Rasa 2's name */
        if (cJSON_IsString(name)) {
            st = say_response(c, def->name, r, name->valuestring);
        } else if (cJSON_IsString(text)) {
            /* The server's text is final: said as written, no {slot} in it filled. */
            if (c->parts++ > 0)
                st = dm_text_puts(&c->reply, " ");
            if (st == PARLEY_OK)
                st = dm_text_puts(&c->reply, text->valuestring);
        } else {
            pl_log(PARLEY_LOG_INFO,
                   "dialog: action '%s': a response of its server has neither "
                   "text nor response: left out",
                   def->name);
        }
        if (st != PARLEY_OK)
            return st;
    }
    if (c->parts == said && followup < 0 && def->reply >= 0)
        st = dm_say(c, def->reply);
    if (st != PARLEY_OK || followup < 0)
        return st;
    if (c->followups++ >= MAX_FOLLOWUPS) {
        pl_log(PARLEY_LOG_WARN,
               "dialog: action '%s': more than %d followups in one turn: "
               "followup '%s' left out",
               def->name, MAX_FOLLOWUPS, c->d->actions[followup].name);
        return PARLEY_OK;
    }
    return dm_run_action(c, followup, -1);
}

parley_status dm_run_remote(dm_ctx *c, int a)
{
    const dm_action_def *def = &c->d->actions[a];
    size_t k = c->calls++;
    if (k >= c->in->n_results) {
        /* c->call is set whole or not at all: dm_turn hands out a call only when it is. */
        dm_action_call call = { pl_strdup(def->name), pl_strdup(def->endpoint), NULL, 0 };
        parley_status st = call.action && call.url ? request(c, def, &call.body)
                                                   : pl_nomem("a call to an action server");
        if (st != PARLEY_OK) {
            pl_free(call.action);
            pl_free(call.url);
            return st;
        }
        c->call = call;
        return pl_fail(PARLEY_ERR_UNSUPPORTED, "the turn waits for action '%s' at %s", def->name,
                       def->endpoint);
    }
    const dm_action_result *r = &c->in->results[k];
    if (!r->action || strcmp(r->action, def->name)) {
        /* The replay took another way (the user's context changed between the runs). */
        pl_log(PARLEY_LOG_WARN,
               "dialog: action '%s': the answer in hand is for '%s': the "
               "fallback reply",
               def->name, r->action ? r->action : "(none)");
        return say_fallback(c, def);
    }
    cJSON *j = NULL;
    parley_status st = r->body ? parse_answer(r->body, &j) : PARLEY_ERR_FORMAT;
    if (st == PARLEY_ERR_FORMAT) /* the call failed, or its answer is not one to apply */
        return say_fallback(c, def);
    if (st != PARLEY_OK)
        return st;
    st = apply(c, def, j);
    cJSON_Delete(j);
    return st;
}
