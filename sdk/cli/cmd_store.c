/* cmd_store.c — `parley store`: migrate, export, import and purge a context store.
 *
 * A thin client of parley/dialog.h's parley_store_* calls: it parses the command line,
 * opens the files it was given and prints what was done. The store is a SQLite file or a
 * postgresql:// URI, as the dialog.frames node's `store` param; what export writes and
 * import reads (JSON lines, one user each) is described in docs/dialog.md
 * ("parley store") and docs/limits.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parley/dialog.h"
#include "sdk/cli/cli.h"

static void store_usage(FILE *f)
{
    fprintf(f,
            "usage: parley store migrate STORE\n"
            "       parley store export STORE [-o FILE]\n"
            "       parley store import STORE [-i FILE]\n"
            "       parley store purge STORE --older-than DAYS\n"
            "\n"
            "STORE is a SQLite file or a postgresql://[user@]host[:port]/database URI (the\n"
            "password from the URI, PGPASSWORD or ~/.pgpass; it is never printed).\n"
            "\n"
            "  migrate  create or migrate the schema, then exit\n"
            "  export   every user's context and history as JSON lines (default: stdout)\n"
            "  import   JSON lines from export (default: stdin); each user replaces what the\n"
            "           store held for it: SQLite -> PostgreSQL and back keeps every user\n"
            "  purge    delete the users inactive for more than DAYS days, with their history\n");
}

static int run_store(const char *sub, const char *where, const char *file, double days)
{
    long n = 0;
    parley_status st;
    FILE *f = NULL;
    if (!strcmp(sub, "migrate")) {
        st = parley_store_migrate(where);
        if (st == PARLEY_OK)
            fprintf(stderr, "parley: store: schema up to date\n");
        return st == PARLEY_OK ? 0 : cli_fail("store migrate", st);
    }
    if (!strcmp(sub, "purge")) {
        st = parley_store_purge(where, days, &n);
        if (st == PARLEY_OK)
            fprintf(stderr, "parley: store: purged %ld users inactive for over %g days\n", n, days);
        return st == PARLEY_OK ? 0 : cli_fail("store purge", st);
    }
    int out = !strcmp(sub, "export");
    if (file) {
        f = fopen(file, out ? "w" : "r");
        if (!f) {
            fprintf(stderr, "parley: store %s: %s: %s\n", sub, file, strerror(errno));
            return 1;
        }
    }
    st = out ? parley_store_export(where, f ? f : stdout, &n)
             : parley_store_import(where, f ? f : stdin, &n);
    if (f && fclose(f) != 0 && st == PARLEY_OK) {
        fprintf(stderr, "parley: store %s: %s: %s\n", sub, file, strerror(errno));
        return 1;
    }
    if (st != PARLEY_OK)
        return cli_fail(out ? "store export" : "store import", st);
    fprintf(stderr, "parley: store: %s %ld users\n", out ? "exported" : "imported", n);
    return 0;
}

int cmd_store(int argc, char **argv)
{
    if (argc < 2 || cli_is_help(argv[1])) {
        store_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *sub = argv[1], *where = NULL, *file = NULL;
    double days = -1;
    if (strcmp(sub, "migrate") && strcmp(sub, "export") && strcmp(sub, "import") &&
        strcmp(sub, "purge")) {
        fprintf(stderr, "parley: store: unknown subcommand '%s'\n", sub);
        store_usage(stderr);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (cli_is_help(a)) {
            store_usage(stdout);
            return 0;
        } else if (((!strcmp(a, "-o") && !strcmp(sub, "export")) ||
                    (!strcmp(a, "-i") && !strcmp(sub, "import"))) &&
                   val) {
            file = val, i++;
        } else if (!strcmp(a, "--older-than") && !strcmp(sub, "purge") && val) {
            days = strtod(val, &end);
            if (end == val || *end || !(days >= 0)) {
                fprintf(stderr, "parley: store purge: --older-than wants days >= 0, got '%s'\n",
                        val);
                return 2;
            }
            i++;
        } else if (!where && a[0] != '-') {
            where = a;
        } else {
            fprintf(stderr, "parley: store %s: unexpected argument '%s'\n", sub, a);
            store_usage(stderr);
            return 2;
        }
    }
    if (!where || (!strcmp(sub, "purge") && days < 0)) {
        fprintf(stderr, "parley: store %s: %s\n", sub,
                !where ? "which store? (a SQLite file or a postgresql:// URI)"
                       : "purge needs --older-than DAYS");
        return 2;
    }
    return run_store(sub, where, file, days);
}
