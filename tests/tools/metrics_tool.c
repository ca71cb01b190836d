/* metrics_tool.c — scores a file of predictions with nlu/data/metrics.c and prints the JSON
 * report.
 *
 * Input: one example per line, four tab-separated fields: gold intent, predicted intent, gold
 * tags, predicted tags (tags space-separated). An empty line ends a set; each set gets its
 * own report, one JSON object per output line. test_metrics_ref.py feeds it random cases and
 * compares every number with tests/reference/seqeval_ref.py. A test helper, not a CLI.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nlu/data/metrics.h"
#include "parley/parley.h"

/* Splits s at spaces in place; returns the count (at most cap). */
static int split(char *s, char **out, int cap)
{
    int n = 0;
    for (char *tok = strtok(s, " "); tok && n < cap; tok = strtok(NULL, " "))
        out[n++] = tok;
    return n;
}

/* Prints the report of s as one JSON line and frees s; returns 0 on success. */
static int report(mt_scorer *s)
{
    mt_report *r = NULL;
    cJSON *json = NULL;
    int rc = 1;
    if (mt_scorer_report(s, &r) == PARLEY_OK && mt_report_json(r, -1, &json) == PARLEY_OK) {
        char *text = cJSON_PrintUnformatted(json);
        rc = !text || puts(text) < 0;
        free(text);
    } else {
        fprintf(stderr, "%s\n", parley_errmsg());
    }
    cJSON_Delete(json);
    mt_report_free(r);
    mt_scorer_free(s);
    return rc;
}

int main(int argc, char **argv)
{
    static char line[1 << 16];
    static char *gold[4096], *pred[4096];
    mt_scorer *s = NULL;
    FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;
    if (!f) {
        fprintf(stderr, "usage: metrics_tool FILE\n");
        return 2;
    }
    for (long ln = 1; fgets(line, sizeof line, f); ln++) {
        line[strcspn(line, "\n")] = '\0';
        if (!line[0]) {
            if (s && report(s) != 0)
                return 1;
            s = NULL;
            continue;
        }
        if (!s && mt_scorer_new(&s) != PARLEY_OK)
            return 1;
        char *field[4] = { line, NULL, NULL, NULL };
        for (int i = 1; i < 4; i++) {
            char *tab = field[i - 1] ? strchr(field[i - 1], '\t') : NULL;
            if (tab)
                *tab = '\0';
            field[i] = tab ? tab + 1 : NULL;
        }
        if (!field[3]) {
            fprintf(stderr, "%s:%ld: expected 4 tab-separated fields\n", argv[1], ln);
            return 1;
        }
        int ng = split(field[2], gold, 4096), np = split(field[3], pred, 4096);
        if (ng != np) {
            fprintf(stderr, "%s:%ld: %d gold tags, %d predicted\n", argv[1], ln, ng, np);
            return 1;
        }
        if (mt_scorer_add(s, field[0], field[1], ng, (const char *const *)gold,
                          (const char *const *)pred) != PARLEY_OK) {
            fprintf(stderr, "%s:%ld: %s\n", argv[1], ln, parley_errmsg());
            return 1;
        }
    }
    fclose(f);
    return s ? report(s) : 0;
}
