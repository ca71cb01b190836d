/* train_cli.h — what `parley train` and `parley pretrain` share: table-driven option
 * parsing into a params struct, and the progress view (a live \r-updated line on a
 * terminal, plain log lines otherwise) with the first Ctrl-C turned into a clean stop.
 */
#ifndef CLI_TRAIN_CLI_H
#define CLI_TRAIN_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "parley/parley.h"

typedef enum opt_kind {
    OPT_STR,
    OPT_INT,
    OPT_U64,
    OPT_FLOAT,
    OPT_FLAG,
    OPT_MARK,   /* a flag that only marks its group as given (opt_parse.given) */
    OPT_SWITCH, /* "on" or "off" into a parley_switch */
    OPT_WARMUP, /* "0.1" a fraction (float at off), "100" steps (long at off2); -1 steps */
    OPT_LIST,   /* the following arguments up to the next "--x": pointer at off, count (int) at off2
                 */
} opt_kind;

/* Which options go together; a command checks the groups given against each other. */
enum { G_ALWAYS = 0, G_SHAPE = 1, G_VOCAB = 2, G_SETTING = 4, G_FORCE = 8, G_EXPLAIN = 16 };

typedef struct opt_def {
    const char *name;
    opt_kind kind;
    size_t off, off2; /* into the params struct */
    double lo, hi;    /* OPT_INT and OPT_FLOAT ranges */
    int group;
} opt_def;

typedef struct opt_parse {
    const char *cmd; /* "train": named in error messages */
    void (*usage)(FILE *f);
    int quiet;      /* --quiet was given */
    int given;      /* the groups of the options given, or-ed */
    int vocab_opts; /* how many G_VOCAB options were given */
} opt_parse;

/* Fills params from argv by the command's table (n options), then the options every
 * training command has (model shape, vocabulary, optimizer, seed, threads, device: their
 * offsets are into a parley_train_params, which must begin params); --help and --quiet are
 * built in. Returns 0, 1 after printing the help, or 2 after printing a usage error. */
int cli_parse_opts(opt_parse *o, const opt_def *opts, int n, int argc, char **argv, void *params);
/* Prints the help of the common options with d's defaults; init_note says what --init
 * keeps or replaces, lr_init is the default learning rate with --init. */
void cli_train_common_help(FILE *f, const parley_train_params *d, const char *init_note,
                           float lr_init);
/* Prints "parley CMD: what" to stderr and returns 2. */
int cli_usage_error(const opt_parse *o, const char *what);

typedef struct train_view {
    int quiet, tty;
    double last_draw; /* when the live line was last drawn (monotonic seconds) */
    int line_open;    /* a \r line is on screen without its newline */
    void (*start)(const parley_train_progress *pr); /* prints PARLEY_TRAIN_START's lines */
} train_view;

/* The progress callback for parley_train_params.progress, with a train_view as user_data; it
 * returns nonzero once Ctrl-C was pressed (after cli_train_signals(1)). */
int cli_train_progress(const parley_train_progress *pr, void *view);
/* Installs (on = 1) or removes the SIGINT handler: the first Ctrl-C asks for a stop, a
 * second ends the process. */
void cli_train_signals(int on);
/* Closes the live line if one is open. */
void cli_train_end_line(train_view *v);
/* Seconds as "1.5s", "2m05s" or "1h02m" in buf. */
const char *cli_duration(double s, char *buf, size_t cap);

#endif
