/* test_domain_errors.c — one broken domain file per mistake the loader must name.
 *
 * Each file in tests/dialog/domains/ opens with `# expect: LINE:COL: words of the message`
 * (or `# expect: ok`) and may give the NLU model's labels to check against:
 *   # known_intents: greet, bye
 *   # known_entities: size
 * The test loads it and checks the status and that the message is "FILE:LINE:COL: ...".
 * A file that loads may list the warnings dm_domain_lint must give, in order, each as the
 * start of the message after "FILE:":
 *   # warn: 23:7: response 'utter_greet' says slot 'name'
 * and gives none but those (no `# warn:` line: no warning).
 * Every file is also loaded as parley check loads it (dm_domain_load_all), which must report
 * the problems its `# problem: LINE:COL: words` lines list, in order; a file without them
 * must report exactly its `# expect:` error (none for `ok`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialog/domain.h"
#include "tests/check.h"

/* Splits "a, b, c" (in place) into list; returns the count. */
static size_t split(char *s, const char **list, size_t cap)
{
    size_t n = 0;
    for (char *tok = strtok(s, ", \n"); tok && n < cap; tok = strtok(NULL, ", \n"))
        list[n++] = tok;
    return n;
}

enum { MAX_WARN = 8 };

/* The warnings a domain is expected to give, and those it gave. */
typedef struct warns {
    char want[MAX_WARN][512];
    int n_want, n_got;
    const char *file;
} warns;

static void got_warning(void *ctx, const char *message)
{
    warns *w = ctx;
    char want[1100] = "";
    if (w->n_got < w->n_want)
        snprintf(want, sizeof want, "%s:%s", w->file, w->want[w->n_got]);
    CHECK(w->n_got < w->n_want && !strncmp(message, want, strlen(want)),
          "%s: warning %d:\n  got:  %s\n  want: %s...", w->file, w->n_got + 1, message,
          *want ? want : "(none)");
    w->n_got++;
}

/* Loads the file as parley check does: the problems it reports against those wanted. */
static void check_all_problems(const char *file, const dm_known *known, warns *p)
{
    dm_problems problems = { got_warning, p, 0 };
    dm_domain *d = NULL;
    parley_status st = dm_domain_load_all(file, known, &problems, &d);
    CHECK((st == PARLEY_OK) == (p->n_want == 0) && problems.count == p->n_want &&
                  p->n_got == p->n_want,
          "%s: loaded with every problem: %s, %d problem(s), want %d", file, parley_status_str(st),
          problems.count, p->n_want);
    dm_domain_free(d);
}

static void run_file(const char *file)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        CHECK(0, "cannot open %s", file);
        return;
    }
    char line[512], expect[512] = "", intents[512], entities[512];
    const char *ilist[64], *elist[64];
    dm_known known = { 0 };
    warns w = { .file = file }, p = { .file = file };
    while (fgets(line, sizeof line, f) && line[0] == '#') {
        if (!strncmp(line, "# warn: ", 8) && w.n_want < MAX_WARN) {
            snprintf(w.want[w.n_want], sizeof w.want[0], "%s", line + 8);
            w.want[w.n_want][strcspn(w.want[w.n_want], "\n")] = '\0';
            w.n_want++;
        } else if (!strncmp(line, "# problem: ", 11) && p.n_want < MAX_WARN) {
            snprintf(p.want[p.n_want], sizeof p.want[0], "%s", line + 11);
            p.want[p.n_want][strcspn(p.want[p.n_want], "\n")] = '\0';
            p.n_want++;
        } else if (!strncmp(line, "# expect: ", 10))
            snprintf(expect, sizeof expect, "%s", line + 10);
        else if (!strncmp(line, "# known_intents: ", 17)) {
            snprintf(intents, sizeof intents, "%s", line + 17);
            known.intents = ilist;
            known.n_intents = split(intents, ilist, 64);
        } else if (!strncmp(line, "# known_entities: ", 18)) {
            snprintf(entities, sizeof entities, "%s", line + 18);
            known.entities = elist;
            known.n_entities = split(entities, elist, 64);
        }
    }
    fclose(f);
    expect[strcspn(expect, "\n")] = '\0';
    CHECK(expect[0], "%s: no '# expect:' line", file);
    dm_domain *d = NULL;
    parley_status st = dm_domain_load(file, &known, &d);
    if (!strcmp(expect, "ok")) {
        CHECK(st == PARLEY_OK, "%s: want ok, got %s", file, parley_errmsg());
        if (d)
            CHECK(dm_domain_lint(d, got_warning, &w) == PARLEY_OK && w.n_got == w.n_want,
                  "%s: %d warning(s), want %d", file, w.n_got, w.n_want);
    } else {
        char want[1100];
        snprintf(want, sizeof want, "%s:%s", file, expect);
        CHECK(st == PARLEY_ERR_CONFIG || st == PARLEY_ERR_FORMAT, "%s: want a config error, got %s",
              file, parley_status_str(st));
        CHECK(!strncmp(parley_errmsg(), want, strlen(want)), "%s:\n  got:  %s\n  want: %s...", file,
              parley_errmsg(), want);
    }
    dm_domain_free(d);
    if (!p.n_want && strcmp(expect, "ok"))
        snprintf(p.want[p.n_want++], sizeof p.want[0], "%s", expect);
    check_all_problems(file, &known, &p);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        run_file(argv[i]);
    return check_done();
}
