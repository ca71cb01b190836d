/* cmd_bench.c — placeholder until this subcommand is written. */
#include <stdio.h>
#include "sdk/cli/cli.h"
int cmd_bench(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "parley: bench: not written yet\n"); return 1; }
