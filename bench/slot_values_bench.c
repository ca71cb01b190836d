/* slot_values_bench.c — the resolution of near misses (nlu/model/slot_values.h) on a data set's
 * own test spans, without a model: the values each slot type knows come from the training
 * split (as the trainer records them), and each annotated span of the test split is resolved
 * as parsing resolves a span the model tags.
 *
 * It reports, of the test values the slot type does not know, how many resolution moves to a
 * known value (on clean text each is a wrong move: the value said was new), and, of the test
 * values it knows, with bench/typos.py's slip (the longest word, of 5 letters or more, loses
 * its second-to-last letter), how many resolve back to the value, to another one, or stay as
 * typed.
 *
 *   build/bench/slot_values_bench /work/shared/data/nlu/snips/train
 * /work/shared/data/nlu/snips/test
 */
#include <stdio.h>
#include <string.h>

#include "nlu/data/dataset.h"
#include "nlu/train/slot_values.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

/* The span's words joined by single spaces into buf (cap bytes), or 0 when they do not fit. */
static size_t span_text(const ds_example *e, const ds_span *sp, char *buf, size_t cap)
{
    size_t n = 0;
    for (int w = sp->start; w < sp->end; w++) {
        size_t len = strlen(e->words[w]);
        if (n + len + 2 > cap)
            return 0;
        if (w > sp->start)
            buf[n++] = ' ';
        memcpy(buf + n, e->words[w], len);
        n += len;
    }
    buf[n] = '\0';
    return n;
}

/* bench/typos.py's slip in place: 1 when the text changed. */
static int slip(char *text)
{
    char *best = NULL;
    size_t most = 0;
    for (char *w = text; *w;) {
        size_t len = strcspn(w, " ");
        if (len > most) {
            most = len;
            best = w;
        }
        w += len;
        w += *w == ' ';
    }
    if (most < 5)
        return 0;
    for (size_t i = 0; i < most; i++)
        if (!((best[i] >= 'a' && best[i] <= 'z') || (best[i] >= 'A' && best[i] <= 'Z')))
            return 0;
    memmove(best + most - 2, best + most - 1, strlen(best + most - 1) + 1);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: slot_values_bench TRAIN TEST (data sets ds_load reads)\n");
        return 2;
    }
    ds_dataset *train = NULL, *test = NULL;
    bert_slot_values v = { 0 };
    bert_synonyms syn = { 0 };
    if (ds_load(argv[1], &train) != PARLEY_OK || ds_load(argv[2], &test) != PARLEY_OK ||
        train_slot_values_of(train, &v) != PARLEY_OK) {
        fprintf(stderr, "slot_values_bench: %s\n", parley_errmsg());
        return 1;
    }
    long unknown = 0, moved = 0, known = 0, slipped = 0, back = 0, other = 0, none = 0;
    char buf[512];
    for (int i = 0; i < test->n_examples; i++) {
        const ds_example *e = &test->examples[i];
        for (int s = 0; s < e->n_spans; s++) {
            const bert_known *k = bert_slot_values_find(&v, test->slots[e->spans[s].slot]);
            size_t n = span_text(e, &e->spans[s], buf, sizeof buf);
            char *f = n && k ? bert_synonym_fold(buf, n) : NULL, *out = NULL;
            if (!f)
                continue;
            int is_known = pl_names_find(&k->ix, f, strlen(f)) >= 0;
            if (!is_known) {
                unknown++;
                bert_known_resolve(k, &syn, buf, n, &out);
                moved += out != NULL;
            } else {
                known++;
                if (slip(buf)) {
                    slipped++;
                    bert_known_resolve(k, &syn, buf, strlen(buf), &out);
                    char *g = out ? bert_synonym_fold(out, strlen(out)) : NULL;
                    back += g && !strcmp(g, f);
                    other += out && !(g && !strcmp(g, f));
                    none += !out;
                    pl_free(g);
                }
            }
            pl_free(out);
            pl_free(f);
        }
    }
    int open = 0;
    for (int i = 0; i < v.n; i++)
        open += v.slots[i].open;
    printf("slot types %d (open %d); test values the slot type does not know: %ld, moved to a "
           "known one %ld (%.1f%%)\n",
           v.n, open, unknown, moved, unknown ? 100.0 * moved / (double)unknown : 0.0);
    printf("known test values %ld, slipped %ld: back to the value %ld (%.1f%%), to another %ld "
           "(%.1f%%), as typed %ld (%.1f%%)\n",
           known, slipped, back, slipped ? 100.0 * back / (double)slipped : 0.0, other,
           slipped ? 100.0 * other / (double)slipped : 0.0, none,
           slipped ? 100.0 * none / (double)slipped : 0.0);
    bert_slot_values_clear(&v);
    ds_free(train);
    ds_free(test);
    return 0;
}
