/* ws_rest_msg.h — the JSON of the Rasa-compatible HTTP API on ws.server's port, read and
 * written, pure (no socket, no lws; services/ws_rest.c does the HTTP).
 *
 * Requests are read by cJSON (through pl_json_parse) into the fields a route needs, and
 * refused with a detail that names the field and what is wrong with it; answers are built
 * with cJSON in the shapes Rasa's REST channel and HTTP API give
 * (docs/websocket.md#rasas-http-api). Every string returned is owned by the caller (cJSON_free) and
 * NULL when out of memory.
 */
#ifndef SERVICES_WS_REST_MSG_H
#define SERVICES_WS_REST_MSG_H

#include <stddef.h>

#include "parley/nlu.h"
#include "parley/status.h"

struct cJSON;

/* A POST /webhooks/rest/webhook body: {"sender": S, "message": M} (other members, such as
 * Rasa's "metadata", are ignored). *sender and *message point into *doc (owned by the
 * caller: cJSON_Delete, also on failure, where it may be NULL). PARLEY_ERR_FORMAT (not JSON,
 * not an object, a field missing or of the wrong type, a \u0000 escape), PARLEY_ERR_INVALID_ARG
 * or PARLEY_ERR_UTF8 (a sender or text against parley/pipeline.h's rules), PARLEY_ERR_NOMEM;
 * the detail names the field. */
parley_status ws_rest_read_webhook(const char *body, size_t len, struct cJSON **doc,
                                   const char **sender, const char **message);

/* A POST /model/parse body: {"text": T}; as above. */
parley_status ws_rest_read_parse(const char *body, size_t len, struct cJSON **doc,
                                 const char **text);

/* The webhook's answer from the websocket reply that the server queued for the turn
 * (services/ws_server.c's {"type":"reply",...} or {"type":"error",...}): Rasa's
 * [{"recipient_id": sender, "text": reply}] (an empty reply gives []), with *status 200;
 * or {"error": why} with *status 500 for a failed turn. */
char *ws_rest_webhook_answer(const char *queued, size_t len, int *status);

/* /model/parse's answer for parse result r: {"text", "intent": {"name", "confidence"},
 * "entities": [{"entity", "value" (the canonical value), "start", "end" (in code points of
 * the text), "extractor": "parley"}], "intent_ranking": [{"name", "confidence"}, ...] (r's
 * top intents, best first)}; confidences with 4 digits. parley's tagger gives no per-entity
 * confidence, so Rasa's "confidence_entity" is left out (as Rasa's regex extractor does). */
char *ws_rest_parse_answer(const parley_nlu_result *r);

/* {"error": why}. */
char *ws_rest_error_json(const char *why);

/* The code points in s[0, n) of valid UTF-8: a byte offset as a character offset. */
size_t ws_rest_chars(const char *s, size_t n);

#endif
