/* log.c — the application's log callback and parley_version().
 *
 * The library reports progress and warnings only through the callback set here; without
 * one, lines are formatted nowhere and cost a level comparison.
 */
#include <stdarg.h>
#include <stdio.h>

#include "sdk/base/error.h"

static parley_log_fn log_fn;
static void *log_user_data;
static parley_log_level log_min = PARLEY_LOG_INFO;

void parley_log_set(parley_log_fn fn, void *user_data, parley_log_level min_level)
{
    log_fn = fn;
    log_user_data = user_data;
    log_min = min_level;
}

void pl_log(parley_log_level level, const char *fmt, ...)
{
    if (!log_fn || level < log_min)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    log_fn(level, line, log_user_data);
}

const char *parley_version(void)
{
    return PARLEY_VERSION;
}
