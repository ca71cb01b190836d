/* json.h — parsing JSON text (cJSON) with errors that give line and column.
 *
 * Used for config.json, safetensors headers, training state and input lines alike.
 */
#ifndef SDK_BASE_JSON_H
#define SDK_BASE_JSON_H

#include <stddef.h>

#include "parley/status.h"

struct cJSON;

/* Parses JSON text; `where` names it in errors, which give line:col for bad syntax
 * (PARLEY_ERR_FORMAT) and tell a failed allocation (PARLEY_ERR_NOMEM) from bad text.
 * Anything but whitespace after the value is an error. Free *out with cJSON_Delete. */
parley_status pl_json_parse(const char *text, size_t len, const char *where, struct cJSON **out);

/* Whether JSON text s[0, len) holds the escape \u0000, which cJSON decodes into a NUL that
 * would cut a string short (so every reader of JSON that comes from outside refuses it). */
int pl_json_has_nul_escape(const char *s, size_t len);

/* What kind of value j is, for error messages: "a number", "a string", "a boolean", "null",
 * "an array" or "an object". */
const char *pl_json_kind(const struct cJSON *j);

#endif
