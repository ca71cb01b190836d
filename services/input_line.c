/* input_line.c — one line of input read as a turn (see input_line.h).
 *
 * JSON is parsed by cJSON (through pl_json_parse, for positions); this file only decides
 * what a line means and refuses what would be cut or misread. Sending the turn is the
 * caller's.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/node.h"
#include "sdk/base/error.h"
#include "sdk/base/json.h"
#include "services/input_line.h"

int svc_json_count_key(const cJSON *j, const char *key)
{
    int n = 0;
    for (const cJSON *c = j->child; c; c = c->next)
        n += !strcmp(c->string, key);
    return n;
}

/* The user of a JSON line: a string id, a whole number written in decimal (into idbuf), or
 * the default when there is none. */
static parley_status json_user(const cJSON *u, const char *def, char *idbuf, size_t cap,
                               const char **user)
{
    if (!u) {
        *user = def;
        return PARLEY_OK;
    }
    if (cJSON_IsString(u)) {
        *user = u->valuestring;
        return pipe_check_user_id(u->valuestring, strlen(u->valuestring));
    }
    /* Up to 2^53 - 1 every whole number is exact in a double, so no two ids meet. */
    if (cJSON_IsNumber(u) && u->valuedouble >= -9007199254740991.0 &&
        u->valuedouble <= 9007199254740991.0 &&
        u->valuedouble == (double)(long long)u->valuedouble) {
        snprintf(idbuf, cap, "%lld", (long long)u->valuedouble);
        *user = idbuf;
        return PARLEY_OK;
    }
    const char *got = cJSON_IsNumber(u)  ? "a number that is not whole or is 2^53 or more"
                      : cJSON_IsBool(u)  ? "a boolean"
                      : cJSON_IsNull(u)  ? "null"
                      : cJSON_IsArray(u) ? "an array"
                                         : "an object";
    return pl_fail(PARLEY_ERR_FORMAT, "\"user\": expected a string or a whole number, not %s", got);
}

/* A JSON line's user and text (borrowed from *j, or idbuf, or the param). The line starts
 * with '{', so what parses is an object. On failure the detail says why and *user is the
 * user when it could be read, else NULL. */
static parley_status read_json(const char *line, size_t len, const char *def, cJSON **j,
                               char *idbuf, size_t cap, const char **user, const char **text)
{
    parley_status st;
    const char *nul = memchr(line, 0, len);
    *user = NULL;
    if (nul)
        return pl_fail(PARLEY_ERR_FORMAT, "a NUL byte at byte %zu", (size_t)(nul - line));
    if ((st = pl_json_parse(line, len, "JSON", j)) != PARLEY_OK)
        return st;
    if (pl_json_has_nul_escape(line, len))
        return pl_fail(PARLEY_ERR_FORMAT, "\\u0000 (NUL) is allowed neither in a user id nor in "
                                          "a text");
    if (svc_json_count_key(*j, "user") > 1 || svc_json_count_key(*j, "text") > 1)
        return pl_fail(PARLEY_ERR_FORMAT, "\"user\" or \"text\" given twice");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(*j, "text");
    const char *u = NULL;
    if ((st = json_user(cJSON_GetObjectItemCaseSensitive(*j, "user"), def, idbuf, cap, &u)) !=
        PARLEY_OK)
        return st;
    *user = u;
    if (!t)
        return pl_fail(PARLEY_ERR_FORMAT, "\"text\" is missing");
    if (!cJSON_IsString(t))
        return pl_fail(PARLEY_ERR_FORMAT, "\"text\": expected a string");
    *text = t->valuestring;
    return pipe_check_text(t->valuestring, strlen(t->valuestring));
}

parley_status svc_line_read(char *line, size_t len, const char *default_user, svc_line *out)
{
    memset(out, 0, sizeof *out);
    out->user = default_user;
    out->text = line;
    if (len && line[len - 1] == '\r')
        line[--len] = 0;
    size_t lead = strspn(line, " \t");
    if (lead == len) { /* strspn stops at a NUL too: only a line of blanks gets here */
        out->blank = 1;
        return PARLEY_OK;
    }
    if (line[lead] == '{')
        return read_json(line, len, default_user, &out->json, out->idbuf, sizeof out->idbuf,
                         &out->user, &out->text);
    return pipe_check_text(line, len);
}

void svc_line_clear(svc_line *out)
{
    cJSON_Delete(out->json);
    out->json = NULL;
}
