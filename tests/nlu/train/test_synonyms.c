/* test_synonyms.c — the training data's synonyms from nlu.yaml to the parse result
 * (nlu/model/synonyms.c, nlu/train/synonyms.c), on tests/nlu/train/tiny/synonyms.yaml (argv[1]: the
 * tiny data folder).
 *
 * Surface forms compare without case or extra spaces and keep their first canonical value;
 * they join the lookup table of the slot type their canonical value fills (a table value or
 * an annotated span of that type, inline canonical values included) and no other, or, for a
 * slot type without a table, take the canonical value's place in copies of its examples; a model
 * trained on them records them in config.json, tags a surface form no example shows as a
 * slot value, and reports its canonical value beside the span typed; a malformed
 * "entity_synonyms" fails the load naming the file and the key; a span whose words are only
 * another listed slot type's value comes out as that type, its tags too. Every allocation
 * failure in the trainer's steps fails cleanly.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nlu/model/model.h"
#include "nlu/train/synonyms.h"
#include "sdk/base/error.h"
#include "tests/check.h"
#include "tests/fault.h"
#include "tests/nlu/train/train_test.h"

static tiny_files files;
static char synonyms_yaml[600];

static void test_fold_and_find(void)
{
    char *f = bert_synonym_fold("  The  BIG\tApple ", 17);
    CHECK(f && !strcmp(f, "the big apple"), "folded: '%s'", f ? f : "(null)");
    free(f);
    f = bert_synonym_fold("\xc3\x89T\xc3\x89", 5); /* "ÉTÉ" */
    CHECK(f && !strcmp(f, "\xc3\xa9t\xc3\xa9"), "folded beyond ASCII: '%s'", f ? f : "(null)");
    free(f);

    bert_synonyms s = { 0 };
    CHECK(bert_synonyms_add(&s, "Big", 3, "large") == PARLEY_OK &&
                  bert_synonyms_add(&s, "big", 3, "huge") == PARLEY_OK &&
                  bert_synonyms_add(&s, "  ", 2, "nothing") == PARLEY_OK &&
                  bert_synonyms_add(&s, "large size", 10, "large") == PARLEY_OK,
          "add: %s", parley_errmsg());
    CHECK(s.n == 2, "a repeated and an empty surface form are not added: %d kept", s.n);
    const char *to = NULL;
    CHECK(bert_synonyms_find(&s, "BIG", 3, &to) == PARLEY_OK && to && !strcmp(to, "large"),
          "found without case, first value kept: %s", to ? to : "(null)");
    CHECK(bert_synonyms_find(&s, "Large   Size", 12, &to) == PARLEY_OK && to &&
                  !strcmp(to, "large"),
          "found with extra spaces: %s", to ? to : "(null)");
    CHECK(bert_synonyms_find(&s, "bigger", 6, &to) == PARLEY_OK && !to, "not a surface form");
    CHECK(bert_synonyms_longest(&s) == 5, "longest canonical value: %zu",
          bert_synonyms_longest(&s));
    bert_synonyms_clear(&s);
}

static const ds_values *table(const ds_dataset *ds, const char *name)
{
    for (int i = 0; i < ds->n_lookups; i++)
        if (!strcmp(ds->lookups[i].name, name))
            return &ds->lookups[i];
    return NULL;
}

static int holds(const ds_values *t, const char *value)
{
    for (int i = 0; t && i < t->n; i++)
        if (!strcmp(t->values[i], value))
            return 1;
    return 0;
}

static void test_lookups(void)
{
    /* size's table holds "Large" and a span gives "2" to count; "xl" and "Gross" stand for
     * values of no table, and city has no table. */
    static const char yaml[] =
            "nlu:\n- intent: order\n  examples: |\n"
            "    - a [Large](size) one\n    - [two]{\"entity\": \"count\", \"value\": \"2\"} "
            "of them\n    - [3](count) please\n    - to [nyc](city)\n"
            "- synonym: large\n  examples: |\n    - big\n    - LARGE\n"
            "- synonym: extra large\n  examples: |\n    - xl\n"
            "- synonym: new york\n  examples: |\n    - the big apple\n"
            "- lookup: size\n  examples: |\n    - small\n    - Large\n"
            "- lookup: count\n  examples: |\n    - 3\n";
    ds_dataset *ds = NULL;
    int added = -1;
    CHECK(ds_load_rasa_string("lookups.yaml", yaml, sizeof yaml - 1, &ds) == PARLEY_OK, "load: %s",
          parley_errmsg());
    if (!ds)
        return;
    CHECK(train_synonym_lookups(ds, &added, NULL) == PARLEY_OK, "lookups: %s", parley_errmsg());
    const ds_values *size = table(ds, "size"), *count = table(ds, "count");
    CHECK(added == 2, "%d values added (big to size, two to count)", added);
    CHECK(holds(size, "big") && !holds(size, "LARGE") && size && size->n == 3,
          "size: big joined, LARGE is the table's Large");
    CHECK(holds(count, "two") && count && count->n == 2, "count: two joined (the inline value)");
    CHECK(!holds(size, "xl") && !table(ds, "city") && ds->n_lookups == 2,
          "a canonical value of no table and a slot without a table get nothing");

    bert_synonyms s = { 0 };
    const char *to = NULL;
    CHECK(train_synonyms_of(ds, &s) == PARLEY_OK, "synonyms: %s", parley_errmsg());
    CHECK(bert_synonyms_find(&s, "The Big Apple", 13, &to) == PARLEY_OK && to &&
                  !strcmp(to, "new york"),
          "recorded: the big apple -> %s", to ? to : "(null)");
    CHECK(bert_synonyms_find(&s, "two", 3, &to) == PARLEY_OK && to && !strcmp(to, "2"),
          "recorded: the inline value two -> %s", to ? to : "(null)");
    bert_synonyms_clear(&s);
    ds_free(ds);
}

static const ds_example *example_with(const ds_dataset *ds, const char *text)
{
    for (int i = 0; i < ds->n_examples; i++)
        if (!strcmp(ds->examples[i].text, text))
            return &ds->examples[i];
    return NULL;
}

static void test_variants(void)
{
    /* city has no lookup table: its examples with new york are copied with each surface
     * form (the inline ny among them) in its place; a copy the data has is not added. */
    static const char yaml[] =
            "nlu:\n- intent: go\n  examples: |\n"
            "    - fly to [New York](city) now\n"
            "    - fly to [ny]{\"entity\": \"city\", \"value\": \"new york\"}\n"
            "    - to [paris](city)\n"
            "- synonym: new york\n  examples: |\n    - nyc\n    - the big apple\n";
    ds_dataset *ds = NULL;
    int added = -1;
    CHECK(ds_load_rasa_string("variants.yaml", yaml, sizeof yaml - 1, &ds) == PARLEY_OK, "load: %s",
          parley_errmsg());
    if (!ds)
        return;
    CHECK(train_synonym_variants(ds, &added, NULL) == PARLEY_OK, "variants: %s", parley_errmsg());
    CHECK(added == 5 && ds->n_examples == 8, "%d copies, %d examples (want 5, 8)", added,
          ds->n_examples);
    const ds_example *big = example_with(ds, "fly to the big apple now");
    const int city = ds_slot_index(ds, "city");
    CHECK(big && big->variant_of == 0 && big->n_words == 6 && big->tags[0] == 0 &&
                  big->tags[2] == 1 + 2 * city && big->tags[3] == 2 + 2 * city &&
                  big->tags[4] == 2 + 2 * city && big->tags[5] == 0 && big->n_spans == 1 &&
                  big->spans[0].start == 2 && big->spans[0].end == 5,
          "the copy with the big apple: words, tags, span");
    CHECK(example_with(ds, "fly to ny now") && example_with(ds, "fly to nyc now") &&
                  example_with(ds, "fly to nyc") && example_with(ds, "fly to the big apple") &&
                  example_with(ds, "fly to nyc")->variant_of == 1,
          "a copy of each example for each surface form");
    ds_free(ds);
}

/* A data set's synonyms through the trainer's three steps, everything freed: for the sweep. */
static parley_status synonym_steps(void *ctx)
{
    (void)ctx;
    static const char yaml[] = "nlu:\n- intent: go\n  examples: |\n"
                               "    - a [Large](size) one to [new york](city)\n"
                               "    - to [ny]{\"entity\": \"city\", \"value\": \"new york\"}\n"
                               "- synonym: new york\n  examples: |\n    - nyc\n"
                               "- synonym: large\n  examples: |\n    - big\n"
                               "- lookup: size\n  examples: |\n    - small\n    - large\n";
    ds_dataset *ds = NULL;
    bert_synonyms syn = { 0 };
    int a = 0, b = 0;
    parley_status st = ds_load_rasa_string("sweep.yaml", yaml, sizeof yaml - 1, &ds);
    if (st == PARLEY_OK)
        st = train_synonym_lookups(ds, &a, NULL);
    if (st == PARLEY_OK)
        st = train_synonym_variants(ds, &b, NULL);
    if (st == PARLEY_OK)
        st = train_synonyms_of(ds, &syn);
    if (st == PARLEY_OK && (a != 1 || b != 3 || syn.n != 3))
        st = pl_fail(PARLEY_ERR_INTERNAL, "%d values, %d copies, %d synonyms", a, b, syn.n);
    bert_synonyms_clear(&syn);
    ds_free(ds);
    return st;
}

static const parley_nlu_slot *slot_of(const parley_nlu_result *r, const char *name)
{
    for (int i = 0; r && i < r->n_slots; i++)
        if (!strcmp(r->slots[i].slot, name))
            return &r->slots[i];
    return NULL;
}

/* Trains a tiny model of data into files.tmp/name. */
static path train_tiny(const char *data, const char *name)
{
    path out = path_in(files.tmp, name);
    parley_train_params p = parley_train_params_default();
    p.data = data;
    p.out = out.s;
    p.shape.layers = 2;
    p.shape.hidden = 64;
    p.shape.heads = 2;
    p.shape.intermediate = 128;
    p.shape.max_positions = 32;
    p.epochs = 40;
    p.batch = 8;
    p.lr = 3e-3f;
    p.augment = 4;
    p.builtin = PARLEY_SWITCH_OFF;
    p.threads = 1;
    CHECK(parley_train_run(&p, NULL) == PARLEY_OK, "train %s: %s", data, parley_errmsg());
    return out;
}

static parley_nlu *open_cpu(const char *dir)
{
    parley_nlu *nlu = NULL;
    parley_nlu_params np = parley_nlu_params_default();
    np.device = "cpu";
    np.threads = 1;
    CHECK(parley_nlu_open(dir, &np, &nlu) == PARLEY_OK, "open: %s", parley_errmsg());
    return nlu;
}

static void test_trained(void)
{
    path out = train_tiny(synonyms_yaml, "model");
    size_t len = 0;
    char *config = read_all(path_in(out.s, "config.json").s, &len);
    CHECK(config && strstr(config, "\"entity_synonyms\"") &&
                  strstr(config, "\"nyc\": \"new york\"") &&
                  strstr(config, "\"xl\": \"extra large\""),
          "config.json records the synonyms");

    parley_nlu *nlu = open_cpu(out.s);
    const char *texts[] = { "weather in NYC", "what is the weather in the big apple",
                            "weather in paris" };
    const char *typed[] = { "NYC", "the big apple", "paris" };
    const char *canon[] = { "new york", "new york", "paris" };
    for (int i = 0; nlu && i < 3; i++) {
        parley_nlu_result *r = NULL;
        CHECK(parley_nlu_parse(nlu, texts[i], &r) == PARLEY_OK, "parse: %s", parley_errmsg());
        const parley_nlu_slot *c = slot_of(r, "city");
        CHECK(c && !strcmp(c->value, typed[i]) && !strcmp(c->canonical, canon[i]),
              "'%s': city '%s' -> '%s' (want '%s' -> '%s')", texts[i], c ? c->value : "-",
              c ? c->canonical : "-", typed[i], canon[i]);
        CHECK(!c || !strncmp(texts[i] + c->start, c->value, c->end - c->start),
              "'%s': the span stays the text typed", texts[i]);
        parley_nlu_result_free(r);
    }
    parley_nlu_close(nlu);

    /* A malformed key fails the load, naming the file and the key. */
    char *at = config ? strstr(config, "\"nyc\": \"new york\"") : NULL;
    if (at) {
        memcpy(at + 7, "17        ", 10); /* "nyc": 17 */
        FILE *f = fopen(path_in(out.s, "config.json").s, "w");
        if (f) {
            fwrite(config, 1, len, f);
            fclose(f);
        }
        nlu = NULL;
        parley_nlu_params np = parley_nlu_params_default();
        np.device = "cpu";
        CHECK(parley_nlu_open(out.s, &np, &nlu) == PARLEY_ERR_CONFIG &&
                      strstr(parley_errmsg(), "config.json") &&
                      strstr(parley_errmsg(), "\"entity_synonyms\": \"nyc\""),
              "a value that is no string: %s", parley_errmsg());
        parley_nlu_close(nlu);
    }
    free(config);
}

/* Writes `values` (JSON) as the "slot_values" of the model in dir. */
static void set_slot_values(const char *dir, const char *values)
{
    path at = path_in(dir, "config.json");
    size_t len = 0;
    char *text = read_all(at.s, &len);
    cJSON *config = text ? cJSON_Parse(text) : NULL, *v = cJSON_Parse(values);
    CHECK(config && v && cJSON_ReplaceItemInObject(config, "slot_values", v),
          "slot_values of %s replaced", at.s);
    char *out = config ? cJSON_Print(config) : NULL;
    FILE *f = out ? fopen(at.s, "w") : NULL;
    CHECK(f && fputs(out, f) >= 0 && fclose(f) == 0, "%s written", at.s);
    cJSON_free(out);
    cJSON_Delete(config);
    free(text);
}

/* A span tagged as one slot type whose words are another's value (nlu/model/slot_values.h,
 * bert_slot_values_owner) comes out as that type, its tags too; and stays where its own
 * type knows it. */
static void test_owner_at_parse(void)
{
    path out = train_tiny(files.data, "owner");
    static const char *const values[] = {
        "{\"city\": {\"values\": [\"london\", \"berlin\"]},"
        " \"genre\": {\"values\": [\"jazz\", \"paris\"]}}",
        "{\"city\": {\"values\": [\"london\", \"paris\"]},"
        " \"genre\": {\"values\": [\"jazz\", \"paris\"]}}",
    };
    static const char *const want[] = { "genre", "city" };
    for (int i = 0; i < 2; i++) {
        set_slot_values(out.s, values[i]);
        parley_nlu *nlu = open_cpu(out.s);
        parley_nlu_result *r = NULL;
        CHECK(nlu && parley_nlu_parse(nlu, "weather in paris", &r) == PARLEY_OK, "parse: %s",
              parley_errmsg());
        const parley_nlu_slot *s = r && r->n_slots == 1 ? &r->slots[0] : NULL;
        char tag[16];
        snprintf(tag, sizeof tag, "B-%s", want[i]);
        CHECK(s && !strcmp(s->slot, want[i]) && !strcmp(s->value, "paris") && r->n_words == 3 &&
                      !strcmp(r->tags[2], tag),
              "%s: 'paris' as %s, tag %s (want %s)", values[i], s ? s->slot : "-",
              r && r->n_words == 3 ? r->tags[2] : "-", want[i]);
        parley_nlu_result_free(r);
        parley_nlu_close(nlu);
    }
}

int main(int argc, char **argv)
{
    int rc = train_test_start(argc, argv, "synonyms", &files);
    if (rc != 0)
        return rc;
    snprintf(synonyms_yaml, sizeof synonyms_yaml, "%.500s/synonyms.yaml", argv[1]);
    test_fold_and_find();
    test_lookups();
    test_variants();
    CHECK(synonym_steps(NULL) == PARLEY_OK, "the three steps: %s", parley_errmsg());
    CHECK(fault_sweep("synonyms in training", synonym_steps, NULL) > 20,
          "the sweep walked the allocations");
    test_trained();
    test_owner_at_parse();
    rm_tree(files.tmp);
    return check_done();
}
