/* eval.c — scoring an open model on annotated examples: parley_eval_run() and its report
 * (parley/train.h), what `parley eval` prints.
 *
 * The data set (nlu/data/dataset.h) goes through parley_nlu_parse_batch() in batches and the
 * scorer (nlu/data/metrics.h) compares each parse with the annotation, so the figures are
 * those of the parses an application gets, on whatever device the handle runs. The
 * trainer's dev scoring (train_evaluate, train.c) runs the CPU model directly instead. This
 * file renders the report's texts; it never prints.
 */
#include <cjson/cJSON.h>

#include "nlu/data/dataset.h"
#include "nlu/data/metrics.h"
#include "parley/train.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

enum { DEFAULT_BATCH = 32 };

/* A report: the public part first, so a parley_eval_report * is a report *. */
typedef struct report {
    parley_eval_report pub;
    mt_report *scores;
    char *text[2]; /* the last JSON text and the last table rendered */
} report;

/* One pass over a data set. */
typedef struct pass {
    parley_nlu *nlu;
    const ds_dataset *ds;
    parley_eval_params p;
    mt_scorer *sc;
    const char **texts;       /* (batch) */
    parley_nlu_result **res;  /* (batch) */
    const char **gold;        /* (longest example's words + 1) */
    int n_truncated, stopped; /* as in parley_eval_report */
} pass;

parley_eval_params parley_eval_params_default(void)
{
    return (parley_eval_params){ .batch = DEFAULT_BATCH };
}

/* Scores the parses of examples [first, first + n) in order, each given to on_example. */
static parley_status score_parses(pass *ps, int first, int n)
{
    const ds_dataset *ds = ps->ds;
    for (int i = 0; i < n && !ps->stopped; i++) {
        const ds_example *e = &ds->examples[first + i];
        const parley_nlu_result *r = ps->res[i];
        if (r->n_words != e->n_words)
            return pl_fail(PARLEY_ERR_FORMAT,
                           "%s: example %d (\"%s\"): the model found %d words, the data has %d",
                           ds->source, first + i + 1, e->text, r->n_words, e->n_words);
        for (int w = 0; w < e->n_words; w++)
            ps->gold[w] = ds->tags[e->tags[w]];
        ps->n_truncated += r->truncated != 0;
        parley_status st = mt_scorer_add(ps->sc, ds->intents[e->intent], r->intent, e->n_words,
                                         ps->gold, r->tags);
        if (st != PARLEY_OK)
            return pl_wrap(st, "%s: example %d", ds->source, first + i + 1);
        parley_eval_example ex = { first + i, ds->intents[e->intent], ps->gold, r };
        ps->stopped = ps->p.on_example && ps->p.on_example(&ex, ps->p.user_data) != 0;
    }
    return PARLEY_OK;
}

/* Parses examples [first, first + n) in one call and scores them. */
static parley_status score_batch(pass *ps, int first, int n)
{
    for (int i = 0; i < n; i++)
        ps->texts[i] = ps->ds->examples[first + i].text;
    parley_status st = parley_nlu_parse_batch(ps->nlu, ps->texts, (size_t)n, ps->res);
    if (st == PARLEY_OK)
        st = score_parses(ps, first, n);
    for (int i = 0; i < n; i++) {
        parley_nlu_result_free(ps->res[i]);
        ps->res[i] = NULL;
    }
    return st;
}

/* The public figures of scores m over data set ds. */
static parley_eval_report summary(const mt_report *m, const ds_dataset *ds, const pass *ps)
{
    return (parley_eval_report){ .n_examples = m->n_examples,
                                 .stopped = ps->stopped,
                                 .n_truncated = ps->n_truncated,
                                 .n_intents = ds->n_intents,
                                 .n_slot_types = ds->n_slots,
                                 .intent_accuracy = m->intent_accuracy,
                                 .slot_precision = m->slots.precision,
                                 .slot_recall = m->slots.recall,
                                 .slot_f1 = m->slots.f1,
                                 .sentence_accuracy = m->sentence_accuracy,
                                 .tag_accuracy = m->tag_accuracy };
}

parley_status parley_eval_run(parley_nlu *nlu, const char *data, const parley_eval_params *params,
                              parley_eval_report **out)
{
    parley_status st;
    ds_dataset *ds = NULL;
    report *rep = NULL;
    int batch, max_words = 0;
    pass ps = { .nlu = nlu, .p = params ? *params : parley_eval_params_default() };
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_eval_run: out is NULL");
    *out = NULL;
    if (!nlu || !data)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_eval_run: the model or the data is NULL");
    if (ps.p.batch < 0)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_eval_run: batch %d is negative", ps.p.batch);
    if ((st = ds_load(data, &ds)) != PARLEY_OK || (st = mt_scorer_new(&ps.sc)) != PARLEY_OK)
        goto fail;
    ps.ds = ds;
    batch = ps.p.batch ? ps.p.batch : DEFAULT_BATCH;
    if (batch > ds->n_examples)
        batch = ds->n_examples;
    for (int i = 0; i < ds->n_examples; i++)
        if (ds->examples[i].n_words > max_words)
            max_words = ds->examples[i].n_words;
    ps.texts = pl_malloc(((size_t)batch + 1) * sizeof *ps.texts);
    ps.res = pl_calloc((size_t)batch + 1, sizeof *ps.res);
    ps.gold = pl_malloc(((size_t)max_words + 1) * sizeof *ps.gold);
    rep = pl_calloc(1, sizeof *rep);
    if (!ps.texts || !ps.res || !ps.gold || !rep) {
        st = pl_nomem("%s: scoring", data);
        goto fail;
    }
    for (int i = 0; i < ds->n_examples && !ps.stopped; i += batch)
        if ((st = score_batch(&ps, i, ds->n_examples - i < batch ? ds->n_examples - i : batch)) !=
            PARLEY_OK)
            goto fail;
    if ((st = mt_scorer_report(ps.sc, &rep->scores)) != PARLEY_OK)
        goto fail;
    rep->pub = summary(rep->scores, ds, &ps);
    *out = &rep->pub;
    rep = NULL;
fail:
    pl_free(rep);
    pl_free(ps.texts);
    pl_free(ps.res);
    pl_free(ps.gold);
    mt_scorer_free(ps.sc);
    ds_free(ds);
    return st;
}

/* Renders the report's scores as JSON (table = 0) or as a table into the report, replacing
 * the last text of that kind. */
static parley_status render(parley_eval_report *r, int max_confusions, int table, const char **out)
{
    report *rep = (report *)r;
    char *text = NULL, *json;
    cJSON *tree = NULL;
    parley_status st;
    if (!r || !out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_eval_report_%s: NULL argument",
                       table ? "table" : "json");
    *out = NULL;
    if (table) {
        if ((st = mt_report_table(rep->scores, max_confusions, &text)) != PARLEY_OK)
            return st;
    } else {
        if ((st = mt_report_json(rep->scores, max_confusions, &tree)) != PARLEY_OK)
            return st;
        json = cJSON_Print(tree);
        text = json ? pl_strdup(json) : NULL;
        cJSON_free(json);
        cJSON_Delete(tree);
        if (!text)
            return pl_nomem("rendering the scores as JSON");
    }
    pl_free(rep->text[table]);
    *out = rep->text[table] = text;
    return PARLEY_OK;
}

parley_status parley_eval_report_json(parley_eval_report *r, int max_confusions, const char **out)
{
    return render(r, max_confusions, 0, out);
}

parley_status parley_eval_report_table(parley_eval_report *r, int max_confusions, const char **out)
{
    return render(r, max_confusions, 1, out);
}

void parley_eval_report_free(parley_eval_report *r)
{
    report *rep = (report *)r;
    if (!r)
        return;
    mt_report_free(rep->scores);
    pl_free(rep->text[0]);
    pl_free(rep->text[1]);
    pl_free(rep);
}
