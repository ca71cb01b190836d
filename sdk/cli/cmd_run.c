/* cmd_run.c — `parley run` (`parley chat` is cmd_chat.c, `parley inspect` cmd_inspect.c).
 *
 * Opens a graph, runs it until its sources reach end of input (or SIGINT/SIGTERM), then
 * waits for the turns in flight and exits; the graph's error events go to stderr. All
 * through the public parley/pipeline.h; no pipeline logic lives here.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdk/cli/cli.h"

void cli_print_event(const parley_event *ev, void *user)
{
    (void)user;
    if (ev->type == PARLEY_EVENT_NODE_ERROR)
        fprintf(stderr, "parley: node '%s': %s\n", ev->node,
                ev->message[0] ? ev->message : parley_status_str(ev->status));
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

/* SIGINT and SIGTERM to handler: on_signal, or back to SIG_DFL. */
static void on_stop_signals(void (*handler)(int))
{
    struct sigaction sa = { .sa_handler = handler };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* Opens (loads and starts), runs to the end of input or a signal, drains, closes. */
static int run_graph(const char *path, const char *const *sets)
{
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.overrides = sets;
    pp.on_event = cli_print_event;
    parley_pipeline *p = NULL;
    /* The handlers come first: opening starts the graph, and a server answers clients
     * before open returns; a signal then waits in the pipe until the waiter reads it (seen:
     * a SIGTERM just after a websocket client's first turns killed the process unanswered) */
    int have_pipe = pipe(sig_pipe) == 0;
    if (have_pipe)
        on_stop_signals(on_signal);
    parley_status st = parley_pipeline_open(path, &pp, &p);
    pthread_t waiter;
    int have_waiter =
            st == PARLEY_OK && have_pipe && pthread_create(&waiter, NULL, wait_signal, p) == 0;
    if (have_pipe && !have_waiter)
        on_stop_signals(SIG_DFL);
    if (st != PARLEY_OK) {
        if (have_pipe) {
            close(sig_pipe[0]);
            close(sig_pipe[1]);
        }
        return cli_fail("run", st);
    }
    parley_pipeline_wait(p);
    if (have_waiter) {
        on_stop_signals(SIG_DFL);
        char c = 'e';
        if (write(sig_pipe[1], &c, 1) == 1)
            pthread_join(waiter, NULL);
    }
    if (have_pipe) {
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
    if (!sets)
        return 1;
    while (i + 1 < argc && !strcmp(argv[i], "--set")) {
        sets[n++] = argv[i + 1];
        i += 2;
    }
    if (argc < 2 || argv[1][0] == '-' || i != argc) {
        static const char *const names[] = { "--set", "--help", NULL };
        free(sets);
        if (argc >= 2)
            return cli_unknown_option("run", argv[1][0] == '-' ? argv[1] : argv[i], names);
        run_usage(stderr);
        return 2;
    }
    int rc = run_graph(argv[1], sets);
    free(sets);
    return rc;
}
