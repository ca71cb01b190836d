/* test_wp_learn.c — the WordPiece vocabulary learner (nlu/train/wp_learn.c).
 *
 * Checks that learning is deterministic and independent of text order, that the specials
 * and every character (both forms) are present, that the size limit and the frequency
 * floor are respected, that frequent words become whole pieces, and — the property the
 * trainer relies on — that every training text tokenizes without [UNK] with the learned
 * vocabulary through the real tokenizer, accents, punctuation and CJK included. Failed
 * allocations are injected one by one and must fail cleanly.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/fault.h"
#include "nlu/text/tokenizer.h"
#include "nlu/train/wp_learn.h"
#include "parley/status.h"

static const char *const texts[] = {
    "Play some jazz music",
    "play the new album by Miles Davis",
    "PLAY rock music on spotify",
    "what's the weather in Paris?",
    "weather forecast for Zürich tomorrow",
    "Is it raining in São Paulo",
    "book a table for two at 7pm",
    "book a restaurant in Tokyo (東京) tonight",
    "naïve café crème brûlée",
    "set an alarm for 6:30 am",
    "set a timer – 10 minutes",
    "wake me up at seven",
    "\xe2\x80\x8bzero\tspace\n",
    "play play play playing played player",
    "music music musical",
};
enum { N_TEXTS = sizeof texts / sizeof texts[0] };

static int same_vocab(const wp_vocab *a, const wp_vocab *b)
{
    if (wp_vocab_size(a) != wp_vocab_size(b))
        return 0;
    for (int i = 0; i < wp_vocab_size(a); i++)
        if (strcmp(wp_vocab_token(a, i), wp_vocab_token(b, i)))
            return 0;
    return 1;
}

/* Counts [UNK] pieces over all texts. */
static int count_unk(const wp_vocab *v, const char *const *t, int n)
{
    int unk = 0;
    for (int i = 0; i < n; i++) {
        wp_tokens tk;
        parley_status st = wp_tokenize(v, t[i], strlen(t[i]), &tk);
        CHECK(st == PARLEY_OK, "tokenize %d: %s", i, parley_errmsg());
        for (int p = 0; p < tk.n_pieces; p++)
            unk += tk.pieces[p].id == wp_vocab_unk(v);
        wp_tokens_free(&tk);
    }
    return unk;
}

static int has(const wp_vocab *v, const char *tok)
{
    return wp_vocab_find(v, tok, strlen(tok)) >= 0;
}

static void test_basics(void)
{
    wp_vocab *v = NULL, *v2 = NULL;
    CHECK(wp_learn(texts, N_TEXTS, NULL, &v) == PARLEY_OK, "%s", parley_errmsg());
    if (!v)
        return;
    static const char *const sp[] = { "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]" };
    for (int i = 0; i < 5; i++)
        CHECK(!strcmp(wp_vocab_token(v, i), sp[i]), "special %d is %s", i, wp_vocab_token(v, i));
    /* Characters in both forms, normalized as the tokenizer does (lower case, no accents). */
    const char *chars[] = {
        "p", "##p", "z", "##z", "u", "##u", "東", "##東", "?", "##?", "(", "##("
    };
    for (size_t i = 0; i < sizeof chars / sizeof chars[0]; i++)
        CHECK(has(v, chars[i]), "alphabet lacks %s", chars[i]);
    CHECK(!has(v, "P") && !has(v, "ü") && !has(v, "##ü"), "upper case or accents were kept");
    /* Frequent words end up whole. */
    CHECK(has(v, "play") && has(v, "music"), "frequent words are not whole pieces");
    CHECK(count_unk(v, texts, N_TEXTS) == 0, "a training text has [UNK] pieces");

    /* Deterministic, and the order of the texts does not matter. */
    const char *rev[N_TEXTS];
    for (int i = 0; i < N_TEXTS; i++)
        rev[i] = texts[N_TEXTS - 1 - i];
    CHECK(wp_learn(rev, N_TEXTS, NULL, &v2) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(v2 && same_vocab(v, v2), "reordered texts give another vocabulary");
    wp_vocab_free(v2);

    /* The size limit holds, and is a prefix of the bigger vocabulary (merges in order). */
    int full = wp_vocab_size(v);
    wp_learn_params p = { .vocab_size = full - 3 };
    CHECK(wp_learn(texts, N_TEXTS, &p, &v2) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(v2 && wp_vocab_size(v2) == full - 3, "size %d, wanted %d", v2 ? wp_vocab_size(v2) : -1,
          full - 3);
    for (int i = 0; v2 && i < wp_vocab_size(v2); i++)
        CHECK(!strcmp(wp_vocab_token(v, i), wp_vocab_token(v2, i)), "token %d differs", i);
    CHECK(v2 && count_unk(v2, texts, N_TEXTS) == 0, "a smaller vocabulary gives [UNK]");
    wp_vocab_free(v2);

    /* Below the alphabet: specials + alphabet only, still no [UNK]. */
    p.vocab_size = 6;
    CHECK(wp_learn(texts, N_TEXTS, &p, &v2) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(v2 && wp_vocab_size(v2) > 6 && !has(v2, "play"), "alphabet-only vocabulary has merges");
    CHECK(v2 && count_unk(v2, texts, N_TEXTS) == 0, "alphabet-only vocabulary gives [UNK]");
    wp_vocab_free(v2);

    /* A high frequency floor merges less. */
    wp_learn_params hi = { .min_frequency = 1000 };
    CHECK(wp_learn(texts, N_TEXTS, &hi, &v2) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(v2 && !has(v2, "pl"), "merged a pair seen fewer times than min_frequency");
    wp_vocab_free(v2);
    wp_vocab_free(v);
}

static void test_merge_order(void)
{
    /* "ab" x3 and "cd" x3 tie; "ab" sorts first. "abcd" x1: its pairs are seen once. */
    const char *t[] = { "ab ab ab cd cd cd abcd" };
    wp_vocab *v = NULL;
    wp_learn_params p = { .vocab_size = 0, .min_frequency = 2 };
    CHECK(wp_learn(t, 1, &p, &v) == PARLEY_OK, "%s", parley_errmsg());
    if (!v)
        return;
    /* specials (5) + a b c d (4) + ##a ##b ##c ##d (4) = 13, then the merges. */
    CHECK(wp_vocab_size(v) >= 15, "size %d", wp_vocab_size(v));
    CHECK(wp_vocab_size(v) >= 15 && !strcmp(wp_vocab_token(v, 13), "ab") &&
                  !strcmp(wp_vocab_token(v, 14), "cd"),
          "merges %s, %s", wp_vocab_token(v, 13), wp_vocab_token(v, 14));
    CHECK(!strcmp(wp_vocab_token(v, 5), "a") && !strcmp(wp_vocab_token(v, 9), "##a"),
          "alphabet order");
    wp_vocab_free(v);
}

static void test_errors(void)
{
    wp_vocab *v = (wp_vocab *)1;
    const char *bad[] = { "fine", "bad \xff byte" };
    CHECK(wp_learn(bad, 2, NULL, &v) == PARLEY_ERR_UTF8 && v == NULL, "bad UTF-8 accepted");
    CHECK(strstr(parley_errmsg(), "text 1") && strstr(parley_errmsg(), "byte 4"), "message: %s",
          parley_errmsg());
    CHECK(wp_learn(NULL, 0, NULL, &v) == PARLEY_OK && v && wp_vocab_size(v) == 5, "empty input");
    wp_vocab_free(v);
}

/* Every allocation of a learning run fails in turn: NOMEM, no vocabulary, nothing leaked. */
static parley_status learn_free(void *ctx)
{
    (void)ctx;
    wp_vocab *v = NULL;
    parley_status st = wp_learn(texts, N_TEXTS, NULL, &v);
    CHECK(st == PARLEY_OK || v == NULL, "a failed run leaves no vocabulary");
    wp_vocab_free(v);
    return st;
}

static void test_alloc_failures(void)
{
    CHECK(fault_sweep("wp_learn", learn_free, NULL) > 10, "learning allocates");
}

int main(void)
{
    test_basics();
    test_merge_order();
    test_errors();
    test_alloc_failures();
    return check_done();
}
