/* status.c — status names and the per-thread detail message behind parley_errmsg().
 *
 * The detail lives in a thread-local buffer, so concurrent calls on different threads
 * never see each other's errors. It is not a log: nothing here is printed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sdk/base/error.h"

enum { ERRMSG_CAP = 1024 };
static _Thread_local char errmsg[ERRMSG_CAP];

const char *parley_status_str(parley_status st)
{
    switch (st) {
    case PARLEY_OK: return "PARLEY_OK: success";
    case PARLEY_ERR_INVALID_ARG: return "PARLEY_ERR_INVALID_ARG: invalid argument";
    case PARLEY_ERR_NOMEM: return "PARLEY_ERR_NOMEM: out of memory";
    case PARLEY_ERR_IO: return "PARLEY_ERR_IO: input/output error";
    case PARLEY_ERR_FORMAT: return "PARLEY_ERR_FORMAT: malformed data";
    case PARLEY_ERR_CONFIG: return "PARLEY_ERR_CONFIG: bad configuration";
    case PARLEY_ERR_NOT_FOUND: return "PARLEY_ERR_NOT_FOUND: not found";
    case PARLEY_ERR_NOT_BUILT: return "PARLEY_ERR_NOT_BUILT: feature not built";
    case PARLEY_ERR_UNSUPPORTED: return "PARLEY_ERR_UNSUPPORTED: unsupported";
    case PARLEY_ERR_UTF8: return "PARLEY_ERR_UTF8: invalid UTF-8";
    case PARLEY_ERR_DEVICE: return "PARLEY_ERR_DEVICE: device error";
    case PARLEY_ERR_INTERNAL: return "PARLEY_ERR_INTERNAL: internal error";
    }
    return "PARLEY_ERR_?: unknown status";
}

const char *parley_errmsg(void)
{
    return errmsg;
}

void pl_clear_error(void)
{
    errmsg[0] = '\0';
}

parley_status pl_fail(parley_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errmsg, sizeof errmsg, fmt, ap);
    va_end(ap);
    return st;
}

parley_status pl_nomem(const char *fmt, ...)
{
    char what[ERRMSG_CAP];
    va_list ap;
    if (!fmt)
        return pl_fail(PARLEY_ERR_NOMEM, "out of memory");
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return pl_fail(PARLEY_ERR_NOMEM, "%s: out of memory", what);
}

parley_status pl_wrap(parley_status st, const char *fmt, ...)
{
    char prefix[ERRMSG_CAP];
    char old[ERRMSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, errmsg, sizeof old);
    if (snprintf(errmsg, sizeof errmsg, "%s: %s", prefix, old) >= (int)sizeof errmsg)
        errmsg[sizeof errmsg - 1] = '\0'; /* too long: the head is kept, the tail lost */
    return st;
}
