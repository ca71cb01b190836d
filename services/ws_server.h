/* ws_server.h — the `ws.server` node's callbacks, between its kind table (services/ws_node.c)
 * and its workings: services/ws_server.c with libwebsockets, or services/ws_none.c in a
 * build without it (create answers PARLEY_ERR_NOT_BUILT, so the kind is always described).
 * The callbacks follow pipeline/node.h's pipe_kind rules; state is the node's own.
 */
#ifndef SERVICES_WS_SERVER_H
#define SERVICES_WS_SERVER_H

#include "pipeline/node.h"

/* The node's ports, in the order of its table. */
enum { WS_PORT_TEXT = 0, WS_PORT_AUDIO = 1, WS_PORT_REPLY = 2, WS_PORT_PARTIAL = 3 };

extern const pipe_kind svc_kind_ws_server;

parley_status svc_ws_create(pipe_node *node, void **state);
parley_status svc_ws_process(pipe_node *node, void *state, int port, pipe_msg *msg);
parley_status svc_ws_run(pipe_node *node, void *state);
void svc_ws_stop(void *state);
void svc_ws_destroy(void *state);

#endif
