/* reply_json.h — a finished turn as one JSON object (cJSON), for text.stdout and the CLI. */
#ifndef SERVICES_REPLY_JSON_H
#define SERVICES_REPLY_JSON_H

#include "pipeline/node.h"

/* {"user","turn","reply","intent","confidence","slots"} for a reply or NLU message, or
 * {"user","turn","line","error"} when error is not NULL ("line" only for a turn that came
 * from an input line, msg->line). "turn" is the dialog's turn number, or the graph's
 * sequence number when no dialog counted it; "user" is null on a refused turn whose user
 * could not be read. Always valid JSON (see reply_json.c). Owned by the caller
 * (cJSON_free); NULL when out of memory. */
char *svc_reply_json(const pipe_msg *m, const char *error);

struct cJSON;
/* Adds the members above to object o (after those it has, for callers that add their own
 * around them: the websocket server). 0 when out of memory (o may hold some of them). */
int svc_reply_fill(struct cJSON *o, const pipe_msg *m, const char *error);

#endif
