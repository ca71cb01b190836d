/* test_defaults.c — training settings sized to the data (nlu/train/defaults.h) and the
 * intent temperature fitted on held-out logits (nlu/train/calibrate.h).
 *
 * Sizing: a 40-example bot gets small batches and many epochs, SNIPS-sized data big
 * batches and the fewest epochs, a setting given explicitly is never touched, and each
 * choice is explained on a line of its own; a new model is small below 2,000 examples;
 * intents heavier than the median are weighted down to it, and the intent is left to the
 * sparse features below 150 examples per intent unless told otherwise; a new model without
 * sparse features is pretrained on its training text on the CPU (20 epochs, then half the
 * learning rate). Calibration: labels
 * drawn from softmax(z / T0) give back a temperature near T0; the fitted T never scores
 * worse than T = 1; and it never moves the ranking (that is nlu/decode's, tested there).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nlu/train/calibrate.h"
#include "nlu/train/defaults.h"
#include "sdk/base/alloc.h"
#include "tests/check.h"

static int lines(const train_notes *n)
{
    int k = 0;
    for (const char *s = n->text; s && *s; s++)
        k += *s == '\n';
    return k;
}

static void test_sizes(void)
{
    parley_train_params p = parley_train_params_default();
    ds_dataset tiny = { .n_examples = 40, .n_intents = 8 },
               big = { .n_examples = 13084, .n_intents = 7 };
    train_notes notes = { .len = 0 };
    train_sizes s = train_sizes_of(&p);
    train_size_data(&s, &tiny, TRAIN_START_NEW, &notes);
    train_size_epochs(&s, 40, 0, 0, &notes);
    CHECK(s.batch == 8 && s.augment == 0 && s.epochs == 80, "tiny: batch %d augment %d epochs %d",
          s.batch, s.augment, s.epochs);
    CHECK(fabsf(s.lr - 1e-3f * sqrtf(8 / 32.0f)) < 1e-7f && s.weight_decay == 0.01f,
          "tiny: lr %g weight decay %g", (double)s.lr, (double)s.weight_decay);
    CHECK(lines(&notes) == 5 && strstr(notes.text, "epochs 80:") && strstr(notes.text, "batch 8:"),
          "one line per choice:\n%s", notes.text);

    train_notes_clear(&notes);
    s = train_sizes_of(&p);
    big.n_lookups = 1; /* many examples: no lookup variants even with tables */
    train_size_data(&s, &big, TRAIN_START_NEW, &notes);
    train_size_epochs(&s, 13084, 0, 0, &notes);
    CHECK(s.batch == 32 && s.augment == 0 && s.epochs == 20 && s.lr == 1e-3f,
          "big: batch %d augment %d epochs %d lr %g", s.batch, s.augment, s.epochs, (double)s.lr);
    s.epochs = 0; /* the same data for a model without sparse features: more passes */
    train_size_epochs(&s, 13084, 0, 1, &notes);
    CHECK(s.epochs == 30 && strstr(notes.text, "epochs 30:") &&
                  strstr(notes.text, "the encoder learns every word alone"),
          "big, dense: epochs %d\n%s", s.epochs, notes.text);
    s.epochs = 0; /* small data: the steps decide either way */
    train_size_epochs(&s, 40, 0, 1, NULL);
    CHECK(s.epochs == 80, "tiny, dense: epochs %d", s.epochs);

    /* Pretraining on the training text: a new dense model, on any device, unless given. */
    train_notes_clear(&notes);
    CHECK(train_size_pretrain(-1, 1, 1, &notes) == 20 && strstr(notes.text, "pretrain 20:"),
          "dense, random weights: pretrained 20 epochs\n%s", notes.text);
    const int before = lines(&notes);
    CHECK(train_size_pretrain(-1, 1, 0, &notes) == 0 &&
                  train_size_pretrain(-1, 0, 1, &notes) == 0 && lines(&notes) == before,
          "with sparse features or a pretrained start: none, nothing said");
    CHECK(train_size_pretrain(0, 1, 1, NULL) == 0 && train_size_pretrain(3, 0, 0, NULL) == 3,
          "given: kept");
    /* ... and what it changes: half a new model's rate, the fewer epochs of sparse features. */
    train_notes_clear(&notes);
    s = train_sizes_of(&p);
    train_size_data(&s, &big, TRAIN_START_OWN_TEXT, &notes);
    CHECK(s.lr == 5e-4f && strstr(notes.text, "lr 0.0005:"), "pretrained here: lr %g\n%s",
          (double)s.lr, notes.text);
    s = train_sizes_of(&p);
    train_size_data(&s, &tiny, TRAIN_START_OWN_TEXT, NULL);
    CHECK(fabsf(s.lr - 5e-4f * sqrtf(8 / 32.0f)) < 1e-7f, "pretrained here, batch 8: lr %g",
          (double)s.lr);

    train_notes_clear(&notes);
    tiny.n_lookups = 2; /* few examples with tables: many variants */
    s = train_sizes_of(&p);
    train_size_data(&s, &tiny, TRAIN_START_INIT, &notes);
    CHECK(s.augment == 8 && s.lr == parley_train_default_lr(1), "tiny with lookups, from init");

    /* Given settings stay as given, and nothing is said about them. */
    p.epochs = 3;
    p.batch = 5;
    p.lr = 0.5f;
    p.augment = 0;
    p.weight_decay = 0;
    train_notes_clear(&notes);
    s = train_sizes_of(&p);
    train_size_data(&s, &tiny, TRAIN_START_NEW, &notes);
    train_size_epochs(&s, 40, 0, 0, &notes);
    CHECK(s.epochs == 3 && s.batch == 5 && s.lr == 0.5f && s.augment == 0 && s.weight_decay == 0 &&
                  notes.len == 0 && !notes.text,
          "explicit settings kept: %d %d %g %d %g \"%s\"", s.epochs, s.batch, (double)s.lr,
          s.augment, (double)s.weight_decay, notes.text);
    train_notes_clear(&notes);
}

/* A new model's shape: small below 2,000 written examples, BERT-mini's from there, a given
 * dimension kept with BERT-mini's for the rest, and pretraining (no count) BERT-mini's. */
static void test_shape(void)
{
    const parley_train_params d = parley_train_params_default();
    train_notes notes = { .len = 0 };
    parley_train_shape s = train_size_shape(&d.shape, 1999, &notes);
    CHECK(s.layers == 2 && s.hidden == 128 && s.heads == 2 && s.intermediate == 256 &&
                  s.max_positions == 128 && lines(&notes) == 1 &&
                  strstr(notes.text, "shape 2 layers"),
          "1999 examples: L%d H%d A%d I%d P%d \"%s\"", s.layers, s.hidden, s.heads, s.intermediate,
          s.max_positions, notes.text);
    train_notes_clear(&notes);
    s = train_size_shape(&d.shape, 2000, &notes);
    CHECK(s.layers == 4 && s.hidden == 256 && s.heads == 4 && s.intermediate == 1024 &&
                  lines(&notes) == 1,
          "2000 examples: L%d H%d A%d I%d", s.layers, s.hidden, s.heads, s.intermediate);

    parley_train_shape want = d.shape;
    want.layers = 3;
    want.max_positions = 64;
    train_notes_clear(&notes);
    s = train_size_shape(&want, 40, &notes);
    CHECK(s.layers == 3 && s.hidden == 256 && s.heads == 4 && s.intermediate == 1024 &&
                  s.max_positions == 64 && notes.len == 0,
          "a given dimension: L%d H%d A%d I%d P%d, \"%s\"", s.layers, s.hidden, s.heads,
          s.intermediate, s.max_positions, notes.text);
    s = train_size_shape(&d.shape, -1, NULL);
    CHECK(s.layers == 4 && s.hidden == 256, "not sized: BERT-mini's, L%d H%d", s.layers, s.hidden);
    train_notes_clear(&notes);
}

/* A fixed pseudo-random stream (splitmix64) in [0, 1). */
static double uniform(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

static void test_intents(void)
{
    /* CLINC150-like: 4 intents of 5 examples and a catch-all of 100. */
    int y[120], n = 0;
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 5; k++)
            y[n++] = i;
    for (int k = 0; k < 100; k++)
        y[n++] = 4;
    train_notes notes = { .len = 0 };
    float *w = NULL;
    CHECK(train_class_weights(y, n, 5, &w, &notes) == PARLEY_OK && w, "weights");
    CHECK(w && w[0] == 1.0f && w[3] == 1.0f && fabsf(w[4] - 0.05f) < 1e-7f,
          "the catch-all counts as the median 5 of its 100: %g", w ? (double)w[4] : -1.0);
    CHECK(strstr(notes.text, "1 intent(s) with more than the median 5"), "noted:\n%s", notes.text);
    pl_free(w);
    CHECK(train_class_weights(y, 20, 4, &w, NULL) == PARLEY_OK && !w,
          "balanced data: no weights (and no notes needed)");
    CHECK(train_intent_sparse_only(n, 5, 0, PARLEY_SWITCH_AUTO, &notes) == 1 &&
                  strstr(notes.text, "intent encoder off: 24 examples per intent"),
          "few examples: the intent is the sparse features'\n%s", notes.text);
    CHECK(train_intent_sparse_only(n, 5, 0, PARLEY_SWITCH_ON, NULL) == 0 &&
                  train_intent_sparse_only(n, 5, 0, PARLEY_SWITCH_OFF, NULL) == 1,
          "an explicit choice wins");
    CHECK(train_intent_sparse_only(400, 2, 0, PARLEY_SWITCH_AUTO, NULL) == 0,
          "200 per intent: encoder on");
    CHECK(train_intent_sparse_only(200, 2, 0, PARLEY_SWITCH_AUTO, NULL) == 1 &&
                  train_intent_sparse_only(200, 2, 1, PARLEY_SWITCH_AUTO, NULL) == 0,
          "100 per intent: off without slots, on with them");
    /* Sparse features: an explicit choice wins; the intent asked of them, or lookup tables or
     * regexes keep them; data that tags slots loses them from 4,000 examples as written;
     * otherwise they go from 1,000 examples per intent on. */
    notes.len = 0;
    CHECK(train_sparse_on(13084, 7, 13084, 1, 0, PARLEY_SWITCH_AUTO, PARLEY_SWITCH_AUTO, &notes) ==
                          0 &&
                  strstr(notes.text, "sparse features off: 13084 examples written that tag slots"),
          "full SNIPS: no sparse features\n%s", notes.text);
    notes.len = 0;
    CHECK(train_sparse_on(4478, 17, 4478, 1, 0, PARLEY_SWITCH_AUTO, PARLEY_SWITCH_AUTO, &notes) ==
                          0 &&
                  strstr(notes.text, "at least 4000") &&
                  train_sparse_on(3999, 17, 3999, 1, 0, PARLEY_SWITCH_AUTO, PARLEY_SWITCH_AUTO,
                                  NULL) == 1 &&
                  train_sparse_on(4478, 17, 4478, 0, 0, PARLEY_SWITCH_AUTO, PARLEY_SWITCH_AUTO,
                                  NULL) == 1,
          "ATIS loses them for its slots; under 4,000 examples, or without slots, they stay\n%s",
          notes.text);
    notes.len = 0;
    CHECK(train_sparse_on(1999, 2, 1999, 1, 0, PARLEY_SWITCH_AUTO, PARLEY_SWITCH_AUTO, NULL) == 1 &&
                  train_sparse_on(2000, 2, 2000, 0, 0, PARLEY_SWITCH_AUTO, PARLEY_SWITCH_AUTO,
                                  &notes) == 0 &&
                  strstr(notes.text, "sparse features off: 1000 examples per intent"),
          "otherwise the bound is 1,000 per intent\n%s", notes.text);
    CHECK(train_sparse_on(13084, 7, 13084, 1, 1, PARLEY_SWITCH_AUTO, PARLEY_SWITCH_AUTO, NULL) ==
                          1 &&
                  train_sparse_on(13084, 7, 13084, 1, 0, PARLEY_SWITCH_AUTO, PARLEY_SWITCH_OFF,
                                  NULL) == 1 &&
                  train_sparse_on(13084, 7, 13084, 1, 0, PARLEY_SWITCH_ON, PARLEY_SWITCH_AUTO,
                                  NULL) == 1 &&
                  train_sparse_on(40, 4, 40, 1, 0, PARLEY_SWITCH_OFF, PARLEY_SWITCH_AUTO, NULL) ==
                          0,
          "tables, the intent asked of them, or --sparse keep or drop them whatever the size");
    /* Where the count gives the encoder the intent of few examples that tag slots, the sparse
     * features' cross-fitted accuracy decides: from 90% they keep it alone. Where it gives
     * them the intent (and a pretrained start would get background sentences: train.c), under
     * 72% the encoder reads it after all. */
    CHECK(train_check_sparse_intent(700, 1, PARLEY_SWITCH_AUTO) &&
                  !train_check_sparse_intent(700, 0, PARLEY_SWITCH_AUTO) &&
                  !train_check_sparse_intent(700, 1, PARLEY_SWITCH_ON) &&
                  !train_check_sparse_intent(4478, 1, PARLEY_SWITCH_AUTO),
          "the check: few examples with slots, --intent-encoder not given");
    static const struct {
        int right, scored, by_count, enough;
    } bars[] = {
        { 675, 700, 0, 1 }, { 253, 315, 0, 0 }, { 90, 100, 0, 1 }, { 89, 100, 0, 0 },
        { 0, 0, 0, 0 },     { 43, 63, 1, 0 },   { 63, 70, 1, 1 },  { 72, 100, 1, 1 },
        { 71, 100, 1, 0 },  { 0, 0, 1, 0 },
    };
    for (size_t i = 0; i < sizeof bars / sizeof *bars; i++)
        CHECK(train_intent_sparse_enough(bars[i].right, bars[i].scored, bars[i].by_count, NULL) ==
                      bars[i].enough,
              "%d of %d right, the count gave them the intent: %d", bars[i].right, bars[i].scored,
              bars[i].by_count);
    notes.len = 0;
    train_intent_sparse_enough(675, 700, 0, &notes);
    train_intent_sparse_enough(43, 63, 1, &notes);
    CHECK(strstr(notes.text, "intent encoder goes off") && strstr(notes.text, "at least 90%") &&
                  strstr(notes.text, "intent encoder goes on") && strstr(notes.text, "under 72%"),
          "the notes say which way and why\n%s", notes.text);
    notes.len = 0;
    CHECK(train_few_examples(750, 0, 1, &notes) == 1 && strstr(notes.text, "fitted alone first") &&
                  strstr(notes.text, "word rows normalized by kind"),
          "the pizza bot: pre-fit, word rows by kind and weights\n%s", notes.text);
    CHECK(train_word_norm_by_kind(750) && train_word_norm_by_kind(3999) &&
                  !train_word_norm_by_kind(4000) && !train_word_norm_by_kind(4478),
          "word rows by kind below 4,000 examples");
    notes.len = 0;
    CHECK(train_few_examples(4478, 0, 1, &notes) == 0 &&
                  strstr(notes.text, "beside the encoder from the first step"),
          "ATIS: joint from the start, proportions kept\n%s", notes.text);
    CHECK(!strstr(notes.text, "by kind"), "ATIS: one norm per word row\n%s", notes.text);
    notes.len = 0;
    CHECK(train_few_examples(4478, 0, 0, &notes) == 0 && !strstr(notes.text, "sparse"),
          "no sparse features: the note does not name them\n%s", notes.text);
    CHECK(train_few_examples(15100, 1, 1, NULL) == 1,
          "an intent that is the sparse features' is fitted first, however big the data");
    CHECK(train_prefit_epochs(850, 32, NULL) == 40, "small data: 40 passes");
    train_sizes s = { .epochs = 0, .batch = 32 };
    train_size_epochs(&s, 850, 1, 0, &notes);
    CHECK(s.epochs == 0 && strstr(notes.text, "epochs 0:"), "an idle encoder is not trained");
    s.epochs = 3;
    train_size_epochs(&s, 850, 1, 0, NULL);
    CHECK(s.epochs == 3, "unless epochs are given");
    CHECK(train_prefit_epochs(100000, 32, NULL) == 20000 / 3125, "big data: at most 20000 steps");
    CHECK(train_prefit_epochs(1000000, 32, NULL) == 1, "at least one pass");
    train_notes_clear(&notes);
}

static void test_temperature(void)
{
    enum { N = 4000, C = 5 };
    static float logits[N * C];
    static int gold[N];
    uint64_t seed = 7;
    for (double t0 = 0.5; t0 <= 4; t0 *= 2) {
        /* Logits whose true probabilities are softmax(z / t0): a model over- (t0 > 1) or
         * under-confident (t0 < 1) by t0. */
        for (int i = 0; i < N; i++) {
            double p[C], sum = 0, u = uniform(&seed);
            for (int c = 0; c < C; c++) {
                logits[i * C + c] = (float)(6 * uniform(&seed) - 3);
                sum += p[c] = exp(logits[i * C + c] / t0);
            }
            gold[i] = C - 1;
            for (int c = 0; c < C - 1; c++)
                if ((u -= p[c] / sum) < 0) {
                    gold[i] = c;
                    break;
                }
        }
        float t = train_fit_temperature(logits, gold, N, C);
        CHECK(fabs(log(t / t0)) < 0.15, "fitted %g for a true %g", (double)t, t0);
        CHECK(train_intent_nll(logits, gold, N, C, t) <= train_intent_nll(logits, gold, N, C, 1),
              "the fitted temperature scores no worse than 1");
    }
    /* Gold the model does not know is left out; with nothing left, 1. */
    for (int i = 0; i < N; i++)
        gold[i] = -1;
    CHECK(train_fit_temperature(logits, gold, N, C) == 1.0f, "no usable examples: 1");
    gold[0] = 2;
    logits[0 * C + 2] = 3; /* one example, right and confident: the sharpest allowed */
    float t = train_fit_temperature(logits, gold, N, C);
    CHECK(t >= 0.01f && t < 0.02f, "one right example: %g", (double)t);
}

/* Each intent keeps the slot types its own examples tag (B- and I- alike), and O. */
static void test_slot_tags(void)
{
    char *labels[] = { "O", "B-size", "I-size", "B-topping", "I-topping", "B-address" };
    /* Intent 0 tags a size (its B- only), intent 1 a topping over two words and an address,
     * intent 2 nothing. Tokens: [CLS] words [SEP]; -1 where no tag is scored. */
    const int intent[] = { 0, 1, 2, 0 };
    const int slot[] = { -1, 0, 1, -1, /**/ -1, 3, 4, 0, 5, -1, /**/ -1, 0, -1, /**/ -1, 0, -1 };
    const size_t off[] = { 0, 4, 10, 13, 16 };
    unsigned char *tags = NULL;
    train_notes notes = { .len = 0 };
    CHECK(train_intent_slot_tags(labels, 6, 3, intent, off, slot, 4, &tags, &notes) == PARLEY_OK &&
                  tags,
          "slot tags: %s", parley_errmsg());
    if (tags) {
        const unsigned char want[3][6] = { { 1, 1, 1, 0, 0, 0 }, /* intent 0: size */
                                           { 1, 0, 0, 1, 1, 1 }, /* topping, address */
                                           { 1, 0, 0, 0, 0, 0 } };
        for (int k = 0; k < 3 * 6; k++)
            CHECK(tags[k] == want[k / 6][k % 6], "intent %d tag %s: %d", k / 6, labels[k % 6],
                  tags[k]);
    }
    CHECK(strstr(notes.text, "slot types per intent: 1.0 of 3") != NULL, "the note: %s",
          notes.text);
    pl_free(tags);

    /* The slot loss's weight: as given; sized, the tagged words per example where the intent
     * is the sparse features' alone, else 1. */
    notes.len = 0;
    CHECK(train_slot_weight(2.5f, 1, 9.0, &notes) == 2.5f && notes.len == 0, "given: kept");
    CHECK(train_slot_weight(-1, 0, 9.0, &notes) == 1.0f && notes.len == 0, "encoder on: 1");
    CHECK(train_slot_weight(-1, 1, 9.25, &notes) == 9.25f &&
                  strstr(notes.text, "slot weight 9.25: the tagged words of an example"),
          "sparse intent with slots: the words per example\n%s", notes.text);
    CHECK(train_slot_weight(-1, 1, 0.4, NULL) == 1.0f, "at least 1");

    /* The slot map's rate: the sparse maps' rate, times the scale where the intent is the
     * sparse features' alone and the data tags slots. */
    notes.len = 0;
    CHECK(train_slot_map_lr(0.5f, 0, &notes) == 0.5f && notes.len == 0, "encoder on: the same");
    CHECK(train_slot_map_lr(0.5f, 1, &notes) == 0.5f * TRAIN_SLOT_MAP_LR_SCALE &&
                  strstr(notes.text, "sparse slot map's learning rate 2: 4 times"),
          "sparse intent with slots: scaled\n%s", notes.text);
    train_notes_clear(&notes);
}

int main(void)
{
    test_sizes();
    test_shape();
    test_intents();
    test_slot_tags();
    test_temperature();
    return check_done();
}
