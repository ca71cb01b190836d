/* cmd_asr.c — `parley asr build` and `parley asr transcribe`: the recognizer of the
 * asr.pocketsphinx node outside a graph.
 *
 * `build` makes (or finds cached) the grammar a graph's asr.pocketsphinx node would build
 * from the same nlu.yaml, so a deployment can build it ahead of time; `transcribe` decodes
 * audio files (any format GStreamer reads) with it and prints one transcript per line. The
 * work is services/asr.h's; this file reads options and prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "sdk/cli/cli.h"
#include "services/asr.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: parley asr build --nlu FILE [--cache DIR] [--dict FILE]\n"
               "       parley asr transcribe [--nlu FILE] [--cache DIR] [--no-fallback] FILE...\n"
               "\n"
               "build       builds the recognizer's grammar from a bot's nlu.yaml (as the\n"
               "            asr.pocketsphinx node does at start-up) and prints where it is\n"
               "transcribe  prints the transcript of each audio file (WAV, FLAC, ...), one per "
               "line;\n"
               "            with --nlu through the bot's grammar, else the generic English model\n"
               "\n"
               "  --nlu FILE     the bot's nlu.yaml\n"
               "  --cache DIR    where grammars are cached (default ~/.cache/parley/asr)\n"
               "  --dict FILE    pronunciation dictionary (default Debian's cmudict-en-us)\n"
               "  --no-fallback  no generic model for speech outside the grammar\n");
}

int cmd_asr(int argc, char **argv)
{
    const char *nlu = NULL, *cache = NULL;
    svc_ps_params p = svc_ps_params_default();
    int first = 0;
    if (argc < 2 || cli_is_help(argv[1])) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    int build = !strcmp(argv[1], "build");
    if (!build && strcmp(argv[1], "transcribe")) {
        fprintf(stderr, "parley asr: unknown command '%s'\n", argv[1]);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--no-fallback")) {
            p.fallback = 0;
        } else if ((!strcmp(a, "--nlu") || !strcmp(a, "--cache") || !strcmp(a, "--dict")) &&
                   i + 1 < argc) {
            const char **dst = a[2] == 'n' ? &nlu : a[2] == 'c' ? &cache : &p.dict;
            *dst = argv[++i];
        } else if (a[0] == '-') {
            fprintf(stderr, "parley asr: unknown option '%s'\n", a);
            return 2;
        } else if (!first) {
            first = i;
        }
    }
    if (build ? !nlu || first : !first) {
        usage(stderr);
        return 2;
    }
    parley_status st;
    svc_grammar_info g;
    if (nlu && (st = svc_grammar_build(nlu, p.dict, cache, &g)) != PARLEY_OK)
        return cli_fail("asr build", st);
    if (build) {
        printf("%s\n%d sentences, %d slot classes with %d values, %d phrases dropped%s\n", g.path,
               g.sentences, g.classes, g.values, g.dropped, g.cached ? " (cached)" : "");
        return 0;
    }
    p.grammar = nlu ? g.path : NULL;
    p.grammar_dict = nlu ? g.dict : NULL;
    svc_ps *ps;
    if ((st = svc_ps_open(&p, &ps)) != PARLEY_OK)
        return cli_fail("asr transcribe", st);
    int rc = 0;
    for (int i = first; i < argc; i++) {
        char *text = NULL;
        if (argv[i][0] == '-') {
            i += strcmp(argv[i], "--no-fallback") != 0;
            continue;
        }
        if ((st = svc_asr_transcribe_file(&svc_ps_engine, ps, argv[i], &text)) != PARLEY_OK) {
            rc = cli_fail(argv[i], st);
            continue;
        }
        printf("%s\n", text);
        fflush(stdout);
        pl_free(text);
    }
    svc_ps_close(ps);
    return rc;
}
