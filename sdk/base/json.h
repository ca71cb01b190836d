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

#endif
