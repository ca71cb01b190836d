/* cmd_asr.c — `parley asr build` and `parley asr transcribe`: the recognizer of the
 * asr.pocketsphinx node outside a graph.
 *
 * `build` makes (or finds cached) the language model a graph's asr.pocketsphinx node would build
 * from the same nlu.yaml, so a deployment can build it ahead of time; `transcribe` decodes
 * audio files (any format GStreamer reads) with it and prints one transcript per line (with
 * --confidence, after how sure the recognizer is of it). The
 * work is the public parley/asr.h's; this file reads options and prints.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: parley asr build --nlu FILE [--cache DIR] [--lexicon FILE]\n"
               "                        [--grammar | --generic W]\n"
               "       parley asr transcribe [--nlu FILE] [--cache DIR] [--lexicon FILE]\n"
               "                             [--grammar | --generic W] [--no-fallback] "
               "[--no-speaker-warp]\n"
               "                             [--confidence] FILE...\n"
               "\n"
               "build       builds the recognizer's language model from a bot's nlu.yaml (as "
               "the\n"
               "            asr.pocketsphinx node does at start-up) and prints where it is\n"
               "transcribe  prints the transcript of each audio file (WAV, FLAC, ...), one per "
               "line;\n"
               "            with --nlu through the bot's model, else the generic English model\n"
               "\n"
               "  --nlu FILE     the bot's nlu.yaml\n"
               "  --cache DIR    where models are cached (default ~/.cache/parley/asr)\n"
               "  --lexicon FILE the bot's own pronunciations, \"word PHONES\" a line (the\n"
               "                 dictionary's format), heard before the dictionary's\n"
               "  --grammar      a grammar of the examples' exact patterns instead of the class\n"
               "                 trigram model\n"
               "  --generic W    the share W (0 to 0.5; default 0) of the class model given to "
               "the\n"
               "                 generic model's most frequent words the bot lacks (\"just\", "
               "\"gonna\")\n"
               "  --no-fallback  no generic model for speech the bot's model cannot match\n"
               "  --no-speaker-warp  each file heard through the model's own frequency scale "
               "only\n"
               "                 (default: also a deeper and a higher voice's, the best kept)\n"
               "  --confidence   each transcript after its confidence (0-100, '-' for none) and "
               "a tab;\n"
               "                 the asr.pocketsphinx node rejects one under its reject_below "
               "(50)\n");
}

int cmd_asr(int argc, char **argv)
{
    parley_asr_params p = { 0 };
    int first = 0, confidence = 0;
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
            p.no_fallback = 1;
        } else if (!strcmp(a, "--no-speaker-warp")) {
            p.no_speaker_warp = 1;
        } else if (!strcmp(a, "--confidence")) {
            confidence = 1;
        } else if (!strcmp(a, "--grammar")) {
            p.language = PARLEY_ASR_GRAMMAR;
        } else if (!strcmp(a, "--generic") && i + 1 < argc) {
            char *end;
            p.generic_weight = strtod(argv[++i], &end);
            if (end == argv[i] || *end) {
                fprintf(stderr, "parley asr: --generic '%s': not a number\n", argv[i]);
                return 2;
            }
        } else if ((!strcmp(a, "--nlu") || !strcmp(a, "--cache")) && i + 1 < argc) {
            *(a[2] == 'n' ? &p.nlu_yaml : &p.cache_dir) = argv[++i];
        } else if (!strcmp(a, "--lexicon") && i + 1 < argc) {
            p.lexicon = argv[++i];
        } else if (a[0] == '-') {
            fprintf(stderr, "parley asr: unknown option '%s'\n", a);
            return 2;
        } else if (!first) {
            first = i;
        }
    }
    if (build ? !p.nlu_yaml || first : !first) {
        usage(stderr);
        return 2;
    }
    parley_status st;
    if (build) {
        parley_asr_model g;
        if ((st = parley_asr_build(&p, &g)) != PARLEY_OK)
            return cli_fail("asr build", st);
        printf("%s\n%d sentences, %d slot classes with %d values, %d phrases dropped, %d words "
               "pronounced from their spelling%s\n",
               g.path, g.sentences, g.classes, g.values, g.dropped, g.guessed,
               g.cached ? " (cached)" : "");
        return 0;
    }
    parley_asr *asr;
    if ((st = parley_asr_open(&p, &asr)) != PARLEY_OK)
        return cli_fail("asr transcribe", st);
    int rc = 0;
    for (int i = first; i < argc; i++) {
        char *text = NULL;
        if (argv[i][0] == '-') {
            i += strcmp(argv[i], "--no-fallback") && strcmp(argv[i], "--grammar") &&
                 strcmp(argv[i], "--confidence") && strcmp(argv[i], "--no-speaker-warp");
            continue;
        }
        if ((st = parley_asr_transcribe_file(asr, argv[i], &text)) != PARLEY_OK) {
            rc = cli_fail(argv[i], st);
            continue;
        }
        float c = parley_asr_confidence(asr);
        if (confidence && isnan(c))
            printf("-\t");
        else if (confidence)
            printf("%.1f\t", (double)c);
        printf("%s\n", text);
        fflush(stdout);
        parley_asr_text_free(text);
    }
    parley_asr_close(asr);
    return rc;
}
