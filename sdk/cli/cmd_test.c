/* cmd_test.c — `parley test`: conversation tests run against a bot's pipeline.
 *
 * A test file is a conversation: turns of what a user says and what the bot must answer
 * (the format of tests/dialog/conversations/, with `text` going through the whole
 * pipeline, model included). Each file runs on a fresh store in a temporary folder, each
 * user's first turn of a file starting a new session, so files do not depend on each other
 * or on the bot's own store. A failing turn is shown as a diff of the expected and actual
 * reply, intent and slots. The graph is driven through parley_pipeline_params.text_io; this
 * file only reads the tests (sdk/base/yaml_doc.h, for FILE:LINE:COL) and compares.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdk/base/yaml_doc.h"
#include "sdk/cli/cli.h"

enum { MAX_USERS = 64, MAX_FILES = 4096 };

typedef struct test_run {
    parley_pipeline *p;
    int turns, failed_turns, failed_files;
} test_run;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: parley test [PIPELINE.yaml] [TEST.yaml|DIR]...\n"
            "\n"
            "Runs conversation tests against a bot's pipeline and shows, for every turn that\n"
            "goes differently, the expected and the actual reply, intent and slots. Without\n"
            "arguments: pipeline.yaml and the tests in tests/ of the current folder; with only\n"
            "PIPELINE.yaml: the tests/ folder beside it. A DIR stands for its *.yaml files.\n"
            "Every file runs on a new, empty store (the bot's own is not touched).\n"
            "\n"
            "A test file:\n"
            "  turns:\n"
            "    - text: a large latte please     # what the user says (required)\n"
            "      user: alice                    # default \"test\"\n"
            "      restart: true                  # start a new session first (as /restart)\n"
            "      intent: order_drink            # the intent acted on (\"fallback\" under the\n"
            "                                     # domain's threshold)\n"
            "      reply: \"A large latte, is that right?\"   # the whole reply, and/or\n"
            "      reply_has: [\"is that right\"]   # parts it must contain\n"
            "      slots: { drink: latte, size: large }   # exactly the slots after the turn\n"
            "      new_session: false             # whether the turn began a session\n"
            "Exit code 0 when every turn passes, 1 otherwise, 2 for bad usage.\n");
}

/* The differences of one turn, printed as they are found. */
typedef struct turn_diff {
    const char *file;
    const yd_node *turn;
    const parley_reply *reply;
    int n; /* differences so far */
} turn_diff;

/* Prints a difference: the turn's place and text before the first, then "- what: want" and
 * "+ what: got". */
static void diff(turn_diff *d, const char *what, const char *want, const char *got)
{
    if (!d->n++)
        printf("  %s:%d: \"%s\"\n", d->file, d->turn->line, d->reply->text);
    printf("    - %s: %s\n    + %s: %s\n", what, want, what, got);
}

/* The reply's slots as "a=1 b=2" in buf ("(none)" for none). */
static const char *slots_text(const parley_reply *r, char *buf, size_t cap)
{
    size_t at = 0;
    snprintf(buf, cap, "(none)");
    for (size_t i = 0; i < r->n_slots && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s=%s", i ? " " : "", r->slots[i].name,
                               r->slots[i].value);
    return buf;
}

/* The expected slots as "a=1 b=2" in buf ("(none)" for none); 1 when they are exactly the
 * reply's. */
static int slots_match(const yd_node *want, const parley_reply *r, char *buf, size_t cap)
{
    size_t at = 0;
    int same = want->n == r->n_slots;
    snprintf(buf, cap, "(none)");
    for (size_t i = 0; i < want->n; i++) {
        const char *name = want->keys[i]->str, *value = want->items[i]->str;
        if (at < cap)
            at += (size_t)snprintf(buf + at, cap - at, "%s%s=%s", i ? " " : "", name, value);
        int found = 0;
        for (size_t j = 0; j < r->n_slots; j++)
            found |= !strcmp(r->slots[j].name, name) && !strcmp(r->slots[j].value, value);
        same &= found;
    }
    return same;
}

/* Compares the reply with the turn's expectations; prints the diff and returns the number
 * of differences. new_session: whether the turn began a session. */
static int compare(const char *file, const yd_node *t, const parley_reply *r, int new_session)
{
    const yd_node *v;
    turn_diff d = { file, t, r, 0 };
    char want[2048], got[2048];
    if (r->status != PARLEY_OK) {
        printf("  %s:%d: \"%s\": the turn failed: %s\n", file, t->line, r->text, r->error);
        return 1;
    }
    if ((v = yd_get(t, "intent")) && strcmp(v->str, r->intent))
        diff(&d, "intent", v->str, r->intent);
    if ((v = yd_get(t, "reply")) && strcmp(v->str, r->reply))
        diff(&d, "reply", v->str, r->reply);
    for (size_t i = 0; (v = yd_get(t, "reply_has")) && i < v->n; i++)
        if (!strstr(r->reply, v->items[i]->str)) {
            snprintf(want, sizeof want, "... %s ...", v->items[i]->str);
            diff(&d, "reply", want, r->reply);
        }
    if ((v = yd_get(t, "slots")) && !slots_match(v, r, want, sizeof want))
        diff(&d, "slots", want, slots_text(r, got, sizeof got));
    int flag;
    if ((v = yd_get(t, "new_session")) && yd_bool(v, &flag) == PARLEY_OK && flag != new_session)
        diff(&d, "new_session", flag ? "true" : "false", new_session ? "true" : "false");
    return d.n;
}

/* Checks a turn's keys and types (FILE:LINE:COL on error). */
static parley_status check_turn(const yd_node *t)
{
    static const char *const keys[] = { "text",      "user",  "restart",     "intent", "reply",
                                        "reply_has", "slots", "new_session", NULL };
    const yd_node *v;
    parley_status st;
    if ((st = yd_expect(t, YD_MAP, "a turn")) != PARLEY_OK ||
        (st = yd_check_keys(t, keys)) != PARLEY_OK ||
        (st = yd_require(t, "text", &v)) != PARLEY_OK ||
        (st = yd_expect(v, YD_SCALAR, "text")) != PARLEY_OK)
        return st;
    if ((v = yd_get(t, "reply_has")) && (st = yd_expect(v, YD_SEQ, "reply_has")) != PARLEY_OK)
        return st;
    for (size_t i = 0; v && i < v->n; i++)
        if ((st = yd_expect(v->items[i], YD_SCALAR, "a part of the reply")) != PARLEY_OK)
            return st;
    if ((v = yd_get(t, "slots")) && (st = yd_expect(v, YD_MAP, "slots")) != PARLEY_OK)
        return st;
    for (size_t i = 0; v && i < v->n; i++)
        if ((st = yd_expect(v->items[i], YD_SCALAR, "a slot value")) != PARLEY_OK)
            return st;
    int flag;
    if ((v = yd_get(t, "restart")) && (st = yd_bool(v, &flag)) != PARLEY_OK)
        return st;
    if ((v = yd_get(t, "new_session")) && (st = yd_bool(v, &flag)) != PARLEY_OK)
        return st;
    static const char *const scalars[] = { "user", "intent", "reply", NULL };
    for (size_t i = 0; scalars[i]; i++)
        if ((v = yd_get(t, scalars[i])) && (st = yd_expect(v, YD_SCALAR, scalars[i])) != PARLEY_OK)
            return st;
    return PARLEY_OK;
}

/* The file's turns, checked whole before any runs; NULL after printing why not. */
static const yd_node *read_turns(const char *file, yd_doc **doc)
{
    static const char *const top[] = { "turns", "description", NULL };
    const yd_node *root = NULL, *turns = NULL;
    parley_status st = yd_parse_file(file, doc);
    if (st == PARLEY_OK && !(root = yd_root(*doc))) {
        printf("  %s: the file is empty; a test has turns:\n", file);
        return NULL;
    }
    if (st == PARLEY_OK && (st = yd_expect(root, YD_MAP, "a conversation test")) == PARLEY_OK &&
        (st = yd_check_keys(root, top)) == PARLEY_OK &&
        (st = yd_require(root, "turns", &turns)) == PARLEY_OK)
        st = yd_expect(turns, YD_SEQ, "turns");
    for (size_t i = 0; st == PARLEY_OK && i < turns->n; i++)
        st = check_turn(turns->items[i]);
    if (st != PARLEY_OK) {
        printf("  %s\n", parley_errmsg());
        return NULL;
    }
    return turns;
}

/* Runs one file; returns 1 when it passed. */
static int run_file(test_run *run, const char *file)
{
    yd_doc *doc = NULL;
    const yd_node *turns = read_turns(file, &doc);
    const char *users[MAX_USERS], *sessions[MAX_USERS] = { NULL };
    size_t n_users = 0;
    int failed = !turns;
    for (size_t i = 0; turns && i < turns->n; i++) {
        const yd_node *t = turns->items[i], *v = yd_get(t, "user"), *rs = yd_get(t, "restart");
        const char *user = v ? v->str : "test";
        int restart = 0;
        if (rs)
            yd_bool(rs, &restart);
        size_t u = 0;
        while (u < n_users && strcmp(users[u], user))
            u++;
        if (u == n_users && n_users < MAX_USERS)
            users[n_users++] = user;
        if (u == MAX_USERS) {
            printf("  %s:%d: more than %d users in one file\n", file, t->line, MAX_USERS);
            failed = 1;
            break;
        }
        /* A user's first turn in a file starts a session, so files stand alone. */
        unsigned flags = restart || !sessions[u] ? PARLEY_SUBMIT_NEW_SESSION : 0;
        parley_reply *r = NULL;
        parley_status st =
                parley_pipeline_submit_flags(run->p, user, yd_get(t, "text")->str, flags, NULL);
        if (st == PARLEY_OK)
            st = parley_pipeline_poll(run->p, -1, &r);
        if (st != PARLEY_OK) {
            printf("  %s:%d: %s\n", file, t->line, parley_errmsg());
            failed = 1;
            break;
        }
        int new_session = !sessions[u] || strcmp(sessions[u], r->session) != 0;
        free((char *)sessions[u]);
        sessions[u] = strdup(r->session);
        run->turns++;
        if (compare(file, t, r, new_session)) {
            run->failed_turns++;
            failed = 1;
        }
        parley_reply_free(r);
    }
    for (size_t u = 0; u < n_users; u++)
        free((char *)sessions[u]);
    yd_free(doc);
    printf("%s %s\n", failed ? "FAIL" : "ok  ", file);
    run->failed_files += failed;
    return !failed;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds `path` to files: a file as it is, a folder as its .yaml and .yml files in name order.
 * Returns 0, or 1 after printing why not. */
static int add_tests(const char *path, char **files, int *n)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "parley test: %s: no such file or folder\n", path);
        return 1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        if (*n == MAX_FILES || !(files[*n] = strdup(path)))
            return 1;
        (*n)++;
        return 0;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    int first = *n;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        int yaml = (len > 5 && !strcmp(e->d_name + len - 5, ".yaml")) ||
                   (len > 4 && !strcmp(e->d_name + len - 4, ".yml"));
        if (!yaml || e->d_name[0] == '.')
            continue;
        if (*n == MAX_FILES || !(files[*n] = malloc(strlen(path) + len + 2))) {
            closedir(d);
            return 1;
        }
        sprintf(files[(*n)++], "%s/%s", path, e->d_name);
    }
    if (d)
        closedir(d);
    qsort(files + first, (size_t)(*n - first), sizeof *files, by_name);
    return 0;
}

/* The folder of `path` ("." when it has none) in buf. */
static const char *dir_of(const char *path, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    snprintf(buf, cap, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    return buf;
}

/* Opens the graph on a store in `tmp`; a graph without a dialog node opens without it. */
static parley_status open_graph(const char *graph, const char *tmp, parley_pipeline **out)
{
    char store[4200];
    snprintf(store, sizeof store, "dialog.frames.store=%s/test.db", tmp);
    const char *sets[] = { store, NULL };
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.text_io = 1;
    pp.overrides = sets;
    parley_status st = parley_pipeline_open(graph, &pp, out);
    if (st == PARLEY_ERR_NOT_FOUND && strstr(parley_errmsg(), "--set dialog.frames.store")) {
        pp.overrides = NULL;
        st = parley_pipeline_open(graph, &pp, out);
    }
    return st;
}

int cmd_test(int argc, char **argv)
{
    const char *graph = "pipeline.yaml";
    char **files = calloc(MAX_FILES, sizeof *files), dir[4096], tmp[] = "/tmp/parley-test-XXXXXX";
    int n = 0, rc = 2, first = 1;
    test_run run = { 0 };
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i]) || argv[i][0] == '-') {
            static const char *const names[] = { "--help", NULL };
            free(files);
            if (cli_is_help(argv[i])) {
                usage(stdout);
                return 0;
            }
            return cli_unknown_option("test", argv[i], names);
        }
    if (!files)
        return 1;
    if (argc > 1) {
        graph = argv[1];
        first = 2;
    }
    for (int i = first; i < argc; i++)
        if (add_tests(argv[i], files, &n))
            goto done;
    if (first == argc) {
        char tests[4200];
        snprintf(tests, sizeof tests, "%s/tests", dir_of(graph, dir, sizeof dir));
        if (access(graph, F_OK) != 0 || access(tests, F_OK) != 0) {
            fprintf(stderr, "parley test: no %s here%s (parley init DIR makes a bot with tests)\n",
                    access(graph, F_OK) ? graph : tests,
                    argc == 1 ? ": run it in a bot's folder, or name PIPELINE.yaml" : "");
            goto done;
        }
        if (add_tests(tests, files, &n))
            goto done;
    }
    if (!n) {
        fprintf(stderr, "parley test: no test files\n");
        goto done;
    }
    if (!mkdtemp(tmp)) {
        perror("parley test: a temporary folder");
        rc = 1;
        goto done;
    }
    rc = 1;
    char store[4200];
    for (int i = 0; i < n; i++) {
        parley_status st = open_graph(graph, tmp, &run.p);
        if (st != PARLEY_OK) {
            cli_fail("test", st);
            run.failed_files = 1;
            break;
        }
        run_file(&run, files[i]);
        parley_pipeline_close(run.p);
        static const char *const ends[] = { "", "-wal", "-shm" };
        for (size_t e = 0; e < 3; e++) {
            snprintf(store, sizeof store, "%s/test.db%s", tmp, ends[e]);
            unlink(store);
        }
    }
    rmdir(tmp);
    printf("%d file(s), %d turn(s): %d file(s) failed, %d turn(s) failed\n", n, run.turns,
           run.failed_files, run.failed_turns);
    rc = run.failed_files ? 1 : 0;
done:
    for (int i = 0; i < n; i++)
        free(files[i]);
    free(files);
    return rc;
}
