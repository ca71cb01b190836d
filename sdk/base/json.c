/* json.c — JSON text to a cJSON tree, with errors a person can act on (see json.h).
 *
 * cJSON does the parsing; this file only adds line:col to its failures, tells a failed
 * allocation from bad text, refuses trailing text, and finds the \u0000 escapes cJSON would
 * decode into a NUL. What the JSON means is the caller's.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/json.h"

const char *pl_json_kind(const cJSON *j)
{
    return cJSON_IsNumber(j)   ? "a number"
           : cJSON_IsString(j) ? "a string"
           : cJSON_IsBool(j)   ? "a boolean"
           : cJSON_IsNull(j)   ? "null"
           : cJSON_IsArray(j)  ? "an array"
                               : "an object";
}

static int is_json_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* line:col (1-based) of byte `off` in text, for messages a person can act on. */
static void text_position(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

parley_status pl_json_parse(const char *text, size_t len, const char *where, cJSON **out)
{
    const char *end = text;
    unsigned long failures = pl_alloc_failures();
    int line, col;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    *out = NULL;
    if (!j) {
        if (pl_alloc_failures() != failures)
            return pl_nomem("%s: to parse the JSON", where);
        if (!end || end < text || end > text + len)
            end = text;
        text_position(text, (size_t)(end - text), &line, &col);
        return pl_fail(PARLEY_ERR_FORMAT, "%s:%d:%d: not valid JSON", where, line, col);
    }
    while (end < text + len && is_json_space(*end))
        end++;
    if (end < text + len) {
        cJSON_Delete(j);
        text_position(text, (size_t)(end - text), &line, &col);
        return pl_fail(PARLEY_ERR_FORMAT, "%s:%d:%d: unexpected text after the JSON value", where,
                       line, col);
    }
    *out = j;
    return PARLEY_OK;
}

/* "u0000" after an odd run of backslashes (an even run is escaped backslashes). Backslashes
 * occur only inside strings of valid JSON. */
int pl_json_has_nul_escape(const char *s, size_t len)
{
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\\') {
            run++;
            continue;
        }
        if (run % 2 == 1 && len - i >= 5 && !memcmp(s + i, "u0000", 5))
            return 1;
        run = 0;
    }
    return 0;
}
