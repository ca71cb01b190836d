/* test_sparse.c — the sparse features on their own and in a model directory.
 *
 * The featurizer: the features of known texts by name (words, bigrams, character n-grams
 * with boundary marks, word forms and shapes, neighbours, sentence ends, lookup matches that
 * begin and continue, punctuation at a word's ends ignored, regex matches over the words
 * they overlap), TF-IDF values against a hand
 * computation, unknown features dropped, the vocabulary's order and cap, rows L2-normalized
 * (word rows by kind where asked: character n-grams, the rest).
 * The model: a model with sparse features saved and loaded exactly (sparse.json and the two
 * maps; versions 1 and 2, one norm per word row, read and run as trained), broken sparse.json files
 * refused with messages naming the file and what is wrong, a model without sparse features written
 * and read as a plain model (no sparse.json, no config keys, logits through bert_run_pieces
 * bit-identical to bert_forward's), zero sparse weights changing nothing, and allocation failures
 * injected into learning, featurizing, loading and saving.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/bert.h"
#include "nlu/data/dataset.h"
#include "nlu/train/defaults.h"
#include "nlu/train/sparse_train.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"
#include "sdk/base/slip.h"
#include "tests/check.h"
#include "tests/fault.h"
#include "tests/nlu/random_model.h"
#include "tests/tmpdir.h"

static int find_sent(const sf_featurizer *f, const char *name)
{
    for (int i = 0; i < sf_sentence_size(f); i++)
        if (!strcmp(sf_sentence_name(f, i), name))
            return i;
    return -1;
}

static int find_word(const sf_featurizer *f, const char *name)
{
    for (int i = 0; i < sf_word_size(f); i++)
        if (!strcmp(sf_word_name(f, i), name))
            return i;
    return -1;
}

/* The value of feature `id` in row r, or 0. */
static float value_at(const sf_rows *x, int r, int id)
{
    for (int k = x->start[r]; k < x->start[r + 1]; k++)
        if (x->index[k] == id)
            return x->value[k];
    return 0.0f;
}

static double norm_of(const sf_rows *x, int r)
{
    double s = 0;
    for (int k = x->start[r]; k < x->start[r + 1]; k++)
        s += (double)x->value[k] * x->value[k];
    return sqrt(s);
}

/* The L2 norm of word row r of x over its features of one kind (1: character n-grams "0:c:",
 * 0: the rest). */
static double word_norm_of(const sf_featurizer *f, const sf_rows *x, int r, int kind)
{
    double s = 0;
    for (int k = x->start[r]; k < x->start[r + 1]; k++)
        if ((strncmp(sf_word_name(f, x->index[k]), "0:c:", 4) == 0) == kind)
            s += (double)x->value[k] * x->value[k];
    return sqrt(s);
}

/* Whether row r of words has the named word feature. */
static int word_has(const sf_featurizer *f, const sf_rows *words, int r, const char *name)
{
    int id = find_word(f, name);
    return id >= 0 && value_at(words, r, id) != 0.0f;
}

static const char *const TRAIN[] = { "Two large Pizzas with extra cheese",
                                     "a pizza with mushrooms please", "hello" };
static const char *const TOPPINGS[] = { "extra  Cheese", "Mushrooms" };

static sf_featurizer *pizza_featurizer(int word_norm_by_kind)
{
    sf_table t = { "topping", 2, TOPPINGS };
    sf_build_params p = { .n_lookups = 1, .lookups = &t, .word_norm_by_kind = word_norm_by_kind };
    sf_featurizer *f = NULL;
    CHECK(sf_build(TRAIN, 3, &p, &f) == PARLEY_OK, "build: %s", parley_errmsg());
    return f;
}

static void test_features(void)
{
    sf_featurizer *f = pizza_featurizer(0);
    if (!f)
        return;
    const char *sent[] = { "w:pizzas", "w:two",   "b:two large", "b:large pizzas", "c:<pi",
                           "c:<pizz",  "c:zzas>", "c:s>",        "w:hello",        "b:cheese a" };
    for (size_t i = 0; i < sizeof sent / sizeof sent[0]; i++)
        CHECK((find_sent(f, sent[i]) >= 0) == (i < 9), "sentence feature %s", sent[i]);
    CHECK(find_sent(f, "c:<pizza") < 0, "no 6-grams");
    CHECK(find_sent(f, "w:Pizzas") < 0, "lower-cased");

    sf_rows s = { 0 }, w = { 0 };
    int n_words = 0;
    const char *text = "Two large Pizzas with extra cheese";
    CHECK(sf_featurize(f, text, strlen(text), &s, &w, &n_words) == PARLEY_OK, "featurize: %s",
          parley_errmsg());
    CHECK(n_words == 6 && s.n_rows == 1 && w.n_rows == 6, "%d words, %d and %d rows", n_words,
          s.n_rows, w.n_rows);
    CHECK(fabs(norm_of(&s, 0) - 1) < 1e-6, "sentence row norm %g", norm_of(&s, 0));
    for (int r = 0; r < w.n_rows; r++)
        CHECK(fabs(norm_of(&w, r) - 1) < 1e-6, "word row %d norm %g", r, norm_of(&w, r));
    struct {
        int word;
        const char *name;
        int has;
    } want[] = {
        { 0, "0:w:two", 1 },       { 0, "0:s:Xxx", 1 },        { 0, "-1:<s>", 1 },
        { 0, "+1:w:large", 1 },    { 2, "0:s:Xxxx", 1 },       { 2, "0:w:pizzas", 1 },
        { 2, "0:c:<pi", 1 },       { 2, "0:c:as>", 1 },        { 2, "0:c:<piz", 1 },
        { 2, "0:c:<pizz", 0 },     { 3, "+1:L:B:topping", 1 }, { 3, "0:L:B:topping", 0 },
        { 4, "0:L:B:topping", 1 }, { 4, "0:L:I:topping", 0 },  { 5, "0:L:I:topping", 1 },
        { 5, "0:L:B:topping", 0 }, { 5, "-1:L:B:topping", 1 }, { 5, "+1:</s>", 1 },
        { 5, "-1:w:extra", 1 },    { 5, "0:s:xxx", 1 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(word_has(f, &w, want[i].word, want[i].name) == want[i].has, "word %d %s %s",
              want[i].word, want[i].has ? "has" : "lacks", want[i].name);
    /* The sentence counts the table's matches (one for "extra cheese", not two), and its
     * value is sublinear TF times IDF like a word's: here tf 1 and df 2 of 3, as "w:with". */
    int lt = find_sent(f, "L:topping"), ww = find_sent(f, "w:with");
    CHECK(lt >= 0 && ww >= 0 && value_at(&s, 0, lt) > 0 &&
                  fabs(value_at(&s, 0, lt) - value_at(&s, 0, ww)) < 1e-6,
          "L:topping in the sentence: %g, as w:with %g", lt >= 0 ? value_at(&s, 0, lt) : -1,
          ww >= 0 ? value_at(&s, 0, ww) : -1);
    sf_rows_free(&s);
    sf_rows_free(&w);
    text = "mushrooms and extra cheese";
    CHECK(sf_featurize(f, text, strlen(text), &s, &w, &n_words) == PARLEY_OK, "featurize: %s",
          parley_errmsg());
    /* tf 2 (df 2) against "w:extra"'s tf 1 (df 1), idf = ln((1 + 3) / (1 + df)) + 1 */
    int we = find_sent(f, "w:extra");
    double want_ratio = (1 + log(2.0)) * (log(4.0 / 3) + 1) / (log(4.0 / 2) + 1);
    CHECK(lt >= 0 && we >= 0 && value_at(&s, 0, we) > 0 &&
                  fabs(value_at(&s, 0, lt) / value_at(&s, 0, we) - want_ratio) < 1e-5,
          "two matches: tf 2 (ratio %g, want %g)",
          lt >= 0 && we >= 0 ? value_at(&s, 0, lt) / value_at(&s, 0, we) : -1, want_ratio);
    sf_rows_free(&s);
    sf_rows_free(&w);

    /* A match read without the punctuation at a word's ends and in any case; a word of
     * nothing but a control character is still a word (as the tokenizer counts). */
    text = "a pizza with MUSHROOMS! \x01 please";
    CHECK(sf_featurize(f, text, strlen(text), &s, &w, &n_words) == PARLEY_OK, "featurize: %s",
          parley_errmsg());
    CHECK(n_words == 6, "%d words", n_words);
    CHECK(word_has(f, &w, 3, "0:L:B:topping") && word_has(f, &w, 2, "+1:L:B:topping"),
          "MUSHROOMS! matches the lookup table");
    sf_rows_free(&s);
    sf_rows_free(&w);
    sf_free(f);
}

/* Word rows normalized by kind: a word's character n-grams and the rest of its row each to
 * norm 1/sqrt(2), a row of one kind to 1; the sentence row is the same as without. */
static void test_word_norm_by_kind(void)
{
    sf_featurizer *one = pizza_featurizer(0), *by_kind = pizza_featurizer(1);
    sf_rows s1 = { 0 }, w1 = { 0 }, s = { 0 }, w = { 0 };
    const char *text = "Two large Pizzas with qqq";
    CHECK(one && by_kind && sf_featurize(one, text, strlen(text), &s1, &w1, NULL) == PARLEY_OK &&
                  sf_featurize(by_kind, text, strlen(text), &s, &w, NULL) == PARLEY_OK,
          "featurize: %s", parley_errmsg());
    CHECK(s.n_rows == 1 && s1.start[1] == s.start[1] &&
                  !memcmp(s.value, s1.value, (size_t)s.start[1] * sizeof *s.value),
          "the sentence row is the same");
    for (int r = 0; r + 1 < w.n_rows; r++)
        for (int kind = 0; kind < 2; kind++) {
            double n = word_norm_of(by_kind, &w, r, kind);
            CHECK(fabs(n - sqrt(0.5)) < 1e-6, "word row %d, kind %d: norm %g", r, kind, n);
        }
    /* "qqq": none of its n-grams is known, so the rest of its row gets the whole norm. */
    const int last = w.n_rows - 1;
    CHECK(w.n_rows == 5 && word_norm_of(by_kind, &w, last, 1) == 0 &&
                  fabs(norm_of(&w, last) - 1) < 1e-6,
          "a row of one kind: norm %g", w.n_rows == 5 ? norm_of(&w, last) : -1);
    CHECK(w1.n_rows == 5 && fabs(word_norm_of(one, &w1, 2, 1) - sqrt(0.5)) > 0.05,
          "with one norm per row the n-grams of \"Pizzas\" weigh otherwise (%g)",
          w1.n_rows == 5 ? word_norm_of(one, &w1, 2, 1) : -1);
    sf_rows_free(&s1);
    sf_rows_free(&w1);
    sf_rows_free(&s);
    sf_rows_free(&w);
    sf_free(one);
    sf_free(by_kind);
}

/* Counts the lookup matches sf_lookup_matches reports (arg: an int). */
static parley_status count_match(void *arg, int table, size_t from, size_t to, const char *value)
{
    (void)table, (void)from, (void)to, (void)value;
    ++*(int *)arg;
    return PARLEY_OK;
}

/* Lookup values matched within one typing slip, where asked: a code point left out, added
 * or changed in a value of 5 or more, in one word of several too; not two slips, not a
 * shorter value, not without the setting, and never in sf_lookup_matches (parley check). */
static void test_lookup_slips(void)
{
    static const char *const toppings[] = { "mushrooms", "extra cheese", "ham", "jalapeño" };
    static const char *const sizes[] = { "large" };
    const sf_table t[2] = { { "topping", 4, toppings }, { "size", 1, sizes } };
    /* Texts whose matches put the lookup features in the vocabulary. */
    const char *texts[] = { "with mushrooms", "extra cheese please", "a large one" };
    sf_featurizer *f[2] = { NULL, NULL };
    for (int slips = 0; slips < 2; slips++) {
        sf_build_params p = { .n_lookups = 2, .lookups = t, .lookup_slips = slips };
        CHECK(sf_build(texts, 3, &p, &f[slips]) == PARLEY_OK, "build: %s", parley_errmsg());
    }
    struct {
        const char *text;
        int word;
        const char *feature; /* its word's "0:L:..." feature with slips, or NULL: none */
        int exact;           /* whether it matches without slips too */
    } cases[] = {
        { "with mushrooms", 1, "0:L:B:topping", 1 },
        { "with mushroos", 1, "0:L:B:topping", 0 },   /* left out */
        { "with mushroomss", 1, "0:L:B:topping", 0 }, /* added */
        { "with mushrqoms", 1, "0:L:B:topping", 0 },  /* changed */
        { "with muzhroomz", 1, NULL, 0 },             /* two changed */
        { "with mushros", 1, NULL, 0 },               /* two left out */
        { "a larg one", 1, "0:L:B:size", 0 },         /* a value of 5, one left out */
        { "extra cheee", 0, "0:L:B:topping", 0 },     /* one word of two */
        { "extra cheee", 1, "0:L:I:topping", 0 },
        { "extr cheee", 0, NULL, 0 }, /* a slip in each word: two */
        { "Jalapeno", 0, "0:L:B:topping", 1 },
        { "jalapno", 0, "0:L:B:topping", 0 }, /* normalized as the value, then one left out */
        { "hm", 0, NULL, 0 },                 /* "ham" is too short for slips */
        { "jam", 0, NULL, 0 },
    };
    for (size_t i = 0; f[0] && f[1] && i < sizeof cases / sizeof cases[0]; i++) {
        for (int slips = 0; slips < 2; slips++) {
            sf_rows s = { 0 }, w = { 0 };
            const char *text = cases[i].text;
            CHECK(sf_featurize(f[slips], text, strlen(text), &s, &w, NULL) == PARLEY_OK,
                  "featurize: %s", parley_errmsg());
            int n_lookup = 0;
            for (int k = w.start[cases[i].word]; k < w.start[cases[i].word + 1]; k++)
                n_lookup += !strncmp(sf_word_name(f[slips], w.index[k]), "0:L:", 4);
            const char *want = slips || cases[i].exact ? cases[i].feature : NULL;
            CHECK(want ? n_lookup == 1 && word_has(f[slips], &w, cases[i].word, want)
                       : n_lookup == 0,
                  "\"%s\", slips %d: word %d has %d lookup features, want %s", text, slips,
                  cases[i].word, n_lookup, want ? want : "none");
            sf_rows_free(&s);
            sf_rows_free(&w);
        }
    }
    /* A value of PL_SLIP_MAX + 1 code points matches only as written. */
    char long_value[PL_SLIP_MAX + 2], long_slip[PL_SLIP_MAX + 1];
    for (int i = 0; i <= PL_SLIP_MAX; i++)
        long_value[i] = (char)('a' + i % 26);
    long_value[PL_SLIP_MAX + 1] = '\0';
    memcpy(long_slip, long_value + 1, sizeof long_slip);
    const char *const longs[] = { long_value };
    const sf_table lt = { "size", 1, longs };
    sf_featurizer *lf = NULL;
    sf_build_params lp = { .n_lookups = 1, .lookups = &lt, .lookup_slips = 1 };
    const char *long_texts[] = { long_value };
    CHECK(sf_build(long_texts, 1, &lp, &lf) == PARLEY_OK, "build: %s", parley_errmsg());
    for (int slipped = 0; lf && slipped < 2; slipped++) {
        sf_rows s = { 0 }, w = { 0 };
        const char *text = slipped ? long_slip : long_value;
        CHECK(sf_featurize(lf, text, strlen(text), &s, &w, NULL) == PARLEY_OK &&
                      word_has(lf, &w, 0, "0:L:B:size") == !slipped,
              "a value of %d code points, %s: %s", PL_SLIP_MAX + 1,
              slipped ? "one left out, no match" : "as written, a match", parley_errmsg());
        sf_rows_free(&s);
        sf_rows_free(&w);
    }
    sf_free(lf);

    int told = 0;
    const char *slipped = "with mushroos please";
    CHECK(f[1] &&
                  sf_lookup_matches(f[1], slipped, strlen(slipped), count_match, &told) ==
                          PARLEY_OK &&
                  told == 0,
          "parley check's matches are exact: %d told", told);
    sf_free(f[0]);
    sf_free(f[1]);
}

/* Regex matches: every word a match overlaps, the first beginning it; searched in the text
 * as given, case-insensitively; a pattern that does not compile is refused by name. */
static void test_regexes(void)
{
    const char *const zip[] = { "\\b\\d{5}\\b" }, *const phone[] = { "\\d{3} \\d{4}" },
                      *const code[] = { "ab-?c" };
    const sf_table regexes[] = { { "zip", 1, zip }, { "phone", 1, phone }, { "code", 1, code } };
    const char *const texts[] = { "call 555 1234 to 90210 now, abc", "x-AB-C" };
    sf_build_params p = { .n_regexes = 3, .regexes = regexes };
    sf_featurizer *f = NULL;
    sf_rows s = { 0 }, w = { 0 };
    CHECK(sf_build(texts, 2, &p, &f) == PARLEY_OK, "build: %s", parley_errmsg());
    if (!f)
        return;
    CHECK(sf_featurize(f, texts[0], strlen(texts[0]), &s, &w, NULL) == PARLEY_OK, "featurize: %s",
          parley_errmsg());
    CHECK(word_has(f, &w, 1, "0:R:B:phone") && word_has(f, &w, 2, "0:R:I:phone") &&
                  !word_has(f, &w, 2, "0:R:B:phone") && !word_has(f, &w, 3, "0:R:I:phone"),
          "phone over words 1-2");
    CHECK(word_has(f, &w, 4, "0:R:B:zip") && word_has(f, &w, 3, "+1:R:B:zip") &&
                  !word_has(f, &w, 1, "0:R:B:zip"),
          "zip on word 4");
    CHECK(word_has(f, &w, 6, "0:R:B:code"), "a match inside a word marks it");
    for (int r = 0; r < 3; r++) {
        char name[16];
        snprintf(name, sizeof name, "R:%s", regexes[r].name);
        int id = find_sent(f, name);
        CHECK(id >= 0 && value_at(&s, 0, id) > 0, "the sentence has %s", name);
    }
    sf_rows_free(&s);
    sf_rows_free(&w);
    CHECK(sf_featurize(f, texts[1], strlen(texts[1]), &s, &w, NULL) == PARLEY_OK &&
                  word_has(f, &w, 0, "0:R:B:code"),
          "case-insensitive, in the text as given");
    sf_rows_free(&s);
    sf_rows_free(&w);
    sf_free(f);
    const char *const bad[] = { "(unclosed" };
    const sf_table broken = { "broken", 1, bad };
    p = (sf_build_params){ .n_regexes = 1, .regexes = &broken };
    CHECK(sf_build(texts, 2, &p, &f) == PARLEY_ERR_CONFIG &&
                  strstr(parley_errmsg(), "regex \"broken\", pattern 1"),
          "a bad pattern: %s", parley_errmsg());
}

static void test_tfidf(void)
{
    const char *const texts[] = { "a b", "a c" };
    sf_featurizer *f = NULL;
    CHECK(sf_build(texts, 2, NULL, &f) == PARLEY_OK, "build: %s", parley_errmsg());
    if (!f)
        return;
    sf_rows s = { 0 }, w = { 0 };
    CHECK(sf_featurize(f, "b b a", 5, &s, &w, NULL) == PARLEY_OK, "featurize: %s", parley_errmsg());
    int a = find_sent(f, "w:a"), b = find_sent(f, "w:b");
    /* tf(b) = 2, df(b) = 1; tf(a) = 1, df(a) = 2; n = 2 texts */
    double want = (1 + log(2.0)) * (log(3.0 / 2.0) + 1) / ((1 + log(1.0)) * (log(3.0 / 3.0) + 1));
    double got = value_at(&s, 0, b) / value_at(&s, 0, a);
    CHECK(a >= 0 && b >= 0 && fabs(got - want) < 1e-5, "tf-idf ratio %g, want %g", got, want);
    sf_rows_free(&s);
    sf_rows_free(&w);

    /* Nothing known: an empty row, no NaN. */
    CHECK(sf_featurize(f, "zzz qqq", 7, &s, &w, NULL) == PARLEY_OK, "featurize: %s",
          parley_errmsg());
    CHECK(s.start[1] == 0, "unknown text: %d sentence features", s.start[1]);
    CHECK(sf_rows_check(&w, 2, sf_word_size(f), "word rows") == PARLEY_OK, "rows: %s",
          parley_errmsg());
    sf_rows_free(&s);
    sf_rows_free(&w);
    sf_free(f);

    /* The cap keeps the most frequent, ties in byte order. */
    sf_build_params p = { .max_sentence = 5, .max_word = 3 };
    CHECK(sf_build(texts, 2, &p, &f) == PARLEY_OK, "build: %s", parley_errmsg());
    const char *order[] = { "c:<a", "c:<a>", "c:a>", "w:a", "b:a b" };
    CHECK(f && sf_sentence_size(f) == 5 && sf_word_size(f) == 3, "capped sizes");
    for (int i = 0; f && i < 5; i++)
        CHECK(!strcmp(sf_sentence_name(f, i), order[i]), "feature %d is %s, want %s", i,
              sf_sentence_name(f, i), order[i]);
    sf_free(f);
}

/* ---- in a model directory ----------------------------------------------------------- */

static const char NLU_YAML[] = "nlu:\n"
                               "- intent: order\n"
                               "  examples: |\n"
                               "    - two [large](size) pizzas\n"
                               "    - a [small](size) pizza with [extra cheese](topping)\n"
                               "- intent: greet\n"
                               "  examples: |\n"
                               "    - hello there\n"
                               "- lookup: topping\n"
                               "  examples: |\n"
                               "    - extra cheese\n"
                               "    - olives\n"
                               "- regex: size\n"
                               "  examples: |\n"
                               "    - (large|small)\n";

static const char *const TEXTS[] = { "two large pizzas", "hello", "a small pizza with olives",
                                     "unheard of words here" };
enum { N_TEXTS = 4 };

typedef struct logits {
    float v[N_TEXTS][64];
} logits;

static parley_status keep_logits(void *ctx, int i, const wp_tokens *tk, int n_pieces,
                                 const float *intent_logits, const float *slot_logits)
{
    (void)tk;
    logits *l = ctx;
    memcpy(l->v[i], intent_logits, 2 * sizeof(float));
    memcpy(l->v[i] + 2, slot_logits, (size_t)n_pieces * 8 * sizeof(float));
    return PARLEY_OK;
}

/* The logits of TEXTS through bert_run_pieces, or with `direct` through bert_pack and
 * bert_forward alone. */
static parley_status run_texts_how(const bert_model *m, int direct, logits *out)
{
    wp_tokens tk[N_TEXTS];
    bert_packed p = { 0 };
    parley_status st = PARLEY_OK;
    memset(tk, 0, sizeof tk);
    memset(out, 0, sizeof *out);
    for (int i = 0; i < N_TEXTS && st == PARLEY_OK; i++)
        st = wp_tokenize(m->vocab, TEXTS[i], strlen(TEXTS[i]), &tk[i]);
    if (st == PARLEY_OK && !direct)
        st = bert_run_pieces(m, TEXTS, tk, N_TEXTS, NULL, NULL, keep_logits, out);
    if (st == PARLEY_OK && direct && (st = bert_pack(m, tk, N_TEXTS, &p)) == PARLEY_OK &&
        (st = bert_forward(m, &p.batch, p.intent_logits, p.slot_logits)) == PARLEY_OK) {
        size_t first = 0;
        for (int i = 0; i < N_TEXTS; i++) {
            keep_logits(out, i, &tk[i], p.len[i] - 2, p.intent_logits + 2 * i,
                        p.slot_logits + (first + 1) * 8);
            first += (size_t)p.len[i];
        }
    }
    bert_packed_free(&p);
    for (int i = 0; i < N_TEXTS; i++)
        wp_tokens_free(&tk[i]);
    return st;
}

static parley_status run_texts(const bert_model *m, logits *out)
{
    return run_texts_how(m, 0, out);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        fprintf(stderr, "cannot write %s\n", path);
}

/* A small random model with a vocabulary, labels of 2 intents and 8 tags. */
static bert_model *new_model(void)
{
    test_seed(7);
    bert_model *r = test_random_model((test_shape){ 12, 8, 1, 2, 16, 16, 2, 8 }, 0.5), *m = NULL;
    wp_vocab *v = NULL;
    const char *words = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ntwo\nlarge\npizza\n##s\nhello\na\n"
                        "small\n";
    write_file(tmpdir_path("vocab.txt"), words);
    if (!r || wp_vocab_load(tmpdir_path("vocab.txt"), &v) != PARLEY_OK ||
        bert_model_alloc(&r->cfg, v, &m) != PARLEY_OK) {
        fprintf(stderr, "new_model: %s\n", parley_errmsg());
        bert_model_free(r);
        return NULL;
    }
    memcpy(m->params, r->params, r->n_params * sizeof *r->params);
    bert_model_free(r);
    return m;
}

static int file_exists(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

static char *read_text(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    return pl_read_file(path, 1 << 24, &text, &len) == PARLEY_OK ? text : NULL;
}

/* Saves a copy of dir's files with sparse.json replaced by `json` into dir/broken and
 * expects loading it to fail with a message holding `want`. */
static void expect_broken(const char *dir, const char *json, const char *want)
{
    char cmd[2048], bad[512];
    snprintf(bad, sizeof bad, "%s-broken", dir);
    snprintf(cmd, sizeof cmd, "rm -rf %s && cp -r %s %s", bad, dir, bad);
    CHECK(system(cmd) == 0, "%s", cmd);
    char path[600];
    snprintf(path, sizeof path, "%s/sparse.json", bad);
    if (json)
        write_file(path, json);
    else
        remove(path);
    bert_model *m = NULL;
    parley_status st = bert_model_load(bad, &m);
    CHECK(st != PARLEY_OK && strstr(parley_errmsg(), want), "broken sparse.json (%s): %s", want,
          st == PARLEY_OK ? "loaded" : parley_errmsg());
    bert_model_free(m);
}

static void test_model_files(void)
{
    ds_dataset *ds = NULL;
    bert_model *m = new_model(), *back = NULL;
    logits plain, direct, zero, with;
    if (!m || ds_load_rasa_string("nlu.yaml", NLU_YAML, sizeof NLU_YAML - 1, &ds) != PARLEY_OK) {
        CHECK(0, "setup: %s", parley_errmsg());
        goto done;
    }
    /* Without sparse features: a plain model's files, and the logits are bert_forward's. */
    const char *plain_dir = tmpdir_path("plain");
    CHECK(bert_model_save(m, plain_dir) == PARLEY_OK, "save: %s", parley_errmsg());
    char *cfg = read_text(tmpdir_path("plain/config.json"));
    CHECK(cfg && !strstr(cfg, "sparse"), "config.json of a model without sparse features");
    pl_free(cfg);
    CHECK(!file_exists(tmpdir_path("plain/sparse.json")), "no sparse.json");
    CHECK(bert_model_load(plain_dir, &back) == PARLEY_OK && !back->sparse, "load: %s",
          parley_errmsg());
    CHECK(back && run_texts(back, &plain) == PARLEY_OK, "run: %s", parley_errmsg());
    bert_model_free(back);
    back = NULL;
    CHECK(run_texts_how(m, 1, &direct) == PARLEY_OK && !memcmp(&direct, &plain, sizeof plain),
          "without sparse features the logits are bert_forward's, bit for bit");

    /* With them, zero weights change nothing; then they count. */
    CHECK(train_sparse_setup(&m, ds, 1, train_word_norm_by_kind(ds->n_examples)) == PARLEY_OK,
          "setup: %s", parley_errmsg());
    CHECK(m->sparse && m->cfg.sparse_sent > 0 && m->cfg.sparse_word > 0, "sparse sizes %d, %d",
          m->cfg.sparse_sent, m->cfg.sparse_word);
    CHECK(run_texts(m, &zero) == PARLEY_OK && !memcmp(&zero, &plain, sizeof zero),
          "zero sparse weights leave every logit as it was");
    size_t n_sparse = (size_t)(m->params + m->n_params - m->w.sparse_intent_w);
    for (size_t i = 0; i < n_sparse; i++)
        m->w.sparse_intent_w[i] = test_uniform(0.5);
    CHECK(run_texts(m, &with) == PARLEY_OK && memcmp(&with, &plain, sizeof with),
          "sparse weights move the logits");

    const char *dir = tmpdir_path("sparse");
    CHECK(bert_model_save(m, dir) == PARLEY_OK, "save: %s", parley_errmsg());
    CHECK(bert_model_load(dir, &back) == PARLEY_OK, "load: %s", parley_errmsg());
    if (back) {
        CHECK(back->sparse && back->n_params == m->n_params &&
                      !memcmp(back->params, m->params, m->n_params * sizeof *m->params),
              "saved and loaded exactly");
        CHECK(sf_sentence_size(back->sparse) == m->cfg.sparse_sent &&
                      !strcmp(sf_sentence_name(back->sparse, 3), sf_sentence_name(m->sparse, 3)),
              "the vocabulary comes back");
        logits again;
        CHECK(run_texts(back, &again) == PARLEY_OK && !memcmp(&again, &with, sizeof with),
              "a loaded model gives the same logits");
    }
    bert_model_free(back);
    back = NULL;

    /* Few examples: the word rows were normalized by kind and the lookup values match with
     * a slip, as sparse.json (version 3) says. Read as version 2 (one norm per word row, no
     * slips) the logits differ; such a model is written back as version 3 saying so; as
     * version 1 (also from before the sentence's match features) it runs as version 2. */
    char old[300], old_json[320], cmd[700];
    snprintf(old, sizeof old, "%s-old", dir);
    snprintf(old_json, sizeof old_json, "%s/sparse.json", old);
    snprintf(cmd, sizeof cmd, "rm -rf %s && cp -r %s %s", old, dir, old);
    CHECK(system(cmd) == 0, "%s", cmd);
    char *json = read_text(old_json);
    char *ver = json ? strstr(json, "\"version\"") : NULL;
    char *digit = ver ? strpbrk(ver, "0123456789") : NULL;
    CHECK(digit && *digit == '3' && !isdigit((unsigned char)digit[1]) &&
                  strstr(json, "\"word_norm\":\"kind\"") && strstr(json, "\"lookup_slips\":true"),
          "sparse.json says version 3, word rows by kind, slips: %s", json ? json : "");
    logits v2, v1;
    for (char v = '2'; digit && v >= '1'; v--) {
        *digit = v;
        write_file(old_json, json);
        CHECK(bert_model_load(old, &back) == PARLEY_OK &&
                      run_texts(back, v == '2' ? &v2 : &v1) == PARLEY_OK,
              "version %c loads: %s", v, parley_errmsg());
        if (back && v == '2') {
            sf_rows rs = { 0 }, rw = { 0 };
            const char *text = "two large pizzas please";
            CHECK(sf_featurize(back->sparse, text, strlen(text), &rs, &rw, NULL) == PARLEY_OK &&
                          fabs(norm_of(&rw, 1) - 1) < 1e-6 &&
                          fabs(word_norm_of(back->sparse, &rw, 1, 1) - sqrt(0.5)) > 1e-3,
                  "version 2: one norm per word row");
            sf_rows_free(&rs);
            sf_rows_free(&rw);
            CHECK(memcmp(&v2, &with, sizeof with) != 0, "version 2: other logits than 3's");
            char *again = NULL;
            CHECK(bert_model_save(back, tmpdir_path("resaved-v2")) == PARLEY_OK &&
                          (again = read_text(tmpdir_path("resaved-v2/sparse.json"))) &&
                          strstr(again, "\"version\":3") &&
                          strstr(again, "\"word_norm\":\"row\"") &&
                          strstr(again, "\"lookup_slips\":false"),
                  "a version 2 model is saved as version 3 saying what it does: %s",
                  again ? again : parley_errmsg());
            pl_free(again);
        }
        bert_model_free(back);
        back = NULL;
    }
    CHECK(digit && !memcmp(&v1, &v2, sizeof v1), "version 1 gives version 2's logits");
    pl_free(json);

    char broken[256];
    snprintf(broken, sizeof broken, "%s", dir);
    expect_broken(broken, NULL, "sparse.json");
    expect_broken(broken, "{\"format\": \"other\", \"version\": 1}", "not parley's sparse");
    expect_broken(broken, "{\"format\": \"parley-sparse\", \"version\": 4}", "version 1 to 3");
    expect_broken(broken, "{\"format\": \"parley-sparse\", \"version\": 1.5}", "version 1 to 3");
    expect_broken(broken, "{\"format\": \"parley-sparse\", \"version\": 3, \"lookup_slips\": true}",
                  "\"word_norm\" is missing");
    expect_broken(broken,
                  "{\"format\": \"parley-sparse\", \"version\": 3, \"word_norm\": \"kind\", "
                  "\"lookup_slips\": 1}",
                  "\"lookup_slips\" is missing or not true or false");
    expect_broken(broken,
                  "{\"format\": \"parley-sparse\", \"version\": 1, \"sentence\": {\"features\": "
                  "[\"w:a\", \"w:a\"], \"idf\": [1, 1]}, \"word\": {\"features\": []}}",
                  "repeats feature 0");
    expect_broken(broken,
                  "{\"format\": \"parley-sparse\", \"version\": 1, \"sentence\": {\"features\": "
                  "[\"w:a\"], \"idf\": [1, 2]}, \"word\": {\"features\": []}}",
                  "2 IDF values for 1 sentence features");
    expect_broken(broken,
                  "{\"format\": \"parley-sparse\", \"version\": 1, \"sentence\": {\"features\": "
                  "[\"w:a\"], \"idf\": [0.5]}, \"word\": {\"features\": []}}",
                  "IDF value 0 is not a number");
    expect_broken(broken,
                  "{\"format\": \"parley-sparse\", \"version\": 1, \"sentence\": {\"features\": "
                  "[\"w:a\"], \"idf\": [1]}, \"word\": {\"features\": []}}",
                  "but the model's config says");
    expect_broken(broken,
                  "{\"format\": \"parley-sparse\", \"version\": 1, \"sentence\": {\"features\": "
                  "[], \"idf\": []}, \"word\": {\"features\": []}, \"regexes\": {\"r\": "
                  "[\"a(\"]}}",
                  "regex \"r\", pattern 1");

    /* Turned off again: the plain model back, and a stale sparse.json removed on save. */
    CHECK(train_sparse_setup(&m, ds, 0, 0) == PARLEY_OK && !m->sparse && !m->cfg.sparse_sent,
          "off: %s", parley_errmsg());
    CHECK(run_texts(m, &zero) == PARLEY_OK && !memcmp(&zero, &plain, sizeof zero),
          "without its sparse features the model is the plain one");
    CHECK(bert_model_save(m, dir) == PARLEY_OK && !file_exists(tmpdir_path("sparse/sparse.json")),
          "saving without sparse features removes the old sparse.json");
done:
    bert_model_free(m);
    ds_free(ds);
}

/* ---- allocation failures ------------------------------------------------------------- */

static parley_status learn_and_featurize(void *ctx)
{
    (void)ctx;
    sf_table t = { "topping", 2, TOPPINGS };
    const char *const size[] = { "(large|small)" };
    sf_table r = { "size", 1, size };
    sf_build_params p = { .n_lookups = 1, .lookups = &t, .n_regexes = 1, .regexes = &r };
    sf_featurizer *f = NULL;
    sf_rows s = { 0 }, w = { 0 };
    parley_status st = sf_build(TRAIN, 3, &p, &f);
    if (st == PARLEY_OK)
        st = sf_featurize(f, TRAIN[0], strlen(TRAIN[0]), &s, &w, NULL);
    sf_rows_free(&s);
    sf_rows_free(&w);
    sf_free(f);
    return st;
}

static parley_status load_free(void *dir)
{
    bert_model *m = NULL;
    parley_status st = bert_model_load(dir, &m);
    if (st == PARLEY_OK)
        st = bert_model_save(m, tmpdir_path("resaved"));
    bert_model_free(m);
    return st;
}

static void test_alloc_failures(void)
{
    long points = fault_sweep("learn and featurize", learn_and_featurize, NULL);
    CHECK(points > 20, "learn and featurize: %ld failure points", points);
    ds_dataset *ds = NULL;
    bert_model *m = new_model();
    char dir[512]; /* tmpdir_path's buffers are reused */
    snprintf(dir, sizeof dir, "%s", tmpdir_path("faults"));
    if (m && ds_load_rasa_string("nlu.yaml", NLU_YAML, sizeof NLU_YAML - 1, &ds) == PARLEY_OK &&
        train_sparse_setup(&m, ds, 1, train_word_norm_by_kind(ds->n_examples)) == PARLEY_OK &&
        bert_model_save(m, dir) == PARLEY_OK) {
        points = fault_sweep("load and save", load_free, dir);
        CHECK(points > 20, "load and save: %ld failure points", points);
    } else {
        CHECK(0, "setup: %s", parley_errmsg());
    }
    bert_model_free(m);
    ds_free(ds);
}

int main(void)
{
    tmpdir_make("sparse");
    test_features();
    test_word_norm_by_kind();
    test_lookup_slips();
    test_regexes();
    test_tfidf();
    test_model_files();
    test_alloc_failures();
    tmpdir_remove();
    return check_done();
}
