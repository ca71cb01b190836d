/* cmd_eval.c — `parley eval`: scores a model on an annotated dataset.
 *
 * Opens the model with parley_nlu_open() and scores it with parley_eval_run() (parley/train.h)
 * on a Rasa nlu.yaml or a JointBERT folder: every example is parsed through the public
 * parley_nlu API in batches and the predicted intent and per-word tags are compared with
 * the annotation. It prints the report as a table or as JSON, and can write each prediction
 * as a JSON line. The scoring is the library's; this file only parses options and prints.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sdk/cli/cli.h"

typedef struct eval_opts {
    const char *model, *data, *predictions;
    int json, batch, confusions;
    parley_nlu_params params;
} eval_opts;

static void eval_usage(FILE *f)
{
    fprintf(f,
            "usage: parley eval --model DIR --data PATH [--json] [--batch N] [--predictions FILE]\n"
            "                   [--confusions K] [--threads N] [--device D]\n"
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
            "  --confusions K      confusions listed of each kind (default 10; -1 = all)\n"
            "  --threads N         CPU threads (default: all cores)\n"
            "  --device D          auto | cpu | cuda:N (default auto)\n");
}

/* Returns 0, or the exit code for a bad command line. */
static int parse_args(int argc, char **argv, eval_opts *o)
{
    o->params = parley_nlu_params_default();
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
        } else if (!strcmp(a, "--device") && val) {
            o->params.device = val, i++;
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
            fprintf(stderr, "parley eval: unknown or incomplete option '%s'\n", a);
            eval_usage(stderr);
            return 2;
        }
    }
    if (!o->model || !o->data) {
        fprintf(stderr, "parley eval: --model and --data are required\n");
        eval_usage(stderr);
        return 2;
    }
    return 0;
}

/* parley_eval_params.on_example with the predictions file as user_data: the prediction as a
 * JSON line. Returns nonzero (stop) when it could not be written. */
static int write_prediction(const parley_eval_example *ex, void *file)
{
    const parley_nlu_result *r = ex->parse;
    cJSON *o = cJSON_CreateObject(), *tags = NULL;
    int ok = o && cJSON_AddStringToObject(o, "text", r->text) &&
             cJSON_AddStringToObject(o, "intent", r->intent) &&
             cJSON_AddNumberToObject(o, "confidence", r->confidence) &&
             (tags = cJSON_AddArrayToObject(o, "tags"));
    for (int w = 0; ok && w < r->n_words; w++) {
        cJSON *t = cJSON_CreateString(r->tags[w]);
        ok = t && cJSON_AddItemToArray(tags, t);
        if (!ok)
            cJSON_Delete(t);
    }
    char *s = ok ? cJSON_PrintUnformatted(o) : NULL;
    ok = s && fprintf(file, "%s\n", s) > 0;
    cJSON_free(s);
    cJSON_Delete(o);
    return !ok;
}

static int print_report(parley_eval_report *r, const eval_opts *o)
{
    const char *text;
    parley_status st;
    if (o->json) {
        if ((st = parley_eval_report_json(r, o->confusions, &text)) != PARLEY_OK)
            return cli_fail("eval: report", st);
        puts(text);
        return 0;
    }
    if ((st = parley_eval_report_table(r, o->confusions, &text)) != PARLEY_OK)
        return cli_fail("eval: report", st);
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
    FILE *pred = NULL;
    int rc = parse_args(argc, argv, &o);
    parley_status st;
    if (rc)
        return rc < 0 ? 0 : rc;
    if ((st = parley_nlu_open(o.model, &o.params, &nlu)) != PARLEY_OK) {
        rc = cli_fail("eval: opening the model", st);
        goto done;
    }
    if (o.predictions && !(pred = fopen(o.predictions, "w"))) {
        perror(o.predictions);
        rc = 1;
        goto done;
    }
    ep.batch = o.batch;
    ep.on_example = pred ? write_prediction : NULL;
    ep.user_data = pred;
    if ((st = parley_eval_run(nlu, o.data, &ep, &report)) != PARLEY_OK) {
        rc = cli_fail("eval", st);
        goto done;
    }
    if (report->stopped) {
        fprintf(stderr, "parley eval: cannot write the predictions\n");
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
    if (pred && fclose(pred) != 0 && !rc) {
        perror(o.predictions);
        rc = 1;
    }
    parley_eval_report_free(report);
    parley_nlu_close(nlu);
    return rc;
}
