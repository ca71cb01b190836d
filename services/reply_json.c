/* reply_json.c — formats a turn message as the JSON line of text.stdout (with cJSON).
 * Only formatting: where the line goes is the caller's business.
 *
 * The line is valid JSON whatever the message holds: ids and texts were checked where they
 * entered (pipe_msg_new), and any other string that is not valid UTF-8 (an error detail
 * that names a file by its raw path, or one cut at its buffer's end) has each bad byte
 * written as U+FFFD.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "services/reply_json.h"

/* s with every byte that does not begin valid UTF-8 replaced by U+FFFD (EF BF BD). Owned by
 * the caller (pl_free); NULL when out of memory. */
static char *repair_utf8(const char *s, size_t len)
{
    char *out = pl_malloc(len * 3 + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < len;) {
        size_t ok = pipe_utf8_valid_len(s + i, len - i);
        memcpy(o, s + i, ok);
        o += ok;
        i += ok;
        if (i < len) {
            memcpy(o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    *o = 0;
    return out;
}

/* Adds "key": s (valid UTF-8, repaired when it is not); 0 when out of memory. */
static int add_str(cJSON *o, const char *key, const char *s)
{
    size_t len = strlen(s);
    if (pipe_utf8_valid_len(s, len) == len)
        return cJSON_AddStringToObject(o, key, s) != NULL;
    char *fixed = repair_utf8(s, len);
    int ok = fixed && cJSON_AddStringToObject(o, key, fixed);
    pl_free(fixed);
    return ok;
}

static int add_slots(cJSON *o, const pipe_msg *m)
{
    cJSON *slots = cJSON_AddObjectToObject(o, "slots");
    int ok = slots != NULL;
    for (size_t i = 0; ok && i < m->n_slots; i++)
        ok = add_str(slots, m->slots[i].name, m->slots[i].value);
    return ok;
}

int svc_reply_fill(struct cJSON *o, const pipe_msg *m, const char *error)
{
    int ok = m->user_id[0] ? add_str(o, "user", m->user_id)
                           : cJSON_AddNullToObject(o, "user") != NULL;
    /* The user's turn when the dialog gave one out; a failed turn has none (null), and
     * without a dialog a turn is numbered by the graph (seq). */
    if (m->turn_id || !error)
        ok = ok && cJSON_AddNumberToObject(o, "turn", (double)(m->turn_id ? m->turn_id : m->seq));
    else
        ok = ok && cJSON_AddNullToObject(o, "turn");
    if (ok && error) {
        ok = (!m->line || cJSON_AddNumberToObject(o, "line", (double)m->line)) &&
             add_str(o, "error", error);
    } else if (ok) {
        double conf = (double)(int)(m->confidence * 10000 + 0.5) / 10000;
        ok = (m->type == PIPE_T_REPLY && m->reply ? add_str(o, "reply", m->reply)
                                                  : cJSON_AddNullToObject(o, "reply") != NULL) &&
             (m->intent ? add_str(o, "intent", m->intent)
                        : cJSON_AddNullToObject(o, "intent") != NULL) &&
             cJSON_AddNumberToObject(o, "confidence", conf) != NULL && add_slots(o, m);
    }
    return ok;
}

char *svc_reply_json(const pipe_msg *m, const char *error)
{
    cJSON *o = cJSON_CreateObject();
    char *s = o && svc_reply_fill(o, m, error) ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return s;
}
