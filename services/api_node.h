/* api_node.h — the `api` node's side of the public pipeline API (sdk/lib/pipeline.c).
 *
 * The node owns the replies of finished turns: it hands them to the application's callback
 * or queues them for svc_api_poll. Both calls take the node found by kind in a loaded graph.
 */
#ifndef SERVICES_API_NODE_H
#define SERVICES_API_NODE_H

#include "parley/pipeline.h"
#include "pipeline/node.h"

extern const pipe_kind svc_kind_api;
/* The api's two halves under the names text.stdin (its `text` output) and text.stdout (its
 * `reply` input, the node the two calls below take), for parley_pipeline_params.text_io. */
extern const pipe_kind svc_kind_api_stdin, svc_kind_api_stdout;
/* The params of text.stdin and text.stdout, which the stand-ins accept too. */
extern const pipe_param_spec svc_stdin_params[], svc_stdout_params[];

/* Sends every later reply to fn(reply, user_data) (borrowed for the call) instead of the
 * queue; fn NULL means queue. Call before the graph starts. */
void svc_api_set_callback(pipe_node *api, parley_reply_fn fn, void *user_data);

/* Takes the oldest queued reply (owned by the caller: parley_reply_free), waiting up to
 * timeout_ms (0: do not wait, < 0: forever). PARLEY_ERR_NOT_FOUND when none came in time,
 * PARLEY_ERR_UNSUPPORTED when replies go to a callback. Any thread. */
parley_status svc_api_poll(pipe_node *api, int timeout_ms, parley_reply **out);

#endif
