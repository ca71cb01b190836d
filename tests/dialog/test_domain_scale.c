/* test_domain_scale.c — loading a domain costs time linear in its size.
 *
 * Builds a large domain in a temporary file and loads it, checked against the NLU model's
 * labels too: every name is looked up and every list checked for duplicates, so a
 * pairwise scan anywhere in the loader (intents, actions, rules, slots, entities, values,
 * synonyms, responses, forms and their ask:/invalid: maps) would take minutes on it. The
 * bound is the test's timeout, which is about 100 times what the linear loader needs; no
 * time is measured here. The mappings (slots, responses, synonyms, a form's maps) are
 * kept at a few thousand keys because the YAML layer's own duplicate-key check is another
 * piece of work; the sequences (intents, actions, rules, values, entities, required slots)
 * carry the size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dialog/domain.h"
#include "dialog/slot_value.h"
#include "sdk/base/alloc.h"
#include "tests/check.h"
#include "tests/dialog/tmp_store.h"

enum {
    INTENTS = 200000, /* and as many actions and rules */
    VALUES = 50000,   /* of one categorical slot */
    SLOTS = 5000,     /* text slots, each an entity, all required by one form */
    RESPONSES = 10000,
    SYNONYMS = 5000,
};

static void write_domain(FILE *f)
{
    fputs("intents:\n", f);
    for (int i = 0; i < INTENTS; i++)
        fprintf(f, "  - intent_%d\n", i);
    fputs("entities:\n  - size\n", f);
    for (int i = 0; i < SLOTS; i++)
        fprintf(f, "  - slot_%d\n", i);
    fputs("slots:\n  size:\n    type: categorical\n    values:\n", f);
    for (int i = 0; i < VALUES; i++)
        fprintf(f, "      - Value %d\n", i);
    fputs("    synonyms:\n", f);
    for (int i = 0; i < SYNONYMS; i++)
        fprintf(f, "      synonym %d: value %d\n", i, i * 7 % VALUES);
    for (int i = 0; i < SLOTS; i++)
        fprintf(f, "  slot_%d: {type: text}\n", i);
    fputs("responses:\n  utter_default: [\"Sorry, {size}?\"]\n", f);
    for (int i = 0; i < RESPONSES; i++)
        fprintf(f, "  utter_%d: [\"Reply %d with {slot_%d}.\"]\n", i, i, i % SLOTS);
    fputs("actions:\n", f);
    for (int i = 0; i < INTENTS; i++)
        fprintf(f, "  - action_%d\n", i);
    fputs("forms:\n  big_form:\n    required_slots:\n", f);
    for (int i = 0; i < SLOTS; i++)
        fprintf(f, "      - slot_%d\n", i);
    fputs("    ask:\n", f);
    for (int i = 0; i < SLOTS; i++)
        fprintf(f, "      slot_%d: utter_%d\n", i, i);
    fputs("    invalid:\n", f);
    for (int i = 0; i < SLOTS; i++)
        fprintf(f, "      slot_%d: utter_%d\n", i, SLOTS + i);
    fputs("    on_complete: {reply: utter_default}\nrules:\n", f);
    for (int i = 0; i < INTENTS; i++) {
        if (i % 3 == 0)
            fprintf(f, "  - {intent: intent_%d, reply: utter_%d}\n", i, i % RESPONSES);
        else if (i % 3 == 1)
            fprintf(f, "  - {intent: intent_%d, action: action_%d}\n", i, i);
        else
            fprintf(f, "  - {intent: intent_%d, form: big_form}\n", i);
    }
}

/* The NLU model's labels: every intent and entity of the domain, and more. */
static char **labels(const char *prefix, int n, int extra)
{
    char **l = calloc((size_t)(n + extra), sizeof *l);
    for (int i = 0; l && i < n + extra; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s_%d", prefix, i);
        l[i] = strdup(buf);
    }
    return l;
}

static void free_labels(char **l, int n)
{
    for (int i = 0; l && i < n; i++)
        free(l[i]);
    free(l);
}

int main(void)
{
    char dir[4096], path[4200];
    if (!tmp_store_dir(dir, sizeof dir, "scale"))
        return 1;
    snprintf(path, sizeof path, "%s/domain.yaml", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f)
        return check_done();
    write_domain(f);
    fclose(f);

    /* slot_0 .. slot_5009, and "size" in the place of slot_5010. */
    char **intents = labels("intent", INTENTS, 10), **entities = labels("slot", SLOTS, 11);
    if (entities) {
        free(entities[SLOTS + 10]);
        entities[SLOTS + 10] = strdup("size");
    }
    dm_known known = { (const char *const *)intents, INTENTS + 10, (const char *const *)entities,
                       SLOTS + 11 };
    dm_domain *d = NULL;
    parley_status st = dm_domain_load(path, &known, &d);
    CHECK(st == PARLEY_OK, "loading %s: %s", path, parley_errmsg());
    if (d) {
        CHECK(d->n_intents == INTENTS && d->n_actions == INTENTS && d->n_slots == SLOTS + 1 &&
                      d->n_responses == RESPONSES + 1 && d->n_forms == 1 &&
                      d->slots[0].n_values == VALUES && d->slots[0].n_synonyms == SYNONYMS,
              "counts: %zu intents, %zu actions, %zu slots, %zu responses, %zu forms", d->n_intents,
              d->n_actions, d->n_slots, d->n_responses, d->n_forms);
        int last = dm_domain_intent(d, "intent_199999");
        CHECK(last == INTENTS - 1 && d->rule_of_intent[last].act.kind == DM_DO_ACTION &&
                      d->rule_of_intent[last].act.index == dm_domain_action(d, "action_199999"),
              "the last intent's rule");
        /* Response 0 is utter_default, so utter_<i> is response i + 1. */
        const dm_form *form = &d->forms[0];
        CHECK(form->n_required == SLOTS && form->ask[SLOTS - 1] == SLOTS &&
                      form->invalid[SLOTS - 1] == 2 * SLOTS,
              "the form's last slot: ask %d, invalid %d", form->ask[SLOTS - 1],
              form->invalid[SLOTS - 1]);
        char *v = NULL;
        st = dm_slot_normalize(&d->slots[0], "SYNONYM  4999", &v);
        CHECK(st == PARLEY_OK && v && !strcmp(v, "Value 34993"), "a synonym: %s",
              v ? v : parley_errmsg());
        pl_free(v);
    }
    dm_domain_free(d);
    free_labels(intents, INTENTS + 10);
    free_labels(entities, SLOTS + 11);
    unlink(path);
    rmdir(dir);
    return check_done();
}
