/* test_nlu.c — the public parley_nlu API on small random models written by the test.
 *
 * What the model predicts is arbitrary here (random weights); the tests check what the API
 * promises whatever the weights: word and tag bookkeeping, byte ranges, BIO repair and value
 * trimming (on models whose slot head is forced), batch == single, threads == sequential,
 * truncation, bad input, and clean failure of every allocation.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parley/parley.h"
#include "nlu/decode.h"
#include "nlu/model/model.h"
#include "parley_config.h"
#include "nlu/cuda/cuda_bert.h"
#include "tests/check.h"
#include "tests/fault.h"

static const char *vocab_tokens[] = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]",  "[MASK]", "book",  "a",     "table",
    "for",   "two",   "in",    "boston", "new",    "york",  "?",     "!",
    ",",     ".",     "'",     "s",      "##s",    "pizza", "large", "please",
};
static char *intents[] = { "book_table", "order_pizza", "greet" };
static char *slots[] = { "O", "B-city", "I-city", "B-size", "I-size" };

/* Writes a random model with max_positions P into dir; `force_tag` >= 0 makes that slot tag
 * win on every token by zeroing the slot weights and raising its bias. */
static void write_model(const char *dir, int P, int force_tag)
{
    wp_vocab *v;
    int nv = (int)(sizeof vocab_tokens / sizeof *vocab_tokens);
    if (wp_vocab_from_tokens(vocab_tokens, nv, &v) != PARLEY_OK) {
        fprintf(stderr, "vocab: %s\n", parley_errmsg());
        exit(1);
    }
    bert_config c = { .vocab_size = nv,
                      .hidden = 16,
                      .layers = 2,
                      .heads = 2,
                      .intermediate = 32,
                      .max_positions = P,
                      .type_vocab = 2,
                      .ln_eps = 1e-12f,
                      .n_intents = 3,
                      .intent_labels = intents,
                      .n_slots = 5,
                      .slot_labels = slots };
    bert_model *m;
    if (bert_model_alloc(&c, v, &m) != PARLEY_OK) {
        fprintf(stderr, "alloc: %s\n", parley_errmsg());
        exit(1);
    }
    bert_model_init_random(m, 7);
    if (force_tag >= 0) {
        memset(m->w.slot_w, 0, sizeof(float) * 5 * 16);
        for (int t = 0; t < 5; t++)
            m->w.slot_b[t] = t == force_tag ? 10.0f : 0.0f;
    }
    if (bert_model_save(m, dir) != PARLEY_OK) {
        fprintf(stderr, "save: %s\n", parley_errmsg());
        exit(1);
    }
    bert_model_free(m);
}

static parley_nlu *open_model(const char *dir)
{
    parley_nlu *nlu = NULL;
    parley_status st = parley_nlu_open(dir, NULL, &nlu);
    CHECK(st == PARLEY_OK, "open %s: %s", dir, parley_errmsg());
    return nlu;
}

static void test_bookkeeping(parley_nlu *nlu)
{
    const char *text = "  Book a table\tfor two in New York? ";
    parley_nlu_result *r;
    CHECK(parley_nlu_parse(nlu, text, &r) == PARLEY_OK, "parse: %s", parley_errmsg());
    if (!r)
        return;
    CHECK(strcmp(r->text, text) == 0, "text copied");
    CHECK(r->n_words == 8, "8 words, got %d", r->n_words);
    static const char *words[] = { "Book", "a", "table", "for", "two", "in", "New", "York?" };
    for (int w = 0; w < r->n_words && w < 8; w++) {
        size_t n = r->word_end[w] - r->word_start[w];
        CHECK(n == strlen(words[w]) && !memcmp(text + r->word_start[w], words[w], n), "word %d", w);
        CHECK(r->tags[w] && (!strcmp(r->tags[w], "O") || !strncmp(r->tags[w], "B-", 2) ||
                             !strncmp(r->tags[w], "I-", 2)),
              "tag %d", w);
    }
    CHECK(r->n_pieces == 9 + 2, "pieces: %d", r->n_pieces); /* book a table for two in new york ? */
    CHECK(r->n_top == 3 && r->intent == r->top[0].label && r->confidence == r->top[0].prob, "top");
    float sum = 0;
    for (int k = 0; k < r->n_top; k++) {
        sum += r->top[k].prob;
        CHECK(k == 0 || r->top[k].prob <= r->top[k - 1].prob, "top sorted");
    }
    CHECK(fabsf(sum - 1.0f) < 1e-5f, "probabilities sum to 1: %f", sum);
    CHECK(!r->truncated, "not truncated");
    parley_nlu_result_free(r);
}

/* A hesitation is not read: the rest parses exactly as the text without it, and its word is
 * tagged O (the vocabulary has no "um", so were it read it would be an [UNK] piece). */
static void test_fillers(parley_nlu *nlu)
{
    parley_nlu_result *with = NULL, *without = NULL;
    CHECK(parley_nlu_parse(nlu, "book a um table for two , uh in boston", &with) == PARLEY_OK &&
                  parley_nlu_parse(nlu, "book a table for two , in boston", &without) == PARLEY_OK,
          "parse: %s", parley_errmsg());
    if (with && without) {
        CHECK(with->n_words == 10 && without->n_words == 8, "words %d %d", with->n_words,
              without->n_words);
        CHECK(with->n_pieces == without->n_pieces, "pieces %d %d", with->n_pieces,
              without->n_pieces);
        CHECK(!strcmp(with->intent, without->intent) && with->confidence == without->confidence,
              "intent %s %.6f against %s %.6f", with->intent, with->confidence, without->intent,
              without->confidence);
        static const int from[] = { 0, 1, 3, 4, 5, 6, 8, 9 }; /* with's word of each word */
        for (int w = 0; w < 8 && w < without->n_words; w++)
            CHECK(!strcmp(with->tags[from[w]], without->tags[w]), "word %d: %s against %s", w,
                  with->tags[from[w]], without->tags[w]);
        CHECK(!strcmp(with->tags[2], "O") && !strcmp(with->tags[7], "O"), "hesitations O");
    }
    parley_nlu_result_free(with);
    parley_nlu_result_free(without);
}

/* The shape, and the model's own tokenizer against one opened from its vocab.txt. */
static void test_info_and_tokenizer(parley_nlu *nlu, const char *dir)
{
    parley_nlu_info in;
    CHECK(parley_nlu_get_info(nlu, &in) == PARLEY_OK, "info: %s", parley_errmsg());
    const size_t V = 24, H = 16, L = 2, I = 32, P = 64, TT = 2, NI = 3, NS = 5;
    size_t layer = 3 * H * H + 3 * H + H * H + H + 2 * H + I * H + I + H * I + H + 2 * H;
    size_t params = (V + P + TT) * H + 2 * H + L * layer + H * H + H + NI * (H + 1) + NS * (H + 1);
    CHECK(in.layers == 2 && in.hidden == 16 && in.heads == 2 && in.intermediate == 32 &&
                  in.max_positions == 64 && in.type_vocab == 2 && in.vocab_size == 24 &&
                  in.n_intents == 3 && in.n_slot_tags == 5,
          "info: shape");
    CHECK(in.n_params == params, "info: %zu parameters, want %zu", in.n_params, params);
    CHECK(parley_nlu_get_info(NULL, &in) == PARLEY_ERR_INVALID_ARG &&
                  parley_nlu_get_info(nlu, NULL) == PARLEY_ERR_INVALID_ARG,
          "info: NULL arguments");

    char path[512];
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    parley_tokenizer *own = NULL;
    parley_tokens *a = NULL, *b = NULL;
    parley_nlu_result *r = NULL;
    const char *text = "Book a table for two in New York?";
    CHECK(parley_tokenizer_open(path, &own) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(parley_nlu_tokenizer(nlu) && parley_nlu_tokenizer(NULL) == NULL, "the model's tokenizer");
    if (own &&
        parley_tokenizer_encode(parley_nlu_tokenizer(nlu), text, strlen(text), &a) == PARLEY_OK &&
        parley_tokenizer_encode(own, text, strlen(text), &b) == PARLEY_OK &&
        parley_nlu_parse(nlu, text, &r) == PARLEY_OK) {
        int same = a->n_tokens == b->n_tokens && a->n_words == b->n_words;
        for (int i = 0; same && i < a->n_tokens; i++)
            same = a->tokens[i].id == b->tokens[i].id &&
                   !strcmp(a->tokens[i].piece, b->tokens[i].piece);
        CHECK(same && a->n_tokens == 9, "the same pieces from both tokenizers (%d)", a->n_tokens);
        CHECK(r->n_pieces == a->n_tokens + 2 && r->n_words == a->n_words,
              "the parse read those pieces: %d, %d", r->n_pieces, a->n_tokens);
    } else {
        CHECK(0, "tokenizing: %s", parley_errmsg());
    }
    parley_tokens_free(a);
    parley_tokens_free(b);
    parley_nlu_result_free(r);
    parley_tokenizer_close(own);
}

static void test_forced_tags(const char *dir_b, const char *dir_i)
{
    const char *text = "book boston? please";
    parley_nlu *nlu = open_model(dir_b); /* every word B-city: one span per word */
    parley_nlu_result *r = NULL;
    if (nlu && parley_nlu_parse(nlu, text, &r) == PARLEY_OK) {
        CHECK(r->n_slots == 3, "3 spans, got %d", r->n_slots);
        if (r->n_slots == 3) {
            CHECK(!strcmp(r->slots[1].slot, "city") && !strcmp(r->slots[1].value, "boston"),
                  "trailing ? trimmed: '%s'", r->slots[1].value);
            CHECK(r->slots[1].start == 5 && r->slots[1].end == 11, "range %zu-%zu",
                  r->slots[1].start, r->slots[1].end);
            CHECK(r->slots[1].word_start == 1 && r->slots[1].word_end == 2, "word range");
        }
        CHECK(!strcmp(r->tags[0], "B-city") && !strcmp(r->tags[2], "B-city"), "B tags");
        parley_nlu_result_free(r);
    }
    parley_nlu_close(nlu);

    nlu = open_model(dir_i); /* every word I-city: repaired into one span */
    r = NULL;
    if (nlu && parley_nlu_parse(nlu, "\"new york\" ?", &r) == PARLEY_OK) {
        CHECK(r->n_slots == 1, "one span, got %d", r->n_slots);
        if (r->n_slots == 1) {
            CHECK(!strcmp(r->slots[0].value, "new york"), "quotes and ? trimmed: '%s'",
                  r->slots[0].value);
            CHECK(r->slots[0].word_start == 0 && r->slots[0].word_end == 3, "span over 3 words");
        }
        CHECK(r->n_words == 3 && !strcmp(r->tags[0], "B-city") && !strcmp(r->tags[1], "I-city") &&
                      !strcmp(r->tags[2], "I-city"),
              "repaired tags");
        parley_nlu_result_free(r);
    }
    parley_nlu_close(nlu);
}

static const char *batch_texts[] = {
    "book a table",
    "",
    "large pizza please !",
    "for two in boston",
    "new york new york new york",
    "a",
    "pizzas , please ... two",
    "unknownword here",
};
enum { NB = sizeof batch_texts / sizeof *batch_texts };

static int same_result(const parley_nlu_result *a, const parley_nlu_result *b)
{
    if (strcmp(a->intent, b->intent) || fabsf(a->confidence - b->confidence) > 1e-5f ||
        a->n_words != b->n_words || a->n_slots != b->n_slots)
        return 0;
    for (int w = 0; w < a->n_words; w++)
        if (strcmp(a->tags[w], b->tags[w]))
            return 0;
    return 1;
}

static void test_batch_equals_single(parley_nlu *nlu, parley_nlu_result **single)
{
    parley_nlu_result *batch[NB];
    CHECK(parley_nlu_parse_batch(nlu, batch_texts, NB, batch) == PARLEY_OK, "batch: %s",
          parley_errmsg());
    for (int i = 0; i < NB; i++) {
        CHECK(parley_nlu_parse(nlu, batch_texts[i], &single[i]) == PARLEY_OK, "single %d", i);
        CHECK(same_result(batch[i], single[i]), "batch result %d differs from single parse", i);
        parley_nlu_result_free(batch[i]);
    }
}

typedef struct worker {
    parley_nlu *nlu;
    parley_nlu_result **expect;
    int mismatches;
} worker;

static void *worker_main(void *arg)
{
    worker *wk = arg;
    for (int round = 0; round < 20; round++)
        for (int i = 0; i < NB; i++) {
            parley_nlu_result *r;
            if (parley_nlu_parse(wk->nlu, batch_texts[(i + round) % NB], &r) != PARLEY_OK) {
                wk->mismatches++;
                continue;
            }
            wk->mismatches += !same_result(r, wk->expect[(i + round) % NB]);
            parley_nlu_result_free(r);
        }
    return NULL;
}

static void test_threads(parley_nlu *nlu, parley_nlu_result **expect)
{
    pthread_t t[4];
    worker wk[4];
    for (int i = 0; i < 4; i++) {
        wk[i] = (worker){ nlu, expect, 0 };
        pthread_create(&t[i], NULL, worker_main, &wk[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK(wk[i].mismatches == 0, "thread %d saw %d different results", i, wk[i].mismatches);
    }
}

static void test_bad_input(parley_nlu *nlu, const char *dir)
{
    parley_nlu_result *r = (parley_nlu_result *)1;
    CHECK(parley_nlu_parse(nlu, "ok \xff bad", &r) == PARLEY_ERR_UTF8 && r == NULL,
          "invalid UTF-8");
    CHECK(strstr(parley_errmsg(), "byte 3") != NULL, "errmsg names the byte: %s", parley_errmsg());
    const char *texts[] = { "fine", "bad \xc3" };
    parley_nlu_result *out[2] = { (void *)1, (void *)1 };
    CHECK(parley_nlu_parse_batch(nlu, texts, 2, out) == PARLEY_ERR_UTF8 && !out[0] && !out[1],
          "one bad text fails the batch and returns nothing");
    CHECK(strstr(parley_errmsg(), "text 1") != NULL, "errmsg names the index: %s", parley_errmsg());
    CHECK(parley_nlu_parse(nlu, NULL, &r) == PARLEY_ERR_INVALID_ARG, "NULL text");
    CHECK(parley_nlu_parse(NULL, "x", &r) == PARLEY_ERR_INVALID_ARG, "NULL handle");
    parley_nlu *bad = (parley_nlu *)1;
    CHECK(parley_nlu_open("/nonexistent/model", NULL, &bad) != PARLEY_OK && bad == NULL,
          "missing dir");
    CHECK(strstr(parley_errmsg(), "/nonexistent/model") != NULL, "errmsg names the dir: %s",
          parley_errmsg());
    parley_nlu_params p = parley_nlu_params_default();
    p.device = "tpu";
    CHECK(parley_nlu_open(dir, &p, &bad) == PARLEY_ERR_INVALID_ARG, "unknown device");
    p.device = "cuda:0";
    parley_status st = parley_nlu_open(dir, &p, &bad);
    /* without CUDA in the build: not built; with it but no GPU here: a device error naming
     * the device; with a GPU: open */
    CHECK(PARLEY_HAVE_CUDA ? (cuda_device_count() ? st == PARLEY_OK : st == PARLEY_ERR_DEVICE)
                           : st == PARLEY_ERR_NOT_BUILT,
          "cuda device: %s: %s", parley_status_str(st), parley_errmsg());
    if (st == PARLEY_OK)
        parley_nlu_close(bad);
    else
        CHECK(strstr(parley_errmsg(), "cuda:0") != NULL, "errmsg names the device: %s",
              parley_errmsg());
    p.device = "auto"; /* falls back to the CPU when no GPU works */
    CHECK(parley_nlu_open(dir, &p, &bad) == PARLEY_OK, "auto: %s", parley_errmsg());
    parley_nlu_close(bad);
    p.device = "cpu";
    p.precision = "fp8";
    CHECK(parley_nlu_open(dir, &p, &bad) == PARLEY_ERR_INVALID_ARG &&
                  strstr(parley_errmsg(), "fp8"),
          "bad precision: %s", parley_errmsg());
    parley_nlu_close(NULL);
    parley_nlu_result_free(NULL);
}

static void test_truncation(const char *dir)
{
    parley_nlu *nlu = open_model(dir); /* P = 8: 6 pieces fit */
    parley_nlu_result *r;
    if (nlu && parley_nlu_parse(nlu, "a a a a a a a a a a", &r) == PARLEY_OK) {
        CHECK(r->truncated && r->n_pieces == 8 && r->n_words == 10, "truncated: %d %d",
              r->truncated, r->n_pieces);
        for (int w = 6; w < 10; w++)
            CHECK(!strcmp(r->tags[w], "O"), "word %d past the end is O", w);
        parley_nlu_result_free(r);
    }
    parley_nlu_close(nlu);
}

/* Open + batch parse + free under every allocation failure (tests/fault.h). */
static parley_status open_parse_close(void *dir)
{
    parley_nlu *nlu = NULL;
    parley_nlu_result *r[3] = { 0 };
    const char *texts[] = { "book a table", "large pizza", "in boston ?" };
    parley_status st = parley_nlu_open(dir, NULL, &nlu);
    if (st == PARLEY_OK)
        st = parley_nlu_parse_batch(nlu, texts, 3, r);
    for (int i = 0; i < 3; i++)
        parley_nlu_result_free(r[i]);
    parley_nlu_close(nlu);
    return st;
}

int main(void)
{
    char base[] = "/tmp/parley-test-nlu-XXXXXX";
    if (!mkdtemp(base))
        return 1;
    char dir[256], dir_b[256], dir_i[256], dir_short[256];
    snprintf(dir, sizeof dir, "%s/random", base);
    snprintf(dir_b, sizeof dir_b, "%s/b_city", base);
    snprintf(dir_i, sizeof dir_i, "%s/i_city", base);
    snprintf(dir_short, sizeof dir_short, "%s/short", base);
    write_model(dir, 64, -1);
    write_model(dir_b, 64, 1);
    write_model(dir_i, 64, 2);
    write_model(dir_short, 8, -1);

    parley_nlu *nlu = open_model(dir);
    if (nlu) {
        parley_nlu_result *single[NB] = { 0 };
        test_bookkeeping(nlu);
        test_info_and_tokenizer(nlu, dir);
        test_fillers(nlu);
        test_batch_equals_single(nlu, single);
        test_threads(nlu, single);
        for (int i = 0; i < NB; i++)
            parley_nlu_result_free(single[i]);
        test_bad_input(nlu, dir);
        parley_nlu_close(nlu);
    }
    test_forced_tags(dir_b, dir_i);
    test_truncation(dir_short);
    long points = fault_sweep("open + parse", open_parse_close, dir);
    CHECK(points > 50, "%ld allocation failure points", points);

    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", base);
    return check_done();
}
