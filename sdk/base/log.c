/* log.c — the application's log callback and parley_version().
 *
 * The library reports progress and warnings only through the callback set here; without
 * one, lines are formatted nowhere and cost a level comparison. A gate (pl_log_gated) keeps
 * a line repeated in a loop from flooding the callback.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* Whether a gate lets `line` through now; *repeats: how many times it held back the line
 * before this one. */
static int gate_passes(pl_log_gate *g, const char *line, unsigned long *repeats)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&g->mu);
    int64_t ms = (int64_t)(now.tv_sec - g->logged.tv_sec) * 1000 +
                 (now.tv_nsec - g->logged.tv_nsec) / 1000000;
    int same = !strncmp(line, g->last, sizeof g->last - 1);
    *repeats = g->repeats;
    if (same && ms < g->interval_ms) {
        g->repeats++;
        pthread_mutex_unlock(&g->mu);
        return 0;
    }
    size_t n = strnlen(line, sizeof g->last - 1);
    memcpy(g->last, line, n);
    g->last[n] = '\0';
    g->repeats = 0;
    g->logged = now;
    pthread_mutex_unlock(&g->mu);
    return 1;
}

/* Formats a line and hands it to the callback, through the gate `g` when not NULL. */
static void emit(pl_log_gate *g, parley_log_level level, const char *fmt, va_list ap)
{
    if (!log_fn || level < log_min)
        return;
    char line[2048];
    vsnprintf(line, sizeof line, fmt, ap);
    unsigned long repeats = 0;
    if (g && !gate_passes(g, line, &repeats))
        return;
    if (repeats) {
        char note[64];
        snprintf(note, sizeof note, "the line above was repeated %lu more times", repeats);
        log_fn(level, note, log_user_data);
    }
    log_fn(level, line, log_user_data);
}

void pl_log(parley_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(NULL, level, fmt, ap);
    va_end(ap);
}

void pl_log_gated(pl_log_gate *g, parley_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(g, level, fmt, ap);
    va_end(ap);
}

const char *parley_version(void)
{
    return PARLEY_VERSION;
}
