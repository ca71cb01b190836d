/* cli.h — the `parley` command-line tool's subcommands and the helpers they share.
 *
 * Each subcommand is `int cmd_x(int argc, char **argv)` with argv[0] = its own name and
 * returns the process exit code: 0 success, 1 failure, 2 usage error.
 */
#ifndef CLI_H
#define CLI_H

#include "parley/parley.h"

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

/* Prints "parley: <what>: <status>: <errmsg>" to stderr and returns 1. */
int cli_fail(const char *what, parley_status st);
/* True when argv[i] is "-h" or "--help". */
int cli_is_help(const char *arg);
/* Parses a decimal int in [lo, hi] for option `opt`; prints an error and returns -1 if bad. */
int cli_parse_int(const char *opt, const char *s, long lo, long hi, int *out);

#endif
