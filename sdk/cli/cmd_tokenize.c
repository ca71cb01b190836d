/* cmd_tokenize.c — placeholder until this subcommand is written. */
#include <stdio.h>
#include "sdk/cli/cli.h"
int cmd_tokenize(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "parley: tokenize: not written yet\n"); return 1; }
