/* reply_json.c — formats a turn message as the JSON line of text.stdout (with cJSON).
 * Only formatting: where the line goes is the caller's business.
 */
#include <cjson/cJSON.h>

#include "services/reply_json.h"

static void add_slots(cJSON *o, const pipe_msg *m)
{
    cJSON *slots = cJSON_AddObjectToObject(o, "slots");
    if (!slots)
        return;
    if (m->type == PIPE_T_REPLY) {
        for (size_t i = 0; i < m->n_slots; i++)
            cJSON_AddStringToObject(slots, m->slots[i].name, m->slots[i].value);
    } else if (m->nlu) {
        for (int i = 0; i < m->nlu->n_slots; i++)
            cJSON_AddStringToObject(slots, m->nlu->slots[i].slot, m->nlu->slots[i].value);
    }
}

char *svc_reply_json(const pipe_msg *m, const char *error)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "user", m->user_id);
    cJSON_AddNumberToObject(o, "turn", (double)(m->turn_id ? m->turn_id : m->seq));
    if (error) {
        cJSON_AddStringToObject(o, "error", error);
    } else {
        if (m->type == PIPE_T_REPLY && m->reply)
            cJSON_AddStringToObject(o, "reply", m->reply);
        else
            cJSON_AddNullToObject(o, "reply");
        const char *intent = m->type == PIPE_T_REPLY ? m->intent : m->nlu ? m->nlu->intent : NULL;
        float conf = m->type == PIPE_T_REPLY ? m->confidence : m->nlu ? m->nlu->confidence : 0;
        if (intent)
            cJSON_AddStringToObject(o, "intent", intent);
        else
            cJSON_AddNullToObject(o, "intent");
        cJSON_AddNumberToObject(o, "confidence", (double)(int)(conf * 10000 + 0.5) / 10000);
        add_slots(o, m);
    }
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}
