/* cmd_bench.c — `parley bench nlu`: latency and throughput of the model forward pass.
 *
 * It measures, in one process: model load (parley_nlu_open to the first parse result), then
 * the raw forward pass (bert_forward, or cuda_bert_forward on a GPU) on one synthetic batch
 * of B sequences of exactly T pieces, packed as every caller packs them (bert_pack), and
 * prints one JSON object. Comparisons against the PyTorch reference live in bench/, not here.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

/* The one internal header of nlu/ the tool includes: the benchmark times the forward pass
 * below the public API, where tokenizing and decoding do not count and the GPU's attention
 * path can be chosen. cuda_bert.h is the GPU backend's interface; it is written in terms of
 * nlu/bert.h (the model, packed batches, the CPU forward pass: the same contract on both
 * devices), which it includes and the benchmark uses too. */
#include "nlu/cuda/cuda_bert.h"
#include "sdk/cli/cli.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The process's peak resident set in MiB (VmHWM), or -1 where /proc is absent. Not
 * getrusage's ru_maxrss: Linux carries that across execve, so a tool started from a big
 * process (the Python benchmark driver, with torch loaded) would report the parent's peak. */
static double peak_rss_mb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lf kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb / 1024.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench_usage(FILE *f)
{
    fprintf(f,
            "usage: parley bench nlu --model DIR [--batch B] [--seq T] [--iters N] [--warmup N]\n"
            "                        [--threads N] [--device cpu|cuda:N] [--precision P]\n"
            "                        [--attention auto|flash|gemm|fused] [--split-k on|off]\n"
            "\n"
            "Prints JSON: load_ms (open to first result), latency_ms {p50, p99, mean} per batch,\n"
            "sequences_per_s, tokens_per_s and peak_rss_mb. Sequences are T pieces long,\n"
            "[CLS] and [SEP] included, with random ids. Defaults: B 1, T 32, N 50, warmup 5,\n"
            "device cpu. On a GPU a batch is timed from ids on the host to logits on the host;\n"
            "--precision is fp16 (default), bf16 or fp32; --attention picks the GPU attention\n"
            "path (auto, the default, is the library's choice: flash where it runs, else gemm);\n"
            "--split-k off leaves small batches' attention-out and FFN-out products to cuBLAS\n"
            "whole (on, the default, cuts them over K for the LayerNorm kernel to sum).\n");
}

typedef struct bench_opts {
    const char *model, *device, *precision, *attention, *split_k;
    int batch, seq, iters, warmup, threads;
    int gpu; /* -1: the CPU; else the CUDA device index from --device */
} bench_opts;

static int parse_opts(int argc, char **argv, bench_opts *o)
{
    *o = (bench_opts){ NULL, "cpu", NULL, "auto", "on", 1, 32, 50, 5, 0, -1 };
    static const struct {
        const char *name;
        size_t off;
        long lo, hi;
    } ints[] = {
        { "--batch", offsetof(bench_opts, batch), 1, 4096 },
        { "--seq", offsetof(bench_opts, seq), 2, 65536 },
        { "--iters", offsetof(bench_opts, iters), 1, 1000000 },
        { "--warmup", offsetof(bench_opts, warmup), 0, 1000000 },
        { "--threads", offsetof(bench_opts, threads), 1, 1024 },
    };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (cli_is_help(a)) {
            bench_usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--model") && val) {
            o->model = val, i++;
            continue;
        }
        if (!strcmp(a, "--device") && val) {
            o->device = val, i++;
            char end;
            if (strcmp(val, "cpu") && sscanf(val, "cuda:%d%c", &o->gpu, &end) != 1) {
                fprintf(stderr, "parley bench nlu: --device takes cpu or cuda:N, not '%s'\n", val);
                return 2;
            }
            continue;
        }
        if (!strcmp(a, "--precision") && val) {
            o->precision = val, i++;
            continue;
        }
        if (!strcmp(a, "--attention") && val) {
            o->attention = val, i++;
            if (strcmp(val, "auto") && strcmp(val, "flash") && strcmp(val, "gemm") &&
                strcmp(val, "fused")) {
                fprintf(stderr, "parley bench nlu: --attention takes auto, flash, gemm or fused\n");
                return 2;
            }
            continue;
        }
        if (!strcmp(a, "--split-k") && val) {
            o->split_k = val, i++;
            if (strcmp(val, "on") && strcmp(val, "off")) {
                fprintf(stderr, "parley bench nlu: --split-k takes on or off\n");
                return 2;
            }
            continue;
        }
        size_t k = 0;
        while (k < sizeof ints / sizeof *ints && strcmp(a, ints[k].name))
            k++;
        if (k == sizeof ints / sizeof *ints || !val) {
            const char *names[sizeof ints / sizeof *ints + 7] = { "--model",     "--device",
                                                                  "--precision", "--attention",
                                                                  "--split-k",   "--help" };
            for (size_t j = 0; j < sizeof ints / sizeof *ints; j++)
                names[6 + j] = ints[j].name;
            return cli_unknown_option("bench nlu", a, names);
        }
        if (cli_parse_int(a, val, ints[k].lo, ints[k].hi, (int *)((char *)o + ints[k].off)) < 0)
            return 2;
        i++;
    }
    if (!o->model) {
        fprintf(stderr, "parley bench nlu: --model is required\n");
        return 2;
    }
    return -1;
}

/* Times parley_nlu_open + one parse: what an application waits for at start-up. */
static parley_status time_load(const bench_opts *o, double *ms)
{
    parley_nlu_params p = parley_nlu_params_default();
    p.threads = o->threads;
    p.device = o->device;
    p.precision = o->precision;
    parley_nlu *nlu;
    parley_nlu_result *r;
    double t0 = now_ms();
    parley_status st = parley_nlu_open(o->model, &p, &nlu);
    if (st != PARLEY_OK)
        return st;
    st = parley_nlu_parse(nlu, "book a table for two in boston tonight", &r);
    *ms = now_ms() - t0;
    parley_nlu_result_free(r);
    parley_nlu_close(nlu);
    return st;
}

static int bench_nlu(int argc, char **argv)
{
    bench_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc >= 0)
        return rc;
    rc = 0;
    double load_ms = 0;
    parley_status st = time_load(&o, &load_ms);
    if (st != PARLEY_OK)
        return cli_fail("bench nlu", st);
    bert_model *m;
    cuda_bert *gpu = NULL;
    if ((st = bert_model_load(o.model, &m)) != PARLEY_OK)
        return cli_fail("bench nlu", st);
    if (o.threads)
        bert_set_threads(o.threads);
    const bert_config *c = &m->cfg;
    if (o.seq > c->max_positions) {
        fprintf(stderr, "parley bench nlu: --seq %d exceeds the model's %d positions\n", o.seq,
                c->max_positions);
        bert_model_free(m);
        return 2;
    }
    size_t N = (size_t)o.batch * o.seq;
    int n_pieces = o.seq - 2; /* random pieces between [CLS] and [SEP] */
    wp_tokens *tk = calloc((size_t)o.batch, sizeof *tk);
    wp_piece *pieces = calloc((size_t)o.batch * n_pieces + 1, sizeof *pieces);
    bert_packed packed = { 0 };
    double *lat = malloc(sizeof(double) * o.iters);
    if (!tk || !pieces || !lat) {
        fprintf(stderr, "parley bench nlu: out of memory\n");
        rc = 1;
        goto done;
    }
    srand(1);
    for (int b = 0; b < o.batch; b++) {
        tk[b] = (wp_tokens){ .pieces = pieces + (size_t)b * n_pieces, .n_pieces = n_pieces };
        for (int t = 0; t < n_pieces; t++)
            tk[b].pieces[t].id = 5 + rand() % (c->vocab_size - 5);
    }
    if ((st = bert_pack(m, tk, o.batch, &packed)) != PARLEY_OK) {
        rc = cli_fail("bench nlu", st);
        goto done;
    }
    const bert_batch *batch = &packed.batch;
    float *il = packed.intent_logits, *sl = packed.slot_logits;
    cuda_precision prec;
    if (o.gpu >= 0 && ((st = cuda_precision_parse(o.precision, &prec)) != PARLEY_OK ||
                       (st = cuda_bert_open(m, o.gpu, prec, &gpu)) != PARLEY_OK)) {
        rc = cli_fail("bench nlu", st);
        goto done;
    }
    if (gpu)
        cuda_bert_set_attention(gpu, !strcmp(o.attention, "fused")   ? CUDA_ATT_FUSED
                                     : !strcmp(o.attention, "gemm")  ? CUDA_ATT_GEMM
                                     : !strcmp(o.attention, "flash") ? CUDA_ATT_FLASH
                                                                     : CUDA_ATT_AUTO);
    if (gpu)
        cuda_bert_set_split_k(gpu, !strcmp(o.split_k, "on"));
    double sum = 0;
    for (int i = -o.warmup; i < o.iters; i++) {
        double t0 = now_ms();
        st = gpu ? cuda_bert_forward(gpu, batch, il, sl) : bert_forward(m, batch, il, sl);
        if (st != PARLEY_OK) {
            rc = cli_fail("bench nlu", st);
            goto done;
        }
        if (i >= 0)
            sum += (lat[i] = now_ms() - t0);
    }
    qsort(lat, o.iters, sizeof *lat, cmp_double);
    double mean = sum / o.iters;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "impl", "parley");
    cJSON_AddStringToObject(j, "device", gpu ? cuda_bert_describe(gpu) : "cpu");
    cJSON_AddNumberToObject(j, "layers", c->layers);
    cJSON_AddNumberToObject(j, "hidden", c->hidden);
    cJSON_AddNumberToObject(j, "batch", o.batch);
    cJSON_AddNumberToObject(j, "seq", o.seq);
    cJSON_AddNumberToObject(j, "iters", o.iters);
    cJSON_AddNumberToObject(j, "threads", o.threads);
    cJSON_AddNumberToObject(j, "load_ms", load_ms);
    cJSON *l = cJSON_AddObjectToObject(j, "latency_ms");
    cJSON_AddNumberToObject(l, "p50", lat[o.iters / 2]);
    cJSON_AddNumberToObject(l, "p99", lat[(int)((o.iters - 1) * 0.99)]);
    cJSON_AddNumberToObject(l, "mean", mean);
    cJSON_AddNumberToObject(j, "sequences_per_s", o.batch * 1e3 / mean);
    cJSON_AddNumberToObject(j, "tokens_per_s", (double)N * 1e3 / mean);
    cJSON_AddNumberToObject(j, "peak_rss_mb", peak_rss_mb());
    char *s = cJSON_PrintUnformatted(j);
    puts(s);
    cJSON_free(s);
    cJSON_Delete(j);
done:
    free(tk);
    free(pieces);
    bert_packed_free(&packed);
    free(lat);
    cuda_bert_close(gpu);
    bert_model_free(m);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "nlu"))
        return bench_nlu(argc - 1, argv + 1);
    FILE *f = argc >= 2 && cli_is_help(argv[1]) ? stdout : stderr;
    fprintf(f, "usage: parley bench nlu --model DIR ...   (parley bench nlu --help)\n");
    return f == stdout ? 0 : 2;
}
