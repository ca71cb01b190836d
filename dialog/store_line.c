/* store_line.c — one export line read and checked, or written (see store_line.h).
 *
 * cJSON parses and prints; this file decides what a line may hold: the members
 * `parley store export` writes and nothing else, each string checked as the entry points
 * check what a user sends (pipe_check_field: size, UTF-8, control characters or NUL), each
 * number a whole number JSON keeps exactly (or a finite confidence). A refused line names
 * the member (`history[2].turn`) and the rule; what fits them round-trips byte for byte.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dialog/slot_value.h"
#include "dialog/store_line.h"
#include "parley/pipeline.h"
#include "pipeline/node.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/json.h"

static const char *const user_keys[] = {
    "user",           "session_id", "session_no", "session_start_ms",
    "last_active_ms", "turns",      "form",       "requested_slot",
    "confirming",     "slots",      "history"
};
static const char *const row_keys[] = { "turn",       "session_id", "text",    "nlu_intent",
                                        "confidence", "entities",   "intent",  "action",
                                        "reply",      "form",       "t_in_ms", "t_reply_ms" };

/* A member's name as messages give it: `where` (a history row, or "") then the key. */
static void member_name(char *buf, size_t cap, const char *where, const char *key)
{
    snprintf(buf, cap, "%s%s", where, key);
}

/* Every member of o is one of keys[0, n), none twice, and all of them are there. */
static parley_status check_members(const cJSON *o, const char *where, const char *const *keys,
                                   size_t n)
{
    unsigned seen = 0; /* bit k: keys[k] met */
    for (const cJSON *c = o->child; c; c = c->next) {
        size_t k = 0;
        while (k < n && strcmp(c->string, keys[k]) != 0)
            k++;
        if (k == n)
            return pl_fail(PARLEY_ERR_FORMAT, "%sunknown member \"%.64s\"", where, c->string);
        if (seen & (1u << k))
            return pl_fail(PARLEY_ERR_FORMAT, "member %s%s given twice", where, keys[k]);
        seen |= 1u << k;
    }
    for (size_t k = 0; k < n; k++)
        if (!(seen & (1u << k)))
            return pl_fail(PARLEY_ERR_FORMAT, "member %s%s is missing", where, keys[k]);
    return PARLEY_OK;
}

/* A string member checked by pipe_check_field (min to max bytes, `rules`); null gives NULL
 * where `nullable`. */
static parley_status get_str(const cJSON *o, const char *where, const char *key, size_t min,
                             size_t max, int rules, int nullable, const char **out)
{
    char what[96];
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    member_name(what, sizeof what, where, key);
    *out = NULL;
    if (cJSON_IsNull(v) && nullable)
        return PARLEY_OK;
    if (!cJSON_IsString(v))
        return pl_fail(PARLEY_ERR_FORMAT, "%s: expected a string%s", what,
                       nullable ? " or null" : "");
    *out = v->valuestring;
    return pipe_check_field(what, v->valuestring, strlen(v->valuestring), min, max, rules);
}

/* Names (of a slot, form, intent or action): 1 to DM_LINE_MAX_NAME bytes, no control. */
static parley_status get_name(const cJSON *o, const char *where, const char *key, const char **out)
{
    return get_str(o, where, key, 1, DM_LINE_MAX_NAME, PIPE_NO_CONTROL, 1, out);
}

/* A whole number in [lo, hi]. */
static parley_status get_int(const cJSON *o, const char *where, const char *key, double lo,
                             double hi, int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    *out = 0;
    if (!(d >= lo && d <= hi && d == floor(d)))
        return pl_fail(PARLEY_ERR_FORMAT, "%s%s: expected a whole number in [%.0f, %.0f]", where,
                       key, lo, hi);
    *out = (int64_t)d;
    return PARLEY_OK;
}

/* The NLU's entities as the store keeps them: null, or the text of a JSON array. */
static parley_status get_entities(const cJSON *o, const char *where, const char **out)
{
    char what[96];
    cJSON *arr = NULL;
    parley_status st = get_str(o, where, "entities", 0, DM_LINE_MAX_LONG, PIPE_NO_NUL, 1, out);
    if (st != PARLEY_OK || !*out)
        return st;
    member_name(what, sizeof what, where, "entities");
    if ((st = pl_json_parse(*out, strlen(*out), what, &arr)) == PARLEY_OK && !cJSON_IsArray(arr))
        st = pl_fail(PARLEY_ERR_FORMAT, "%s: expected the text of a JSON array", what);
    cJSON_Delete(arr);
    return st;
}

static parley_status read_row(const cJSON *o, size_t i, uint64_t after, uint64_t turns,
                              dm_turn_row *r)
{
    char where[48];
    int64_t turn = 0;
    snprintf(where, sizeof where, "history[%zu].", i);
    if (!cJSON_IsObject(o))
        return pl_fail(PARLEY_ERR_FORMAT, "history[%zu]: expected an object", i);
    parley_status st = check_members(o, where, row_keys, sizeof row_keys / sizeof *row_keys);
    if (st != PARLEY_OK ||
        (st = get_int(o, where, "turn", (double)after + 1, (double)turns, &turn)) != PARLEY_OK ||
        (st = get_str(o, where, "session_id", 1, PARLEY_MAX_USER_ID_BYTES, PIPE_NO_CONTROL, 0,
                      &r->session_id)) != PARLEY_OK ||
        (st = get_str(o, where, "text", 0, PARLEY_MAX_TEXT_BYTES, PIPE_NO_NUL, 1, &r->text)) !=
                PARLEY_OK ||
        (st = get_name(o, where, "nlu_intent", &r->nlu_intent)) != PARLEY_OK ||
        (st = get_entities(o, where, &r->entities_json)) != PARLEY_OK ||
        (st = get_name(o, where, "intent", &r->intent)) != PARLEY_OK ||
        (st = get_name(o, where, "action", &r->action)) != PARLEY_OK ||
        (st = get_str(o, where, "reply", 0, DM_LINE_MAX_LONG, PIPE_NO_NUL, 1, &r->reply)) !=
                PARLEY_OK ||
        (st = get_name(o, where, "form", &r->form)) != PARLEY_OK ||
        (st = get_int(o, where, "t_in_ms", 0, DM_LINE_MAX_INT, &r->t_in_ms)) != PARLEY_OK ||
        (st = get_int(o, where, "t_reply_ms", 0, DM_LINE_MAX_INT, &r->t_reply_ms)) != PARLEY_OK)
        return st;
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "confidence");
    if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble))
        return pl_fail(PARLEY_ERR_FORMAT, "%sconfidence: expected a finite number", where);
    r->confidence = c->valuedouble;
    r->turn_id = (uint64_t)turn;
    return PARLEY_OK;
}

static parley_status read_slots(const cJSON *slots, dm_user *u)
{
    char what[DM_LINE_MAX_NAME + 32];
    parley_status st = PARLEY_OK;
    int n = cJSON_GetArraySize(slots);
    if (!cJSON_IsObject(slots))
        return pl_fail(PARLEY_ERR_FORMAT, "slots: expected an object");
    if (!(u->slots = pl_calloc((size_t)n + 1, sizeof *u->slots)))
        return pl_nomem("reading a user's slots");
    for (const cJSON *c = slots->child; c && st == PARLEY_OK; c = c->next) {
        for (size_t k = 0; k < u->n_slots; k++)
            if (!strcmp(u->slots[k].name, c->string))
                return pl_fail(PARLEY_ERR_FORMAT, "slot \"%.64s\" given twice", c->string);
        if ((st = pipe_check_field("a slot name", c->string, strlen(c->string), 1, DM_LINE_MAX_NAME,
                                   PIPE_NO_CONTROL)) != PARLEY_OK)
            break;
        snprintf(what, sizeof what, "slot \"%s\"", c->string);
        if (!cJSON_IsString(c))
            return pl_fail(PARLEY_ERR_FORMAT, "%s: expected a string", what);
        st = pipe_check_field(what, c->valuestring, strlen(c->valuestring), 0, DM_SLOT_VALUE_MAX,
                              PIPE_NO_NUL);
        u->slots[u->n_slots++] = (parley_slot){ c->string, c->valuestring };
    }
    return st;
}

static parley_status read_user(const cJSON *o, dm_line_user *x)
{
    dm_user *u = &x->u;
    int64_t v[6];
    const char *session, *form, *req;
    parley_status st = check_members(o, "", user_keys, sizeof user_keys / sizeof *user_keys);
    if (st != PARLEY_OK)
        return st;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "user");
    if (!cJSON_IsString(id))
        return pl_fail(PARLEY_ERR_FORMAT, "user: expected a string");
    if ((st = pipe_check_user_id(id->valuestring, strlen(id->valuestring))) != PARLEY_OK ||
        (st = get_str(o, "", "session_id", 1, PARLEY_MAX_USER_ID_BYTES, PIPE_NO_CONTROL, 0,
                      &session)) != PARLEY_OK ||
        (st = get_int(o, "", "session_no", 0, DM_LINE_MAX_INT, &v[0])) != PARLEY_OK ||
        (st = get_int(o, "", "session_start_ms", 0, DM_LINE_MAX_INT, &v[1])) != PARLEY_OK ||
        (st = get_int(o, "", "last_active_ms", 0, DM_LINE_MAX_INT, &v[2])) != PARLEY_OK ||
        (st = get_int(o, "", "turns", 0, DM_LINE_MAX_INT, &v[3])) != PARLEY_OK ||
        (st = get_name(o, "", "form", &form)) != PARLEY_OK ||
        (st = get_name(o, "", "requested_slot", &req)) != PARLEY_OK ||
        (st = get_int(o, "", "confirming", 0, 1, &v[4])) != PARLEY_OK ||
        (st = read_slots(cJSON_GetObjectItemCaseSensitive(o, "slots"), u)) != PARLEY_OK)
        return st;
    x->user_id = id->valuestring;
    *u = (dm_user){ .exists = 1,
                    .session_id = (char *)session,
                    .session_no = v[0],
                    .session_start_ms = v[1],
                    .last_active_ms = v[2],
                    .turns = (uint64_t)v[3],
                    .form = (char *)form,
                    .requested_slot = (char *)req,
                    .confirming = (int)v[4],
                    .n_slots = u->n_slots,
                    .slots = u->slots };
    const cJSON *hist = cJSON_GetObjectItemCaseSensitive(o, "history");
    if (!cJSON_IsArray(hist))
        return pl_fail(PARLEY_ERR_FORMAT, "history: expected an array");
    if (!(x->rows = pl_calloc((size_t)cJSON_GetArraySize(hist) + 1, sizeof *x->rows)))
        return pl_nomem("reading a user's history");
    uint64_t after = 0;
    for (const cJSON *r = hist->child; r && st == PARLEY_OK; r = r->next) {
        st = read_row(r, x->n_rows, after, u->turns, &x->rows[x->n_rows]);
        after = x->rows[x->n_rows++].turn_id;
    }
    return st;
}

parley_status dm_line_read(const char *line, size_t len, dm_line_user *out)
{
    *out = (dm_line_user){ 0 };
    const char *nul = memchr(line, 0, len);
    if (nul)
        return pl_fail(PARLEY_ERR_FORMAT, "a NUL byte at byte %zu", (size_t)(nul - line));
    parley_status st = pl_json_parse(line, len, "JSON", &out->json);
    if (st != PARLEY_OK)
        return st;
    if (pl_json_has_nul_escape(line, len))
        return pl_fail(PARLEY_ERR_FORMAT, "\\u0000 (NUL) in a string");
    if (!cJSON_IsObject(out->json))
        return pl_fail(PARLEY_ERR_FORMAT, "expected an object, a user as `parley store export` "
                                          "writes one");
    return read_user(out->json, out);
}

void dm_line_clear(dm_line_user *x)
{
    cJSON_Delete(x->json);
    pl_free(x->u.slots);
    pl_free(x->rows);
    *x = (dm_line_user){ 0 };
}

/* ---- writing ---------------------------------------------------------------------------- */

static int add_str(cJSON *o, const char *k, const char *v)
{
    return (v ? cJSON_AddStringToObject(o, k, v) : cJSON_AddNullToObject(o, k)) != NULL;
}

static int add_num(cJSON *o, const char *k, double v)
{
    return cJSON_AddNumberToObject(o, k, v) != NULL;
}

cJSON *dm_line_user_json(const char *user_id, const dm_user *u, cJSON **history)
{
    cJSON *o = cJSON_CreateObject(), *slots = NULL;
    int ok = o && add_str(o, "user", user_id) && add_str(o, "session_id", u->session_id) &&
             add_num(o, "session_no", (double)u->session_no) &&
             add_num(o, "session_start_ms", (double)u->session_start_ms) &&
             add_num(o, "last_active_ms", (double)u->last_active_ms) &&
             add_num(o, "turns", (double)u->turns) && add_str(o, "form", u->form) &&
             add_str(o, "requested_slot", u->requested_slot) &&
             add_num(o, "confirming", u->confirming) &&
             (slots = cJSON_AddObjectToObject(o, "slots")) != NULL &&
             (*history = cJSON_AddArrayToObject(o, "history")) != NULL;
    for (size_t i = 0; ok && i < u->n_slots; i++)
        ok = add_str(slots, u->slots[i].name, u->slots[i].value);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

parley_status dm_line_add_row(cJSON *history, const dm_turn_row *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(history, o)) {
        cJSON_Delete(o);
        return pl_nomem("exporting history");
    }
    int ok = add_num(o, "turn", (double)r->turn_id) && add_str(o, "session_id", r->session_id) &&
             add_str(o, "text", r->text) && add_str(o, "nlu_intent", r->nlu_intent) &&
             add_num(o, "confidence", r->confidence) && add_str(o, "entities", r->entities_json) &&
             add_str(o, "intent", r->intent) && add_str(o, "action", r->action) &&
             add_str(o, "reply", r->reply) && add_str(o, "form", r->form) &&
             add_num(o, "t_in_ms", (double)r->t_in_ms) &&
             add_num(o, "t_reply_ms", (double)r->t_reply_ms);
    return ok ? PARLEY_OK : pl_nomem("exporting history");
}
