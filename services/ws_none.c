/* ws_none.c — the `ws.server` node in a build without libwebsockets: a graph that names it
 * does not open (PARLEY_ERR_NOT_BUILT), so its other callbacks are never reached. Compiled
 * only when libwebsockets is not found; services/ws_server.c otherwise.
 */
#include "services/ws_server.h"

parley_status svc_ws_create(pipe_node *node, void **state)
{
    (void)node;
    *state = NULL;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "this build of parley has no websocket server (it was "
                                         "built without libwebsockets)");
}

parley_status svc_ws_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    (void)state;
    (void)port;
    pipe_node_turn_done(node, msg);
    return PARLEY_OK;
}

parley_status svc_ws_run(pipe_node *node, void *state)
{
    (void)node;
    (void)state;
    return PARLEY_OK;
}

void svc_ws_stop(void *state)
{
    (void)state;
}

void svc_ws_destroy(void *state)
{
    (void)state;
}
