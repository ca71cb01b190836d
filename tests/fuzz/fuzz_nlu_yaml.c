/* fuzz_nlu_yaml.c — libFuzzer target for the Rasa-style nlu.yaml reader (nlu/data/rasa.c)
 * and the dataset it builds (nlu/data/dataset.c).
 *
 * The input is an nlu.yaml text, read in memory (ds_load_rasa_string: exactly `size` bytes,
 * no terminating NUL, so a read past the end is a sanitizer report). A refusal must carry
 * a message. A dataset that loads must keep dataset.h's promises: labels sorted and unique,
 * tags "O", "B-s", "I-s" for each slot, every example's text its words joined by single
 * spaces, every index (intent, tag, span word and slot) in range and spans in word order.
 * Augmentation from lookup tables and from the data's own values (seeded), then lower-case
 * copies, must keep them too.
 */
#include <string.h>

#include "nlu/data/dataset.h"
#include "tests/fuzz/fuzz_input.h"

static void check_sorted(char *const *names, int n, const char *what)
{
    for (int i = 0; i < n; i++) {
        FUZZ_EXPECT(names[i] && *names[i], "%s %d is named", what, i);
        FUZZ_EXPECT(!i || strcmp(names[i - 1], names[i]) < 0, "%s '%s' after '%s'", what, names[i],
                    names[i - 1]);
    }
}

static void check_example(const ds_dataset *ds, const ds_example *e)
{
    FUZZ_EXPECT(e->n_words > 0 && e->text && e->words && e->tags, "example %p has words",
                (void *)e);
    FUZZ_EXPECT(e->intent >= 0 && e->intent < ds->n_intents, "intent %d", e->intent);
    size_t at = 0;
    for (int w = 0; w < e->n_words; w++) {
        size_t len = strlen(e->words[w]);
        FUZZ_EXPECT(len > 0 && !memcmp(e->text + at, e->words[w], len), "word %d of '%s'", w,
                    e->text);
        for (size_t k = 0; k < len; k++)
            FUZZ_EXPECT(!ds_space_len(e->words[w], k, len), "word '%s' holds a space", e->words[w]);
        at += len;
        FUZZ_EXPECT(e->text[at] == (w + 1 < e->n_words ? ' ' : '\0'), "text '%s' after word %d",
                    e->text, w);
        at++;
        FUZZ_EXPECT(e->tags[w] >= 0 && e->tags[w] < ds->n_tags, "tag %d", e->tags[w]);
    }
    for (int s = 0; s < e->n_spans; s++) {
        const ds_span *sp = &e->spans[s];
        FUZZ_EXPECT(sp->start >= 0 && sp->start < sp->end && sp->end <= e->n_words &&
                            sp->slot >= 0 && sp->slot < ds->n_slots,
                    "span %d [%d, %d) slot %d in '%s'", s, sp->start, sp->end, sp->slot, e->text);
        FUZZ_EXPECT(!s || e->spans[s - 1].end <= sp->start, "spans overlap in '%s'", e->text);
        FUZZ_EXPECT(e->tags[sp->start] == 1 + 2 * sp->slot, "span %d starts with B- in '%s'", s,
                    e->text);
    }
}

static void check_dataset(const ds_dataset *ds)
{
    check_sorted(ds->intents, ds->n_intents, "intent");
    check_sorted(ds->slots, ds->n_slots, "slot");
    FUZZ_EXPECT(ds->n_tags == 1 + 2 * ds->n_slots && !strcmp(ds->tags[0], "O"), "tags");
    for (int s = 0; s < ds->n_slots; s++)
        FUZZ_EXPECT(!strncmp(ds->tags[1 + 2 * s], "B-", 2) &&
                            !strcmp(ds->tags[1 + 2 * s] + 2, ds->slots[s]) &&
                            !strncmp(ds->tags[2 + 2 * s], "I-", 2) &&
                            !strcmp(ds->tags[2 + 2 * s] + 2, ds->slots[s]),
                    "tags of slot %s", ds->slots[s]);
    for (int i = 0; i < ds->n_examples; i++)
        check_example(ds, &ds->examples[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ds_dataset *ds = NULL;
    parley_status st = ds_load_rasa_string("nlu.yaml", (const char *)data, size, &ds);
    if (st != PARLEY_OK) {
        FUZZ_EXPECT(ds == NULL, "a refused dataset is not handed out");
        fuzz_expect_refusal(st);
        return 0;
    }
    FUZZ_EXPECT(ds != NULL, "OK without a dataset");
    check_dataset(ds);
    int before = ds->n_examples, added = -1;
    st = ds_augment_lookups(ds, 2, 1, &added);
    FUZZ_EXPECT(st == PARLEY_OK, "augmenting: %s", parley_errmsg());
    FUZZ_EXPECT(added >= 0 && ds->n_examples == before + added, "added %d to %d, have %d", added,
                before, ds->n_examples);
    before = ds->n_examples;
    st = ds_augment_own_values(ds, 2, 1, &added);
    FUZZ_EXPECT(st == PARLEY_OK, "augmenting from its own values: %s", parley_errmsg());
    FUZZ_EXPECT(added >= 0 && ds->n_examples == before + added, "added %d to %d, have %d", added,
                before, ds->n_examples);
    before = ds->n_examples;
    st = ds_augment_lowercase(ds, &added);
    FUZZ_EXPECT(st == PARLEY_OK, "lower-case copies: %s", parley_errmsg());
    FUZZ_EXPECT(added >= 0 && ds->n_examples == before + added, "copied %d of %d, have %d", added,
                before, ds->n_examples);
    check_dataset(ds);
    ds_free(ds);
    return 0;
}
