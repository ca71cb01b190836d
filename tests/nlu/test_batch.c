/* test_batch.c — word pieces to logits (nlu/batch.c): sequence layout, packing, the walk.
 *
 * On a small random model built in memory: bert_seq_len cuts at P - 2 pieces; bert_pack lays
 * out [CLS] pieces [SEP] per sequence; bert_run_pieces hands sequence i exactly the logits
 * bert_forward gives at its offsets (intent row i, slot rows after its [CLS]), in order, through
 * the forward pass it is given; it stops at the first failing callback; and every
 * allocation failure is clean.
 */
#include <stdlib.h>
#include <string.h>

#include "nlu/bert.h"
#include "tests/check.h"
#include "tests/fault.h"

static const char *vocab_tokens[] = { "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "book",
                                      "a",     "table", "for",   "two",   "in",     "boston" };
static char *intents[] = { "book_table", "greet" };
static char *slots[] = { "O", "B-city", "I-city" };
enum { P = 8, NT = 3 };

static bert_model *make_model(void)
{
    wp_vocab *v = NULL;
    bert_model *m = NULL;
    int nv = (int)(sizeof vocab_tokens / sizeof *vocab_tokens);
    bert_config c = { .vocab_size = nv,
                      .hidden = 8,
                      .layers = 1,
                      .heads = 2,
                      .intermediate = 16,
                      .max_positions = P,
                      .type_vocab = 2,
                      .ln_eps = 1e-12f,
                      .n_intents = 2,
                      .intent_labels = intents,
                      .n_slots = 3,
                      .slot_labels = slots };
    if (wp_vocab_from_tokens(vocab_tokens, nv, &v) != PARLEY_OK ||
        bert_model_alloc(&c, v, &m) != PARLEY_OK) {
        fprintf(stderr, "model: %s\n", parley_errmsg());
        exit(1);
    }
    bert_model_init_random(m, 3);
    return m;
}

static bert_model *M;
static wp_tokens TK[NT];
static const char *texts[NT] = { "book a table", "two", "book a table for two in boston" };

static void tokenize_all(void)
{
    for (int i = 0; i < NT; i++)
        if (wp_tokenize(M->vocab, texts[i], strlen(texts[i]), &TK[i]) != PARLEY_OK) {
            fprintf(stderr, "tokenize: %s\n", parley_errmsg());
            exit(1);
        }
}

static void test_layout(void)
{
    int want_len[NT] = { 5, 3, P }; /* the third has 7 pieces: cut to P - 2 = 6 */
    for (int i = 0; i < NT; i++)
        CHECK(bert_seq_len(&M->cfg, &TK[i]) == want_len[i], "seq %d: len %d", i,
              bert_seq_len(&M->cfg, &TK[i]));
    bert_packed p;
    CHECK(bert_pack(M, TK, NT, &p) == PARLEY_OK, "pack: %s", parley_errmsg());
    CHECK(p.batch.n_seq == NT && p.batch.len == p.len && p.batch.ids == p.ids, "batch fields");
    int at = 0;
    for (int i = 0; i < NT; i++) {
        CHECK(p.len[i] == want_len[i], "len %d", i);
        CHECK(p.ids[at] == wp_vocab_cls(M->vocab), "seq %d starts with [CLS]", i);
        for (int k = 0; k < want_len[i] - 2; k++)
            CHECK(p.ids[at + 1 + k] == TK[i].pieces[k].id, "seq %d piece %d", i, k);
        CHECK(p.ids[at + want_len[i] - 1] == wp_vocab_sep(M->vocab), "seq %d ends with [SEP]", i);
        at += want_len[i];
    }
    bert_packed_free(&p);
    CHECK(!p.len && !p.ids && !p.intent_logits && !p.slot_logits, "free zeroes");
}

/* What the walk saw, against bert_forward on the same packed batch. */
typedef struct walk {
    const bert_packed *ref;
    int calls, fail_at, forwards;
} walk;

static parley_status counted_forward(void *ctx, const bert_batch *b, float *il, float *sl)
{
    walk *w = ctx;
    w->forwards++;
    return bert_forward(M, b, il, sl);
}

static parley_status check_seq(void *ctx, int i, const wp_tokens *tk, int n_pieces, const float *il,
                               const float *sl)
{
    walk *w = ctx;
    const bert_packed *r = w->ref;
    CHECK(i == w->calls, "sequence %d called in order (call %d)", i, w->calls);
    CHECK(tk == &TK[i], "sequence %d gets its tokens", i);
    CHECK(n_pieces == r->len[i] - 2, "sequence %d: %d pieces", i, n_pieces);
    size_t first = 0;
    for (int k = 0; k < i; k++)
        first += (size_t)r->len[k];
    CHECK(!memcmp(il, r->intent_logits + (size_t)i * M->cfg.n_intents,
                  sizeof *il * M->cfg.n_intents),
          "sequence %d: intent logits", i);
    CHECK(!memcmp(sl, r->slot_logits + (first + 1) * M->cfg.n_slots,
                  sizeof *sl * M->cfg.n_slots * (size_t)n_pieces),
          "sequence %d: slot logits after [CLS]", i);
    w->calls++;
    return i == w->fail_at ? PARLEY_ERR_CONFIG : PARLEY_OK;
}

static void test_walk(void)
{
    bert_packed ref;
    if (bert_pack(M, TK, NT, &ref) != PARLEY_OK ||
        bert_forward(M, &ref.batch, ref.intent_logits, ref.slot_logits) != PARLEY_OK) {
        CHECK(0, "reference: %s", parley_errmsg());
        return;
    }
    walk w = { &ref, 0, -1, 0 };
    CHECK(bert_run_pieces(M, NULL, TK, NT, NULL, NULL, check_seq, &w) == PARLEY_OK, "run: %s",
          parley_errmsg());
    CHECK(w.calls == NT, "every sequence walked: %d", w.calls);
    w = (walk){ &ref, 0, -1, 0 };
    CHECK(bert_run_pieces(M, NULL, TK, NT, counted_forward, &w, check_seq, &w) == PARLEY_OK,
          "run through a given forward pass");
    CHECK(w.forwards == 1 && w.calls == NT, "one forward pass: %d, %d calls", w.forwards, w.calls);
    w = (walk){ &ref, 0, 1, 0 };
    CHECK(bert_run_pieces(M, NULL, TK, NT, NULL, NULL, check_seq, &w) == PARLEY_ERR_CONFIG,
          "a failing callback's status comes back");
    CHECK(w.calls == 2, "the walk stops at the failure: %d calls", w.calls);
    bert_packed_free(&ref);
}

static parley_status ignore_seq(void *ctx, int i, const wp_tokens *tk, int n_pieces,
                                const float *il, const float *sl)
{
    (void)ctx, (void)i, (void)tk, (void)n_pieces, (void)il, (void)sl;
    return PARLEY_OK;
}

static parley_status run_all(void *ctx)
{
    (void)ctx;
    return bert_run_pieces(M, NULL, TK, NT, NULL, NULL, ignore_seq, NULL);
}

int main(void)
{
    M = make_model();
    tokenize_all();
    test_layout();
    test_walk();
    long points = fault_sweep("run pieces", run_all, NULL);
    CHECK(points >= 4, "%ld allocation failure points", points);
    for (int i = 0; i < NT; i++)
        wp_tokens_free(&TK[i]);
    bert_model_free(M);
    return check_done();
}
