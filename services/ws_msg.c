/* ws_msg.c — a websocket client's text message read into a typed command (see ws_msg.h).
 *
 * JSON is parsed by cJSON (through pl_json_parse); this file only decides what a message
 * means and refuses what would be misread: anything but one object naming exactly one of
 * "config", "text", "eof" and "end", fields of the wrong type, ids and texts that break the
 * rules of parley/pipeline.h, a \u0000 escape (cJSON would cut the string there).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "pipeline/node.h"
#include "sdk/base/json.h"
#include "services/input_line.h"
#include "services/ws_msg.h"

static parley_status read_config(const cJSON *c, ws_cmd *out)
{
    if (!cJSON_IsObject(c))
        return pl_fail(PARLEY_ERR_FORMAT, "\"config\": expected an object, not %s",
                       pl_json_kind(c));
    if (svc_json_count_key(c, "user") > 1 || svc_json_count_key(c, "sample_rate") > 1)
        return pl_fail(PARLEY_ERR_FORMAT, "\"config\": \"user\" or \"sample_rate\" given twice");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(c, "user");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(c, "sample_rate");
    parley_status st;
    if (u && !cJSON_IsString(u))
        return pl_fail(PARLEY_ERR_FORMAT, "\"config.user\": expected a string, not %s",
                       pl_json_kind(u));
    if (u && (st = pipe_check_user_id(u->valuestring, strlen(u->valuestring))) != PARLEY_OK)
        return pl_wrap(st, "\"config.user\"");
    if (r && (!cJSON_IsNumber(r) || r->valuedouble != floor(r->valuedouble) ||
              r->valuedouble < WS_RATE_MIN || r->valuedouble > WS_RATE_MAX))
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "\"config.sample_rate\": expected a whole number of Hz from %d to %d",
                       WS_RATE_MIN, WS_RATE_MAX);
    out->type = WS_CMD_CONFIG;
    out->user = u ? u->valuestring : NULL;
    out->sample_rate = r ? (int)r->valuedouble : 0;
    return PARLEY_OK;
}

static parley_status read_text(const cJSON *t, ws_cmd *out)
{
    if (!cJSON_IsString(t))
        return pl_fail(PARLEY_ERR_FORMAT, "\"text\": expected a string, not %s", pl_json_kind(t));
    parley_status st = pipe_check_text(t->valuestring, strlen(t->valuestring));
    if (st != PARLEY_OK)
        return st;
    out->type = WS_CMD_TEXT;
    out->text = t->valuestring;
    return PARLEY_OK;
}

/* {"eof": 1} or {"end": 1}: a flag whose only value is 1 (or true). */
static parley_status read_flag(const cJSON *e, const char *key, ws_cmd_type type, ws_cmd *out)
{
    if (!cJSON_IsTrue(e) && !(cJSON_IsNumber(e) && e->valuedouble == 1))
        return pl_fail(PARLEY_ERR_FORMAT, "\"%s\": expected 1", key);
    out->type = type;
    return PARLEY_OK;
}

parley_status ws_msg_parse(const char *data, size_t len, ws_cmd *out)
{
    static const char *const keys[] = { "config", "text", "eof", "end" };
    parley_status st;
    memset(out, 0, sizeof *out);
    if (memchr(data, 0, len))
        return pl_fail(PARLEY_ERR_FORMAT, "a NUL byte in the message");
    if ((st = pl_json_parse(data, len, "message", &out->json)) != PARLEY_OK)
        return st;
    const cJSON *j = out->json;
    if (!cJSON_IsObject(j))
        return pl_fail(PARLEY_ERR_FORMAT, "expected a JSON object, not %s", pl_json_kind(j));
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
    if (svc_json_count_key(j, "id") > 1)
        return pl_fail(PARLEY_ERR_FORMAT, "\"id\" given twice");
    if (id && !cJSON_IsString(id) && !(cJSON_IsNumber(id) && isfinite(id->valuedouble)))
        return pl_fail(PARLEY_ERR_FORMAT, "\"id\": expected a string or a number, not %s",
                       pl_json_kind(id));
    if (cJSON_IsString(id) && strlen(id->valuestring) > WS_ID_MAX_BYTES)
        return pl_fail(PARLEY_ERR_FORMAT, "\"id\": %zu bytes, more than the %d allowed",
                       strlen(id->valuestring), WS_ID_MAX_BYTES);
    out->id = id;
    if (pl_json_has_nul_escape(data, len))
        return pl_fail(PARLEY_ERR_FORMAT, "\\u0000 (NUL) is not allowed in a message");
    const cJSON *found = NULL;
    int which = -1;
    for (int k = 0; k < 4; k++) {
        int n = svc_json_count_key(j, keys[k]);
        if (n > 1 || (n && found))
            return pl_fail(PARLEY_ERR_FORMAT, "a message is one of \"config\", \"text\", "
                                              "\"eof\" and \"end\", each at most once");
        if (n) {
            found = cJSON_GetObjectItemCaseSensitive(j, keys[k]);
            which = k;
        }
    }
    if (!found)
        return pl_fail(PARLEY_ERR_FORMAT, "unknown message type: expected \"config\", \"text\", "
                                          "\"eof\" or \"end\"");
    return which == 0   ? read_config(found, out)
           : which == 1 ? read_text(found, out)
           : which == 2 ? read_flag(found, "eof", WS_CMD_EOF, out)
                        : read_flag(found, "end", WS_CMD_END, out);
}

void ws_cmd_clear(ws_cmd *out)
{
    cJSON_Delete(out->json);
    memset(out, 0, sizeof *out);
}

int ws_is_issued_id(const char *id)
{
    if (strncmp(id, "u-", 2) || strlen(id) != 34)
        return 0;
    for (int i = 2; i < 34; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
            return 0;
    return 1;
}
