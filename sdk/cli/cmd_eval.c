/* cmd_eval.c — `parley eval`: scores a model on an annotated dataset.
 *
 * Opens the model with parley_nlu_open() and scores it with parley_eval_run() (parley/train.h)
 * on a Rasa nlu.yaml or a JointBERT folder: every example is parsed through the public
 * parley_nlu API in batches and the predicted intent and per-word tags are compared with
 * the annotation. It prints the report as a table or as JSON, and can write each prediction
 * as a JSON line, or only the examples it got wrong, gold beside predicted. The scoring is the
 * library's; this file only parses options and prints.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sdk/cli/cli.h"

typedef struct eval_opts {
    const char *model, *data, *predictions, *failures;
    int json, batch, confusions;
    parley_nlu_params params;
} eval_opts;

static void eval_usage(FILE *f)
{
    fprintf(f,
            "usage: parley eval --model DIR --data PATH [--json] [--batch N] [--predictions FILE]\n"
            "                   [--failures FILE] [--confusions K] [--threads N] [--device D]\n"
            "                   [--precision P]\n"
            "\n"
            "Parses every example of an annotated dataset with the model and reports intent\n"
            "accuracy, slot precision/recall/F1 over chunks (conlleval rules, as seqeval's "
            "default\n"
            "mode), sentence accuracy (intent and every tag right), tag accuracy, per-intent and\n"
            "per-slot-type scores and the most frequent confusions.\n"
            "\n"
            "  --model DIR         model directory (config.json, model.safetensors, vocab.txt)\n"
            "  --data PATH         a Rasa-style nlu.yaml (.yaml/.yml) or a folder with seq.in,\n"
            "                      seq.out and label (as SNIPS/ATIS in JointBERT's layout)\n"
            "  --json              print the report as JSON (ratios as fractions)\n"
            "  --batch N           utterances per model call (default 32)\n"
            "  --predictions FILE  write one JSON line per example: {\"text\", \"intent\", "
            "\"confidence\", \"tags\"}\n"
            "  --failures FILE     write one JSON line per example with a wrong intent or tag:\n"
            "                      {\"text\", \"gold\": {\"intent\", \"tags\"}, \"predicted\":\n"
            "                      {\"intent\", \"confidence\", \"tags\"}, \"ranking\"}\n"
            "  --confusions K      confusions listed of each kind (default 10; -1 = all)\n"
            "  --threads N         CPU threads (default: all cores)\n"
            "  --device D          " CLI_DEVICE_HELP "\n"
            "  --precision P       " CLI_PRECISION_HELP "\n");
}

/* Returns 0, or the exit code for a bad command line. */
static int parse_args(int argc, char **argv, eval_opts *o)
{
    o->params = parley_nlu_params_default();
    o->params.device = CLI_DEVICE;
    o->params.precision = CLI_PRECISION;
    o->params.top_k = 3;
    o->batch = 32;
    o->confusions = 10;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (cli_is_help(a)) {
            eval_usage(stdout);
            return -1;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (!strcmp(a, "--model") && val) {
            o->model = val, i++;
        } else if (!strcmp(a, "--data") && val) {
            o->data = val, i++;
        } else if (!strcmp(a, "--predictions") && val) {
            o->predictions = val, i++;
        } else if (!strcmp(a, "--failures") && val) {
            o->failures = val, i++;
        } else if (!strcmp(a, "--device") && val) {
            o->params.device = val, i++;
        } else if (!strcmp(a, "--precision") && val) {
            o->params.precision = val, i++;
        } else if (!strcmp(a, "--batch") && val) {
            if (cli_parse_int(a, val, 1, 4096, &o->batch) < 0)
                return 2;
            i++;
        } else if (!strcmp(a, "--confusions") && val) {
            if (cli_parse_int(a, val, -1, 1000000, &o->confusions) < 0)
                return 2;
            i++;
        } else if (!strcmp(a, "--threads") && val) {
            if (cli_parse_int(a, val, 1, 1024, &o->params.threads) < 0)
                return 2;
            i++;
        } else {
            static const char *const names[] = { "--model",      "--data",        "--json",
                                                 "--batch",      "--predictions", "--failures",
                                                 "--confusions", "--threads",     "--device",
                                                 "--precision",  "--help",        NULL };
            return cli_unknown_option("eval", a, names);
        }
    }
    if (!o->model || !o->data) {
        fprintf(stderr, "parley eval: --model and --data are required\n");
        eval_usage(stderr);
        return 2;
    }
    return 0;
}

/* The files examples are written to (either may be NULL). */
typedef struct eval_out {
    FILE *predictions, *failures;
} eval_out;

/* Adds "intent" (and "confidence" unless it is negative) and "tags" to o; 0 when out of
 * memory. */
static int add_labels(cJSON *o, const char *intent, double confidence, const char *const *tags,
                      int n)
{
    cJSON *list = NULL;
    int ok = o && cJSON_AddStringToObject(o, "intent", intent) &&
             (confidence < 0 || cJSON_AddNumberToObject(o, "confidence", confidence)) &&
             (list = cJSON_AddArrayToObject(o, "tags"));
    for (int w = 0; ok && w < n; w++) {
        cJSON *t = cJSON_CreateString(tags[w]);
        ok = t && cJSON_AddItemToArray(list, t);
        if (!ok)
            cJSON_Delete(t);
    }
    return ok;
}

/* Writes o as one line to f and frees it; 0 when it could not be made or written. */
static int write_line(FILE *f, cJSON *o, int ok)
{
    char *s = ok ? cJSON_PrintUnformatted(o) : NULL;
    ok = s && fprintf(f, "%s\n", s) > 0;
    cJSON_free(s);
    cJSON_Delete(o);
    return ok;
}

/* True when the parse differs from the annotation in the intent or a tag. */
static int is_failure(const parley_eval_example *ex)
{
    const parley_nlu_result *r = ex->parse;
    int wrong = strcmp(r->intent, ex->gold_intent) != 0;
    for (int w = 0; !wrong && w < r->n_words; w++)
        wrong = strcmp(r->tags[w], ex->gold_tags[w]) != 0;
    return wrong;
}

/* The failure's line: the text, gold and predicted labels, the best intents. */
static int write_failure(FILE *f, const parley_eval_example *ex)
{
    const parley_nlu_result *r = ex->parse;
    cJSON *o = cJSON_CreateObject(), *rank = NULL;
    int ok = o && cJSON_AddStringToObject(o, "text", r->text) &&
             add_labels(cJSON_AddObjectToObject(o, "gold"), ex->gold_intent, -1, ex->gold_tags,
                        r->n_words) &&
             add_labels(cJSON_AddObjectToObject(o, "predicted"), r->intent,
                        cli_confidence(r->confidence), (const char *const *)r->tags, r->n_words) &&
             (rank = cJSON_AddArrayToObject(o, "ranking"));
    for (int k = 0; ok && k < r->n_top; k++) {
        cJSON *e = cJSON_CreateObject();
        if (!(ok = e && cJSON_AddItemToArray(rank, e)))
            cJSON_Delete(e);
        ok = ok && cJSON_AddStringToObject(e, "intent", r->top[k].label) &&
             cJSON_AddNumberToObject(e, "confidence", cli_confidence(r->top[k].prob));
    }
    return write_line(f, o, ok);
}

/* parley_eval_params.on_example with an eval_out as user_data: the prediction as a JSON
 * line, and the example again among the failures when it is one. Returns nonzero (stop)
 * when a line could not be written. */
static int write_example(const parley_eval_example *ex, void *user_data)
{
    const eval_out *out = user_data;
    const parley_nlu_result *r = ex->parse;
    if (out->predictions) {
        cJSON *o = cJSON_CreateObject();
        int ok = o && cJSON_AddStringToObject(o, "text", r->text) &&
                 add_labels(o, r->intent, cli_confidence(r->confidence),
                            (const char *const *)r->tags, r->n_words);
        if (!write_line(out->predictions, o, ok))
            return 1;
    }
    return out->failures && is_failure(ex) && !write_failure(out->failures, ex);
}

static int print_report(parley_eval_report *r, const eval_opts *o)
{
    const char *text;
    parley_status st;
    if (o->json) {
        if ((st = parley_eval_report_json(r, o->confusions, &text)) != PARLEY_OK)
            return cli_fail("eval", st);
        puts(text);
        return 0;
    }
    if ((st = parley_eval_report_table(r, o->confusions, &text)) != PARLEY_OK)
        return cli_fail("eval", st);
    printf("model %s on %s (%ld examples, %d intents, %d slot types)\n\n", o->model, o->data,
           r->n_examples, r->n_intents, r->n_slot_types);
    fputs(text, stdout);
    return 0;
}

int cmd_eval(int argc, char **argv)
{
    eval_opts o = { 0 };
    parley_nlu *nlu = NULL;
    parley_eval_report *report = NULL;
    parley_eval_params ep = parley_eval_params_default();
    eval_out out = { NULL, NULL };
    int rc = parse_args(argc, argv, &o);
    parley_status st;
    if (rc)
        return rc < 0 ? 0 : rc;
    if ((st = parley_nlu_open(o.model, &o.params, &nlu)) != PARLEY_OK) {
        rc = cli_fail("eval", st);
        goto done;
    }
    if ((o.predictions && !(out.predictions = fopen(o.predictions, "w"))) ||
        (o.failures && !(out.failures = fopen(o.failures, "w")))) {
        fprintf(stderr, "parley eval: %s: %s\n",
                o.failures && !out.failures ? o.failures : o.predictions, strerror(errno));
        rc = 1;
        goto done;
    }
    ep.batch = o.batch;
    ep.on_example = out.predictions || out.failures ? write_example : NULL;
    ep.user_data = &out;
    if ((st = parley_eval_run(nlu, o.data, &ep, &report)) != PARLEY_OK) {
        rc = cli_fail("eval", st);
        goto done;
    }
    if (report->stopped) {
        fprintf(stderr, "parley eval: cannot write the predictions or failures\n");
        rc = 1;
        goto done;
    }
    if (report->n_truncated)
        fprintf(stderr,
                "parley eval: %d examples were longer than the model's positions; their last words "
                "count as O\n",
                report->n_truncated);
    rc = print_report(report, &o);
    if (!rc && fflush(stdout) != 0)
        rc = 1;
done:
    if (out.predictions && fclose(out.predictions) != 0 && !rc) {
        fprintf(stderr, "parley eval: %s: %s\n", o.predictions, strerror(errno));
        rc = 1;
    }
    if (out.failures && fclose(out.failures) != 0 && !rc) {
        fprintf(stderr, "parley eval: %s: %s\n", o.failures, strerror(errno));
        rc = 1;
    }
    parley_eval_report_free(report);
    parley_nlu_close(nlu);
    return rc;
}
