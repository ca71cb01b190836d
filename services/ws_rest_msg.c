/* ws_rest_msg.c — the JSON of the Rasa-compatible HTTP API, read and written (see
 * ws_rest_msg.h). cJSON does the parsing and printing; this file decides what a body means
 * and refuses what would be misread: anything but an object, a field missing, given twice or
 * of the wrong type, a \u0000 escape (cJSON would cut the string there), a sender or text
 * against the rules every entry point applies (parley/pipeline.h).
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "pipeline/node.h"
#include "sdk/base/json.h"
#include "services/input_line.h"
#include "services/ws_rest_msg.h"

/* Parses body into *doc, an object. */
static parley_status read_object(const char *body, size_t len, cJSON **doc)
{
    parley_status st;
    *doc = NULL;
    if (len == 0)
        return pl_fail(PARLEY_ERR_FORMAT, "body: empty (expected a JSON object)");
    if (pl_json_has_nul_escape(body, len))
        return pl_fail(PARLEY_ERR_FORMAT, "body: a \\u0000 escape (no string may hold a NUL)");
    if ((st = pl_json_parse(body, len, "body", doc)) != PARLEY_OK)
        return st;
    if (!cJSON_IsObject(*doc))
        return pl_fail(PARLEY_ERR_FORMAT, "body: expected a JSON object, not %s",
                       pl_json_kind(*doc));
    return PARLEY_OK;
}

/* The string member `key` of object o into *out. */
static parley_status string_field(const cJSON *o, const char *key, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return pl_fail(PARLEY_ERR_FORMAT, "\"%s\": missing", key);
    if (svc_json_count_key(o, key) > 1)
        return pl_fail(PARLEY_ERR_FORMAT, "\"%s\": given twice", key);
    if (!cJSON_IsString(v))
        return pl_fail(PARLEY_ERR_FORMAT, "\"%s\": expected a string, not %s", key,
                       pl_json_kind(v));
    *out = v->valuestring;
    return PARLEY_OK;
}

parley_status ws_rest_read_webhook(const char *body, size_t len, cJSON **doc, const char **sender,
                                   const char **message)
{
    parley_status st;
    if ((st = read_object(body, len, doc)) != PARLEY_OK ||
        (st = string_field(*doc, "sender", sender)) != PARLEY_OK ||
        (st = string_field(*doc, "message", message)) != PARLEY_OK)
        return st;
    if ((st = pipe_check_user_id(*sender, strlen(*sender))) != PARLEY_OK)
        return pl_wrap(st, "\"sender\"");
    if ((st = pipe_check_text(*message, strlen(*message))) != PARLEY_OK)
        return pl_wrap(st, "\"message\"");
    return PARLEY_OK;
}

parley_status ws_rest_read_parse(const char *body, size_t len, cJSON **doc, const char **text)
{
    parley_status st;
    if ((st = read_object(body, len, doc)) != PARLEY_OK ||
        (st = string_field(*doc, "text", text)) != PARLEY_OK)
        return st;
    if ((st = pipe_check_text(*text, strlen(*text))) != PARLEY_OK)
        return pl_wrap(st, "\"text\"");
    return PARLEY_OK;
}

/* Prints o (deleted here) when `made` (every member was added), else NULL. */
static char *print(cJSON *o, int made)
{
    char *text = made ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return text;
}

char *ws_rest_error_json(const char *why)
{
    cJSON *o = cJSON_CreateObject();
    return print(o, o && cJSON_AddStringToObject(o, "error", why));
}

char *ws_rest_webhook_answer(const char *queued, size_t len, int *status)
{
    cJSON *in = cJSON_ParseWithLength(queued, len);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(in, "type");
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(in, "user");
    const cJSON *reply = cJSON_GetObjectItemCaseSensitive(in, "reply");
    char *out = NULL;
    *status = 500;
    if (!in) /* out of memory: the server queued what it printed */
        return NULL;
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "reply") || !cJSON_IsString(user) ||
        !cJSON_IsString(reply)) {
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(in, "error");
        out = ws_rest_error_json(cJSON_IsString(why) ? why->valuestring : "the turn failed");
    } else {
        /* The dialog joins a turn's responses into one text: one message, or none. */
        int said = reply->valuestring[0] != '\0';
        cJSON *list = cJSON_CreateArray();
        cJSON *m = list && said ? cJSON_CreateObject() : NULL;
        int ok = list && (!said || m);
        if (ok && said && !(ok = cJSON_AddItemToArray(list, m)))
            cJSON_Delete(m);
        if (ok && said)
            ok = cJSON_AddStringToObject(m, "recipient_id", user->valuestring) &&
                 cJSON_AddStringToObject(m, "text", reply->valuestring);
        out = print(list, ok);
        *status = 200;
    }
    cJSON_Delete(in);
    return out;
}

size_t ws_rest_chars(const char *s, size_t n)
{
    size_t chars = 0;
    for (size_t i = 0; i < n; i++)
        chars += ((unsigned char)s[i] & 0xC0) != 0x80;
    return chars;
}

/* {"name": label, "confidence": prob}, with 4 digits as every confidence parley prints. */
static cJSON *intent(const char *label, float prob)
{
    cJSON *o = cJSON_CreateObject();
    if (o &&
        (!cJSON_AddStringToObject(o, "name", label) ||
         !cJSON_AddNumberToObject(o, "confidence", (double)(int)(prob * 10000 + 0.5f) / 10000))) {
        cJSON_Delete(o);
        o = NULL;
    }
    return o;
}

static cJSON *entity(const parley_nlu_result *r, const parley_nlu_slot *sl)
{
    cJSON *e = cJSON_CreateObject();
    if (e && !(cJSON_AddStringToObject(e, "entity", sl->slot) &&
               cJSON_AddStringToObject(e, "value", sl->canonical ? sl->canonical : sl->value) &&
               cJSON_AddNumberToObject(e, "start", (double)ws_rest_chars(r->text, sl->start)) &&
               cJSON_AddNumberToObject(e, "end", (double)ws_rest_chars(r->text, sl->end)) &&
               cJSON_AddStringToObject(e, "extractor", "parley"))) {
        cJSON_Delete(e);
        e = NULL;
    }
    return e;
}

char *ws_rest_parse_answer(const parley_nlu_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *best = r->intent ? intent(r->intent, r->confidence) : NULL;
    cJSON *iv = r->intent ? best : cJSON_CreateNull();
    int ok = o && cJSON_AddStringToObject(o, "text", r->text) && iv;
    if (!(ok = ok && cJSON_AddItemToObject(o, "intent", iv)))
        cJSON_Delete(iv);
    cJSON *ents = ok ? cJSON_AddArrayToObject(o, "entities") : NULL;
    ok = ok && ents;
    for (int i = 0; ok && i < r->n_slots; i++) {
        cJSON *e = entity(r, &r->slots[i]);
        if (!(ok = e && cJSON_AddItemToArray(ents, e)))
            cJSON_Delete(e);
    }
    cJSON *rank = ok ? cJSON_AddArrayToObject(o, "intent_ranking") : NULL;
    ok = ok && rank;
    for (int k = 0; ok && k < r->n_top; k++) {
        cJSON *it = intent(r->top[k].label, r->top[k].prob);
        if (!(ok = it && cJSON_AddItemToArray(rank, it)))
            cJSON_Delete(it);
    }
    return print(o, ok);
}
