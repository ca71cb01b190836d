/* test_tokenizer_api.c — the public tokenizer (parley_tokenizer in parley/nlu.h).
 *
 * On tests/nlu/vocab_small.txt: pieces, ids, words and byte ranges of a few texts written
 * out by hand; the same answer as the internal wp_tokenize on tricky texts (accents,
 * CJK, control characters, NUL bytes, empty words); results that outlive their tokenizer;
 * errors (invalid UTF-8, a missing file, NULL arguments) that leave *out NULL; and every
 * allocation failure of open + encode + close.
 */
#include <string.h>

#include "nlu/text/tokenizer.h"
#include "parley/nlu.h"
#include "tests/check.h"
#include "tests/fault.h"

static const char *vocab_path;

typedef struct want {
    const char *piece;
    int word;
    size_t start, end;
} want;

static void expect_pieces(const parley_tokenizer *t, const char *text, int n_words, const want *w,
                          int n)
{
    parley_tokens *r = NULL;
    parley_status st = parley_tokenizer_encode(t, text, strlen(text), &r);
    CHECK(st == PARLEY_OK, "'%s': %s", text, parley_errmsg());
    if (!r)
        return;
    CHECK(r->n_tokens == n && r->n_words == n_words, "'%s': %d pieces, %d words", text, r->n_tokens,
          r->n_words);
    for (int i = 0; i < n && i < r->n_tokens; i++) {
        const parley_token *k = &r->tokens[i];
        CHECK(!strcmp(k->piece, w[i].piece) && k->word == w[i].word && k->start == w[i].start &&
                      k->end == w[i].end,
              "'%s' piece %d: '%s' word %d [%zu, %zu)", text, i, k->piece, k->word, k->start,
              k->end);
    }
    parley_tokens_free(r);
}

static void test_by_hand(const parley_tokenizer *t)
{
    expect_pieces(t, "Hello, world!", 2,
                  (want[]){ { "hello", 0, 0, 5 },
                            { ",", 0, 5, 6 },
                            { "world", 1, 7, 12 },
                            { "!", 1, 12, 13 } },
                  4);
    expect_pieces(t, "  unaffable  zzz", 2,
                  (want[]){ { "un", 0, 2, 4 },
                            { "##aff", 0, 4, 7 },
                            { "##able", 0, 7, 11 },
                            { "[UNK]", 1, 13, 16 } },
                  4);
    expect_pieces(t, "Cafe\xcc\x81", 1, (want[]){ { "cafe", 0, 0, 6 } }, 1);
    expect_pieces(
            t, "[CLS]", 1,
            (want[]){ { "[", 0, 0, 1 }, { "cl", 0, 1, 3 }, { "##s", 0, 3, 4 }, { "]", 0, 4, 5 } },
            4);
    expect_pieces(t, "", 0, NULL, 0);

    /* ids are the lines of vocab.txt; word ranges are the whitespace-separated words. */
    parley_tokens *r = NULL;
    const char *text = "hello \x01 world";
    CHECK(parley_tokenizer_encode(t, text, strlen(text), &r) == PARLEY_OK, "%s", parley_errmsg());
    if (r) {
        CHECK(r->n_tokens == 2 && r->tokens[0].id == 5 && r->tokens[1].id == 6, "ids");
        CHECK(r->n_words == 3 && r->word_start[1] == 6 && r->word_end[1] == 7 &&
                      r->word_start[2] == 8 && r->word_end[2] == 13 && r->tokens[1].word == 2,
              "a word of a control character has no piece but counts");
        parley_tokens_free(r);
    }
    CHECK(parley_tokenizer_encode(t, NULL, 0, &r) == PARLEY_OK && r && r->n_tokens == 0 &&
                  r->n_words == 0,
          "NULL text of length 0 is empty");
    parley_tokens_free(r);
}

/* The public result says what wp_tokenize says, piece for piece. */
static void test_same_as_internal(const parley_tokenizer *t)
{
    static const struct {
        const char *s;
        size_t len;
    } texts[] = {
        { "NA\xc3\x8fVE caf\xc3\xa9 \xc2\xbfQu\xc3\xa9?", 0 },
        { "a\xe4\xb8\xad"
          "b \xed\x95\x9c \xce\x9f\xce\x94\xce\x9f\xce\xa3",
          0 },
        { "it's \t a\xe2\x80\xa8 b", 0 },
        { "hello\0world x", 13 }, /* a NUL byte is a removed control character */
        { "``x``", 0 },
    };
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        const char *s = texts[k].s;
        size_t len = texts[k].len ? texts[k].len : strlen(s);
        wp_tokens w;
        parley_tokens *r = NULL;
        if (wp_tokenize(t->vocab, s, len, &w) != PARLEY_OK ||
            parley_tokenizer_encode(t, s, len, &r) != PARLEY_OK) {
            CHECK(0, "text %zu: %s", k, parley_errmsg());
            wp_tokens_free(&w);
            continue;
        }
        int same = r->n_tokens == w.n_pieces && r->n_words == w.n_words;
        for (int i = 0; same && i < w.n_pieces; i++) {
            const wp_piece *p = &w.pieces[i];
            const parley_token *q = &r->tokens[i];
            same = q->id == p->id && q->word == p->word && q->start == p->start &&
                   q->end == p->end && !strcmp(q->piece, wp_vocab_token(t->vocab, p->id));
        }
        for (int i = 0; same && i < w.n_words; i++)
            same = r->word_start[i] == w.word_start[i] && r->word_end[i] == w.word_end[i];
        CHECK(same, "text %zu: the public result differs from wp_tokenize", k);
        wp_tokens_free(&w);
        parley_tokens_free(r);
    }
}

static void test_errors(parley_tokenizer *t)
{
    parley_tokens *r = (parley_tokens *)&r;
    CHECK(parley_tokenizer_encode(t, "ok \xff", 4, &r) == PARLEY_ERR_UTF8 && r == NULL &&
                  strstr(parley_errmsg(), "byte 3"),
          "invalid UTF-8: %s", parley_errmsg());
    r = (parley_tokens *)&r;
    CHECK(parley_tokenizer_encode(NULL, "x", 1, &r) == PARLEY_ERR_INVALID_ARG && r == NULL,
          "NULL tokenizer");
    CHECK(parley_tokenizer_encode(t, NULL, 3, &r) == PARLEY_ERR_INVALID_ARG && r == NULL,
          "NULL text with a length");
    CHECK(parley_tokenizer_encode(t, "x", 1, NULL) == PARLEY_ERR_INVALID_ARG, "NULL out");
    parley_tokenizer *u = (parley_tokenizer *)&u;
    CHECK(parley_tokenizer_open("/nonexistent/vocab.txt", &u) != PARLEY_OK && u == NULL &&
                  strstr(parley_errmsg(), "/nonexistent/vocab.txt"),
          "missing file: %s", parley_errmsg());
    CHECK(parley_tokenizer_open(NULL, &u) == PARLEY_ERR_INVALID_ARG && u == NULL, "NULL path");
    parley_tokenizer_close(NULL);
    parley_tokens_free(NULL);
}

/* A result outlives its tokenizer (ASan would see a read of freed memory). */
static void test_outlives(void)
{
    parley_tokenizer *t;
    parley_tokens *r = NULL;
    if (parley_tokenizer_open(vocab_path, &t) != PARLEY_OK)
        return;
    CHECK(parley_tokenizer_encode(t, "hello world", 11, &r) == PARLEY_OK, "encode");
    parley_tokenizer_close(t);
    CHECK(r && r->n_tokens == 2 && !strcmp(r->tokens[1].piece, "world"), "after close");
    parley_tokens_free(r);
}

static parley_status open_encode_close(void *ctx)
{
    (void)ctx;
    parley_tokenizer *t;
    parley_tokens *r = NULL;
    parley_status st = parley_tokenizer_open(vocab_path, &t);
    if (st != PARLEY_OK)
        return st;
    st = parley_tokenizer_encode(t, "Hello, unaffable world!", 23, &r);
    parley_tokens_free(r);
    parley_tokenizer_close(t);
    return st;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_tokenizer_api tests/nlu/vocab_small.txt\n");
        return 2;
    }
    vocab_path = argv[1];
    parley_tokenizer *t;
    if (parley_tokenizer_open(vocab_path, &t) != PARLEY_OK) {
        fprintf(stderr, "opening %s: %s\n", vocab_path, parley_errmsg());
        return 1;
    }
    test_by_hand(t);
    test_same_as_internal(t);
    test_errors(t);
    parley_tokenizer_close(t);
    test_outlives();
    long points = fault_sweep("tokenizer open + encode", open_encode_close, NULL);
    CHECK(points > 5, "%ld allocation failure points", points);
    return check_done();
}
