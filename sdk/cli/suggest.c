/* suggest.c — "did you mean": the known name closest to a mistyped command or option.
 *
 * Closeness is yd_nearest's (sdk/base/yaml_doc.h), by which YAML keys and a domain's names
 * are offered too. Nothing here prints but cli_unknown_option.
 */
#include <stdio.h>
#include <string.h>

#include "sdk/base/yaml_doc.h"
#include "sdk/cli/cli.h"

const char *cli_suggest(const char *word, const char *const *names)
{
    size_t n = 0;
    while (names[n])
        n++;
    return yd_nearest(word, names, n);
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
