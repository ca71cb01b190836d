/* test_metrics.c — hand-worked cases for nlu/data/metrics.c: chunk rules, micro P/R/F1, sentence
 * and intent accuracy, per-label scores, confusions, renderings, bad tags, and clean
 * failure of every allocation. (test_metrics_ref.py compares random cases with Python.) */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nlu/data/metrics.h"
#include "parley/parley.h"
#include "sdk/base/alloc.h"
#include "tests/check.h"
#include "tests/fault.h"

#define N(a)       ((int)(sizeof(a) / sizeof((a)[0])))
#define NEAR(a, b) (fabs((a) - (b)) < 1e-12)

static void test_chunks(void)
{
    const char *tags[] = { "I-a", "I-a", "B-a", "I-b", "O", "I-b", "B-c", "I-c" };
    mt_chunk c[8];
    int n = mt_chunks(tags, N(tags), c);
    static const int want[5][2] = { { 0, 2 }, { 2, 3 }, { 3, 4 }, { 5, 6 }, { 6, 8 } };
    static const char *const types[5] = { "a", "a", "b", "b", "c" };
    CHECK(n == 5, "%d chunks", n);
    for (int i = 0; i < n && i < 5; i++)
        CHECK(c[i].start == want[i][0] && c[i].end == want[i][1] &&
                      c[i].type_len == strlen(types[i]) &&
                      !strncmp(c[i].type, types[i], c[i].type_len),
              "chunk %d: [%d, %d) %.*s", i, c[i].start, c[i].end, (int)c[i].type_len, c[i].type);
    const char *none[] = { "O", "O" };
    CHECK(mt_chunks(none, 2, c) == 0 && mt_chunks(none, 0, c) == 0, "no chunks");
    char p;
    const char *t;
    CHECK(mt_tag_split("B-x-y", &p, &t) && p == 'B' && !strcmp(t, "x-y"),
          "type keeps later dashes");
    CHECK(!mt_tag_split("B-", &p, &t) && !mt_tag_split("X-a", &p, &t) &&
                  !mt_tag_split("Oops", &p, &t) && !mt_tag_split("", &p, &t) &&
                  !mt_tag_split(NULL, &p, &t),
          "bad tags refused");
}

static const mt_label *label(const mt_label *l, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(l[i].name, name))
            return &l[i];
    return NULL;
}

static void test_scores(void)
{
    mt_scorer *s = NULL;
    CHECK(mt_scorer_new(&s) == PARLEY_OK, "new");
    /* 1. gold B-a I-a O B-b, pred B-a I-a O I-b: both chunks right (I-b starts one), but the
     *    tags differ, so the sentence is wrong. */
    const char *g1[] = { "B-a", "I-a", "O", "B-b" }, *p1[] = { "B-a", "I-a", "O", "I-b" };
    CHECK(mt_scorer_add(s, "x", "x", 4, g1, p1) == PARLEY_OK, "add 1");
    /* 2. a split chunk: gold a[0,2); pred a[0,1), a[1,2) — nothing right. Intent wrong. */
    const char *g2[] = { "B-a", "I-a" }, *p2[] = { "B-a", "B-a" };
    CHECK(mt_scorer_add(s, "x", "y", 2, g2, p2) == PARLEY_OK, "add 2");
    /* 3. a type error on the same span, at the end of the sentence. */
    const char *g3[] = { "O", "B-a" }, *p3[] = { "O", "B-b" };
    CHECK(mt_scorer_add(s, "y", "y", 2, g3, p3) == PARLEY_OK, "add 3");
    /* 4. all right. */
    const char *g4[] = { "B-b", "O" };
    CHECK(mt_scorer_add(s, "y", "y", 2, g4, g4) == PARLEY_OK, "add 4");
    /* A bad tag is refused and changes nothing. */
    const char *bad[] = { "B-a", "E-a" };
    CHECK(mt_scorer_add(s, "y", "y", 2, g4, bad) == PARLEY_ERR_INVALID_ARG, "bad tag");
    CHECK(strstr(parley_errmsg(), "'E-a'") != NULL, "names the tag: %s", parley_errmsg());

    mt_report *r = NULL;
    CHECK(mt_scorer_report(s, &r) == PARLEY_OK && r, "report");
    if (!r)
        return;
    CHECK(r->n_examples == 4 && r->intent_correct == 3 && NEAR(r->intent_accuracy, 0.75),
          "intent accuracy");
    CHECK(r->sentence_correct == 1 && NEAR(r->sentence_accuracy, 0.25), "sentence accuracy %ld",
          r->sentence_correct);
    CHECK(r->n_tags == 10 && r->tags_correct == 7, "tags %ld/%ld", r->tags_correct, r->n_tags);
    /* gold chunks: a a b | a | a | b = 5; predicted: a b | a a | b | b = 6; correct: a, b, b = 3 */
    CHECK(r->slots.support == 5 && r->slots.predicted == 6 && r->slots.correct == 3,
          "chunk counts %ld %ld %ld", r->slots.support, r->slots.predicted, r->slots.correct);
    CHECK(NEAR(r->slots.precision, 0.5) && NEAR(r->slots.recall, 0.6) &&
                  NEAR(r->slots.f1, 2 * 0.5 * 0.6 / 1.1),
          "P/R/F1 %g %g %g", r->slots.precision, r->slots.recall, r->slots.f1);
    const mt_label *a = label(r->slot_types, r->n_slot_types, "a"),
                   *b = label(r->slot_types, r->n_slot_types, "b");
    CHECK(r->n_slot_types == 2 && a && b, "two slot types");
    if (a && b) {
        CHECK(a->s.support == 3 && a->s.predicted == 3 && a->s.correct == 1, "a counts");
        CHECK(b->s.support == 2 && b->s.predicted == 3 && b->s.correct == 2 &&
                      NEAR(b->s.recall, 1.0) && NEAR(b->s.precision, 2.0 / 3),
              "b counts");
    }
    const mt_label *x = label(r->intents, r->n_intents, "x"),
                   *y = label(r->intents, r->n_intents, "y");
    CHECK(r->n_intents == 2 && x && y && !strcmp(r->intents[0].name, "x"), "intents sorted");
    if (x && y) {
        CHECK(x->s.support == 2 && x->s.predicted == 1 && NEAR(x->s.precision, 1) &&
                      NEAR(x->s.recall, 0.5) && NEAR(x->s.f1, 2.0 / 3),
              "x scores");
        CHECK(y->s.support == 2 && y->s.predicted == 3 && NEAR(y->s.precision, 2.0 / 3) &&
                      NEAR(y->s.recall, 1),
              "y scores");
    }
    CHECK(r->n_intent_confusions == 1 && !strcmp(r->intent_confusions[0].gold, "x") &&
                  !strcmp(r->intent_confusions[0].pred, "y") && r->intent_confusions[0].count == 1,
          "intent confusion x -> y");
    /* slot confusions: O -> a twice (example 2's pieces), a -> O once, a -> b once */
    CHECK(r->n_slot_confusions == 3, "%d slot confusions", r->n_slot_confusions);
    if (r->n_slot_confusions == 3) {
        const mt_confusion *c = r->slot_confusions;
        CHECK(!strcmp(c[0].gold, "O") && !strcmp(c[0].pred, "a") && c[0].count == 2,
              "most frequent first");
        CHECK(!strcmp(c[1].gold, "a") && !strcmp(c[1].pred, "O") && c[1].count == 1,
              "then by gold name");
        CHECK(!strcmp(c[2].gold, "a") && !strcmp(c[2].pred, "b") && c[2].count == 1,
              "type confusion");
    }

    cJSON *json = NULL;
    CHECK(mt_report_json(r, 1, &json) == PARLEY_OK && json, "json");
    if (json) {
        cJSON *slots = cJSON_GetObjectItem(json, "slots");
        CHECK(NEAR(cJSON_GetObjectItem(slots, "recall")->valuedouble, 0.6), "json slot recall");
        CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(json, "intents"), "y"),
                                  "predicted")
                              ->valueint == 3,
              "json per intent");
        CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(json, "slot_confusions")) == 1,
              "max_confusions applies");
        cJSON_Delete(json);
    }
    char *table = NULL;
    CHECK(mt_report_table(r, -1, &table) == PARLEY_OK && table, "table");
    if (table) {
        CHECK(strstr(table, "intent accuracy     75.00%  (3/4)") != NULL, "table intent line:\n%s",
              table);
        CHECK(strstr(table, "sentence accuracy   25.00%") != NULL, "table sentence line");
        CHECK(strstr(table, "      2  O -> a\n") != NULL, "table confusion line");
        pl_free(table);
    }
    mt_report_free(r);
    mt_scorer_free(s);

    /* No examples: every ratio is 0, nothing crashes. */
    CHECK(mt_scorer_new(&s) == PARLEY_OK && mt_scorer_report(s, &r) == PARLEY_OK, "empty report");
    CHECK(r && r->n_examples == 0 && r->intent_accuracy == 0 && r->slots.f1 == 0 &&
                  r->n_intents == 0,
          "empty");
    mt_report_free(r);
    mt_scorer_free(s);
}

/* Score, report and render under every allocation failure (tests/fault.h). */
static parley_status score_all(void *ctx)
{
    (void)ctx;
    const char *g[] = { "B-a", "I-a", "O", "B-b" }, *p[] = { "B-a", "B-b", "O", "I-b" };
    mt_scorer *s = NULL;
    mt_report *r = NULL;
    cJSON *json = NULL;
    char *table = NULL;
    parley_status st = mt_scorer_new(&s);
    for (int i = 0; st == PARLEY_OK && i < 40; i++)
        st = mt_scorer_add(s, i % 3 ? "x" : "y", i % 5 ? "x" : "z", 4, g, i % 2 ? p : g);
    if (st == PARLEY_OK)
        st = mt_scorer_report(s, &r);
    if (st == PARLEY_OK)
        st = mt_report_json(r, -1, &json);
    if (st == PARLEY_OK)
        st = mt_report_table(r, -1, &table);
    cJSON_Delete(json);
    pl_free(table);
    mt_report_free(r);
    mt_scorer_free(s);
    return st;
}

int main(void)
{
    test_chunks();
    test_scores();
    long points = fault_sweep("score + report", score_all, NULL);
    CHECK(points > 20, "%ld allocation failure points", points);
    return check_done();
}
