/* action_http_none.c — the action servers' client in a build without libcurl.
 *
 * A domain whose actions name an endpoint cannot be served: opening the client says so, and
 * the dialog.frames node fails at start-up with that message. Nothing else is reachable.
 */
#include "dialog/action_http.h"
#include "sdk/base/error.h"

parley_status dm_http_open(const dm_http_params *p, dm_http **out)
{
    (void)p;
    *out = NULL;
    return pl_fail(PARLEY_ERR_NOT_BUILT,
                   "actions with an endpoint need libcurl: this parley was built without it "
                   "(install libcurl4-openssl-dev and build again)");
}

parley_status dm_http_post(dm_http *h, const char *url, const char *body, dm_http_done_fn fn,
                           void *user)
{
    (void)h, (void)url, (void)body, (void)fn, (void)user;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "built without libcurl");
}

void dm_http_close(dm_http *h)
{
    (void)h;
}
