/* test_dataset.c — the dataset readers: nlu.yaml (good file, every malformed file under
 * tests/nlu/data/bad_*.yaml with the FILE:LINE:COL its first line expects), JointBERT
 * folders (committed small ones, and SNIPS/ATIS train when PARLEY_SHARED_DATA has them),
 * augmentation (from lookup tables, from the data's own values), lower-case copies, and clean
 * failure of every allocation while loading.
 *
 * Usage: test_dataset DATA_DIR   (DATA_DIR = tests/nlu/data)
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nlu/data/dataset.h"
#include "nlu/data/unmarked.h"
#include "sdk/base/alloc.h"
#include "parley/parley.h"
#include "tests/check.h"
#include "tests/fault.h"

static const char *data_dir;

static const char *path_of(const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", data_dir, name);
    return buf;
}

/* The tags of example e as one space-separated string. */
static const char *tags_str(const ds_dataset *ds, const ds_example *e)
{
    static char buf[1024];
    size_t n = 0;
    buf[0] = '\0';
    for (int w = 0; w < e->n_words && n < sizeof buf; w++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", w ? " " : "", ds->tags[e->tags[w]]);
    return buf;
}

static void check_example(const ds_dataset *ds, int i, const char *text, const char *intent,
                          const char *tags)
{
    if (i >= ds->n_examples) {
        CHECK(0, "example %d missing", i);
        return;
    }
    const ds_example *e = &ds->examples[i];
    CHECK(!strcmp(e->text, text), "example %d text '%s', want '%s'", i, e->text, text);
    CHECK(!strcmp(ds->intents[e->intent], intent), "example %d intent %s, want %s", i,
          ds->intents[e->intent], intent);
    CHECK(!strcmp(tags_str(ds, e), tags), "example %d tags '%s', want '%s'", i, tags_str(ds, e),
          tags);
    /* The words are the text split at single spaces. */
    size_t n = 0;
    for (int w = 0; w < e->n_words; w++)
        n += strlen(e->words[w]) + (w > 0);
    CHECK(n == strlen(e->text) && e->n_words > 0 &&
                  !strncmp(e->text, e->words[0], strlen(e->words[0])),
          "example %d words match text", i);
}

static const ds_values *values_named(const ds_values *v, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i].name, name))
            return &v[i];
    return NULL;
}

static void test_pizza(void)
{
    ds_dataset *ds = NULL;
    parley_status st = ds_load(path_of("pizza.yaml"), &ds);
    CHECK(st == PARLEY_OK, "pizza.yaml: %s", parley_errmsg());
    if (!ds)
        return;
    CHECK(ds->n_examples == 8 && ds->n_duplicates == 1, "%d examples, %d duplicates",
          ds->n_examples, ds->n_duplicates);
    CHECK(ds->n_intents == 2 && !strcmp(ds->intents[0], "greet") &&
                  !strcmp(ds->intents[1], "order_pizza"),
          "intents sorted");
    static const char *const tags[] = { "O",       "B-city",  "I-city", "B-count", "I-count",
                                        "B-pizza", "I-pizza", "B-size", "I-size" };
    CHECK(ds->n_tags == 9 && ds->n_slots == 4, "%d tags, %d slots", ds->n_tags, ds->n_slots);
    for (int t = 0; t < ds->n_tags && t < 9; t++)
        CHECK(!strcmp(ds->tags[t], tags[t]) && ds_tag_index(ds, tags[t]) == t, "tag %d is %s", t,
              ds->tags[t]);
    CHECK(ds_slot_index(ds, "pizza") == 2 && ds_intent_index(ds, "greet") == 0 &&
                  ds_intent_index(ds, "x") == -1,
          "index lookups");

    check_example(ds, 0, "i want a large margherita", "order_pizza", "O O O B-size B-pizza");
    check_example(ds, 1, "two pepperoni pizzas please", "order_pizza", "B-count B-pizza O O");
    check_example(ds, 2, "a small margarita, thanks!", "order_pizza", "O B-size B-pizza O");
    check_example(ds, 3, "hello", "greet", "O");
    check_example(ds, 4, "hi there", "greet", "O O");
    check_example(ds, 5, "gr\xC3\xBC\xC3\x9F dich", "greet", "O O");
    check_example(ds, 6, "deliver to new york?", "order_pizza", "O O B-city I-city");
    check_example(ds, 7, "two pepperoni", "order_pizza", "B-count B-pizza");

    const ds_example *e = &ds->examples[1];
    CHECK(e->n_spans == 2 && e->spans[0].start == 0 && e->spans[0].end == 1 && e->spans[0].value &&
                  !strcmp(e->spans[0].value, "2") && e->spans[1].value == NULL &&
                  e->spans[1].slot == 2,
          "spans with a canonical value");
    e = &ds->examples[6];
    CHECK(e->n_spans == 1 && e->spans[0].start == 2 && e->spans[0].end == 4 &&
                  e->spans[0].slot == 0,
          "city span");

    const ds_values *syn = values_named(ds->synonyms, ds->n_synonyms, "margherita");
    CHECK(ds->n_synonyms == 2 && syn && syn->n == 2 && !strcmp(syn->values[0], "margarita") &&
                  !strcmp(syn->values[1], "marguerita"),
          "synonyms merged and deduplicated");
    syn = values_named(ds->synonyms, ds->n_synonyms, "2");
    CHECK(syn && syn->n == 1 && !strcmp(syn->values[0], "two"),
          "inline value recorded as a synonym");
    const ds_values *lk = ds_lookup_for(ds, "pizza");
    CHECK(ds->n_lookups == 1 && lk && lk->n == 3 && !strcmp(lk->values[1], "quattro formaggi"),
          "lookup table");
    CHECK(ds_lookup_for(ds, "size") == NULL, "no lookup for size");
    CHECK(ds->n_regexes == 1 && !strcmp(ds->regexes[0].name, "zipcode") &&
                  !strcmp(ds->regexes[0].values[0], "\\d{5}"),
          "regex kept verbatim");
    ds_free(ds);
}

/* Loads pizza.yaml, augments with `seed`, and returns the added texts joined by '|'. */
static char *augmented(uint64_t seed, int per_example, int *added)
{
    ds_dataset *ds = NULL;
    if (ds_load(path_of("pizza.yaml"), &ds) != PARLEY_OK)
        return NULL;
    int n0 = ds->n_examples;
    parley_status st = ds_augment_lookups(ds, per_example, seed, added);
    CHECK(st == PARLEY_OK, "augment: %s", parley_errmsg());
    CHECK(ds->n_examples == n0 + *added, "added count");
    CHECK(ds->n_duplicates == 1, "augmentation leaves the data's duplicate count alone");
    const ds_values *lk = ds_lookup_for(ds, "pizza");
    int pizza = ds_slot_index(ds, "pizza");
    char *all = calloc(1, 65536);
    for (int i = n0; i < ds->n_examples && all; i++) {
        const ds_example *e = &ds->examples[i];
        strcat(all, e->text);
        strcat(all, "|");
        int found = 0;
        for (int s = 0; s < e->n_spans; s++) {
            const ds_span *sp = &e->spans[s];
            CHECK(ds->tags[e->tags[sp->start]][0] == 'B', "span starts with B-");
            if (sp->slot != pizza)
                continue;
            /* The substituted span's words are one of the lookup values. */
            char value[256] = "";
            for (int w = sp->start; w < sp->end; w++) {
                strcat(value, w > sp->start ? " " : "");
                strcat(value, e->words[w]);
                CHECK(e->tags[w] == 1 + 2 * pizza + (w > sp->start), "pizza tags on word %d", w);
            }
            for (int v = 0; v < lk->n; v++)
                found |= !strcmp(value, lk->values[v]);
            CHECK(sp->value == NULL, "substituted spans have no canonical value");
        }
        CHECK(found, "augmented example '%s' uses a lookup value", e->text);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(ds->examples[j].text, e->text) != 0, "augmented text '%s' is new",
                  e->text);
    }
    ds_free(ds);
    return all;
}

static void test_augment(void)
{
    int a1 = 0, a2 = 0, a3 = 0;
    char *x = augmented(42, 2, &a1), *y = augmented(42, 2, &a2), *z = augmented(7, 5, &a3);
    /* Three examples have a pizza span; the table has 3 values, so some draws repeat. */
    CHECK(a1 > 0 && a1 <= 8, "added %d", a1);
    CHECK(a1 == a2 && x && y && !strcmp(x, y), "the same seed gives the same examples");
    CHECK(a3 > a1 && a3 <= 20, "more per example adds more: %d", a3);
    free(x);
    free(y);
    free(z);
    ds_dataset *ds = NULL;
    CHECK(ds_load(path_of("pizza.yaml"), &ds) == PARLEY_OK, "load");
    int added = -1;
    CHECK(ds_augment_lookups(ds, 0, 1, &added) == PARLEY_OK && added == 0 && ds->n_examples == 8,
          "zero per example");
    CHECK(ds_augment_lookups(ds, -1, 1, &added) == PARLEY_ERR_INVALID_ARG, "negative per example");
    ds_free(ds);
}

/* The words of span sp of e joined by single spaces, into buf. */
static const char *span_text(const ds_example *e, const ds_span *sp, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int w = sp->start; w < sp->end; w++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", w > sp->start ? " " : "",
                                e->words[w]);
    return buf;
}

/* Variants from the data's own values: a span takes a value that a written example of the
 * same intent gives its type (never another intent's, never a variant's), with B-/I- tags
 * over its words; an intent whose examples give a type one value keeps it; untagged examples
 * get none; the seed decides. */
static void test_own_values(void)
{
    static const char yaml[] = "nlu:\n"
                               "- intent: order\n"
                               "  examples: |\n"
                               "    - a [small](size) pizza with [ham](topping)\n"
                               "    - one [large](size) please\n"
                               "    - make it [extra large](size) tonight\n"
                               "    - i'd like a [medium](size)\n"
                               "    - nothing tagged here\n"
                               "- intent: ask\n"
                               "  examples: |\n"
                               "    - is [tiny](size) enough\n"
                               "    - is [tiny](size) big\n";
    static const char *const order_sizes[] = { "small", "large", "extra large", "medium" };
    char *texts[2] = { 0 };
    for (int run = 0; run < 2; run++) {
        ds_dataset *ds = NULL;
        int added = -1;
        CHECK(ds_load_rasa_string("own.yaml", yaml, sizeof yaml - 1, &ds) == PARLEY_OK, "load: %s",
              parley_errmsg());
        if (!ds)
            return;
        const int n0 = ds->n_examples, order = ds_intent_index(ds, "order"),
                  size = ds_slot_index(ds, "size"), topping = ds_slot_index(ds, "topping");
        CHECK(ds_augment_own_values(ds, 3, 11, &added) == PARLEY_OK, "augment: %s",
              parley_errmsg());
        /* Four order examples with a size, three other sizes each: up to 3 variants each. */
        CHECK(added >= 8 && added <= 12 && ds->n_examples == n0 + added, "added %d", added);
        size_t len = 0, cap = 4096;
        texts[run] = calloc(1, cap);
        for (int i = n0; i < ds->n_examples && texts[run]; i++) {
            const ds_example *e = &ds->examples[i], *o = &ds->examples[e->variant_of];
            char value[64];
            len += (size_t)snprintf(texts[run] + len, cap - len, "%s|", e->text);
            CHECK(e->variant_of >= 0 && e->variant_of < n0 && e->intent == order &&
                          o->intent == order && e->n_spans == o->n_spans,
                  "'%s': a variant of an order example", e->text);
            int sizes = 0;
            for (int s = 0; s < e->n_spans; s++) {
                const ds_span *sp = &e->spans[s];
                span_text(e, sp, value, sizeof value);
                CHECK(e->tags[sp->start] == 1 + 2 * sp->slot, "'%s': B- on '%s'", e->text, value);
                for (int w = sp->start + 1; w < sp->end; w++)
                    CHECK(e->tags[w] == 2 + 2 * sp->slot, "'%s': I- in '%s'", e->text, value);
                if (sp->slot == topping)
                    CHECK(!strcmp(value, "ham"), "one topping: kept as written ('%s')", value);
                if (sp->slot != size)
                    continue;
                for (int v = 0; v < 4; v++)
                    sizes += !strcmp(value, order_sizes[v]);
            }
            CHECK(sizes == 1, "'%s': its size is one of order's own", e->text);
        }
        ds_free(ds);
    }
    CHECK(texts[0] && texts[1] && !strcmp(texts[0], texts[1]), "the same seed, the same variants");
    free(texts[0]);
    free(texts[1]);
}

/* Lower-case copies: of the examples with a capital inside a slot value only (not one
 * outside the values, not an untagged one, not one whose copy exists), words, tags, spans and
 * canonical values kept, grouped with the written example they come from; a lookup variant's
 * copy with the variant's own source. */
static void test_lowercase(void)
{
    static const char yaml[] =
            "nlu:\n"
            "- intent: order\n"
            "  examples: |\n"
            "    - send it to [5 Main Street](address) please\n"
            "    - Hello, a [Margherita]{\"entity\": \"pizza\", \"value\": \"marg\"}\n"
            "    - to [ÉLYSÉE Road](address)\n"
            "    - to [12 baker street](address) Now\n"
            "    - to [9 Oak Lane](address)\n"
            "    - to [9 oak lane](address)\n"
            "- lookup: address\n"
            "  examples: |\n"
            "    - 1 Kings Road\n";
    ds_dataset *ds = NULL;
    int added = -1, variants = -1;
    CHECK(ds_load_rasa_string("l.yaml", yaml, sizeof yaml - 1, &ds) == PARLEY_OK, "load: %s",
          parley_errmsg());
    if (!ds)
        return;
    const int n0 = ds->n_examples;
    CHECK(ds_augment_lookups(ds, 1, 3, &variants) == PARLEY_OK && variants > 0,
          "lookup variants: %s", parley_errmsg());
    ds->examples[0].untagged = 1; /* as a background sentence: no copy */
    const int n1 = ds->n_examples;
    CHECK(ds_augment_lowercase(ds, &added) == PARLEY_OK, "copies: %s", parley_errmsg());
    static const char *const want[] = { "hello, a margherita", "to élysée road" };
    CHECK(added >= 2 && ds->n_examples == n1 + added, "%d copies", added);
    for (int k = 0; k < 2 && n1 + k < ds->n_examples; k++) {
        const ds_example *c = &ds->examples[n1 + k], *o = &ds->examples[c->variant_of];
        CHECK(!strcmp(c->text, want[k]) && c->variant_of == k + 1 && c->n_words == o->n_words &&
                      !memcmp(c->tags, o->tags, (size_t)c->n_words * sizeof *c->tags) &&
                      c->n_spans == o->n_spans && c->spans[0].start == o->spans[0].start &&
                      c->spans[0].end == o->spans[0].end && c->spans[0].slot == o->spans[0].slot,
              "copy %d: '%s' of example %d", k, c->text, c->variant_of);
    }
    CHECK(n1 + 1 < ds->n_examples && ds->examples[n1].spans[0].value &&
                  !strcmp(ds->examples[n1].spans[0].value, "marg"),
          "the canonical value kept");
    /* The variants made "1 Kings Road" from the addresses: their copies name the written
     * example, and every copy is new text. */
    int of_variants = 0;
    for (int i = n1 + 2; i < ds->n_examples; i++) {
        const ds_example *c = &ds->examples[i];
        of_variants += c->variant_of >= 0 && c->variant_of < n0 && strstr(c->text, "1 kings road");
    }
    CHECK(of_variants == added - 2, "%d of %d copies from lookup variants", of_variants, added - 2);
    for (int i = n1; i < ds->n_examples; i++)
        for (int j = 0; j < i; j++)
            CHECK(strcmp(ds->examples[i].text, ds->examples[j].text) != 0, "'%s' twice",
                  ds->examples[i].text);
    CHECK(ds_augment_lowercase(ds, &added) == PARLEY_OK && added == 0, "again: %d", added);
    ds_free(ds);
}

/* A new intent takes its sorted place in a finished data set, and every example keeps its
 * intent's name. */
static void test_add_intent(void)
{
    ds_dataset *ds = NULL;
    CHECK(ds_load(path_of("pizza.yaml"), &ds) == PARLEY_OK, "load");
    if (!ds)
        return;
    const char *before[64];
    int n = ds->n_examples < 64 ? ds->n_examples : 64, ni = ds->n_intents, id = -1, again = -1;
    for (int i = 0; i < n; i++)
        before[i] = ds->intents[ds->examples[i].intent];
    CHECK(ds_add_intent(ds, "aaa_first", &id) == PARLEY_OK && id == 0 && ds->n_intents == ni + 1,
          "a new intent sorted first: %d", id);
    CHECK(ds_add_intent(ds, "zzz_last", &id) == PARLEY_OK && id == ni + 1, "sorted last: %d", id);
    CHECK(ds_add_intent(ds, ds->intents[1], &again) == PARLEY_OK && again == 1 &&
                  ds->n_intents == ni + 2,
          "an intent it has: %d", again);
    for (int i = 1; i < ds->n_intents; i++)
        CHECK(strcmp(ds->intents[i - 1], ds->intents[i]) < 0, "intents sorted at %d", i);
    for (int i = 0; i < n; i++)
        CHECK(!strcmp(ds->intents[ds->examples[i].intent], before[i]), "example %d renamed", i);
    CHECK(ds_intent_index(ds, "zzz_last") == ni + 1, "found by bisection");
    ds_free(ds);
    CHECK(ds_new("x", &ds) == PARLEY_OK && ds_add_intent(ds, "a", &id) == PARLEY_ERR_INVALID_ARG,
          "only a finished data set");
    ds_free(ds);
}

/* Lookup values an example holds unmarked: whole words, any case, punctuation at the ends
 * ignored, the longest value at a word; marked values, parts of words and data without
 * tables give none. */
static void test_unmarked(void)
{
    static const char yaml[] = "nlu:\n"
                               "- intent: ask\n"
                               "  examples: |\n"
                               "    - how big is a Large?\n"
                               "    - is extra large bigger than a [medium](size)\n"
                               "    - largely fine, thanks\n"
                               "    - is the CRÈME Brûlée sweet?\n"
                               "- intent: order\n"
                               "  examples: |\n"
                               "    - a [large](size) one with ham\n"
                               "    - a [crème brûlée](dessert) and an Éclair\n"
                               "- lookup: size\n"
                               "  examples: |\n"
                               "    - large\n"
                               "    - extra large\n"
                               "    - medium\n"
                               "- lookup: dessert\n"
                               "  examples: |\n"
                               "    - Crème Brûlée\n"
                               "    - éclair\n";
    ds_dataset *ds = NULL;
    ds_unmarked *u = NULL;
    int n = -1;
    CHECK(ds_load_rasa_string("u.yaml", yaml, sizeof yaml - 1, &ds) == PARLEY_OK &&
                  ds_unmarked_values(ds, &u, &n) == PARLEY_OK,
          "unmarked: %s", parley_errmsg());
    /* Compared as the lookup features compare them: accents and capitals of any script;
     * a marked value is no finding, an unmarked one beside it is. */
    CHECK(n == 4 && u && !strcmp(ds->examples[u[0].example].text, "how big is a Large?") &&
                  !strcmp(u[0].table, "size") && !strcmp(u[0].value, "large") &&
                  !strcmp(u[1].value, "extra large") &&
                  !strcmp(ds->examples[u[1].example].text, "is extra large bigger than a medium") &&
                  !strcmp(u[2].table, "dessert") && !strcmp(u[2].value, "creme brulee") &&
                  !strcmp(ds->examples[u[2].example].text, "is the CRÈME Brûlée sweet?") &&
                  !strcmp(u[3].value, "eclair") &&
                  !strcmp(ds->examples[u[3].example].text, "a crème brûlée and an Éclair"),
          "four found, the longest at its word: %d", n);
    ds_unmarked_free(u, n);
    ds_free(ds);
    u = NULL;
    CHECK(ds_load(path_of("pizza.yaml"), &ds) == PARLEY_OK &&
                  ds_unmarked_values(ds, &u, &n) == PARLEY_OK && n == 0 && !u,
          "the sample's data: none (%d)", n);
    ds_free(ds);
}

/* Each bad_*.yaml starts with "# expect STATUS LINE:COL: message". */
static void test_bad_files(void)
{
    DIR *d = opendir(data_dir);
    CHECK(d != NULL, "open %s", data_dir);
    if (!d)
        return;
    int files = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (strncmp(de->d_name, "bad_", 4) != 0 || n < 5 ||
            strcmp(de->d_name + n - 5, ".yaml") != 0)
            continue;
        files++;
        char path[4096], first[512] = "", status[64], want[8192];
        snprintf(path, sizeof path, "%s/%s", data_dir, de->d_name);
        FILE *f = fopen(path, "r");
        if (!f || !fgets(first, sizeof first, f)) {
            CHECK(0, "read %s", path);
            if (f)
                fclose(f);
            continue;
        }
        fclose(f);
        first[strcspn(first, "\n")] = '\0';
        int off = 0;
        if (sscanf(first, "# expect %63s %n", status, &off) != 1 || !off) {
            CHECK(0, "%s: first line must be '# expect STATUS LINE:COL: message'", path);
            continue;
        }
        snprintf(want, sizeof want, "%s:%s", path, first + off);
        ds_dataset *ds = NULL;
        parley_status st = ds_load(path, &ds);
        const char *name = parley_status_str(st);
        CHECK(ds == NULL && !strncmp(name, status, strlen(status)) && name[strlen(status)] == ':',
              "%s: got %s, want %s", de->d_name, name, status);
        CHECK(!strcmp(parley_errmsg(), want), "%s:\n   got  '%s'\n   want '%s'", de->d_name,
              parley_errmsg(), want);
        ds_free(ds);
    }
    closedir(d);
    CHECK(files >= 20, "found %d bad files", files);
}

static void test_strings(void)
{
    ds_dataset *ds = NULL;
    /* CR LF line ends, tabs between words, examples as a flow list. */
    const char *crlf =
            "nlu:\r\n- intent: a\r\n  examples: |\r\n    - x\t[y z](s)\r\n    - [w](s) [q\r\n";
    CHECK(ds_load_rasa_string("c.yaml", crlf, strlen(crlf), &ds) == PARLEY_ERR_FORMAT, "CRLF bad");
    CHECK(!strcmp(parley_errmsg(), "c.yaml:5:14: unclosed '['"), "CRLF position: %s",
          parley_errmsg());
    const char *flow = "nlu: [{intent: a, examples: ['x\t[y z](s)', \"[\\u00e9](t) v\"]}]";
    CHECK(ds_load_rasa_string("f.yaml", flow, strlen(flow), &ds) == PARLEY_OK, "flow: %s",
          parley_errmsg());
    if (ds) {
        check_example(ds, 0, "x y z", "a", "O B-s I-s");
        check_example(ds, 1, "\xC3\xA9 v", "a", "B-t O");
    }
    ds_free(ds);
    /* No slot annotation anywhere: no slot names, and the tag set is "O" alone. */
    const char *plain = "nlu:\n- intent: b\n  examples: [x y]\n- intent: a\n  examples: [z]\n";
    CHECK(ds_load_rasa_string("p.yaml", plain, strlen(plain), &ds) == PARLEY_OK, "no slots: %s",
          parley_errmsg());
    if (ds) {
        CHECK(ds->n_slots == 0 && ds->n_tags == 1 && !strcmp(ds->tags[0], "O"),
              "tags without slots");
        check_example(ds, 0, "x y", "b", "O O");
    }
    ds_free(ds);
    ds = NULL;
    /* The annotation JSON may escape characters; the canonical value is decoded. */
    const char *esc = "nlu:\n- intent: a\n  examples: |\n    - [x]{\"entity\": \"s\", \"value\": "
                      "\"\\u00e9\\ud83d\\ude00\\\"\"}\n";
    ds = NULL;
    CHECK(ds_load_rasa_string("e.yaml", esc, strlen(esc), &ds) == PARLEY_OK, "escapes: %s",
          parley_errmsg());
    if (ds && ds->n_examples == 1 && ds->examples[0].n_spans == 1)
        CHECK(!strcmp(ds->examples[0].spans[0].value, "\xC3\xA9\xF0\x9F\x98\x80\""),
              "decoded value '%s'", ds->examples[0].spans[0].value);
    ds_free(ds);
    ds = NULL;
    const char *nul = "nlu:\n- intent: a\n  examples: [\"x\\0y\"]\n";
    CHECK(ds_load_rasa_string("n.yaml", nul, strlen(nul), &ds) == PARLEY_ERR_FORMAT && !ds,
          "NUL refused");
    CHECK(!strcmp(parley_errmsg(), "n.yaml:3:14: a NUL character in a string"), "NUL: %s",
          parley_errmsg());
    /* Names that print as other names: a bidi override, a zero-width space or joiner, a
     * bidi isolate, in an intent or a slot. */
    static const struct {
        const char *yaml, *says;
    } names[] = {
        { "nlu:\n- intent: or\u202eder\n  examples: [\"x\"]\n", "U+202E at byte 2" },
        { "nlu:\n- intent: order\u200b\n  examples: [\"x\"]\n", "U+200B at byte 5" },
        { "nlu:\n- intent: a\n  examples: [\"[x](si\u200dze)\"]\n", "slot name holds U+200D" },
        { "nlu:\n- intent: a\n  examples: [\"[x](si\u2066ze)\"]\n", "slot name holds U+2066" },
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        CHECK(ds_load_rasa_string("n.yaml", names[i].yaml, strlen(names[i].yaml), &ds) ==
                              PARLEY_ERR_FORMAT &&
                      !ds && strstr(parley_errmsg(), names[i].says) &&
                      strstr(parley_errmsg(), "bidi or zero-width"),
              "name %zu refused: %s", i, parley_errmsg());
        ds_free(ds);
        ds = NULL;
    }
    CHECK(ds_load(path_of("missing.yaml"), &ds) == PARLEY_ERR_NOT_FOUND && !ds, "missing file");
    CHECK(ds_load(path_of("jointbert/good/label"), &ds) == PARLEY_ERR_UNSUPPORTED && !ds,
          "neither yaml nor folder");
}

static void test_jointbert(void)
{
    ds_dataset *ds = NULL;
    CHECK(ds_load(path_of("jointbert/good"), &ds) == PARLEY_OK, "good folder: %s", parley_errmsg());
    if (ds) {
        CHECK(ds->n_examples == 5 && ds->n_duplicates == 1, "%d examples, %d duplicates (kept)",
              ds->n_examples, ds->n_duplicates);
        CHECK(ds->n_intents == 3 && !strcmp(ds->intents[0], "PlayMusic") &&
                      !strcmp(ds->intents[1], "atis_airfare#atis_flight") &&
                      !strcmp(ds->intents[2], "atis_flight"),
              "intents sorted, joint intent kept whole");
        CHECK(ds->n_slots == 3 && !strcmp(ds->slots[1], "fromloc.city_name"), "slots");
        check_example(ds, 0, "what flights leave boston", "atis_flight",
                      "O O O B-fromloc.city_name");
        check_example(ds, 1, "show me fares to denver and the flight", "atis_airfare#atis_flight",
                      "O O O O B-toloc.city_name O O O");
        check_example(
                ds, 2, "fly from new york to san francisco", "atis_flight",
                "O O I-fromloc.city_name I-fromloc.city_name B-toloc.city_name B-fromloc.city_name "
                "I-toloc.city_name");
        check_example(ds, 4, "play music", "PlayMusic", "B-action I-action");
        /* Spans follow the conlleval rules: I- without B- starts one, a type change too. */
        const ds_example *e = &ds->examples[2];
        static const int want[4][3] = { { 2, 4, 1 }, { 4, 5, 2 }, { 5, 6, 1 }, { 6, 7, 2 } };
        CHECK(e->n_spans == 4, "%d spans", e->n_spans);
        for (int s = 0; s < e->n_spans && s < 4; s++)
            CHECK(e->spans[s].start == want[s][0] && e->spans[s].end == want[s][1] &&
                          e->spans[s].slot == want[s][2],
                  "span %d", s);
    }
    ds_free(ds);

    static const struct {
        const char *dir;
        parley_status st;
        const char *msg; /* %s = the folder's path */
    } bad[] = {
        { "tag_count", PARLEY_ERR_FORMAT, "%s/seq.out:2: 3 tags for the 2 words of %s/seq.in:2" },
        { "line_count", PARLEY_ERR_FORMAT,
          "%s/label:2: missing line (%s/seq.in has 2 lines, %s/label has 1)" },
        { "no_label", PARLEY_ERR_NOT_FOUND, "%s/label: cannot open: No such file or directory" },
        { "bad_tag", PARLEY_ERR_FORMAT,
          "%s/seq.out:2: word 2: 'X-city' is not a BIO tag (O, B-x or I-x)" },
        { "bad_utf8", PARLEY_ERR_UTF8, "%s/seq.in:2: invalid UTF-8 at byte 3 of the line" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char dir[4096], want[8192];
        snprintf(dir, sizeof dir, "%s/jointbert/%s", data_dir, bad[i].dir);
        snprintf(want, sizeof want, bad[i].msg, dir, dir, dir);
        ds = NULL;
        parley_status st = ds_load(dir, &ds);
        CHECK(st == bad[i].st && !ds, "%s: status %d", bad[i].dir, st);
        CHECK(!strcmp(parley_errmsg(), want), "%s:\n   got  '%s'\n   want '%s'", bad[i].dir,
              parley_errmsg(), want);
    }
}

static void test_shared_data(void)
{
    const char *shared = getenv("PARLEY_SHARED_DATA");
    static const struct {
        const char *dir;
        int n, intents;
        const char *text, *intent, *tags, *joint;
    } sets[] = {
        { "nlu/snips/train", 13084, 7, "listen to westbam alumb allergic on google music",
          "PlayMusic", "O O B-artist O B-album O B-service I-service", NULL },
        { "nlu/atis/train", 4478, 21, NULL, NULL, NULL, "atis_flight#atis_airfare" },
    };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        char dir[4096];
        struct stat sb;
        snprintf(dir, sizeof dir, "%s/%s", shared ? shared : "", sets[i].dir);
        if (!shared || stat(dir, &sb) != 0) {
            printf("skipping %s: PARLEY_SHARED_DATA does not have it\n", sets[i].dir);
            continue;
        }
        ds_dataset *ds = NULL;
        CHECK(ds_load(dir, &ds) == PARLEY_OK, "%s: %s", dir, parley_errmsg());
        if (!ds)
            continue;
        CHECK(ds->n_examples == sets[i].n, "%s: %d examples, want %d", dir, ds->n_examples,
              sets[i].n);
        CHECK(ds->n_intents == sets[i].intents, "%s: %d intents", dir, ds->n_intents);
        if (sets[i].text)
            check_example(ds, 0, sets[i].text, sets[i].intent, sets[i].tags);
        if (sets[i].joint)
            CHECK(ds_intent_index(ds, sets[i].joint) >= 0, "joint intent %s", sets[i].joint);
        printf("%s: %d examples, %d intents, %d slot types, %d duplicates kept\n", sets[i].dir,
               ds->n_examples, ds->n_intents, ds->n_slots, ds->n_duplicates);
        ds_free(ds);
    }
}

/* Load (and augment) under every allocation failure (tests/fault.h). */
typedef struct load_case {
    const char *path;
    int augment; /* 0: none, 1: from lookup tables, 2: from the data's own values */
} load_case;

static parley_status load_free(void *ctx)
{
    const load_case *c = ctx;
    ds_dataset *ds = NULL;
    parley_status st = ds_load(c->path, &ds);
    if (st == PARLEY_OK && c->augment)
        st = (c->augment == 1 ? ds_augment_lookups : ds_augment_own_values)(ds, 3, 5, NULL);
    ds_free(ds);
    return st;
}

static void sweep_load(const char *what, const char *name, int augment)
{
    load_case c = { path_of(name), augment };
    long points = fault_sweep(what, load_free, &c);
    CHECK(points > 50, "%s: %ld allocation failure points", what, points);
}

/* 300,000 intents and as many slot types, one example each: building the data set looks
 * names up in tables, so this takes seconds; a list scanned per name (as it once was) would
 * take minutes, past the test's timeout. Labels come out sorted, every index right, and
 * augmenting it takes memory by the spans, not by intents times types. */
static void test_many_labels(void)
{
    enum { N = 300000 };
    size_t cap = (size_t)N * 64, len = 0;
    char *text = malloc(cap);
    if (!text)
        return;
    len += (size_t)snprintf(text + len, cap - len, "version: \"3.1\"\nnlu:\n");
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "- intent: i%06d\n  examples: |\n    - say [w%d](s%06d)\n", i, i,
                                i);
    ds_dataset *ds = NULL;
    CHECK(ds_load_rasa_string("many.yaml", text, len, &ds) == PARLEY_OK, "many labels: %s",
          parley_errmsg());
    if (ds) {
        CHECK(ds->n_intents == N && ds->n_slots == N && ds->n_examples == N, "%d %d %d",
              ds->n_intents, ds->n_slots, ds->n_examples);
        CHECK(!strcmp(ds->intents[N - 1], "i299999") && ds_intent_index(ds, "i012345") == 12345 &&
                      ds_slot_index(ds, "s054321") == 54321 &&
                      ds_tag_index(ds, "I-s000007") == 1 + 2 * 7 + 1 &&
                      ds_intent_index(ds, "i1") == -1,
              "indices by name");
        int right = 1;
        for (int e = 0; e < ds->n_examples; e++) {
            char want[16];
            snprintf(want, sizeof want, "i%06d", e);
            right &= !strcmp(ds->intents[ds->examples[e].intent], want) &&
                     ds->examples[e].spans[0].slot == ds->examples[e].intent;
        }
        CHECK(right, "every example keeps its intent and slot");
        /* Augmentation holds tables per slot type and per (intent, type) that occurs, not
         * per intent and type: 9e10 pairs here. One value each: nothing to draw. */
        int added = -1;
        CHECK(ds_augment_own_values(ds, 4, 1, &added) == PARLEY_OK && added == 0 &&
                      ds_augment_lookups(ds, 4, 1, &added) == PARLEY_OK && added == 0,
              "augmenting many labels: %s", parley_errmsg());
    }
    ds_free(ds);
    free(text);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_dataset DATA_DIR\n");
        return 2;
    }
    data_dir = argv[1];
    test_pizza();
    test_augment();
    test_own_values();
    test_lowercase();
    test_add_intent();
    test_bad_files();
    test_strings();
    test_unmarked();
    test_jointbert();
    test_shared_data();
    test_many_labels();
    sweep_load("nlu.yaml", "pizza.yaml", 1);
    sweep_load("jointbert", "jointbert/good", 0);
    sweep_load("nlu.yaml, own values", "pizza.yaml", 2);
    return check_done();
}
