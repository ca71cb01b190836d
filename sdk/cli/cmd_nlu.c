/* cmd_nlu.c — placeholder until this subcommand is written. */
#include <stdio.h>
#include "sdk/cli/cli.h"
int cmd_nlu(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "parley: nlu: not written yet\n"); return 1; }
