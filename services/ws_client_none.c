/* ws_client_none.c — the websocket client of ws_client.h in a build without libwebsockets:
 * opening a client answers PARLEY_ERR_NOT_BUILT (so `parley stream` says why it cannot run),
 * and nothing else can be reached without one. The real client is ws_client.c.
 */
#include "sdk/base/error.h"
#include "services/ws_client.h"

svc_ws_client_params svc_ws_client_params_default(void)
{
    return (svc_ws_client_params){ 0 };
}

parley_status svc_ws_client_open(const svc_ws_client_params *p, svc_ws_client **out)
{
    (void)p;
    if (out)
        *out = NULL;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "websocket client: parley was built without "
                                         "libwebsockets");
}

void svc_ws_client_close(svc_ws_client *c)
{
    (void)c;
}

parley_status svc_ws_connect(svc_ws_client *c, const char *url, void *user, svc_ws_conn **out)
{
    (void)c, (void)url, (void)user;
    if (out)
        *out = NULL;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "websocket client: not built");
}

parley_status svc_ws_send(svc_ws_conn *k, const void *data, size_t len, int binary)
{
    (void)k, (void)data, (void)len, (void)binary;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "websocket client: not built");
}

void svc_ws_close(svc_ws_conn *k, int code, const char *reason)
{
    (void)k, (void)code, (void)reason;
}

size_t svc_ws_pending(const svc_ws_conn *k)
{
    (void)k;
    return 0;
}

parley_status svc_ws_client_service(svc_ws_client *c, int wait_ms)
{
    (void)c, (void)wait_ms;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "websocket client: not built");
}
