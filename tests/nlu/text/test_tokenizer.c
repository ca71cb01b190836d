/* test_tokenizer.c — the WordPiece vocabulary and tokenizer (nlu/text/vocab.c,
 * nlu/text/tokenizer.c).
 *
 * Hand cases with exact pieces and byte offsets on tests/nlu/vocab_small.txt (argv[1]),
 * vocabulary errors naming path:line, invalid UTF-8 naming the byte, random bytes checked
 * against utf8proc's validator and the output invariants, and allocation failure injection
 * (the Nth allocation fails, N = 1, 2, ... until the call succeeds). The comparison with
 * the Python reference lives in test_tokenizer_ref.py.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <utf8proc.h>

#include "nlu/text/fillers.h"
#include "nlu/text/tokenizer.h"
#include "nlu/text/vocab.h"
#include "tests/check.h"
#include "tests/fault.h"

static wp_vocab *V;

typedef struct want {
    const char *tok;
    size_t start, end;
    int word;
} want;

static void expect_at(int line, const char *text, size_t len, int n_words, const want *w, int n)
{
    wp_tokens t;
    parley_status st = wp_tokenize(V, text, len, &t);
    CHECK(st == PARLEY_OK, "line %d: status %d: %s", line, st, parley_errmsg());
    CHECK(t.n_words == n_words, "line %d: %d words, want %d", line, t.n_words, n_words);
    CHECK(t.n_pieces == n, "line %d: %d pieces, want %d", line, t.n_pieces, n);
    for (int i = 0; i < n && i < t.n_pieces; i++) {
        const wp_piece *p = &t.pieces[i];
        const char *tok = wp_vocab_token(V, p->id);
        CHECK(tok && !strcmp(tok, w[i].tok) && p->start == w[i].start && p->end == w[i].end &&
                      p->word == w[i].word,
              "line %d: piece %d is %s [%zu,%zu) word %d, want %s [%zu,%zu) word %d", line, i,
              tok ? tok : "?", p->start, p->end, p->word, w[i].tok, w[i].start, w[i].end,
              w[i].word);
    }
    wp_tokens_free(&t);
}

/* EXPECT("text", n_words, {"tok", start, end, word}, ...) for a literal text (NULs allowed). */
#define EXPECT(text, n_words, ...)                                                               \
    do {                                                                                         \
        const want w_[] = { __VA_ARGS__ };                                                       \
        expect_at(__LINE__, text, sizeof(text) - 1, n_words, w_, (int)(sizeof w_ / sizeof *w_)); \
    } while (0)
#define EXPECT_NONE(text, n_words) expect_at(__LINE__, text, sizeof(text) - 1, n_words, NULL, 0)

static void test_vocab_basics(void)
{
    CHECK(wp_vocab_size(V) == 47, "size %d", wp_vocab_size(V));
    CHECK(wp_vocab_pad(V) == 0 && wp_vocab_unk(V) == 1 && wp_vocab_cls(V) == 2 &&
                  wp_vocab_sep(V) == 3 && wp_vocab_mask(V) == 4,
          "special ids");
    CHECK(!strcmp(wp_vocab_token(V, 4), "[MASK]"), "token 4");
    CHECK(wp_vocab_token(V, -1) == NULL && wp_vocab_token(V, 47) == NULL, "out-of-range ids");
    CHECK(wp_vocab_find(V, "hello", 5) == 5, "find hello");
    CHECK(wp_vocab_find(V, "hello!", 5) == 5, "find uses the length, not the NUL");
    CHECK(wp_vocab_find(V, "hell", 4) == -1, "no prefix match");
    CHECK(wp_vocab_find(V, "##aff", 5) == 8 && wp_vocab_find_piece(V, 1, "aff", 3) == 8,
          "continuation");
    CHECK(wp_vocab_find_piece(V, 1, "hello", 5) == -1 && wp_vocab_find_piece(V, 0, "aff", 3) == -1,
          "continuation and word-initial are distinct");
    CHECK(wp_vocab_find(V, "##", 2) == 46 && wp_vocab_find_piece(V, 1, "", 0) == 46,
          "the token ##");
    CHECK(wp_vocab_find(V, "", 0) == -1, "empty string");
    CHECK(wp_vocab_max_len(V) == 8, "max_len %zu (οδοσ is 8 bytes)", wp_vocab_max_len(V));
}

static void test_pieces(void)
{
    EXPECT("Hello, world!", 2, { "hello", 0, 5, 0 }, { ",", 5, 6, 0 }, { "world", 7, 12, 1 },
           { "!", 12, 13, 1 });
    EXPECT("unaffable", 1, { "un", 0, 2, 0 }, { "##aff", 2, 5, 0 }, { "##able", 5, 9, 0 });
    EXPECT("play playing played plays", 4, { "play", 0, 4, 0 }, { "play", 5, 9, 1 },
           { "##ing", 9, 12, 1 }, { "play", 13, 17, 2 }, { "##ed", 17, 19, 2 },
           { "play", 20, 24, 3 }, { "##s", 24, 25, 3 });
    /* Accents: precomposed, decomposed (the mark joins the character before it), leading mark. */
    EXPECT("Caf\xc3\xa9", 1, { "cafe", 0, 5, 0 });
    EXPECT("Cafe\xcc\x81 x", 2, { "cafe", 0, 6, 0 }, { "x", 7, 8, 1 });
    EXPECT("\xcc\x81hello", 1, { "hello", 2, 7, 0 });
    EXPECT("NA\xc3\x8fVE", 1, { "naive", 0, 6, 0 });
    EXPECT("\xc2\xbfQu\xc3\xa9?", 1, { "\xc2\xbf", 0, 2, 0 }, { "que", 2, 6, 0 }, { "?", 6, 7, 0 });
    /* CJK ideographs stand alone, even inside a word; Hangul decomposes to jamo. */
    EXPECT("\xe4\xb8\xad\xe5\x9b\xbd\xe4\xba\xba", 1, { "\xe4\xb8\xad", 0, 3, 0 },
           { "\xe5\x9b\xbd", 3, 6, 0 }, { "\xe4\xba\xba", 6, 9, 0 });
    EXPECT("a\xe4\xb8\xad"
           "b",
           1, { "a", 0, 1, 0 }, { "\xe4\xb8\xad", 1, 4, 0 }, { "b", 4, 5, 0 });
    EXPECT("\xed\x95\x9c", 1, { "\xe1\x84\x92", 0, 3, 0 }, { "##\xe1\x85\xa1", 0, 3, 0 },
           { "##\xe1\x86\xab", 0, 3, 0 });
    /* Capital sigma lowers to σ, never the final ς (HF lowers one character at a time). */
    EXPECT("\xce\x9f\xce\x94\xce\x9f\xce\xa3", 1, { "\xce\xbf\xce\xb4\xce\xbf\xcf\x83", 0, 8, 0 });
    EXPECT("\xc4\xb0", 1, { "i", 0, 2, 0 });
    /* Typed special tokens are plain text. */
    EXPECT("[CLS] it's", 2, { "[", 0, 1, 0 }, { "cl", 1, 3, 0 }, { "##s", 3, 4, 0 },
           { "]", 4, 5, 0 }, { "it", 6, 8, 1 }, { "'", 8, 9, 1 }, { "s", 9, 10, 1 });
    /* [UNK]: no match, a partial match, per basic token (not per word), emoji. */
    EXPECT("xyzzy hello", 2, { "[UNK]", 0, 5, 0 }, { "hello", 6, 11, 1 });
    EXPECT("helloq", 1, { "[UNK]", 0, 6, 0 });
    EXPECT("hellox,hello", 1, { "[UNK]", 0, 6, 0 }, { ",", 6, 7, 0 }, { "hello", 7, 12, 0 });
    EXPECT("hi \xf0\x9f\x98\x80", 2, { "hi", 0, 2, 0 }, { "[UNK]", 3, 7, 1 });
    EXPECT("hi\xf0\x9f\x98\x80", 1, { "[UNK]", 0, 6, 0 });
    EXPECT("\xef\xbc\x81", 1, { "[UNK]", 0, 3, 0 });
    /* U+1FEF decomposes to '`', punctuation by BERT's ASCII rule though U+1FEF is Sk. */
    EXPECT("a\xe1\xbf\xaf"
           "b",
           1, { "a", 0, 1, 0 }, { "`", 1, 4, 0 }, { "b", 4, 5, 0 });
    EXPECT("!!", 1, { "!", 0, 1, 0 }, { "!", 1, 2, 0 });
    /* Removed characters join the character before them and never split words. */
    EXPECT("a\x01"
           "a",
           1, { "a", 0, 2, 0 }, { "##a", 2, 3, 0 });
    EXPECT("a\0a", 1, { "a", 0, 2, 0 }, { "##a", 2, 3, 0 });
    EXPECT("a\xe2\x80\x8d"
           "a",
           1, { "a", 0, 4, 0 }, { "##a", 4, 5, 0 });
    EXPECT("a\x0b"
           "b",
           1, { "[UNK]", 0, 3, 0 });
    EXPECT("\xef\xbb\xbfhello", 1, { "hello", 3, 8, 0 });
    EXPECT("\x01\x02 hello \x03", 3, { "hello", 3, 8, 1 });
    EXPECT_NONE("\xef\xbf\xbd", 1);
    EXPECT_NONE("\xcc\x81", 1);
    /* Whitespace: NBSP, U+2028, ideographic space, tabs and CR split words. */
    EXPECT("hello\xc2\xa0world", 2, { "hello", 0, 5, 0 }, { "world", 7, 12, 1 });
    EXPECT("a\xe2\x80\xa8"
           "b\xe3\x80\x80"
           "c\td\re",
           5, { "a", 0, 1, 0 }, { "b", 4, 5, 1 }, { "c", 8, 9, 2 }, { "[UNK]", 10, 11, 3 },
           { "[UNK]", 12, 13, 4 });
    EXPECT_NONE("", 0);
    EXPECT_NONE(" \t\r\n\xe3\x80\x80\xc2\xa0 ", 0);
}

static void test_words(void)
{
    const char *text = "  Hello,\t\x01 world!  ";
    wp_tokens t;
    CHECK(wp_tokenize(V, text, strlen(text), &t) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(t.n_words == 3, "words %d", t.n_words);
    if (t.n_words == 3) {
        CHECK(t.word_start[0] == 2 && t.word_end[0] == 8, "word 0 [%zu,%zu)", t.word_start[0],
              t.word_end[0]);
        CHECK(t.word_start[1] == 9 && t.word_end[1] == 10, "word 1 (a control) [%zu,%zu)",
              t.word_start[1], t.word_end[1]);
        CHECK(t.word_start[2] == 11 && t.word_end[2] == 17, "word 2 [%zu,%zu)", t.word_start[2],
              t.word_end[2]);
    }
    CHECK(t.n_pieces == 4 && t.pieces[2].word == 2, "the control word gives no pieces");
    wp_tokens_free(&t);
    wp_tokens_free(&t); /* zeroed: a second free is harmless */
    wp_tokens_free(NULL);
}

static void test_punct_pieces(void)
{
    static const struct {
        const char *text;
        int piece, punct;
    } cases[] = {
        { "Hello, world!", 0, 0 },
        { "Hello, world!", 1, 1 },
        { "Hello, world!", 3, 1 },
        { "\xc2\xbfQu\xc3\xa9?", 0, 1 },
        { "\xc2\xbfQu\xc3\xa9?", 1, 0 },
        { "a\xe1\xbf\xaf"
          "b",
          1, 1 },
        { "\xef\xbc\x81", 0, 1 },
        { "\xe4\xb8\xad", 0, 0 },
        { ",\xcc\x81", 0, 1 },
        { "hello", 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        wp_tokens t;
        CHECK(wp_tokenize(V, cases[i].text, strlen(cases[i].text), &t) == PARLEY_OK, "case %zu", i);
        CHECK(cases[i].piece < t.n_pieces &&
                      wp_is_punct_piece(cases[i].text, &t.pieces[cases[i].piece]) == cases[i].punct,
              "case %zu: punct piece %d of '%s'", i, cases[i].piece, cases[i].text);
        wp_tokens_free(&t);
    }
}

/* Checks a run of `count` pieces of one `unit` each, or one [UNK] over all of it. */
static void check_long(const char *unit, int count, int unk)
{
    size_t ul = strlen(unit);
    char *text = malloc(ul * (size_t)count + 1);
    for (int i = 0; i < count; i++)
        memcpy(text + ul * (size_t)i, unit, ul);
    wp_tokens t;
    CHECK(wp_tokenize(V, text, ul * (size_t)count, &t) == PARLEY_OK, "%s", parley_errmsg());
    if (unk) {
        CHECK(t.n_pieces == 1 && t.pieces[0].id == wp_vocab_unk(V) && t.pieces[0].start == 0 &&
                      t.pieces[0].end == ul * (size_t)count,
              "%d x '%s' gives one [UNK] over all, got %d pieces", count, unit, t.n_pieces);
    } else {
        int ok = t.n_pieces == count;
        for (int i = 0; ok && i < count; i++)
            ok = t.pieces[i].id == (i ? wp_vocab_find(V, "##a", 3) : wp_vocab_find(V, "a", 1)) &&
                 t.pieces[i].start == ul * (size_t)i && t.pieces[i].end == ul * (size_t)(i + 1);
        CHECK(ok, "%d x '%s' gives a ##a ##a ..., got %d pieces", count, unit, t.n_pieces);
    }
    wp_tokens_free(&t);
    free(text);
}

/* Hesitations: whole words only, case and the punctuation around them aside; their pieces
 * leave a tokenization, their words stay. */
static void test_fillers(void)
{
    static const char *yes[] = { "um", "Uh,", "hmm...", "UHM", "(erm)", "umm" };
    static const char *no[] = { "umbrella", "er", "mm", "oh", "", ",", "u-h", "hum" };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        CHECK(wp_is_filler(yes[i], strlen(yes[i])), "'%s' is a hesitation", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        CHECK(!wp_is_filler(no[i], strlen(no[i])), "'%s' is no hesitation", no[i]);
    const char *text = "um book uh, a table hmm";
    wp_tokens t;
    CHECK(wp_tokenize(V, text, strlen(text), &t) == PARLEY_OK, "%s", parley_errmsg());
    int before = t.n_pieces, dropped = wp_drop_fillers(text, &t);
    CHECK(t.n_words == 6, "words stay: %d", t.n_words);
    CHECK(dropped == before - 3 && t.n_pieces == 3, "dropped %d of %d", dropped, before);
    static const int word[] = { 1, 3, 4 };
    for (int i = 0; i < t.n_pieces && i < 3; i++)
        CHECK(t.pieces[i].word == word[i], "piece %d of word %d", i, t.pieces[i].word);
    wp_tokens_free(&t);
}

static void test_long_words(void)
{
    check_long("a", 1, 0);
    check_long("a", WP_MAX_WORD_CHARS, 0);
    check_long("a", WP_MAX_WORD_CHARS + 1, 1);
    check_long("a", 5000, 1);
    check_long("\xc3\xa1", WP_MAX_WORD_CHARS, 0); /* á: 2 bytes, 1 character after stripping */
    check_long("\xc3\xa1", WP_MAX_WORD_CHARS + 1, 1);
    check_long("a\xcc\x81", WP_MAX_WORD_CHARS, 0); /* combining marks are not counted */
    check_long("a\xcc\x81", WP_MAX_WORD_CHARS + 1, 1);
    check_long("a\x01", WP_MAX_WORD_CHARS, 0);
    /* The limit is per basic token: punctuation restarts the count. */
    char text[512];
    memset(text, 'a', 150);
    text[150] = ',';
    memset(text + 151, 'a', 3);
    wp_tokens t;
    CHECK(wp_tokenize(V, text, 154, &t) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(t.n_pieces == 5 && t.pieces[0].id == wp_vocab_unk(V) && t.pieces[0].end == 150 &&
                  t.pieces[1].start == 150 && t.pieces[4].end == 154,
          "150 a, then ',' and 'aaa': %d pieces", t.n_pieces);
    wp_tokens_free(&t);
}

static void test_invalid_utf8(void)
{
    static const struct {
        const char *text;
        size_t len, at;
    } cases[] = {
        { "\x80", 1, 0 }, /* stray continuation */
        { "ok \xbf", 4, 3 },
        { "\xc0\xaf", 2, 0 }, /* overlong '/' */
        { "abc\xc1\xbf", 5, 3 },
        { "\xe0\x80\xaf", 3, 0 },
        { "\xf0\x80\x80\xaf", 4, 0 },
        { "x\xed\xa0\x80y", 5, 1 }, /* surrogate U+D800 */
        { "\xed\xbf\xbf", 3, 0 },
        { "\xf4\x90\x80\x80", 4, 0 }, /* U+110000 */
        { "\xf5\x80\x80\x80", 4, 0 },
        { "\xf8\x88\x80\x80\x80", 5, 0 },
        { "\xff", 1, 0 },
        { "trunc \xe4\xb8", 8, 6 },      /* truncated at the end */
        { "trunc \xe4\xb8 mid", 12, 6 }, /* truncated inside */
        { "\xf0\x9f\x98", 3, 0 },
        { "\xe4\xb8\xad\xc3", 4, 3 },
        { "\xc3(", 2, 0 },
        { "fine \xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80 \x80", 16, 15 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        wp_tokens t;
        parley_status st = wp_tokenize(V, cases[i].text, cases[i].len, &t);
        char want[64];
        snprintf(want, sizeof want, "at byte %zu ", cases[i].at);
        CHECK(st == PARLEY_ERR_UTF8 && strstr(parley_errmsg(), want),
              "case %zu: status %d, '%s', want '%s'", i, st, parley_errmsg(), want);
        CHECK(!t.pieces && !t.word_start && !t.n_pieces && !t.n_words,
              "case %zu: output left empty", i);
    }
    wp_tokens t;
    CHECK(wp_tokenize(NULL, "x", 1, &t) == PARLEY_ERR_INVALID_ARG, "NULL vocabulary");
    CHECK(wp_tokenize(V, NULL, 1, &t) == PARLEY_ERR_INVALID_ARG, "NULL text");
    CHECK(wp_tokenize(V, NULL, 0, &t) == PARLEY_OK && t.n_pieces == 0, "NULL empty text");
    CHECK(wp_tokenize(V, "x", 1, NULL) == PARLEY_ERR_INVALID_ARG, "NULL out");
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

/* The first invalid byte by utf8proc's own validator, or -1. */
static long first_invalid(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        utf8proc_int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(len - i), &c);
        if (k < 1)
            return (long)i;
        i += (size_t)k;
    }
    return -1;
}

/* Random texts: raw bytes, or valid snippets with an occasional raw byte. Each must either
 * fail exactly where utf8proc says, or succeed with consistent pieces and words. */
static void test_random(void)
{
    static const char *const snippets[] = {
        "a",
        "hello",
        " ",
        "\t",
        ",",
        "\xc3\xa9",
        "e\xcc\x81",
        "\xe4\xb8\xad",
        "\xed\x95\x9c",
        "\xf0\x9f\x98\x80",
        "\x01",
        "\xc2\xa0",
        "\xe2\x80\xa8",
        "\xce\xa3",
        "##",
        "[UNK]",
        "\xef\xbc\x81",
        "un",
        "aff",
        "\xe1\xbf\xaf",
    };
    unsigned char buf[160];
    int valid = 0, invalid = 0;
    for (int iter = 0; iter < 20000; iter++) {
        size_t len = 0, target = rnd() % 120;
        int raw = iter % 2;
        while (len < target) {
            if (raw || rnd() % 40 == 0) {
                uint32_t r = rnd();
                buf[len++] = (unsigned char)(r % 3 == 0   ? 0x80 + (r >> 8) % 0x40
                                             : r % 3 == 1 ? 0xC0 + (r >> 8) % 0x38
                                                          : r >> 8);
            } else {
                const char *s = snippets[rnd() % (sizeof snippets / sizeof *snippets)];
                size_t n = strlen(s);
                if (len + n > sizeof buf)
                    break;
                memcpy(buf + len, s, n);
                len += n;
            }
        }
        long bad = first_invalid(buf, len);
        wp_tokens t;
        parley_status st = wp_tokenize(V, (const char *)buf, len, &t);
        if (bad >= 0) {
            char want[64];
            snprintf(want, sizeof want, "at byte %ld ", bad);
            CHECK(st == PARLEY_ERR_UTF8 && strstr(parley_errmsg(), want), "iter %d: %s, want %s",
                  iter, parley_errmsg(), want);
            invalid++;
            continue;
        }
        CHECK(st == PARLEY_OK, "iter %d: %s", iter, parley_errmsg());
        valid++;
        int ok = 1;
        for (int w = 0; w < t.n_words; w++)
            ok &= t.word_start[w] < t.word_end[w] && t.word_end[w] <= len &&
                  (w == 0 || t.word_end[w - 1] < t.word_start[w]);
        for (int p = 0; p < t.n_pieces; p++) {
            const wp_piece *pc = &t.pieces[p];
            ok &= pc->id >= 0 && pc->id < wp_vocab_size(V) && pc->word >= 0 && pc->word < t.n_words;
            ok &= ok && pc->start < pc->end && pc->start >= t.word_start[pc->word] &&
                  pc->end <= t.word_end[pc->word];
            ok &= p == 0 || (pc->word >= pc[-1].word && pc->start >= pc[-1].start);
        }
        CHECK(ok, "iter %d: inconsistent pieces or words", iter);
        wp_tokens_free(&t);
    }
    CHECK(valid > 5000 && invalid > 5000, "random mix: %d valid, %d invalid", valid, invalid);
}

/* The operations swept by test_alloc_failures (tests/fault.h); a failure leaves no output. */
static parley_status vocab_load_free(void *path)
{
    wp_vocab *v = NULL;
    parley_status st = wp_vocab_load(path, &v);
    CHECK(st == PARLEY_OK || v == NULL, "load, allocation %ld failing: vocabulary left",
          fault_fail_at);
    wp_vocab_free(v);
    return st;
}

static parley_status vocab_from_tokens_free(void *ctx)
{
    (void)ctx;
    const char *toks[] = { "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "x" };
    wp_vocab *v = NULL;
    parley_status st = wp_vocab_from_tokens(toks, 6, &v);
    CHECK(st == PARLEY_OK || v == NULL, "from_tokens, allocation %ld failing: vocabulary left",
          fault_fail_at);
    wp_vocab_free(v);
    return st;
}

/* Enough pieces that the pieces array has to grow several times. */
static parley_status tokenize_free(void *ctx)
{
    (void)ctx;
    char text[2048];
    size_t len = 0;
    while (len + 12 < sizeof text)
        len += (size_t)sprintf(text + len, "a,b.Hello! ");
    wp_tokens t;
    parley_status st = wp_tokenize(V, text, len, &t);
    if (st == PARLEY_OK)
        CHECK(t.n_pieces == (int)(len / 11) * 6, "pieces %d", t.n_pieces);
    else
        CHECK(!t.pieces && !t.word_start && !t.n_pieces && !t.n_words,
              "tokenize, allocation %ld failing: output not left empty", fault_fail_at);
    wp_tokens_free(&t);
    return st;
}

static void test_alloc_failures(const char *vocab_path)
{
    long points = fault_sweep("vocab load", vocab_load_free, (void *)vocab_path);
    CHECK(points > 2, "vocab load: %ld allocation failure points", points);
    points = fault_sweep("vocab from tokens", vocab_from_tokens_free, NULL);
    CHECK(points > 2, "vocab from tokens: %ld allocation failure points", points);
    points = fault_sweep("tokenize", tokenize_free, NULL);
    CHECK(points > 3, "tokenize: %ld allocation failure points (the array should grow)", points);
}

/* Writes `data` to dir/name and returns the path (static buffer). */
static const char *write_file(const char *dir, const char *name, const char *data, size_t len)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, len, f);
    fclose(f);
    return path;
}

#define SPECIALS "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n"
#define LIT(s)   s, sizeof(s) - 1 /* a literal and its length, NULs included */

static void test_vocab_errors(void)
{
    char dir[] = "/tmp/parley-test-tokenizer-XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    static const struct {
        const char *data;
        size_t len;
        parley_status st;
        const char *msg; /* expected after "path" */
    } cases[] = {
        { LIT(""), PARLEY_ERR_FORMAT, ": empty file" },
        { LIT("[PAD]\n\n[UNK]\n"), PARLEY_ERR_FORMAT, ":2: empty token" },
        { LIT(SPECIALS "x\ny\nx\n"), PARLEY_ERR_FORMAT,
          ":8: duplicate token 'x' (first as line 6)" },
        { LIT(SPECIALS "ok\nab\xff\n"), PARLEY_ERR_FORMAT,
          ":7: invalid UTF-8 at byte 2 of the token" },
        { LIT(SPECIALS "a\0b\n"), PARLEY_ERR_FORMAT, ":6: byte 1 of the token is NUL" },
        { LIT(SPECIALS "ab\rc\n"), PARLEY_ERR_FORMAT, ":6: byte 2 of the token is a line break" },
        { LIT("[PAD]\n[UNK]\n[CLS]\n[SEP]\n"), PARLEY_ERR_FORMAT,
          ": missing special token [MASK]" },
        { LIT("\n"), PARLEY_ERR_FORMAT, ":1: empty token" },
        { LIT(SPECIALS "\r\n"), PARLEY_ERR_FORMAT, ":6: empty token" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *path = write_file(dir, "vocab.txt", cases[i].data, cases[i].len);
        wp_vocab *v = (wp_vocab *)1;
        parley_status st = wp_vocab_load(path, &v);
        char want[600];
        snprintf(want, sizeof want, "%s%s", path, cases[i].msg);
        CHECK(st == cases[i].st && v == NULL && !strncmp(parley_errmsg(), want, strlen(want)),
              "case %zu: status %d '%s', want '%s'", i, st, parley_errmsg(), want);
        unlink(path);
    }

    /* "\r\n" line ends and a last line without "\n" are fine. */
    const char *path = write_file(dir, "crlf.txt",
                                  LIT("[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\n[MASK]\r\nx\r\ny"));
    wp_vocab *v = NULL;
    CHECK(wp_vocab_load(path, &v) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(v && wp_vocab_size(v) == 7 && wp_vocab_find(v, "x", 1) == 5 &&
                  wp_vocab_find(v, "y", 1) == 6 && !strcmp(wp_vocab_token(v, 4), "[MASK]"),
          "CRLF vocabulary");
    wp_vocab_free(v);
    unlink(path);

    /* Save and load again: the same tokens in the same order. */
    char saved[600];
    snprintf(saved, sizeof saved, "%s/saved.txt", dir);
    CHECK(wp_vocab_save(V, saved) == PARLEY_OK, "save: %s", parley_errmsg());
    v = NULL;
    CHECK(wp_vocab_load(saved, &v) == PARLEY_OK, "reload: %s", parley_errmsg());
    int same = v && wp_vocab_size(v) == wp_vocab_size(V);
    for (int i = 0; same && i < wp_vocab_size(V); i++)
        same = !strcmp(wp_vocab_token(v, i), wp_vocab_token(V, i));
    CHECK(same, "save/load round trip");
    wp_vocab_free(v);
    unlink(saved);
    rmdir(dir);

    v = (wp_vocab *)1;
    CHECK(wp_vocab_load("/nonexistent/vocab.txt", &v) == PARLEY_ERR_IO && v == NULL &&
                  strstr(parley_errmsg(), "/nonexistent/vocab.txt"),
          "missing file: %s", parley_errmsg());
    CHECK(wp_vocab_save(V, "/nonexistent/dir/vocab.txt") == PARLEY_ERR_IO,
          "save into a missing folder");

    const char *dup[] = { "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "x", "x" };
    CHECK(wp_vocab_from_tokens(dup, 7, &v) == PARLEY_ERR_FORMAT && v == NULL &&
                  !strcmp(parley_errmsg(), "token 6: duplicate token 'x' (first as token 5)"),
          "duplicate in a list: %s", parley_errmsg());
    CHECK(wp_vocab_from_tokens(dup, 4, &v) == PARLEY_ERR_FORMAT &&
                  !strcmp(parley_errmsg(), "token list: missing special token [MASK]"),
          "missing in a list: %s", parley_errmsg());
    CHECK(wp_vocab_from_tokens(NULL, 3, &v) == PARLEY_ERR_INVALID_ARG, "NULL list");
    const char *nl[] = { "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a\nb" };
    CHECK(wp_vocab_from_tokens(nl, 6, &v) == PARLEY_ERR_FORMAT &&
                  !strcmp(parley_errmsg(), "token 5: byte 1 of the token is a line break"),
          "newline in a listed token: %s", parley_errmsg());
    CHECK(wp_vocab_from_tokens(dup, 6, &v) == PARLEY_OK && wp_vocab_find(v, "x", 1) == 5, "list");
    wp_vocab_free(v);
    wp_vocab_free(NULL);
}

/* The standard vocabulary, when the shared data is there. */
static void test_standard_vocab(void)
{
    const char *shared = getenv("PARLEY_SHARED_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/vocab/bert-base-uncased-vocab.txt", shared ? shared : "");
    if (!shared || access(path, R_OK) != 0) {
        printf("standard vocabulary absent: skipped\n");
        return;
    }
    wp_vocab *v;
    CHECK(wp_vocab_load(path, &v) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(wp_vocab_size(v) == 30522 && wp_vocab_pad(v) == 0 && wp_vocab_unk(v) == 100 &&
                  wp_vocab_cls(v) == 101 && wp_vocab_sep(v) == 102 && wp_vocab_mask(v) == 103,
          "standard special ids");
    wp_tokens t;
    CHECK(wp_tokenize(v, "unaffable", 9, &t) == PARLEY_OK && t.n_pieces == 3 &&
                  !strcmp(wp_vocab_token(v, t.pieces[0].id), "una") &&
                  !strcmp(wp_vocab_token(v, t.pieces[1].id), "##ffa") &&
                  !strcmp(wp_vocab_token(v, t.pieces[2].id), "##ble"),
          "unaffable with the standard vocabulary");
    wp_tokens_free(&t);
    wp_vocab_free(v);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_tokenizer tests/nlu/vocab_small.txt\n");
        return 2;
    }
    if (wp_vocab_load(argv[1], &V) != PARLEY_OK) {
        fprintf(stderr, "loading %s: %s\n", argv[1], parley_errmsg());
        return 1;
    }
    test_vocab_basics();
    test_pieces();
    test_words();
    test_punct_pieces();
    test_long_words();
    test_fillers();
    test_invalid_utf8();
    test_random();
    test_vocab_errors();
    test_standard_vocab();
    test_alloc_failures(argv[1]);
    wp_vocab_free(V);
    return check_done();
}
