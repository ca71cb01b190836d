/* main.c — the `parley` command-line tool: dispatches to subcommands.
 *
 * It installs a stderr logger and leaves all real work to the library; each subcommand
 * lives in its own cmd_*.c file with its own --help. One thing it does that a library
 * cannot: when OpenBLAS did not recognize the CPU and loaded slow kernels, it starts itself
 * again with OPENBLAS_CORETYPE set (see parley_nlu_blas_coretype), unless that variable is
 * set.
 */
#include <errno.h>
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
    { "run", cmd_run, "run a pipeline graph (YAML) until its input ends" },
    { "chat", cmd_chat, "talk to a pipeline graph on the terminal" },
    { "stream", cmd_stream, "talk to a parley websocket server (typed turns or a WAV file)" },
    { "inspect", cmd_inspect, "list node kinds, or one kind's ports and params" },
    { "nlu", cmd_nlu, "parse utterances with a model (nlu predict)" },
    { "train", cmd_train, "train a joint intent/slot model from examples" },
    { "pretrain", cmd_pretrain, "pretrain an encoder on plain text (masked language model)" },
    { "eval", cmd_eval, "score a model on annotated examples (nlu.yaml or seq.in/seq.out/label)" },
    { "model", cmd_model, "create model directories (model init)" },
    { "tokenize", cmd_tokenize, "split text into WordPiece tokens with offsets" },
    { "bench", cmd_bench, "measure speed (bench nlu)" },
    { "store", cmd_store, "migrate, export, import or purge a context store" },
    { "asr", cmd_asr, "build the recognizer's grammar from nlu.yaml, transcribe audio files" },
};

static void usage(FILE *f)
{
    fprintf(f, "usage: parley [-v|-q] <command> [args]   (parley <command> --help for "
               "more)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n  -v  log debug lines to stderr    -q  log only errors\n  --version\n");
}

static void log_stderr(parley_log_level level, const char *msg, void *user_data)
{
    static const char *names[] = { "debug", "info", "warn", "error" };
    (void)user_data;
    fprintf(stderr, "parley: %s: %s\n", names[level], msg);
}

int cli_fail(const char *what, parley_status st)
{
    const char *detail = parley_errmsg();
    fprintf(stderr, "parley: %s: %s%s%s\n", what, parley_status_str(st), *detail ? ": " : "",
            detail);
    return 1;
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
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
        if (!strcmp(argv[i], commands[c].name))
            return commands[c].run(argc - i, argv + i);
    fprintf(stderr, "parley: unknown command '%s'\n", argv[i]);
    usage(stderr);
    return 2;
}
