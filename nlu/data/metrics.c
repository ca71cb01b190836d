/* metrics.c — intent accuracy, chunk-level slot P/R/F1 (conlleval rules), sentence accuracy,
 * per-label scores and confusions, and their JSON and table renderings.
 *
 * Scoring only: it takes labels as strings and never runs a model or reads a dataset
 * (sdk/cli/cmd_eval.c does both). tests/reference/seqeval_ref.py is an independent
 * scorer that tests/nlu/data/test_metrics_ref.py compares with this one number for number.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nlu/data/metrics.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/strbuf.h"

/* ---- tags and chunks ---------------------------------------------------------------- */

int mt_tag_split(const char *tag, char *prefix, const char **type)
{
    if (!tag)
        return 0;
    if (!strcmp(tag, "O")) {
        *prefix = 'O';
        *type = tag + 1;
        return 1;
    }
    if ((tag[0] == 'B' || tag[0] == 'I') && tag[1] == '-' && tag[2]) {
        *prefix = tag[0];
        *type = tag + 2;
        return 1;
    }
    return 0;
}

int mt_chunks(const char *const *tags, int n, mt_chunk *out)
{
    int k = 0, open = 0;
    for (int i = 0; i < n; i++) {
        char p = 'O';
        const char *type = "";
        mt_tag_split(tags[i], &p, &type);
        size_t len = strlen(type);
        /* An open chunk ends at O, at B-, and where the type changes. */
        if (open &&
            (p != 'I' || len != out[k - 1].type_len || memcmp(type, out[k - 1].type, len) != 0)) {
            out[k - 1].end = i;
            open = 0;
        }
        /* B- starts a chunk; so does an I- that does not continue one. */
        if (p == 'B' || (p == 'I' && !open)) {
            out[k++] = (mt_chunk){ i, i + 1, type, len };
            open = 1;
        }
    }
    if (open)
        out[k - 1].end = n;
    return k;
}

/* ---- the scorer ------------------------------------------------------------------------ */

typedef struct counts {
    long support, predicted, correct;
} counts;

typedef struct label_table {
    char **names;
    counts *c;
    int n, cap;
} label_table;

/* A confusion cell; label ids index a label_table, -1 is "O" (no chunk). */
typedef struct pair {
    int gold, pred;
    long count;
} pair;

typedef struct pair_table {
    pair *p;
    int n, cap;
} pair_table;

struct mt_scorer {
    long n_examples, intent_correct, sentence_correct, n_tags, tags_correct;
    long chunk_gold, chunk_pred, chunk_correct;
    label_table intents, slots;
    pair_table intent_conf, slot_conf;
    mt_chunk *gold_chunks, *pred_chunks; /* (chunk_cap) scratch */
    int *gold_ids, *pred_ids;            /* (chunk_cap) slot label id of each chunk */
    int chunk_cap;
};

parley_status mt_scorer_new(mt_scorer **out)
{
    *out = pl_calloc(1, sizeof **out);
    return *out ? PARLEY_OK : pl_nomem("a scorer");
}

static void labels_clear(label_table *t)
{
    for (int i = 0; i < t->n; i++)
        pl_free(t->names[i]);
    pl_free(t->names);
    pl_free(t->c);
}

void mt_scorer_free(mt_scorer *s)
{
    if (!s)
        return;
    labels_clear(&s->intents);
    labels_clear(&s->slots);
    pl_free(s->intent_conf.p);
    pl_free(s->slot_conf.p);
    pl_free(s->gold_chunks);
    pl_free(s->pred_chunks);
    pl_free(s->gold_ids);
    pl_free(s->pred_ids);
    pl_free(s);
}

/* The id of name[0..len), added with zero counts when new; -1 when out of memory. */
static int label_id(label_table *t, const char *name, size_t len)
{
    for (int i = 0; i < t->n; i++)
        if (!strncmp(t->names[i], name, len) && t->names[i][len] == '\0')
            return i;
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        char **names = pl_realloc(t->names, (size_t)cap * sizeof *names);
        if (names)
            t->names = names;
        counts *c = pl_realloc(t->c, (size_t)cap * sizeof *c);
        if (c)
            t->c = c;
        if (!names || !c)
            return -1;
        t->cap = cap;
    }
    if (!(t->names[t->n] = pl_strndup(name, len)))
        return -1;
    memset(&t->c[t->n], 0, sizeof t->c[t->n]);
    return t->n++;
}

static int pairs_reserve(pair_table *t, int more)
{
    if (t->n + more <= t->cap)
        return 1;
    int cap = t->cap ? t->cap : 16;
    while (cap < t->n + more)
        cap *= 2;
    pair *p = pl_realloc(t->p, (size_t)cap * sizeof *p);
    if (!p)
        return 0;
    t->p = p;
    t->cap = cap;
    return 1;
}

/* Counts one (gold, pred) cell; room was reserved beforehand. */
static void pair_count(pair_table *t, int gold, int pred)
{
    for (int i = 0; i < t->n; i++)
        if (t->p[i].gold == gold && t->p[i].pred == pred) {
            t->p[i].count++;
            return;
        }
    t->p[t->n++] = (pair){ gold, pred, 1 };
}

static int scratch_reserve(mt_scorer *s, int n)
{
    if (n <= s->chunk_cap)
        return 1;
    int cap = n < 64 ? 64 : n;
    mt_chunk *g = pl_realloc(s->gold_chunks, (size_t)cap * sizeof *g);
    if (g)
        s->gold_chunks = g;
    mt_chunk *p = pl_realloc(s->pred_chunks, (size_t)cap * sizeof *p);
    if (p)
        s->pred_chunks = p;
    int *gi = pl_realloc(s->gold_ids, (size_t)cap * sizeof *gi);
    if (gi)
        s->gold_ids = gi;
    int *pi = pl_realloc(s->pred_ids, (size_t)cap * sizeof *pi);
    if (pi)
        s->pred_ids = pi;
    if (!g || !p || !gi || !pi)
        return 0;
    s->chunk_cap = cap;
    return 1;
}

/* Counts the chunks of one example, and the slot confusions on equal spans. */
static void count_chunks(mt_scorer *s, int ng, int np)
{
    const mt_chunk *g = s->gold_chunks, *p = s->pred_chunks;
    int i = 0, j = 0;
    for (int k = 0; k < ng; k++)
        s->slots.c[s->gold_ids[k]].support++;
    for (int k = 0; k < np; k++)
        s->slots.c[s->pred_ids[k]].predicted++;
    s->chunk_gold += ng;
    s->chunk_pred += np;
    /* Chunks of one sequence are disjoint and in order: merge the two lists by span. */
    while (i < ng || j < np) {
        if (j >= np || (i < ng && g[i].start < p[j].start)) {
            pair_count(&s->slot_conf, s->gold_ids[i++], -1);
        } else if (i >= ng || p[j].start < g[i].start) {
            pair_count(&s->slot_conf, -1, s->pred_ids[j++]);
        } else if (g[i].end != p[j].end) {
            pair_count(&s->slot_conf, s->gold_ids[i++], -1);
            pair_count(&s->slot_conf, -1, s->pred_ids[j++]);
        } else {
            if (s->gold_ids[i] == s->pred_ids[j]) {
                s->slots.c[s->gold_ids[i]].correct++;
                s->chunk_correct++;
            } else {
                pair_count(&s->slot_conf, s->gold_ids[i], s->pred_ids[j]);
            }
            i++;
            j++;
        }
    }
}

parley_status mt_scorer_add(mt_scorer *s, const char *gold_intent, const char *pred_intent,
                            int n_words, const char *const *gold_tags, const char *const *pred_tags)
{
    char prefix;
    const char *type;
    if (!s || !gold_intent || !pred_intent || n_words < 0 ||
        (n_words && (!gold_tags || !pred_tags)))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "mt_scorer_add: NULL or negative argument");
    for (int w = 0; w < n_words; w++)
        if (!mt_tag_split(gold_tags[w], &prefix, &type) ||
            !mt_tag_split(pred_tags[w], &prefix, &type))
            return pl_fail(
                    PARLEY_ERR_INVALID_ARG, "example %ld, word %d: tag '%s' is not O, B-x or I-x",
                    s->n_examples + 1, w,
                    mt_tag_split(gold_tags[w], &prefix, &type) ? pred_tags[w] : gold_tags[w]);
    /* Every allocation happens before any count changes, so a failure leaves the counts
     * consistent. */
    if (!scratch_reserve(s, n_words))
        goto nomem;
    int ng = mt_chunks(gold_tags, n_words, s->gold_chunks);
    int np = mt_chunks(pred_tags, n_words, s->pred_chunks);
    for (int k = 0; k < ng; k++)
        if ((s->gold_ids[k] =
                     label_id(&s->slots, s->gold_chunks[k].type, s->gold_chunks[k].type_len)) < 0)
            goto nomem;
    for (int k = 0; k < np; k++)
        if ((s->pred_ids[k] =
                     label_id(&s->slots, s->pred_chunks[k].type, s->pred_chunks[k].type_len)) < 0)
            goto nomem;
    int gi = label_id(&s->intents, gold_intent, strlen(gold_intent));
    int pi = gi < 0 ? -1 : label_id(&s->intents, pred_intent, strlen(pred_intent));
    if (pi < 0 || !pairs_reserve(&s->intent_conf, 1) || !pairs_reserve(&s->slot_conf, ng + np))
        goto nomem;

    int tags_equal = 1;
    for (int w = 0; w < n_words; w++) {
        int eq = !strcmp(gold_tags[w], pred_tags[w]);
        s->tags_correct += eq;
        tags_equal &= eq;
    }
    s->n_tags += n_words;
    s->n_examples++;
    s->intents.c[gi].support++;
    s->intents.c[pi].predicted++;
    if (gi == pi) {
        s->intents.c[gi].correct++;
        s->intent_correct++;
        s->sentence_correct += tags_equal;
    } else {
        pair_count(&s->intent_conf, gi, pi);
    }
    count_chunks(s, ng, np);
    return PARLEY_OK;
nomem:
    return pl_nomem("scoring example %ld", s->n_examples + 1);
}

/* ---- the report ------------------------------------------------------------------------ */

static double ratio(long num, long den)
{
    return den ? (double)num / (double)den : 0.0;
}

static mt_prf prf(long support, long predicted, long correct)
{
    mt_prf r = {
        support, predicted, correct, ratio(correct, predicted), ratio(correct, support), 0
    };
    if (r.precision + r.recall > 0)
        r.f1 = 2 * r.precision * r.recall / (r.precision + r.recall);
    return r;
}

static int cmp_label(const void *a, const void *b)
{
    return strcmp(((const mt_label *)a)->name, ((const mt_label *)b)->name);
}

static int cmp_confusion(const void *a, const void *b)
{
    const mt_confusion *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    int c = strcmp(x->gold, y->gold);
    return c ? c : strcmp(x->pred, y->pred);
}

static parley_status copy_labels(const label_table *t, mt_label **out, int *n)
{
    *out = pl_calloc((size_t)(t->n ? t->n : 1), sizeof **out);
    if (!*out)
        return PARLEY_ERR_NOMEM;
    for (int i = 0; i < t->n; i++) {
        if (!((*out)[i].name = pl_strdup(t->names[i])))
            return PARLEY_ERR_NOMEM;
        (*out)[i].s = prf(t->c[i].support, t->c[i].predicted, t->c[i].correct);
        *n = i + 1;
    }
    qsort(*out, (size_t)*n, sizeof **out, cmp_label);
    return PARLEY_OK;
}

static parley_status copy_confusions(const pair_table *t, const label_table *labels,
                                     mt_confusion **out, int *n)
{
    *out = pl_calloc((size_t)(t->n ? t->n : 1), sizeof **out);
    if (!*out)
        return PARLEY_ERR_NOMEM;
    for (int i = 0; i < t->n; i++) {
        mt_confusion *c = &(*out)[i];
        c->gold = pl_strdup(t->p[i].gold < 0 ? "O" : labels->names[t->p[i].gold]);
        c->pred = pl_strdup(t->p[i].pred < 0 ? "O" : labels->names[t->p[i].pred]);
        c->count = t->p[i].count;
        *n = i + 1;
        if (!c->gold || !c->pred)
            return PARLEY_ERR_NOMEM;
    }
    qsort(*out, (size_t)*n, sizeof **out, cmp_confusion);
    return PARLEY_OK;
}

parley_status mt_scorer_report(const mt_scorer *s, mt_report **out)
{
    mt_report *r = pl_calloc(1, sizeof *r);
    *out = NULL;
    if (!r)
        goto nomem;
    r->n_examples = s->n_examples;
    r->intent_correct = s->intent_correct;
    r->intent_accuracy = ratio(s->intent_correct, s->n_examples);
    r->sentence_correct = s->sentence_correct;
    r->sentence_accuracy = ratio(s->sentence_correct, s->n_examples);
    r->n_tags = s->n_tags;
    r->tags_correct = s->tags_correct;
    r->tag_accuracy = ratio(s->tags_correct, s->n_tags);
    r->slots = prf(s->chunk_gold, s->chunk_pred, s->chunk_correct);
    if (copy_labels(&s->intents, &r->intents, &r->n_intents) != PARLEY_OK ||
        copy_labels(&s->slots, &r->slot_types, &r->n_slot_types) != PARLEY_OK ||
        copy_confusions(&s->intent_conf, &s->intents, &r->intent_confusions,
                        &r->n_intent_confusions) != PARLEY_OK ||
        copy_confusions(&s->slot_conf, &s->slots, &r->slot_confusions, &r->n_slot_confusions) !=
                PARLEY_OK)
        goto nomem;
    *out = r;
    return PARLEY_OK;
nomem:
    mt_report_free(r);
    return pl_nomem("building the scores report");
}

static void confusions_free(mt_confusion *c, int n)
{
    for (int i = 0; i < n; i++) {
        pl_free(c[i].gold);
        pl_free(c[i].pred);
    }
    pl_free(c);
}

static void mt_labels_free(mt_label *l, int n)
{
    for (int i = 0; i < n; i++)
        pl_free(l[i].name);
    pl_free(l);
}

void mt_report_free(mt_report *r)
{
    if (!r)
        return;
    mt_labels_free(r->intents, r->n_intents);
    mt_labels_free(r->slot_types, r->n_slot_types);
    confusions_free(r->intent_confusions, r->n_intent_confusions);
    confusions_free(r->slot_confusions, r->n_slot_confusions);
    pl_free(r);
}

/* ---- JSON -------------------------------------------------------------------------------- */

static int json_prf(cJSON *parent, const char *key, const mt_prf *p)
{
    cJSON *o = cJSON_AddObjectToObject(parent, key);
    return o && cJSON_AddNumberToObject(o, "precision", p->precision) &&
           cJSON_AddNumberToObject(o, "recall", p->recall) &&
           cJSON_AddNumberToObject(o, "f1", p->f1) &&
           cJSON_AddNumberToObject(o, "support", (double)p->support) &&
           cJSON_AddNumberToObject(o, "predicted", (double)p->predicted) &&
           cJSON_AddNumberToObject(o, "correct", (double)p->correct);
}

static int json_labels(cJSON *root, const char *key, const mt_label *l, int n)
{
    cJSON *o = cJSON_AddObjectToObject(root, key);
    int ok = o != NULL;
    for (int i = 0; ok && i < n; i++)
        ok = json_prf(o, l[i].name, &l[i].s);
    return ok;
}

static int json_confusions(cJSON *root, const char *key, const mt_confusion *c, int n, int max)
{
    cJSON *a = cJSON_AddArrayToObject(root, key);
    int ok = a != NULL;
    for (int i = 0; ok && i < n && (max < 0 || i < max); i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(a, o)) {
            cJSON_Delete(o);
            return 0;
        }
        ok = cJSON_AddStringToObject(o, "gold", c[i].gold) &&
             cJSON_AddStringToObject(o, "pred", c[i].pred) &&
             cJSON_AddNumberToObject(o, "count", (double)c[i].count);
    }
    return ok;
}

parley_status mt_report_json(const mt_report *r, int max_confusions, cJSON **out)
{
    cJSON *root = cJSON_CreateObject();
    *out = NULL;
    int ok = root && cJSON_AddNumberToObject(root, "examples", (double)r->n_examples) &&
             cJSON_AddNumberToObject(root, "intent_accuracy", r->intent_accuracy) &&
             cJSON_AddNumberToObject(root, "intent_correct", (double)r->intent_correct) &&
             json_prf(root, "slots", &r->slots) &&
             cJSON_AddNumberToObject(root, "sentence_accuracy", r->sentence_accuracy) &&
             cJSON_AddNumberToObject(root, "sentence_correct", (double)r->sentence_correct) &&
             cJSON_AddNumberToObject(root, "tag_accuracy", r->tag_accuracy) &&
             cJSON_AddNumberToObject(root, "tags", (double)r->n_tags) &&
             cJSON_AddNumberToObject(root, "tags_correct", (double)r->tags_correct) &&
             json_labels(root, "intents", r->intents, r->n_intents) &&
             json_labels(root, "slot_types", r->slot_types, r->n_slot_types) &&
             json_confusions(root, "intent_confusions", r->intent_confusions,
                             r->n_intent_confusions, max_confusions) &&
             json_confusions(root, "slot_confusions", r->slot_confusions, r->n_slot_confusions,
                             max_confusions);
    if (!ok) {
        cJSON_Delete(root);
        return pl_nomem("rendering the scores as JSON");
    }
    *out = root;
    return PARLEY_OK;
}

/* ---- table ------------------------------------------------------------------------------ */

static void table_labels(pl_strbuf *b, const char *title, const mt_label *l, int n)
{
    int w = (int)strlen(title);
    for (int i = 0; i < n; i++)
        if ((int)strlen(l[i].name) > w)
            w = (int)strlen(l[i].name);
    pl_strbuf_printf(b, "\n%-*s  precision  recall      f1  support\n", w, title);
    for (int i = 0; i < n; i++)
        pl_strbuf_printf(b, "%-*s  %9.2f  %6.2f  %6.2f  %7ld\n", w, l[i].name,
                         100 * l[i].s.precision, 100 * l[i].s.recall, 100 * l[i].s.f1,
                         l[i].s.support);
}

static void table_confusions(pl_strbuf *b, const char *title, const mt_confusion *c, int n, int max)
{
    if (n == 0 || max == 0)
        return;
    pl_strbuf_printf(b, "\n%s\n", title);
    for (int i = 0; i < n && (max < 0 || i < max); i++)
        pl_strbuf_printf(b, "%7ld  %s -> %s\n", c[i].count, c[i].gold, c[i].pred);
}

parley_status mt_report_table(const mt_report *r, int max_confusions, char **out)
{
    pl_strbuf b = { 0 };
    *out = NULL;
    pl_strbuf_printf(&b, "examples           %ld\n", r->n_examples);
    pl_strbuf_printf(&b, "intent accuracy    %6.2f%%  (%ld/%ld)\n", 100 * r->intent_accuracy,
                     r->intent_correct, r->n_examples);
    pl_strbuf_printf(
            &b,
            "slot F1 (chunks)   %6.2f%%  precision %.2f%%, recall %.2f%% (%ld correct, %ld "
            "predicted, %ld gold)\n",
            100 * r->slots.f1, 100 * r->slots.precision, 100 * r->slots.recall, r->slots.correct,
            r->slots.predicted, r->slots.support);
    pl_strbuf_printf(&b, "sentence accuracy  %6.2f%%  (%ld/%ld: intent and every tag right)\n",
                     100 * r->sentence_accuracy, r->sentence_correct, r->n_examples);
    pl_strbuf_printf(&b, "tag accuracy       %6.2f%%  (%ld/%ld words)\n", 100 * r->tag_accuracy,
                     r->tags_correct, r->n_tags);
    table_labels(&b, "intent", r->intents, r->n_intents);
    table_labels(&b, "slot type", r->slot_types, r->n_slot_types);
    table_confusions(&b, "most frequent intent confusions (count  gold -> predicted)",
                     r->intent_confusions, r->n_intent_confusions, max_confusions);
    table_confusions(
            &b, "most frequent slot confusions (count  gold -> predicted, same words; O = no slot)",
            r->slot_confusions, r->n_slot_confusions, max_confusions);
    if (b.failed || !b.s) {
        pl_free(b.s);
        return pl_nomem("rendering the scores table");
    }
    *out = b.s;
    return PARLEY_OK;
}
