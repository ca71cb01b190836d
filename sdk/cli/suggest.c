/* suggest.c — "did you mean": the known name closest to a mistyped command or option.
 *
 * Closeness is the edit distance (insertions, deletions, substitutions and swaps of two
 * neighbours) between the typed word and each name; a name within a third of its length
 * (at least 1, at most 3 edits) is offered. Nothing here prints but cli_unknown_option.
 */
#include <stdio.h>
#include <string.h>

#include "sdk/cli/cli.h"

enum { MAX_WORD = 64 };

/* Optimal string alignment distance of a and b, both shorter than MAX_WORD. */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b), d[MAX_WORD + 1][MAX_WORD + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *cli_suggest(const char *word, const char *const *names)
{
    const char *best = NULL;
    size_t best_d = 0;
    if (strlen(word) >= MAX_WORD)
        return NULL;
    for (size_t i = 0; names[i]; i++) {
        size_t len = strlen(names[i]), limit = len / 3;
        if (len >= MAX_WORD)
            continue;
        limit = limit < 1 ? 1 : limit > 3 ? 3 : limit;
        size_t d = distance(word, names[i]);
        if (d <= limit && (!best || d < best_d)) {
            best = names[i];
            best_d = d;
        }
    }
    return best;
}

int cli_unknown_option(const char *cmd, const char *arg, const char *const *names)
{
    for (size_t i = 0; names[i]; i++)
        if (!strcmp(arg, names[i])) {
            fprintf(stderr, "parley %s: %s needs a value; parley help %s lists the options\n", cmd,
                    arg, cmd);
            return 2;
        }
    const char *near = cli_suggest(arg, names);
    fprintf(stderr, "parley %s: unknown option '%s'", cmd, arg);
    if (near)
        fprintf(stderr, " (did you mean %s?)", near);
    fprintf(stderr, "; parley help %s lists the options\n", cmd);
    return 2;
}
