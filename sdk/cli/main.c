/* main.c — the `parley` command-line tool: dispatches to subcommands.
 *
 * It installs a stderr logger and leaves all real work to the library; each subcommand
 * lives in its own cmd_*.c file with its own --help (`parley help CMD` shows it). Every
 * error the tool prints reads "parley CMD: message"; a mistyped command or option gets the
 * nearest known one offered (suggest.c). One thing it does that a library
 * cannot: when OpenBLAS did not recognize the CPU and loaded slow kernels, it starts itself
 * again with OPENBLAS_CORETYPE set (see parley_nlu_blas_coretype), unless that variable is
 * set.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdk/cli/cli.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    { "init", cmd_init, "create a starter bot in a folder and train its model" },
    { "run", cmd_run, "run a pipeline graph (YAML) until its input ends" },
    { "chat", cmd_chat, "talk to a pipeline graph on the terminal" },
    { "stream", cmd_stream, "talk to a parley websocket server (typed turns or a WAV file)" },
    { "check", cmd_check, "check a bot: its graph, domain, examples and model together" },
    { "test", cmd_test, "run conversation tests against a bot's pipeline" },
    { "inspect", cmd_inspect, "list node kinds, or one kind's ports and params" },
    { "nlu", cmd_nlu, "parse utterances with a model (nlu predict)" },
    { "train", cmd_train, "train a joint intent/slot model from examples" },
    { "pretrain", cmd_pretrain, "pretrain an encoder on plain text (masked language model)" },
    { "eval", cmd_eval, "score a model on annotated examples (nlu.yaml or seq.in/seq.out/label)" },
    { "model", cmd_model, "create model directories (model init)" },
    { "tokenize", cmd_tokenize, "split text into WordPiece tokens with offsets" },
    { "bench", cmd_bench, "measure speed (bench nlu)" },
    { "store", cmd_store, "migrate, export, import or purge a context store" },
    { "asr", cmd_asr,
      "build the recognizer's language model from nlu.yaml, transcribe audio files" },
    { "help", cmd_help, "show the help of the tool or of one command" },
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static void usage(FILE *f)
{
    fprintf(f, "usage: parley [-v|-q] <command> [args]   (parley help <command> for "
               "more)\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n  -v  log debug lines to stderr    -q  log only errors\n  --version\n");
}

static void log_stderr(parley_log_level level, const char *msg, void *user_data)
{
    static const char *names[] = { "debug", "info", "warn", "error" };
    (void)user_data;
    fprintf(stderr, "parley: %s: %s\n", names[level], msg);
}

/* The command named `name`, or NULL. */
static int find_command(const char *name)
{
    for (int c = 0; c < N_COMMANDS; c++)
        if (!strcmp(name, commands[c].name))
            return c;
    return -1;
}

static int unknown_command(const char *name)
{
    const char *names[N_COMMANDS + 1];
    for (int c = 0; c < N_COMMANDS; c++)
        names[c] = commands[c].name;
    names[N_COMMANDS] = NULL;
    const char *near = cli_suggest(name, names);
    fprintf(stderr, "parley: unknown command '%s'", name);
    if (near)
        fprintf(stderr, " (did you mean '%s'?)", near);
    fprintf(stderr, "; parley help lists the commands\n");
    return 2;
}

int cmd_help(int argc, char **argv)
{
    if (argc < 2 || cli_is_help(argv[1])) {
        usage(stdout);
        return 0;
    }
    int c = find_command(argv[1]);
    if (c < 0 || c == N_COMMANDS - 1)
        return c < 0 ? unknown_command(argv[1]) : cmd_help(1, argv);
    char *args[] = { argv[1], "--help", NULL };
    return commands[c].run(2, args);
}

int cli_fail(const char *what, parley_status st)
{
    const char *detail = parley_errmsg();
    fprintf(stderr, "parley %s: %s\n", what, *detail ? detail : parley_status_str(st));
    /* A model directory that is not there yet: say how to make one. */
    const char *cfg = strstr(detail, "/config.json: cannot open");
    if (cfg) {
        const char *dir = cfg;
        while (dir > detail && !(dir[-1] == ' ' && dir - 1 > detail && dir[-2] == ':'))
            dir--;
        fprintf(stderr,
                "parley %s: no model in %.*s yet: train it first: parley train --data "
                "nlu.yaml --out %.*s\n",
                what, (int)(cfg - dir), dir, (int)(cfg - dir), dir);
    }
    return 1;
}

double cli_confidence(float p)
{
    return round((double)p * 1e4) / 1e4;
}

int cli_is_help(const char *arg)
{
    return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

int cli_parse_int(const char *opt, const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "parley: %s wants an integer in [%ld, %ld], got '%s'\n", opt, lo, hi,
                s ? s : "");
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* Re-executes the tool with OPENBLAS_CORETYPE naming faster kernels, where that helps;
 * returns only when it does not (or the exec failed, which just keeps the slow kernels). */
static void reload_with_better_blas(char **argv)
{
    const char *core = getenv("OPENBLAS_CORETYPE") ? NULL : parley_nlu_blas_coretype();
    if (core && setenv("OPENBLAS_CORETYPE", core, 1) == 0)
        execv("/proc/self/exe", argv);
}

int main(int argc, char **argv)
{
    reload_with_better_blas(argv);
    parley_log_level level = PARLEY_LOG_INFO;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-v"))
            level = PARLEY_LOG_DEBUG;
        else if (!strcmp(argv[i], "-q"))
            level = PARLEY_LOG_ERROR;
        else if (!strcmp(argv[i], "--version")) {
            printf("parley %s\n", parley_version());
            return 0;
        } else if (cli_is_help(argv[i])) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "parley: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    parley_log_set(log_stderr, NULL, level);
    int c = find_command(argv[i]);
    return c < 0 ? unknown_command(argv[i]) : commands[c].run(argc - i, argv + i);
}
