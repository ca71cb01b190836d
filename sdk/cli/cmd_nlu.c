/* cmd_nlu.c — `parley nlu predict`: utterances in (arguments, a file or stdin), one JSON
 * object per line out.
 *
 * Lines are parsed in batches for speed; a line the library rejects (invalid UTF-8) gets a
 * JSON error object of its own and the stream goes on. Nothing here knows the model: it is a
 * thin shell over the public parley_nlu API.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sdk/cli/cli.h"

enum { PREDICT_BATCH = 32 };

typedef struct predict_opts {
    const char *model, *input;
    char **texts; /* the utterances given as arguments, n_texts of them */
    int n_texts;
    int words; /* input is pre-split words: slot values are whole words */
    int top;   /* add a "ranking" list of this many intents */
} predict_opts;

static void predict_usage(FILE *f)
{
    fprintf(f,
            "usage: parley nlu predict --model DIR [--words] [--top K] [--threads N] [--device D]\n"
            "                          [--precision P] [--input FILE | TEXT...]\n"
            "\n"
            "Parses each TEXT argument, or each line of FILE, or of stdin when neither is\n"
            "given, and writes one JSON object per utterance:\n"
            "  {\"text\", \"intent\", \"confidence\", \"slots\": [{\"slot\", \"value\", \"start\", "
            "\"end\"}],\n"
            "   \"tags\": [one BIO tag per whitespace-separated word]}\n"
            "start and end are byte offsets in the line; a slot whose value is a surface\n"
            "form of a synonym of the training data also has \"canonical\": the value it\n"
            "stands for. A line that cannot be parsed gives\n"
            "{\"line\": N, \"error\": \"...\"} and the stream goes on.\n"
            "\n"
            "  --model DIR   model directory (config.json, model.safetensors, vocab.txt)\n"
            "  --words       lines are already split into words (as SNIPS/ATIS seq.in): slot\n"
            "                values are whole words, punctuation included\n"
            "  --top K       also print the K best intents as \"ranking\"\n"
            "  --input FILE  read the utterances from FILE, one per line\n"
            "  --threads N   CPU threads (default: all cores)\n"
            "  --device D    " CLI_DEVICE_HELP "\n"
            "  --precision P " CLI_PRECISION_HELP "\n");
}

static void print_json(cJSON *o)
{
    char *s = cJSON_PrintUnformatted(o);
    if (s) {
        puts(s);
        cJSON_free(s);
    }
    cJSON_Delete(o);
}

static void print_error(size_t line_no, parley_status st)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "line", (double)line_no);
    const char *msg = parley_errmsg();
    cJSON_AddStringToObject(o, "error", *msg ? msg : parley_status_str(st));
    print_json(o);
}

static void print_result(const parley_nlu_result *r, const predict_opts *o)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "text", r->text);
    cJSON_AddStringToObject(j, "intent", r->intent);
    cJSON_AddNumberToObject(j, "confidence", cli_confidence(r->confidence));
    if (o->top) {
        cJSON *rank = cJSON_AddArrayToObject(j, "ranking");
        for (int k = 0; k < r->n_top && k < o->top; k++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "intent", r->top[k].label);
            cJSON_AddNumberToObject(e, "confidence", cli_confidence(r->top[k].prob));
            cJSON_AddItemToArray(rank, e);
        }
    }
    cJSON *slots = cJSON_AddArrayToObject(j, "slots");
    for (int s = 0; s < r->n_slots; s++) {
        const parley_nlu_slot *sl = &r->slots[s];
        size_t b = sl->start, e = sl->end;
        if (o->words) {
            b = r->word_start[sl->word_start];
            e = r->word_end[sl->word_end - 1];
        }
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "slot", sl->slot);
        char *value = strndup(r->text + b, e - b);
        cJSON_AddStringToObject(x, "value", value ? value : "");
        free(value);
        if (strcmp(sl->canonical, sl->value))
            cJSON_AddStringToObject(x, "canonical", sl->canonical);
        cJSON_AddNumberToObject(x, "start", (double)b);
        cJSON_AddNumberToObject(x, "end", (double)e);
        cJSON_AddItemToArray(slots, x);
    }
    cJSON *tags = cJSON_AddArrayToObject(j, "tags");
    for (int w = 0; w < r->n_words; w++)
        cJSON_AddItemToArray(tags, cJSON_CreateString(r->tags[w]));
    if (r->truncated)
        cJSON_AddTrueToObject(j, "truncated");
    print_json(j);
}

/* Parses lines[0..n) as one batch; if the batch fails, line by line so that only the bad
 * lines get errors. */
static void flush(parley_nlu *nlu, char **lines, size_t n, size_t first_line, const predict_opts *o)
{
    parley_nlu_result *res[PREDICT_BATCH];
    if (parley_nlu_parse_batch(nlu, (const char *const *)lines, n, res) == PARLEY_OK) {
        for (size_t i = 0; i < n; i++) {
            print_result(res[i], o);
            parley_nlu_result_free(res[i]);
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        parley_status st = parley_nlu_parse(nlu, lines[i], &res[0]);
        if (st != PARLEY_OK) {
            print_error(first_line + i, st);
            continue;
        }
        print_result(res[0], o);
        parley_nlu_result_free(res[0]);
    }
}

/* Fills o and p from argv; returns 0, -1 after printing the help, or 2 for bad usage. */
static int predict_args(int argc, char **argv, predict_opts *o, parley_nlu_params *p)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (cli_is_help(a)) {
            predict_usage(stdout);
            return -1;
        } else if (!strcmp(a, "--words")) {
            o->words = 1;
        } else if (a[0] != '-') {
            o->texts[o->n_texts++] = argv[i];
        } else if (!strcmp(a, "--input") && val) {
            o->input = val, i++;
        } else if (!strcmp(a, "--model") && val) {
            o->model = val, i++;
        } else if (!strcmp(a, "--device") && val) {
            p->device = val, i++;
        } else if (!strcmp(a, "--precision") && val) {
            p->precision = val, i++;
        } else if (!strcmp(a, "--top") && val) {
            if (cli_parse_int(a, val, 1, 1000, &o->top) < 0)
                return 2;
            p->top_k = o->top, i++;
        } else if (!strcmp(a, "--threads") && val) {
            if (cli_parse_int(a, val, 1, 1024, &p->threads) < 0)
                return 2;
            i++;
        } else {
            static const char *const names[] = { "--model",     "--words",   "--top",
                                                 "--input",     "--threads", "--device",
                                                 "--precision", "--help",    NULL };
            return cli_unknown_option("nlu predict", a, names);
        }
    }
    if (!o->model || (o->input && o->n_texts)) {
        fprintf(stderr, "parley nlu predict: %s\n",
                o->model ? "give --input FILE or TEXT arguments, not both" : "--model is required");
        predict_usage(stderr);
        return 2;
    }
    return 0;
}

/* Parses the utterances of o and prints them; returns the exit code. */
static int predict_run(const predict_opts *o, const parley_nlu_params *p)
{
    parley_nlu *nlu;
    parley_status st = parley_nlu_open(o->model, p, &nlu);
    if (st != PARLEY_OK)
        return cli_fail("nlu predict", st);
    if (o->n_texts) {
        for (int i = 0; i < o->n_texts; i += PREDICT_BATCH) {
            int n = o->n_texts - i < PREDICT_BATCH ? o->n_texts - i : PREDICT_BATCH;
            flush(nlu, o->texts + i, (size_t)n, (size_t)i + 1, o);
        }
        parley_nlu_close(nlu);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    FILE *in = o->input ? fopen(o->input, "r") : stdin;
    if (!in) {
        fprintf(stderr, "parley nlu predict: %s: %s\n", o->input, strerror(errno));
        parley_nlu_close(nlu);
        return 1;
    }

    char *lines[PREDICT_BATCH];
    size_t n = 0, line_no = 0;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t got;
    while ((got = getline(&buf, &cap, in)) >= 0) {
        line_no++;
        if (got > 0 && buf[got - 1] == '\n')
            buf[--got] = '\0';
        if (got > 0 && buf[got - 1] == '\r')
            buf[--got] = '\0';
        if (!(lines[n] = strdup(buf))) {
            fprintf(stderr, "parley nlu predict: out of memory\n");
            break;
        }
        if (++n == PREDICT_BATCH) {
            flush(nlu, lines, n, line_no - n + 1, o);
            for (size_t i = 0; i < n; i++)
                free(lines[i]);
            n = 0;
        }
    }
    if (n)
        flush(nlu, lines, n, line_no - n + 1, o);
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(buf);
    if (in != stdin)
        fclose(in);
    parley_nlu_close(nlu);
    return fflush(stdout) == 0 ? 0 : 1;
}

static int predict(int argc, char **argv)
{
    predict_opts o = { 0 };
    parley_nlu_params p = parley_nlu_params_default();
    p.device = CLI_DEVICE;
    p.precision = CLI_PRECISION;
    if (!(o.texts = calloc((size_t)argc, sizeof *o.texts))) {
        fprintf(stderr, "parley nlu predict: out of memory\n");
        return 1;
    }
    int rc = predict_args(argc, argv, &o, &p);
    if (rc == 0)
        rc = predict_run(&o, &p);
    free(o.texts);
    return rc < 0 ? 0 : rc;
}

int cmd_nlu(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "predict"))
        return predict(argc - 1, argv + 1);
    FILE *f = argc >= 2 && cli_is_help(argv[1]) ? stdout : stderr;
    fprintf(f,
            "usage: parley nlu predict --model DIR [--words] ...   (parley nlu predict --help)\n");
    return f == stdout ? 0 : 2;
}
