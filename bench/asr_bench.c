/* asr_bench.c — the recognizer's cost: memory per stream, real-time factor, and how many
 * real-time streams the machine's cores could carry (bench/RESULTS.md).
 *
 * Opens asr.pocketsphinx's engine as the node does (the language model of NLU_YAML, the
 * class trigram model or with --grammar the grammar, or the generic model with "-"), then N streams
 * at once, and feeds each the same file in 100 ms pieces, round-robin, as N users speaking together
 * would; ends and finishes every stream. Reports resident memory after loading and with N streams
 * open (the difference / N is a stream's cost), CPU seconds per second of audio (the real-time
 * factor, on one thread) and the transcript of the first stream.
 *
 * Usage: asr_bench NLU_YAML|- FILE.wav [N] [--grammar]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sdk/base/alloc.h"
#include "services/asr.h"
#include "services/gst_audio.h"

static double rss_mb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * 4096.0 / (1 << 20);
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int fail(const char *what, parley_status st)
{
    fprintf(stderr, "asr_bench: %s: %s: %s\n", what, parley_status_str(st), parley_errmsg());
    return 1;
}

int main(int argc, char **argv)
{
    parley_status st;
    if (argc < 3) {
        fprintf(stderr, "usage: asr_bench NLU_YAML|- FILE.wav [N] [--grammar]\n");
        return 2;
    }
    int n = argc > 3 && argv[3][0] != '-' ? atoi(argv[3]) : 20;
    svc_lang_kind kind = !strcmp(argv[argc - 1], "--grammar") ? SVC_LANG_JSGF : SVC_LANG_NGRAM;
    svc_ps_params p = svc_ps_params_default();
    svc_lang_info g;
    if (strcmp(argv[1], "-")) {
        svc_lang_params lp = { .kind = kind, .dict = p.dict };
        if ((st = svc_lang_build(argv[1], &lp, &g)) != PARLEY_OK)
            return fail("language model", st);
        p.bot = &g;
    }
    double rss0 = rss_mb(), t0 = cpu_s();
    svc_ps *ps;
    if ((st = svc_ps_open(&p, &ps)) != PARLEY_OK)
        return fail("open", st);
    double load_s = cpu_s() - t0, rss_loaded = rss_mb();
    int16_t *pcm;
    size_t len;
    if ((st = svc_gst_read_file(argv[2], &pcm, &len)) != PARLEY_OK)
        return fail(argv[2], st);
    void **s = calloc((size_t)n, sizeof *s);
    for (int i = 0; i < n; i++)
        if ((st = svc_ps_engine.open(ps, NULL, &s[i])) != PARLEY_OK)
            return fail("stream", st);
    double t1 = cpu_s();
    const size_t piece = PIPE_AUDIO_RATE / 10;
    for (size_t at = 0; at < len; at += piece)
        for (int i = 0; i < n; i++)
            svc_ps_engine.feed(s[i], pcm + at, len - at < piece ? len - at : piece);
    double rss_open = rss_mb();
    char *first = NULL;
    for (int i = 0; i < n; i++) {
        char *t = NULL;
        svc_ps_engine.end(s[i]);
        svc_ps_engine.final(s[i], &t);
        if (i == 0)
            first = t;
        else
            pl_free(t);
        svc_ps_engine.close(s[i]);
    }
    double cpu = cpu_s() - t1, audio = (double)len / PIPE_AUDIO_RATE;
    printf("{\"model\":\"%s\",\"streams\":%d,\"audio_s\":%.2f,\"load_cpu_s\":%.2f,"
           "\"rss_base_mb\":%.1f,\"rss_loaded_mb\":%.1f,\"rss_streams_mb\":%.1f,"
           "\"mb_per_stream\":%.2f,\"rtf\":%.4f,\"realtime_streams_per_core\":%.1f,"
           "\"first\":\"%s\"}\n",
           !p.bot                  ? "generic"
           : kind == SVC_LANG_JSGF ? "grammar"
                                   : "ngram",
           n, audio, load_s, rss0, rss_loaded, rss_open, (rss_open - rss_loaded) / n,
           cpu / (audio * n), (audio * n) / cpu, first ? first : "");
    pl_free(first);
    free(s);
    pl_free(pcm);
    svc_ps_close(ps);
    return 0;
}
