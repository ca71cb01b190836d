/* cmd_model.c — placeholder until this subcommand is written. */
#include <stdio.h>
#include "sdk/cli/cli.h"
int cmd_model(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "parley: model: not written yet\n"); return 1; }
