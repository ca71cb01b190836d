/* cmd_run.c — `parley run`, `parley chat` and `parley inspect`: the pipeline commands.
 *
 * run: opens a graph, runs it until its sources reach end of input (or SIGINT/SIGTERM),
 * then waits for the turns in flight and exits; the graph's error events go to stderr.
 * chat: the same on a terminal, with text.stdin/text.stdout switched to a prompt (through
 * `--set` overrides, so any graph with those two nodes works). inspect: the node kinds,
 * their ports and params. All through the public parley/pipeline.h; no pipeline logic
 * lives here.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdk/cli/cli.h"

static void print_event(const parley_event *ev, void *user)
{
    (void)user;
    if (ev->type == PARLEY_EVENT_NODE_ERROR)
        fprintf(stderr, "parley: node '%s': %s: %s\n", ev->node, parley_status_str(ev->status),
                ev->message);
    else if (ev->type == PARLEY_EVENT_TURN_FAILED)
        fprintf(stderr, "parley: node '%s': user %s turn %llu failed: %s\n", ev->node, ev->user,
                (unsigned long long)ev->id, ev->message);
}

/* SIGINT/SIGTERM may land on any thread (BLAS and OpenMP start threads of their own), so
 * the handler only writes a byte to a pipe; a normal thread reads it and stops the graph.
 * The byte 'e' from the main thread means the run ended by itself. */
static int sig_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
    char c = 's';
    (void)sig;
    if (write(sig_pipe[1], &c, 1) < 0) {
        /* nothing to do in a signal handler */
    }
}

static void *wait_signal(void *arg)
{
    char c = 0;
    while (read(sig_pipe[0], &c, 1) < 0) {
    }
    if (c == 's')
        parley_pipeline_stop(arg);
    return NULL;
}

/* Opens (loads and starts), runs to the end of input or a signal, drains, closes. */
static int run_graph(const char *path, const char *const *sets, const char *banner)
{
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.overrides = sets;
    pp.on_event = print_event;
    parley_pipeline *p = NULL;
    parley_status st = parley_pipeline_open(path, &pp, &p);
    if (st != PARLEY_OK)
        return cli_fail("run", st);
    pthread_t waiter;
    int have_waiter = pipe(sig_pipe) == 0 && pthread_create(&waiter, NULL, wait_signal, p) == 0;
    if (have_waiter) {
        struct sigaction sa = { .sa_handler = on_signal };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    if (banner) {
        fputs(banner, stdout);
        fflush(stdout);
    }
    parley_pipeline_wait(p);
    if (have_waiter) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        char c = 'e';
        if (write(sig_pipe[1], &c, 1) == 1)
            pthread_join(waiter, NULL);
        close(sig_pipe[0]);
        close(sig_pipe[1]);
    }
    parley_pipeline_close(p);
    return 0;
}

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: parley run GRAPH.yaml [--set NODE.PARAM=VALUE]...\n"
            "\n"
            "Runs the pipeline graph until its inputs end (or SIGINT/SIGTERM), then waits for\n"
            "the turns in flight. With text.stdin and text.stdout nodes, each input line is\n"
            "a turn (plain text, or {\"user\": ID, \"text\": ...}) and each reply one JSON line\n"
            "{\"user\",\"turn\",\"reply\",\"intent\",\"confidence\",\"slots\"}.\n"
            "  --set X.P=V  override param P of node X (or of every node of kind X)\n"
            "See `parley inspect` for the node kinds.\n");
}

int cmd_run(int argc, char **argv)
{
    if (argc >= 2 && cli_is_help(argv[1])) {
        run_usage(stdout);
        return 0;
    }
    /* Every argument after the graph is a `--set X=Y` pair: at most argc of them. */
    const char **sets = calloc((size_t)argc, sizeof *sets);
    int n = 0, i = 2;
    while (sets && i + 1 < argc && !strcmp(argv[i], "--set")) {
        sets[n++] = argv[i + 1];
        i += 2;
    }
    if (!sets || argc < 2 || argv[1][0] == '-' || i != argc) {
        free(sets);
        run_usage(stderr);
        return 2;
    }
    int rc = run_graph(argv[1], sets, NULL);
    free(sets);
    return rc;
}

static void chat_usage(FILE *f)
{
    fprintf(f, "usage: parley chat GRAPH.yaml [--user ID] [--verbose] [--set NODE.PARAM=VALUE]...\n"
               "\n"
               "Talks to a pipeline on the terminal: the graph's text.stdin node reads your lines\n"
               "and its text.stdout node prints the replies. End with Ctrl-D or Ctrl-C.\n"
               "  --user ID   your user id (default: the graph's, usually \"default\")\n"
               "  --verbose   also show the intent, its confidence and the slots\n");
}

/* True when one of the user's `--set`s names param `param` ("text.stdout.format") of the
 * node kind, so chat's own default for it gives way. */
static int user_sets(const char *const *sets, int n, const char *param)
{
    size_t len = strlen(param);
    for (int i = 0; i < n; i++)
        if (!strncmp(sets[i], param, len) && sets[i][len] == '=')
            return 1;
    return 0;
}

int cmd_chat(int argc, char **argv)
{
    if (argc >= 2 && cli_is_help(argv[1])) {
        chat_usage(stdout);
        return 0;
    }
    if (argc < 2 || argv[1][0] == '-') {
        chat_usage(stderr);
        return 2;
    }
    /* The user's --sets first, then chat's defaults for what they left alone: at most argc
     * + 4 entries, whatever the arguments. */
    const char **sets = calloc((size_t)argc + 5, sizeof *sets);
    const char *user = NULL;
    char *user_set = NULL;
    int n = 0, verbose = 0, rc = 2;
    if (!sets)
        goto done;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--user") && i + 1 < argc && !user) {
            user = argv[++i];
        } else if (!strcmp(argv[i], "--verbose")) {
            verbose = 1;
        } else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
            sets[n++] = argv[++i];
        } else {
            fprintf(stderr, "parley: chat: %s%s\n", argv[i],
                    !strcmp(argv[i], "--user") && user ? " is given twice" : ": not understood");
            chat_usage(stderr);
            goto done;
        }
    }
    int n_user = n;
    if (user) {
        if (user_sets(sets, n_user, "text.stdin.user")) {
            fprintf(stderr, "parley: chat: --user and --set text.stdin.user both name the user\n");
            goto done;
        }
        static const char prefix[] = "text.stdin.user=";
        if (!(user_set = malloc(sizeof prefix + strlen(user))))
            goto done;
        sets[n++] = strcat(strcpy(user_set, prefix), user);
    }
    if (!user_sets(sets, n_user, "text.stdout.format"))
        sets[n++] = "text.stdout.format=chat";
    if (!user_sets(sets, n_user, "text.stdout.prompt"))
        sets[n++] = "text.stdout.prompt='you> '" /* quoted: a --set value is YAML */;
    if (!isatty(STDIN_FILENO) && !user_sets(sets, n_user, "text.stdout.echo"))
        sets[n++] = "text.stdout.echo=true"; /* a script: show its lines, as a terminal would */
    if (verbose && !user_sets(sets, n_user, "text.stdout.verbose"))
        sets[n++] = "text.stdout.verbose=true";
    rc = run_graph(argv[1], sets, "you> ");
done:
    free(user_set);
    free(sets);
    return rc;
}

static void print_kind(const parley_kind_info *k)
{
    printf("%s — %s\n", k->name, k->doc);
    printf("  ports:\n");
    for (int p = 0; p < k->n_ports; p++) {
        const parley_port_info *ps = &k->ports[p];
        printf("    %-8s %-3s %-12s%s %s\n", ps->name, ps->input ? "in" : "out", ps->types,
               ps->required ? " (required)" : "", ps->doc);
    }
    printf("  params:%s\n", k->n_params ? "" : " none");
    for (int p = 0; p < k->n_params; p++) {
        const parley_param_info *ps = &k->params[p];
        const char *def = ps->default_value;
        char range[64] = "";
        if (ps->has_range)
            snprintf(range, sizeof range, " [%g, %g]", ps->lo, ps->hi);
        printf("    %-20s %s%s, %s%s — %s\n", ps->name, ps->type, range,
               def ? "default " : "required", def ? (def[0] ? def : "\"\"") : "", ps->doc);
    }
}

int cmd_inspect(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && cli_is_help(argv[1]))) {
        FILE *f = argc == 2 && cli_is_help(argv[1]) ? stdout : stderr;
        fprintf(f, "usage: parley inspect [KIND]\n\nLists the node kinds a graph can use, or one "
                   "kind's ports and params.\n");
        return f == stdout ? 0 : 2;
    }
    parley_kind_info *k;
    parley_status st;
    if (argc == 2) {
        if ((st = parley_kind_describe(argv[1], &k)) == PARLEY_ERR_NOT_FOUND) {
            fprintf(stderr, "parley: inspect: no node kind '%s' (`parley inspect` lists them)\n",
                    argv[1]);
            return 1;
        }
        if (st != PARLEY_OK)
            return cli_fail("inspect", st);
        print_kind(k);
        parley_kind_info_free(k);
        return 0;
    }
    const char *name;
    for (size_t i = 0; (name = parley_kind_name(i)); i++) {
        if ((st = parley_kind_describe(name, &k)) != PARLEY_OK)
            return cli_fail("inspect", st);
        printf("%-14s %s\n", k->name, k->doc);
        parley_kind_info_free(k);
    }
    return 0;
}
