/* test_recipe.c — the training recipe's golden cases (nlu/train/recipe.h): each file of
 * tests/nlu/train/recipes/ is a profile written as data ("profile NAME VALUE" lines, as
 * `parley train --explain` prints them) and the whole recipe the table must give it with the
 * default parameters ("recipe NAME VALUE" lines, every field). The profiles hold what the
 * data sets measured, so the test needs no data set. Cases named "...-capitals-X" and
 * "...-lowercase-X" (the same examples, their slot values capitalized or not) must also give
 * one recipe. With --page FILE: FILE holds the table of rules as train_recipe_table writes it
 * in markdown (docs/training.md's defaults table is generated from the table, and checked
 * here).
 *
 *   test_recipe CASE.recipe ...
 *   test_recipe --page docs/training.md
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/train/recipe.h"
#include "sdk/base/alloc.h"
#include "sdk/base/files.h"
#include "tests/check.h"

enum { MAX_TEXT = 1 << 22 };

/* The recipe's values for the case in path, or NULL (a failure is recorded). *expected
 * receives the file's "recipe" lines, one "NAME VALUE\n" each (the caller's to pl_free). */
static char *decide_case(const char *path, char **expected)
{
    char *text = NULL, *values = NULL, *line, *save = NULL;
    size_t len;
    train_profile pf = { .probe_scored = -1 };
    train_recipe r = { 0 };
    *expected = pl_calloc(MAX_TEXT, 1);
    size_t at = 0;
    if (!*expected || pl_read_file(path, MAX_TEXT, &text, &len) != PARLEY_OK) {
        CHECK(0, "%s: unreadable: %s", path, parley_errmsg());
        goto done;
    }
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char what[16], name[64], value[64];
        if (line[0] == '#' || !line[0])
            continue;
        if (sscanf(line, "%15s %63s %63s", what, name, value) != 3) {
            CHECK(0, "%s: \"%s\": not WHAT NAME VALUE", path, line);
            continue;
        }
        if (!strcmp(what, "profile"))
            CHECK(train_profile_set(&pf, name, strtod(value, NULL)), "%s: no profile field %s",
                  path, name);
        else if (!strcmp(what, "recipe"))
            at += (size_t)snprintf(*expected + at, MAX_TEXT - at, "%s %s\n", name, value);
        else
            CHECK(0, "%s: \"%s\": profile or recipe?", path, what);
    }
    const parley_train_params p = parley_train_params_default();
    if (train_recipe_decide(&p, &pf, &r) != PARLEY_OK ||
        train_recipe_values(&r, &values) != PARLEY_OK)
        CHECK(0, "%s: deciding: %s", path, parley_errmsg());
done:
    train_recipe_clear(&r);
    pl_free(text);
    return values;
}

/* Whether b has line (with its newline) as one of its lines. */
static int has_line(const char *b, const char *line)
{
    const size_t n = strlen(line);
    for (const char *s = b; *s; s += strcspn(s, "\n") + 1) {
        if (!strncmp(s, line, n))
            return 1;
        if (!s[strcspn(s, "\n")])
            break;
    }
    return 0;
}

/* The first line of a that b lacks, or NULL. */
static const char *first_difference(const char *a, const char *b, char *line, size_t size)
{
    for (const char *s = a; *s;) {
        size_t n = strcspn(s, "\n");
        snprintf(line, size, "%.*s\n", (int)n, s);
        if (!has_line(b, line))
            return line;
        s += n + (s[n] == '\n');
    }
    return NULL;
}

static void golden(int n, char **paths)
{
    char **got = pl_calloc((size_t)n + 1, sizeof *got), line[256];
    for (int i = 0; got && i < n; i++) {
        char *want = NULL;
        got[i] = decide_case(paths[i], &want);
        const char *d1 = got[i] && want ? first_difference(got[i], want, line, sizeof line) : NULL;
        CHECK(got[i] && want && !d1, "%s: the table gives %s", paths[i], d1 ? d1 : "nothing");
        const char *d2 = got[i] && want ? first_difference(want, got[i], line, sizeof line) : NULL;
        CHECK(!d2, "%s: the case wants %s", paths[i], d2 ? d2 : "");
        pl_free(want);
    }
    /* Capitalization alone changes nothing. */
    for (int i = 0; got && i < n; i++) {
        const char *cap = strstr(paths[i], "-capitals-");
        for (int j = 0; cap && j < n; j++) {
            const char *low = strstr(paths[j], "-lowercase-");
            if (low && low - paths[j] == cap - paths[i] &&
                !strncmp(paths[i], paths[j], (size_t)(cap - paths[i])) &&
                !strcmp(cap + strlen("-capitals-"), low + strlen("-lowercase-")))
                CHECK(got[i] && got[j] && !strcmp(got[i], got[j]),
                      "%s and %s: capitalization changed the recipe", paths[i], paths[j]);
        }
    }
    for (int i = 0; got && i < n; i++)
        pl_free(got[i]);
    pl_free(got);
}

static void page(const char *path)
{
    char *text = NULL, *table = NULL;
    size_t len;
    CHECK(pl_read_file(path, MAX_TEXT, &text, &len) == PARLEY_OK &&
                  train_recipe_table(1, &table) == PARLEY_OK,
          "%s: %s", path, parley_errmsg());
    CHECK(text && table && strstr(text, table),
          "%s does not hold the recipe's table as nlu/train/recipe.c has it; its rows are:\n%s",
          path, table ? table : "");
    pl_free(text);
    pl_free(table);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--page"))
        page(argv[2]);
    else
        golden(argc - 1, argv + 1);
    CHECK(argc > 1, "no cases");
    return check_done();
}
