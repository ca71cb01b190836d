/* test_decode.c — intent ranking and BIO repair on hand-made logits and tags. */
#include <math.h>
#include <string.h>

#include "nlu/decode.h"
#include "tests/check.h"

static void test_tagset(void)
{
    char *good[] = { "B-city", "O", "I-city", "I-date", "B-date" };
    nlu_tagset ts;
    CHECK(nlu_tagset_init(&ts, good, 5) == PARLEY_OK, "good tags");
    CHECK(ts.o_tag == 1 && ts.n_types == 2 && ts.max_name == 4, "o %d types %d", ts.o_tag,
          ts.n_types);
    CHECK(ts.kind[0] == NLU_TAG_B && ts.kind[2] == NLU_TAG_I && ts.type[0] == ts.type[2] &&
                  ts.type[3] == ts.type[4] && ts.type[1] == -1,
          "kinds and types");
    nlu_tagset_clear(&ts);

    char *no_o[] = { "B-city", "I-city" };
    CHECK(nlu_tagset_init(&ts, no_o, 2) == PARLEY_ERR_CONFIG, "no O tag");
    char *bad[] = { "O", "X-city" };
    CHECK(nlu_tagset_init(&ts, bad, 2) == PARLEY_ERR_CONFIG && strstr(parley_errmsg(), "X-city"),
          "bad tag named: %s", parley_errmsg());
    char *empty[] = { "O", "B-" };
    CHECK(nlu_tagset_init(&ts, empty, 2) == PARLEY_ERR_CONFIG, "empty slot name");
}

static void test_top_k(void)
{
    float logits[] = { 1.0f, 3.0f, -2.0f, 3.0f, 0.5f };
    int idx[5];
    float prob[5];
    nlu_top_k(logits, 5, 0, 5, idx, prob);
    CHECK(idx[0] == 1 && idx[1] == 3 && idx[2] == 0 && idx[3] == 4 && idx[4] == 2,
          "order %d %d %d %d %d", idx[0], idx[1], idx[2], idx[3], idx[4]);
    double z = exp(1.0) + 2 * exp(3.0) + exp(-2.0) + exp(0.5);
    CHECK(fabs(prob[0] - exp(3.0) / z) < 1e-6 && fabs(prob[4] - exp(-2.0) / z) < 1e-6, "softmax");
    float big[] = { 1000.0f, 999.0f };
    nlu_top_k(big, 2, 0, 1, idx, prob);
    CHECK(idx[0] == 0 && fabs(prob[0] - 1.0 / (1.0 + exp(-1.0))) < 1e-6, "no overflow: %f",
          prob[0]);
    /* A temperature divides the logits: the order stays, the probabilities soften (T > 1)
     * or sharpen (T < 1); T = 1 is the plain softmax. */
    float p1[5], p2[5], p05[5];
    int i1[5], i2[5], i05[5];
    nlu_top_k(logits, 5, 1.0f, 5, i1, p1);
    nlu_top_k(logits, 5, 2.0f, 5, i2, p2);
    nlu_top_k(logits, 5, 0.5f, 5, i05, p05);
    double z2 = exp(0.5) + 2 * exp(1.5) + exp(-1.0) + exp(0.25);
    CHECK(fabs(p1[0] - exp(3.0) / z) < 1e-6, "T = 1 is the plain softmax");
    CHECK(fabs(p2[0] - exp(1.5) / z2) < 1e-6 && p2[0] < p1[0] && p05[0] > p1[0],
          "temperature: %f %f %f", p05[0], p1[0], p2[0]);
    CHECK(!memcmp(i1, i2, sizeof i1) && !memcmp(i1, i05, sizeof i1), "the order does not move");
}

/* Tags as strings -> repaired kinds and spans, against the conlleval reading. */
/* Scores that are not numbers are found, wherever they are. */
static void test_nonfinite(void)
{
    float x[6] = { 1.0f, -3e38f, 0.0f, 2.5f, -0.0f, 3e38f };
    CHECK(nlu_first_nonfinite(x, 6) == 6 && nlu_first_nonfinite(x, 0) == 0, "all finite");
    const float bad[] = { NAN, INFINITY, -INFINITY };
    for (int b = 0; b < 3; b++)
        for (size_t at = 0; at < 6; at++) {
            float y[6];
            memcpy(y, x, sizeof y);
            y[at] = bad[b];
            y[5] = at < 5 ? NAN : y[5]; /* a later one is not the one named */
            CHECK(nlu_first_nonfinite(y, 6) == at, "%g at %zu: found at %zu", bad[b], at,
                  nlu_first_nonfinite(y, 6));
        }
}

static void test_bio(void)
{
    char *tags[] = { "O", "B-a", "I-a", "B-b", "I-b" };
    nlu_tagset ts;
    nlu_tagset_init(&ts, tags, 5);
    /* words:       I-a  I-a  O  I-b  B-b  I-b  I-a  B-a */
    int word_tag[] = { 2, 2, 0, 4, 3, 4, 2, 1 };
    signed char kind[8];
    int type[8];
    nlu_span spans[8];
    int n = nlu_bio_spans(&ts, word_tag, 8, kind, type, spans);
    CHECK(n == 5, "5 spans, got %d", n);
    nlu_span want[] = { { ts.type[1], 0, 2 },
                        { ts.type[3], 3, 4 },
                        { ts.type[3], 4, 6 },
                        { ts.type[1], 6, 7 },
                        { ts.type[1], 7, 8 } };
    for (int i = 0; i < n && i < 5; i++)
        CHECK(spans[i].type == want[i].type && spans[i].w0 == want[i].w0 &&
                      spans[i].w1 == want[i].w1,
              "span %d: %d [%d,%d)", i, spans[i].type, spans[i].w0, spans[i].w1);
    signed char want_kind[] = { NLU_TAG_B, NLU_TAG_I, NLU_TAG_O, NLU_TAG_B,
                                NLU_TAG_B, NLU_TAG_I, NLU_TAG_B, NLU_TAG_B };
    CHECK(!memcmp(kind, want_kind, 8), "repaired kinds");

    /* First-piece rule: pieces of word 1 after its first do not change its tag. */
    float logits[4 * 5] = { 0 };
    wp_piece pieces[4] = { { 0, 0, 0, 1 }, { 0, 1, 2, 3 }, { 0, 1, 3, 4 }, { 0, 3, 6, 7 } };
    logits[0 * 5 + 1] = 5; /* word 0 -> B-a */
    logits[1 * 5 + 3] = 5; /* word 1 first piece -> B-b */
    logits[2 * 5 + 1] = 9; /* word 1 second piece ignored */
    logits[3 * 5 + 4] = 5; /* word 3: I-b best, but word 2 has no piece -> O, and I-b may not
                              follow O: the best valid tag (O, all others being equal) */
    int wt[4];
    char scratch[1024];
    CHECK(nlu_word_tags_scratch(4, 5) <= sizeof scratch, "scratch size");
    nlu_word_tags(&ts, NULL, logits, pieces, 4, 4, wt, scratch);
    CHECK(wt[0] == 1 && wt[1] == 3 && wt[2] == 0 && wt[3] == 0, "word tags %d %d %d %d", wt[0],
          wt[1], wt[2], wt[3]);

    /* Viterbi: B-a then a word whose best tag is I-b (invalid after B-a) and second best I-a:
     * the path B-a I-a beats B-a B-b when I-a's log-probability is higher than B-b's. */
    float v[3 * 5] = { 0 };
    wp_piece vp[3] = { { 0, 0, 0, 1 }, { 0, 1, 2, 3 }, { 0, 2, 4, 5 } };
    v[0 * 5 + 1] = 6;                      /* word 0: B-a */
    v[1 * 5 + 4] = 4, v[1 * 5 + 2] = 3.5f; /* word 1: I-b 4, I-a 3.5, B-b 0 */
    v[2 * 5 + 0] = 3;                      /* word 2: O */
    nlu_word_tags(&ts, NULL, v, vp, 3, 3, wt, scratch);
    CHECK(wt[0] == 1 && wt[1] == 2 && wt[2] == 0, "viterbi tags %d %d %d", wt[0], wt[1], wt[2]);
    /* at the sentence start an I- tag is never chosen */
    float s0[5] = { 0, 0, 1, 0, 0 };
    nlu_word_tags(&ts, NULL, s0, vp, 1, 1, wt, scratch);
    CHECK(wt[0] != 2 && wt[0] != 4, "an I- tag opened the sentence: %d", wt[0]);

    /* Only the tags an intent takes (type a here): another tag's probability goes to O
     * (a slot type the intent never takes means no slot of its), an allowed tag still wins
     * where it beats that, and with no mask nothing changes. */
    const float only_a[5] = { 0, 1, 1, 0, 0 }; /* O may, though left out */
    float m[2 * 5] = { 0 };
    m[0 * 5 + 1] = 5;                   /* word 0: B-a */
    m[1 * 5 + 3] = 5, m[1 * 5 + 2] = 2; /* word 1: B-b 5, I-a 2, O 0 */
    nlu_word_tags(&ts, only_a, m, vp, 2, 2, wt, scratch);
    CHECK(wt[0] == 1 && wt[1] == 0, "masked tags %d %d (want B-a O)", wt[0], wt[1]);
    nlu_word_tags(&ts, NULL, m, vp, 2, 2, wt, scratch);
    CHECK(wt[0] == 1 && wt[1] == 3, "unmasked tags %d %d (want B-a B-b)", wt[0], wt[1]);
    m[1 * 5 + 3] = 3, m[1 * 5 + 4] = 3, m[1 * 5 + 2] = 3.5f; /* B-b 3, I-b 3, I-a 3.5, O 0 */
    nlu_word_tags(&ts, only_a, m, vp, 2, 2, wt, scratch);
    CHECK(wt[1] == 0, "O with the disallowed mass (ln(2e^3 + 1) = 3.72 > 3.5): %d", wt[1]);
    m[1 * 5 + 3] = 1, m[1 * 5 + 4] = 0, m[1 * 5 + 2] = 3; /* B-b 1, I-b 0, I-a 3, O 0 */
    nlu_word_tags(&ts, only_a, m, vp, 2, 2, wt, scratch);
    CHECK(wt[0] == 1 && wt[1] == 2, "an allowed tag above O's mass: %d %d (want B-a I-a)", wt[0],
          wt[1]);
    /* An uncertain intent: type b taken with probability 0.9 keeps B-b (5 + ln 0.9 against
     * O's ln(1 + 0.1 e^5)); with 0.1 it goes to O. */
    const float mostly_b[5] = { 1, 1, 1, 0.9f, 0.9f }, hardly_b[5] = { 1, 1, 1, 0.1f, 0.1f };
    m[1 * 5 + 3] = 5, m[1 * 5 + 4] = 0, m[1 * 5 + 2] = 0; /* B-b 5, others 0 */
    nlu_word_tags(&ts, mostly_b, m, vp, 2, 2, wt, scratch);
    CHECK(wt[1] == 3, "likely type kept: %d", wt[1]);
    nlu_word_tags(&ts, hardly_b, m, vp, 2, 2, wt, scratch);
    CHECK(wt[1] == 0, "unlikely type to O: %d", wt[1]);
    nlu_tagset_clear(&ts);
}

int main(void)
{
    test_tagset();
    test_top_k();
    test_nonfinite();
    test_bio();
    return check_done();
}
