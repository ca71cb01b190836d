/* cli.h — the `parley` command-line tool's subcommands and the helpers they share.
 *
 * Each subcommand is `int cmd_x(int argc, char **argv)` with argv[0] = its own name and
 * returns the process exit code: 0 success, 1 failure, 2 usage error.
 */
#ifndef CLI_H
#define CLI_H

#include "parley/parley.h"

/* The defaults of --device and --precision, the same in every command that takes them. */
#define CLI_DEVICE         "auto"
#define CLI_PRECISION      "bf16"
#define CLI_DEVICE_HELP    "auto (default: the first GPU that works, else the CPU) | cpu | cuda:N"
#define CLI_PRECISION_HELP "GPU storage: bf16 (default) | fp16 | fp32"

int cmd_model(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_nlu(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_pretrain(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_chat(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_asr(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_store(int argc, char **argv);
int cmd_init(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_test(int argc, char **argv);
int cmd_help(int argc, char **argv);

/* Prints "parley <what>: <errmsg>" (the status's name when there is no message) to stderr,
 * with how to make the model when the message says a model directory is missing; returns 1. */
int cli_fail(const char *what, parley_status st);
/* True when argv[i] is "-h" or "--help". */
int cli_is_help(const char *arg);
/* Parses a decimal int in [lo, hi] for option `opt`; prints an error and returns -1 if bad. */
int cli_parse_int(const char *opt, const char *s, long lo, long hi, int *out);

/* A file `parley init` writes: its path in the bot's folder and its text. */
typedef struct cli_file {
    const char *name;
    const char *text;
} cli_file;
/* The starter bot (samples/starter/, embedded at build time), ended by {NULL, NULL}. */
extern const cli_file cli_starter_files[];

/* A pipeline's events as `parley run` and `parley chat` print them (a parley_event_fn):
 * node errors and failed turns to stderr. */
void cli_print_event(const parley_event *ev, void *user);
/* A confidence as every command prints it: rounded to 4 decimals. */
double cli_confidence(float p);
/* The name in the NULL-terminated `names` closest to the mistyped `word`, or NULL when none
 * is close (suggest.c). */
const char *cli_suggest(const char *word, const char *const *names);
/* Prints "parley CMD: unknown option 'ARG' (did you mean ...?)" — or, when ARG is one of the
 * NULL-terminated `names`, that it needs a value — and returns 2 (the usage exit code). */
int cli_unknown_option(const char *cmd, const char *arg, const char *const *names);

#endif
