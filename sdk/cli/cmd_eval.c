/* cmd_eval.c — `parley eval`: scores a model on an annotated dataset.
 *
 * Loads the dataset (a Rasa nlu.yaml or a JointBERT folder, nlu/data/dataset.h), parses every
 * example's text through the public parley_nlu API in batches, and scores the predicted
 * intent and per-word tags against the gold ones with nlu/data/metrics.h. It prints the report as
 * a table or as JSON, and can write each prediction as a JSON line. The scoring itself is a
 * library function; this file only moves data between the pieces and prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nlu/data/dataset.h"
#include "nlu/data/metrics.h"
#include "sdk/cli/cli.h"
#include "sdk/base/alloc.h"

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
            "\"tags\"}\n"
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

/* One prediction as a JSON line; returns 0 when it could not be written. */
static int write_prediction(FILE *f, const parley_nlu_result *r)
{
    cJSON *o = cJSON_CreateObject(), *tags = NULL;
    int ok = o && cJSON_AddStringToObject(o, "text", r->text) &&
             cJSON_AddStringToObject(o, "intent", r->intent) &&
             (tags = cJSON_AddArrayToObject(o, "tags"));
    for (int w = 0; ok && w < r->n_words; w++) {
        cJSON *t = cJSON_CreateString(r->tags[w]);
        ok = t && cJSON_AddItemToArray(tags, t);
        if (!ok)
            cJSON_Delete(t);
    }
    char *s = ok ? cJSON_PrintUnformatted(o) : NULL;
    ok = s && fprintf(f, "%s\n", s) > 0;
    cJSON_free(s);
    cJSON_Delete(o);
    return ok;
}

/* Parses examples [first, first + n) and feeds the scorer. Returns the exit code (0 = go on). */
static int eval_batch(parley_nlu *nlu, const ds_dataset *ds, int first, int n, mt_scorer *sc,
                      FILE *pred, int *truncated)
{
    const char **texts = malloc((size_t)n * sizeof *texts), **gold = NULL;
    parley_nlu_result **res = calloc((size_t)n, sizeof *res);
    int rc = 0;
    if (!texts || !res) {
        free(texts);
        free(res);
        fprintf(stderr, "parley eval: out of memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++)
        texts[i] = ds->examples[first + i].text;
    parley_status st = parley_nlu_parse_batch(nlu, texts, (size_t)n, res);
    if (st != PARLEY_OK) {
        free(texts);
        free(res);
        return cli_fail("eval: parsing", st);
    }
    for (int i = 0; i < n && !rc; i++) {
        const ds_example *e = &ds->examples[first + i];
        const parley_nlu_result *r = res[i];
        if (r->n_words != e->n_words) {
            fprintf(stderr,
                    "parley eval: example %d ('%s'): the model found %d words, the data has %d\n",
                    first + i + 1, e->text, r->n_words, e->n_words);
            rc = 1;
            break;
        }
        const char **g = realloc(gold, (size_t)(e->n_words ? e->n_words : 1) * sizeof *g);
        if (!g) {
            fprintf(stderr, "parley eval: out of memory\n");
            rc = 1;
            break;
        }
        gold = g;
        for (int w = 0; w < e->n_words; w++)
            gold[w] = ds->tags[e->tags[w]];
        *truncated += r->truncated != 0;
        st = mt_scorer_add(sc, ds->intents[e->intent], r->intent, e->n_words, gold, r->tags);
        if (st != PARLEY_OK)
            rc = cli_fail("eval: scoring", st);
        else if (pred && !write_prediction(pred, r)) {
            fprintf(stderr, "parley eval: cannot write the predictions\n");
            rc = 1;
        }
    }
    for (int i = 0; i < n; i++)
        parley_nlu_result_free(res[i]);
    free(gold);
    free(texts);
    free(res);
    return rc;
}

static int print_report(const mt_report *r, const eval_opts *o, const ds_dataset *ds)
{
    parley_status st;
    if (o->json) {
        cJSON *j = NULL;
        if ((st = mt_report_json(r, o->confusions, &j)) != PARLEY_OK)
            return cli_fail("eval: report", st);
        char *s = cJSON_Print(j);
        if (s)
            puts(s);
        cJSON_free(s);
        cJSON_Delete(j);
        return s ? 0 : 1;
    }
    char *table = NULL;
    if ((st = mt_report_table(r, o->confusions, &table)) != PARLEY_OK)
        return cli_fail("eval: report", st);
    printf("model %s on %s (%d examples, %d intents, %d slot types)\n\n", o->model, o->data,
           ds->n_examples, ds->n_intents, ds->n_slots);
    fputs(table, stdout);
    pl_free(table);
    return 0;
}

int cmd_eval(int argc, char **argv)
{
    eval_opts o = { 0 };
    ds_dataset *ds = NULL;
    parley_nlu *nlu = NULL;
    mt_scorer *sc = NULL;
    mt_report *report = NULL;
    FILE *pred = NULL;
    int rc = parse_args(argc, argv, &o), truncated = 0;
    parley_status st;
    if (rc)
        return rc < 0 ? 0 : rc;
    if ((st = ds_load(o.data, &ds)) != PARLEY_OK) {
        rc = cli_fail("eval: loading the data", st);
        goto done;
    }
    if ((st = parley_nlu_open(o.model, &o.params, &nlu)) != PARLEY_OK) {
        rc = cli_fail("eval: opening the model", st);
        goto done;
    }
    if (o.predictions && !(pred = fopen(o.predictions, "w"))) {
        perror(o.predictions);
        rc = 1;
        goto done;
    }
    if ((st = mt_scorer_new(&sc)) != PARLEY_OK) {
        rc = cli_fail("eval", st);
        goto done;
    }
    for (int i = 0; i < ds->n_examples && !rc; i += o.batch)
        rc = eval_batch(nlu, ds, i, ds->n_examples - i < o.batch ? ds->n_examples - i : o.batch, sc,
                        pred, &truncated);
    if (rc)
        goto done;
    if (truncated)
        fprintf(stderr,
                "parley eval: %d examples were longer than the model's positions; their last words "
                "count as O\n",
                truncated);
    if ((st = mt_scorer_report(sc, &report)) != PARLEY_OK) {
        rc = cli_fail("eval", st);
        goto done;
    }
    rc = print_report(report, &o, ds);
    if (!rc && fflush(stdout) != 0)
        rc = 1;
done:
    if (pred && fclose(pred) != 0 && !rc) {
        perror(o.predictions);
        rc = 1;
    }
    mt_report_free(report);
    mt_scorer_free(sc);
    parley_nlu_close(nlu);
    ds_free(ds);
    return rc;
}
