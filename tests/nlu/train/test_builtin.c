/* test_builtin.c — the built-in replies of the conventional intents (nlu/train/builtin.h).
 *
 * A bot with greet and deny gets replies for those two and no other intent; a reply it
 * already has is not added again; every added example is untagged, all O, and its text is
 * one of the lists' ("nah" under deny); a bot without such intents gets none; the sized
 * switch is on under 2,000 examples, and an explicit choice wins.
 */
#include <string.h>

#include "nlu/data/dataset.h"
#include "nlu/train/builtin.h"
#include "tests/check.h"

static const char yaml[] = "nlu:\n"
                           "- intent: greet\n"
                           "  examples: |\n"
                           "    - hello\n"
                           "    - good morning\n"
                           "- intent: deny\n"
                           "  examples: |\n"
                           "    - no\n"
                           "- intent: order\n"
                           "  examples: |\n"
                           "    - a [large](size) pizza\n";

static int count_of(const ds_dataset *ds, const char *intent)
{
    int n = 0, id = ds_intent_index(ds, intent);
    for (int i = 0; i < ds->n_examples; i++)
        n += ds->examples[i].intent == id;
    return n;
}

static int has_text(const ds_dataset *ds, const char *intent, const char *text)
{
    int id = ds_intent_index(ds, intent), n = 0;
    for (int i = 0; i < ds->n_examples; i++)
        n += ds->examples[i].intent == id && !strcmp(ds->examples[i].text, text);
    return n;
}

static void test_added(void)
{
    ds_dataset *ds = NULL;
    int added = -1;
    train_notes notes = { .len = 0 };
    CHECK(ds_load_rasa_string("b.yaml", yaml, sizeof yaml - 1, &ds) == PARLEY_OK, "load: %s",
          parley_errmsg());
    const int before = ds->n_examples;
    CHECK(train_add_builtin(ds, &added, &notes) == PARLEY_OK, "add: %s", parley_errmsg());
    CHECK(added > 20 && ds->n_examples == before + added, "some added: %d", added);
    CHECK(count_of(ds, "order") == 1, "no reply for an intent not in the lists");
    CHECK(count_of(ds, "greet") + count_of(ds, "deny") == 3 + added,
          "every reply under greet or deny");
    CHECK(has_text(ds, "deny", "nah") == 1 && has_text(ds, "greet", "hey there") == 1 &&
                  has_text(ds, "greet", "hello") == 1 && has_text(ds, "deny", "no") == 1,
          "the lists' replies, those the data has once only");
    int untagged = 1;
    for (int i = before; i < ds->n_examples; i++) {
        untagged &= ds->examples[i].untagged && ds->examples[i].n_spans == 0;
        for (int w = 0; w < ds->examples[i].n_words; w++)
            untagged &= ds->examples[i].tags[w] == 0;
    }
    CHECK(untagged && !ds->examples[0].untagged, "the replies untagged, all O; written ones not");
    CHECK(strstr(notes.text, "added to greet, deny") != NULL, "the note names them: %s",
          notes.text);
    train_notes_clear(&notes);
    ds_free(ds);
}

static void test_none(void)
{
    static const char other[] = "nlu:\n- intent: order\n  examples: |\n    - a pizza\n";
    ds_dataset *ds = NULL;
    int added = -1;
    train_notes notes = { .len = 0 };
    CHECK(ds_load_rasa_string("o.yaml", other, sizeof other - 1, &ds) == PARLEY_OK &&
                  train_add_builtin(ds, &added, &notes) == PARLEY_OK && added == 0 &&
                  ds->n_examples == 1 && notes.len == 0,
          "no conventional intent: nothing added, no note (%d)", added);
    train_notes_clear(&notes);
    ds_free(ds);
    CHECK(train_builtin_on(PARLEY_SWITCH_AUTO, 1999) &&
                  !train_builtin_on(PARLEY_SWITCH_AUTO, 2000) &&
                  !train_builtin_on(PARLEY_SWITCH_OFF, 10) &&
                  train_builtin_on(PARLEY_SWITCH_ON, 5000),
          "on under 2,000 examples; an explicit choice wins");
}

int main(void)
{
    test_added();
    test_none();
    return check_done();
}
