/* test_slot_values.c — the values each slot type knows and the near misses that resolve to
 * them (nlu/model/slot_values.c, nlu/model/sound_key.c, nlu/train/slot_values.c), and number
 * words as digits (sdk/base/numwords.c), against hand-written expectations.
 *
 * Every number 0-9999 the recognizer's side spells reads back as itself; a run of number
 * words becomes its digits and other words stay; near misses resolve by the span's words,
 * letters or sound to the one value nearest, a tie, a short span, a far one, a value known
 * already and an open slot's near miss stay as said; a span that is only another slot type's
 * value belongs to it where both are listed and share no value; config.json's "slot_values" reads
 * back what it wrote and a malformed one fails naming the key; the trainer records a slot type's
 * tagged, lookup and synonym values, whether they write digits and whether the bot lists
 * them (a lookup table, synonyms, values tagged twice each; else open). Every allocation failure
 * in recording, copying and resolving fails cleanly.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nlu/data/dataset.h"
#include "nlu/model/model.h"
#include "nlu/train/slot_values.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/numwords.h"
#include "tests/check.h"
#include "tests/fault.h"

static void expect_digits(const char *text, const char *want, int want_changed)
{
    int changed = -1;
    char *got = pl_number_digits(text, strlen(text), &changed);
    CHECK(got && !strcmp(got, want) && changed == want_changed, "'%s' -> '%s' (%d), want '%s' (%d)",
          text, got ? got : "(null)", changed, want, want_changed);
    CHECK(!got || strlen(got) <= strlen(text), "'%s': the digits are longer", text);
    free(got);
}

static void test_numbers(void)
{
    expect_digits("twelve baker street", "12 baker street", 1);
    expect_digits("twenty one", "21", 1);
    expect_digits("Twenty-One", "21", 1);
    expect_digits("a hundred and five", "105", 1);
    expect_digits("two hundred one", "201", 1);
    expect_digits("twelve hundred", "1200", 1);
    expect_digits("two thousand and twenty", "2020", 1);
    expect_digits("nine thousand nine hundred ninety nine", "9999", 1);
    expect_digits("a thousand", "1000", 1);
    expect_digits("one two three", "1 2 3", 1);
    expect_digits("twenty twenty", "20 20", 1);
    expect_digits("zero", "0", 1);
    expect_digits("  Seven \t Oak   Lane ", "7 Oak Lane", 1);
    expect_digits("a large pizza", "a large pizza", 0);
    expect_digits("hundred and", "hundred and", 0);
    expect_digits("and five", "and 5", 1);
    expect_digits("one-way ticket", "one-way ticket", 0);
    expect_digits("", "", 0);
    /* what the recognizer's side spells reads back */
    int wrong = 0;
    for (int n = 0; n <= 9999; n++) {
        pl_strbuf b = { 0 };
        pl_number_spell(&b, n);
        char *d = b.s ? pl_number_digits(b.s, b.len, NULL) : NULL;
        if (!d || atoi(d) != n || strspn(d, "0123456789") != strlen(d))
            wrong++;
        free(d);
        free(b.s);
    }
    CHECK(wrong == 0, "%d numbers of 0-9999 do not read back from their words", wrong);
}

static void expect_key(const char *text, const char *want)
{
    char *got = bert_sound_key(text);
    CHECK(got && !strcmp(got, want), "sound key of '%s': %s, want %s", text, got ? got : "(null)",
          want);
    free(got);
}

static void test_sound(void)
{
    expect_key("light roast", "LTRST");
    expect_key("like roast", "LKRST");
    expect_key("knight", "NT");
    expect_key("phone", "FN");
    expect_key("school", "SKL");
    expect_key("church", "XRX");
    expect_key("thumb", "0M");
    expect_key("espresso", "ASPRS");
    expect_key("oat milk", "ATMLK");
    expect_key("42 oak", "42AK");
    CHECK(bert_edit_distance("kitten", 6, "sitting", 7, 5) == 3, "kitten, sitting: 3");
    CHECK(bert_edit_distance("kitten", 6, "sitting", 7, 2) == 3, "beyond the bound: bound + 1");
    CHECK(bert_edit_distance("abc", 3, "abc", 3, 0) == 0, "equal: 0");
    CHECK(bert_edit_distance("a", 1, "abcd", 4, 2) == 3, "lengths too far apart");
}

/* Adds slot type `slot` to v with a NULL-terminated list of values. */
static void make(bert_slot_values *v, const char *slot, const char *const *values)
{
    bert_known *k = bert_slot_values_of(v, slot);
    for (int i = 0; k && values[i]; i++)
        CHECK(bert_known_add(k, values[i], strlen(values[i])) == PARLEY_OK, "add %s", values[i]);
}

static void expect(const bert_known *k, const bert_synonyms *syn, const char *text,
                   const char *want)
{
    char *got = NULL;
    CHECK(bert_known_resolve(k, syn, text, strlen(text), &got) == PARLEY_OK, "%s: %s", text,
          parley_errmsg());
    CHECK(want ? got && !strcmp(got, want) : !got, "%s '%s' -> '%s', want '%s'", k->slot, text,
          got ? got : "(as said)", want ? want : "(as said)");
    free(got);
}

static void test_resolve(void)
{
    bert_slot_values v = { 0 };
    bert_synonyms syn = { 0 };
    CHECK(bert_synonyms_add(&syn, "gray", 4, "grey") == PARLEY_OK, "synonym");
    static const char *const drinks[] = { "soy milk",     "oat milk",         "light roast",
                                          "dark roast",   "espresso",         "Latte",
                                          "tea",          "ice tea",          "cappuccino",
                                          "rock to work", "december the 5th", NULL };
    static const char *const colours[] = { "grey", "gray", "green", NULL };
    static const char *const plants[] = { "cat mint", "cat mind", NULL };
    static const char *const addresses[] = { "12 Baker Street", "26 Park Lane", "9 Harbour Lane",
                                             NULL };
    static const char *const counts[] = { "one", "two", "five", NULL };
    make(&v, "drink", drinks);
    make(&v, "colour", colours);
    make(&v, "plant", plants);
    make(&v, "address", addresses);
    make(&v, "count", counts);
    /* the slot types are all there: their places stay */
    bert_known *drink = bert_slot_values_of(&v, "drink"),
               *colour = bert_slot_values_of(&v, "colour"),
               *plant = bert_slot_values_of(&v, "plant"),
               *address = bert_slot_values_of(&v, "address"),
               *count = bert_slot_values_of(&v, "count");
    if (!drink || !colour || !plant || !address || !count)
        return;
    address->digits = 1;
    CHECK(drink->n == 11 && bert_slot_values_find(&v, "drink") == drink &&
                  !bert_slot_values_find(&v, "size"),
          "the slot types and their values");
    CHECK(bert_slot_values_longest(&v) == 16, "longest: %zu", bert_slot_values_longest(&v));

    /* the span's words in exactly one value */
    expect(drink, &syn, "soy", "soy milk");
    expect(drink, &syn, "Soy", "soy milk");
    expect(drink, &syn, "milk", NULL);  /* soy milk or oat milk */
    expect(drink, &syn, "roast", NULL); /* light or dark */
    expect(drink, &syn, "ic", NULL);    /* too short to stand for ice tea */
    expect(drink, &syn, "work", NULL);  /* less than half of rock to work */
    expect(drink, &syn, "rock to", "rock to work");
    /* letters, then sound */
    expect(drink, &syn, "expresso", "espresso");
    expect(drink, &syn, "capuccino", "cappuccino");
    expect(drink, &syn, "like roast", "light roast");
    expect(drink, &syn, "lite roast", "light roast");
    expect(drink, &syn, "lattes", "Latte");
    expect(drink, &syn, "december the 6th", NULL); /* another number, however near */
    expect(drink, &syn, "decembr the 5th", "december the 5th");
    /* known, short, far: as said */
    expect(drink, &syn, "LATTE", NULL);
    expect(drink, &syn, "soy  milk", NULL);
    expect(drink, &syn, "tee", NULL);
    expect(drink, &syn, "pea", NULL);
    expect(drink, &syn, "water", NULL);
    expect(drink, &syn, "hot chocolate", NULL);
    expect(drink, &syn, "", NULL);
    /* ties: two values one edit away stay as said, unless they stand for one value */
    expect(plant, &syn, "cat mink", NULL);
    expect(colour, &syn, "gruy", "grey");
    expect(colour, &syn, "graay", "grey"); /* gray, a surface form of grey */
    expect(colour, &syn, "greeen", "green");
    /* numbers where the values write digits */
    expect(address, &syn, "twelve baker street", "12 Baker Street");
    expect(address, &syn, "twelve bakers street", "12 Baker Street");
    expect(address, &syn, "Forty Two Station Road", "42 Station Road");
    expect(address, &syn, "twenty six park lane", "26 Park Lane");
    expect(address, &syn, "nine harbor lane", "9 Harbour Lane");
    expect(address, &syn, "12 baker street", NULL);
    expect(count, &syn, "twelve", NULL);
    expect(count, &syn, "fife", "five");
    expect(count, &syn, "fiv", NULL); /* short */
    /* an open slot converts numbers, and resolves no near miss */
    drink->open = 1;
    address->open = 1;
    expect(drink, &syn, "soy", NULL);
    expect(drink, &syn, "expresso", NULL);
    expect(address, &syn, "twelve baker street", "12 Baker Street");
    expect(address, &syn, "forty two station road", "42 station road");
    expect(address, &syn, "twelve bakers street", "12 bakers street");

    /* config.json's key reads back what it wrote */
    cJSON *j = bert_slot_values_json(&v);
    bert_slot_values back = { 0 };
    CHECK(j && bert_slot_values_read(j, "config.json", &back) == PARLEY_OK, "read back: %s",
          parley_errmsg());
    const bert_known *d = bert_slot_values_find(&back, "drink"),
                     *a = bert_slot_values_find(&back, "address"),
                     *c = bert_slot_values_find(&back, "colour");
    CHECK(back.n == 5 && d && d->n == 11 && !strcmp(d->values[5], "Latte") && d->open &&
                  !d->digits && a && a->digits && a->open && c && !c->open && !c->digits,
          "the values and flags read back");
    bert_slot_values_clear(&back);
    cJSON_Delete(j);
    bert_slot_values copy = { 0 };
    CHECK(bert_slot_values_copy(&copy, &v) == PARLEY_OK && copy.n == 5 &&
                  bert_slot_values_find(&copy, "address")->digits,
          "copied");
    bert_slot_values_clear(&copy);
    static const char *const bad[] = { "[]", "{\"x\": []}", "{\"x\": {\"values\": [1]}}",
                                       "{\"x\": {\"values\": [], \"open\": 1}}" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cJSON *b = cJSON_Parse(bad[i]);
        bert_slot_values w = { 0 };
        parley_status st = bert_slot_values_read(b, "m/config.json", &w);
        CHECK(st == PARLEY_ERR_CONFIG && strstr(parley_errmsg(), "m/config.json") &&
                      strstr(parley_errmsg(), "\"slot_values\""),
              "%s: refused naming the file and key: %s", bad[i], parley_errmsg());
        bert_slot_values_clear(&w);
        cJSON_Delete(b);
    }
    bert_slot_values_clear(&v);
    bert_synonyms_clear(&syn);
}

static void expect_owner(const bert_slot_values *v, const char *slot, const char *text,
                         const char *want)
{
    const bert_known *owner = bert_slot_values_find(v, slot); /* overwritten */
    CHECK(bert_slot_values_owner(v, bert_slot_values_find(v, slot), text, strlen(text), &owner) ==
                  PARLEY_OK,
          "%s: %s", text, parley_errmsg());
    CHECK(want ? owner && !strcmp(owner->slot, want) : !owner, "'%s' tagged %s -> %s, want %s",
          text, slot, owner ? owner->slot : "(stays)", want ? want : "(stays)");
}

/* A span's words that are exactly another listed slot type's value, and none of its own. */
static void test_owner(void)
{
    bert_slot_values v = { 0 };
    static const char *const sizes[] = { "small", "Medium", "large", NULL };
    static const char *const roasts[] = { "light roast", "medium roast", "dark roast", NULL };
    static const char *const milks[] = { "oat milk", "soy milk", "large", NULL };
    static const char *const from[] = { "boston", "denver", NULL };
    static const char *const to[] = { "boston", "dallas", NULL };
    make(&v, "size", sizes);
    make(&v, "roast", roasts);
    make(&v, "from_city", from);
    make(&v, "to_city", to);
    expect_owner(&v, "roast", "medium", "size");
    expect_owner(&v, "roast", "  MEDIUM ", "size"); /* folded as synonyms compare */
    expect_owner(&v, "size", "dark roast", "roast");
    expect_owner(&v, "roast", "dark roast", NULL); /* its own value */
    expect_owner(&v, "roast", "mild roast", NULL); /* no type's value */
    expect_owner(&v, "roast", "", NULL);
    expect_owner(&v, "to_city", "denver", NULL); /* the city types share boston */
    expect_owner(&v, "from_city", "dallas", NULL);
    make(&v, "milk", milks);                  /* "large" is a size and a milk now */
    expect_owner(&v, "roast", "large", NULL); /* a size and a milk */
    expect_owner(&v, "roast", "small", "size");
    expect_owner(&v, "size", "oat milk", NULL); /* size and milk share "large" */
    static const char *const temps[] = { "hot", "iced", NULL };
    make(&v, "temperature", temps);
    bert_known *roast = bert_slot_values_of(&v, "roast");
    expect_owner(&v, "roast", "iced", "temperature");
    roast->open = 1; /* an open type may take any value */
    expect_owner(&v, "roast", "iced", NULL);
    roast->open = 0;
    bert_slot_values_of(&v, "temperature")->open = 1;
    expect_owner(&v, "roast", "iced", NULL);
    bert_slot_values_clear(&v);
}

static void test_cap(void)
{
    bert_slot_values v = { 0 };
    bert_known *k = bert_slot_values_of(&v, "n");
    char value[16];
    for (int i = 0; k && i < BERT_SLOT_VALUES_MAX + 10; i++) {
        snprintf(value, sizeof value, "v%d", i);
        bert_known_add(k, value, strlen(value));
    }
    CHECK(k && k->n == BERT_SLOT_VALUES_MAX && k->open, "capped at %d and open",
          BERT_SLOT_VALUES_MAX);
    bert_slot_values_clear(&v);
}

static const char yaml[] =
        "nlu:\n- intent: order\n  examples: |\n"
        "    - a [Soy Milk](drink) to [12 Baker Street](address)\n"
        "    - a [latte](drink) for [two](count) to [26 park lane](address)\n"
        "    - [3](count) [decaf]{\"entity\": \"drink\", \"value\": \"decaf coffee\"}\n"
        "    - [five](count) please\n"
        "- synonym: oat milk\n  examples: |\n    - oat\n    - soy milk\n"
        "- synonym: flat white\n  examples: |\n    - flattie\n"
        "- lookup: drink\n  examples: |\n    - espresso\n    - soy milk\n";

static void test_trainer(void)
{
    ds_dataset *ds = NULL;
    bert_slot_values v = { 0 };
    CHECK(ds_load_rasa_string("values.yaml", yaml, sizeof yaml - 1, &ds) == PARLEY_OK, "load: %s",
          parley_errmsg());
    if (!ds)
        return;
    CHECK(train_slot_values_of(ds, &v) == PARLEY_OK, "values: %s", parley_errmsg());
    const bert_known *d = bert_slot_values_find(&v, "drink"),
                     *a = bert_slot_values_find(&v, "address"),
                     *c = bert_slot_values_find(&v, "count");
    static const char *const want[] = { "Soy Milk", "latte",    "decaf", "decaf coffee",
                                        "espresso", "oat milk", "oat" };
    int same = d && d->n == 7;
    for (int i = 0; same && i < 7; i++)
        same = !strcmp(d->values[i], want[i]);
    CHECK(same, "drink: the tagged values, the lookup's, then the synonym soy milk is in (%d)",
          d ? d->n : -1);
    CHECK(d && !d->open, "drink: listed (a lookup table, synonyms)");
    CHECK(a && a->n == 2 && a->digits && a->open,
          "address: two values written with digits, each tagged once: not listed, open");
    CHECK(c && c->n == 3 && !c->digits, "count: two in words, one in digits: not digits");
    bert_slot_values_clear(&v);
    ds_free(ds);
}

/* The trainer's values, a copy, and near misses resolved, everything freed: for the sweep. */
static parley_status values_steps(void *ctx)
{
    (void)ctx;
    ds_dataset *ds = NULL;
    bert_slot_values v = { 0 }, copy = { 0 };
    bert_synonyms syn = { 0 };
    char *a = NULL, *b = NULL, *c = NULL;
    parley_status st = ds_load_rasa_string("sweep.yaml", yaml, sizeof yaml - 1, &ds);
    if (st == PARLEY_OK)
        st = train_slot_values_of(ds, &v);
    if (st == PARLEY_OK)
        st = bert_slot_values_copy(&copy, &v);
    if (st == PARLEY_OK)
        st = bert_known_resolve(bert_slot_values_find(&copy, "address"), &syn,
                                "twelve bakers street", 20, &a);
    if (st == PARLEY_OK)
        st = bert_known_resolve(bert_slot_values_find(&copy, "drink"), &syn, "espreso", 7, &b);
    if (st == PARLEY_OK)
        st = bert_known_resolve(bert_slot_values_find(&copy, "drink"), &syn, "lattey", 6, &c);
    const bert_known *owner = NULL;
    if (st == PARLEY_OK)
        st = bert_slot_values_owner(&copy, bert_slot_values_find(&copy, "drink"), "espreso", 7,
                                    &owner);
    if (st == PARLEY_OK && (!a || strcmp(a, "12 bakers street") || !b || strcmp(b, "espresso") ||
                            !c || strcmp(c, "latte") || owner))
        st = pl_fail(PARLEY_ERR_INTERNAL, "resolved: %s, %s, %s", a ? a : "-", b ? b : "-",
                     c ? c : "-");
    pl_free(a);
    pl_free(b);
    pl_free(c);
    bert_slot_values_clear(&copy);
    bert_slot_values_clear(&v);
    ds_free(ds);
    return st;
}

int main(void)
{
    test_numbers();
    test_sound();
    test_resolve();
    test_owner();
    test_cap();
    test_trainer();
    CHECK(fault_sweep("slot values", values_steps, NULL) > 20, "the sweep walked the steps");
    return check_done();
}
