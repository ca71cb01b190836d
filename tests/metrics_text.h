/* metrics_text.h — reading the Prometheus text a pipeline renders, for the C tests.
 *
 * metrics_value() finds one sample line by its exact name and labels; metrics_settled()
 * renders a pipeline's metrics until every turn it was given has been counted and none is
 * left in flight (a reply reaches the application just before its turn is counted and its
 * message freed), so the numbers a test reads next are final.
 */
#ifndef TESTS_METRICS_TEXT_H
#define TESTS_METRICS_TEXT_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parley/pipeline.h"

/* The value of the sample line `series` (name and labels exactly as rendered), or -1. */
static inline double metrics_value(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, series, n) && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    return -1;
}

/* The metrics once `turns` turns have ended (ok or not) and none is in flight, or the last
 * text rendered after 10 s of trying; owned by the caller (parley_metrics_free). NULL when
 * rendering fails. */
static inline char *metrics_settled(parley_pipeline *p, double turns)
{
    char *text = NULL;
    for (int tries = 0; tries < 10000; tries++) {
        parley_metrics_free(text);
        if (parley_pipeline_metrics(p, &text, NULL) != PARLEY_OK)
            return NULL;
        double ended = metrics_value(text, "parley_turns_total{outcome=\"ok\"}") +
                       metrics_value(text, "parley_turns_total{outcome=\"error\"}");
        if (ended == turns && metrics_value(text, "parley_turns_in_flight") == 0)
            break;
        nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    }
    return text;
}

#endif
