/* defaults.c — the rules that size training to the data (defaults.h). They aim at a number
 * of optimizer steps rather than of passes: a bot of 40 examples needs many passes to take
 * enough steps and still trains in seconds, while SNIPS (13,084 examples) takes enough
 * steps in a few passes. The constants are the ones measured on SNIPS and CLINC150 train/dev
 * splits of 10-50 examples per intent and on the full sets (bench/RESULTS.md, "Few-shot");
 * nothing here is tuned on a test split. It does not train: train.c applies the result.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/decode.h"
#include "nlu/train/defaults.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

enum {
    TARGET_STEPS = 1200, /* optimizer steps the epochs aim at */
    MIN_EPOCHS = 20,     /* big data: as many passes as the full SNIPS/ATIS runs measured */
    /* The same for a model without sparse features, whose encoder learns every word alone.
     * Measured (bench/RESULTS.md#fewshot-19; dev, 4 seeds, same build):
     * full SNIPS, still improving at its 20th epoch, gains slot F1 +0.7 and sentence +1.3
     * from 30 (up in every seed), its intent the same (+0.03). */
    MIN_EPOCHS_DENSE = 30,
    /* Masked-LM passes over the training text before a new model without sparse features
     * learns its labels, on the CPU; it then fine-tunes at OWN_PRETRAINED_LR for MIN_EPOCHS.
     * Measured (bench/RESULTS.md#fewshot-20; full SNIPS, dev, 4 seeds,
     * against 30 epochs from random weights): see there. */
    PRETRAIN_OWN_EPOCHS = 20,
    MAX_EPOCHS = 80,  /* tiny data: passes beyond this only memorize */
    SMALL_DATA = 200, /* examples: batches of 8 below, 16 up to MID_DATA, 32 above */
    MID_DATA = 2000,
    BIG_DATA = 5000, /* examples: no lookup variants from here on (they only cost time) */
    /* Examples per intent (the mean, lookup variants included: ATIS's few big intents keep
     * the encoder, as its median of a few dozen would not) below which the intent is the
     * sparse features' alone where no slot is tagged:
     * from scratch the encoder memorizes a few examples and its intent logits only add
     * noise. Measured with one seed each (bench/RESULTS.md, "Few-shot"): CLINC150 5 per
     * intent 73.4 alone against 71.3 joint, 20 per intent 85.5 against 85.0, SNIPS 10 per
     * intent 92.9 against 83.3, 50 per intent 96.4 against 95.4, CLINC150 100: see there. */
    SPARSE_ONLY_BELOW = 150,
    /* The same where slots are tagged: the encoder is trained for them anyway, and it reads
     * word order the bag of n-grams does not (the pizza bot, 75 per intent with its lookup
     * variants: "i'd like two large pizzas with mushrooms and extra cheese" is `inform` to
     * its sparse features alone, which have seen sizes and toppings answer questions, and
     * an order with the encoder). SNIPS at 50 per intent (no lookup tables) stays below. */
    SPARSE_ONLY_BELOW_SLOTS = 60,
    /* Examples (lookup variants included) from which the sparse maps train beside the
     * encoder from the first step instead of being fitted alone first, and the intents keep
     * the data's proportions instead of being weighted to the median; an intent that is the
     * sparse features' alone is always fitted first (the pre-fit is its training). Measured
     * (bench/RESULTS.md#fewshot-3; 1 to 3 seeds): fitted first is ahead on the
     * pizza bot (750 with its variants: slot F1 98.4 against 89.6) and on SNIPS 200 and 400
     * per intent (1,400 and 2,800: slot F1 +2.7 and +1.9), behind on ATIS (4,478, dev: intent
     * 94.4 against 97.8, slot F1 94.1 against 96.4) and full SNIPS (13,084: slot F1 86.7
     * against 91.0). ATIS's slots hang on context ("from boston" / "to boston") that word
     * features fitted alone answer out of context, and its flights are 74% of the training
     * examples and 71% of the dev split. */
    FEW_EXAMPLES_BELOW = 4000,
    /* Where the count above gives the intent to the encoder while the data tags slots and
     * its examples are few (below FEW_EXAMPLES_BELOW), the sparse features take the intent
     * alone anyway when, cross-fitted on the written examples, they get at least this share
     * of them (percent): then the encoder is better spent on the slots alone. Measured
     * (bench/RESULTS.md#fewshot-8; 3 seeds): SNIPS with 100 and 200 per
     * intent, where the sparse features get 96.4-97.9%, intent +0.2 / +0.3 and slot F1
     * +7.8 / +6.3 with the intent theirs alone; the pizza bot, where they get 80%, 2.6 points
     * of intent lower (its orders and answers share their words and differ in word order);
     * the smart-home bot (84%) 1.7 higher, within its seeds' spread. The threshold lies
     * between. */
    SPARSE_INTENT_ENOUGH = 90,
    /* The same where the count gave the intent to the sparse features of a model that starts
     * from a pretrained encoder and would get background sentences with the encoder's intent
     * (background.h): under this share the encoder reads it, and the bot learns where its
     * intents end. Measured (bench/RESULTS.md#fewshot-11): the starter bot
     * (68%) keeps its in-scope accuracy and catches three times the out-of-scope requests
     * with the encoder; SNIPS with 5 and 10 per intent (77-91%) keeps the sparse features,
     * as with the encoder and background it would lose 19 and 7 points. */
    SPARSE_INTENT_ENOUGH_FEW = 72,
    /* Written examples (before lookup variants) below which a new model is the small shape
     * (2 layers of 128) instead of BERT-mini's (4 of 256): from scratch, on so few examples,
     * the bigger encoder learns no more. Measured (bench/RESULTS.md#fewshot-8;
     * 2 or 3 seeds): the sample bots and SNIPS with 10 to 200 per intent (70 to 1,400
     * examples), intent and slot F1 the same within the seeds' spread, in a sixth to a ninth
     * of the CPU time; SNIPS with 400 per intent (2,800) slot F1 1.6 lower, ATIS (4,478, one
     * seed) 0.9. */
    SMALL_SHAPE_BELOW = 2000,
    /* Examples per intent (the mean, lookup variants included) from which a new model has no
     * sparse features: there the encoder has seen each intent's words often enough that the
     * features' linear maps add nothing it lacks. Measured (bench/RESULTS.md, "Few-shot",
     * dev, best epoch): full SNIPS (1,870 per intent), 5 seeds, intent 98.71 with them
     * against 98.91 without (lower in 4 seeds of 5), slot F1 91.94 against 91.98; CLINC150
     * (100 per intent, no slots) has them. Data that tags slots goes without them from
     * FEW_EXAMPLES_BELOW examples as written whatever the count per intent (train_sparse_on):
     * on held-out tenths of ATIS's training split (263 per intent) they cost the slots
     * (bench/RESULTS.md#recipe-sparse). */
    SPARSE_OFF_FROM = 1000,
    /* Variants per example drawn from the data's own values (ds_augment_own_values) where
     * the data has no lookup tables, tags slots and has fewer examples per intent than
     * SPARSE_ONLY_BELOW_SLOTS (the intent is then the sparse features'): a linear map that
     * has seen each movie name with one intent reads the name, not "i want to see".
     * Measured (bench/RESULTS.md#fewshot-18; SNIPS, 10 seeds): intent
     * 96.77 -> 97.03 at 50 per intent (up in 6 seeds, down in 1), 92.64 -> 92.80 at 10,
     * slot F1 -0.1 and +0.8. More examples per intent were not measured. */
    OWN_VALUE_VARIANTS = 4,
    PREFIT_EPOCHS = 40,       /* passes of the sparse pre-fit on small data ... */
    PREFIT_MAX_STEPS = 20000, /* ... and the most steps it takes on big data */
};

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void train_note(train_notes *n, const char *fmt, ...)
{
    va_list ap, again;
    if (!n || n->failed)
        return;
    va_start(ap, fmt);
    va_copy(again, ap);
    const int w = vsnprintf(NULL, 0, fmt, ap);
    const size_t need = n->len + (w > 0 ? (size_t)w : 0) + 2;
    if (w >= 0 && need > n->cap) {
        char *grown = pl_realloc(n->text, need * 2);
        n->failed = !grown;
        n->text = grown ? grown : n->text;
        n->cap = grown ? need * 2 : n->cap;
    }
    if (w >= 0 && !n->failed) {
        vsnprintf(n->text + n->len, n->cap - n->len, fmt, again);
        n->len += (size_t)w;
        n->text[n->len++] = '\n';
        n->text[n->len] = 0;
    }
    n->failed |= w < 0;
    va_end(again);
    va_end(ap);
}

void train_notes_clear(train_notes *n)
{
    pl_free(n->text);
    *n = (train_notes){ 0 };
}

train_sizes train_sizes_of(const parley_train_params *p)
{
    return (train_sizes){ p->epochs, p->batch, p->augment, p->lr, p->weight_decay };
}

int train_few_written(int n_examples)
{
    return n_examples >= 0 && n_examples < SMALL_SHAPE_BELOW;
}

/* Whether want gives any dimension of the encoder (not PARLEY_AUTO). */
static int shape_given(const parley_train_shape *want)
{
    return want->layers != PARLEY_AUTO || want->hidden != PARLEY_AUTO ||
           want->heads != PARLEY_AUTO || want->intermediate != PARLEY_AUTO;
}

/* want's dimension, or BERT-mini's where it is PARLEY_AUTO */
static int given_or(int want, int mini)
{
    return want == PARLEY_AUTO ? mini : want;
}

int train_small_data(const parley_train_shape *want, int n_examples)
{
    return !shape_given(want) && train_few_written(n_examples);
}

parley_train_shape train_size_shape(const parley_train_shape *want, int n_examples,
                                    train_notes *notes)
{
    const parley_train_shape mini = { 4, 256, 4, 1024, want->max_positions },
                             small = { 2, 128, 2, 256, want->max_positions };
    if (shape_given(want) || n_examples < 0)
        return (parley_train_shape){ given_or(want->layers, mini.layers),
                                     given_or(want->hidden, mini.hidden),
                                     given_or(want->heads, mini.heads),
                                     given_or(want->intermediate, mini.intermediate),
                                     want->max_positions };
    const int few = train_small_data(want, n_examples);
    const parley_train_shape *s = few ? &small : &mini;
    train_note(notes, "shape %d layers of %d (%d heads, %d feed-forward): %d examples, %s %d%s",
               s->layers, s->hidden, s->heads, s->intermediate, n_examples,
               few ? "under" : "at least", SMALL_SHAPE_BELOW,
               few ? ": on so few a bigger encoder learns no more" : ": BERT-mini's");
    return *s;
}

/* The peak rate of an encoder pretrained on the training text (train_size_pretrain) at
 * batches of 32: half a new model's, as measured (bench/RESULTS.md, "Pretraining"). */
static const float OWN_PRETRAINED_LR = 5e-4f;

int train_size_pretrain(int want, int random_start, int dense, train_notes *notes)
{
    if (want >= 0)
        return want;
    if (!random_start || !dense)
        return 0; /* a pretrained start, or sparse features that read the words: no note */
    train_note(notes,
               "pretrain %d: a new model without sparse features learns the training text "
               "first (masked LM), then its labels: it reads every word through its encoder",
               PRETRAIN_OWN_EPOCHS);
    return PRETRAIN_OWN_EPOCHS;
}

void train_size_data(train_sizes *s, const ds_dataset *ds, train_start start, train_notes *notes)
{
    const int n = ds->n_examples, ni = ds->n_intents > 0 ? ds->n_intents : 1;
    const double per = (double)n / ni;
    if (s->augment < 0) {
        /* Each variant shows a slot value the examples do not: worth most when the examples
         * are few, and only time when they are many. */
        if (!ds->n_lookups) {
            s->augment = ds->n_slots && per < SPARSE_ONLY_BELOW_SLOTS ? OWN_VALUE_VARIANTS : 0;
            if (s->augment)
                train_note(notes,
                           "augment %d: %.0f examples per intent and no lookup tables: variants "
                           "with the values the intent's own examples tag, so the intent is read "
                           "from the words around them",
                           s->augment, per);
            else
                train_note(notes,
                           "augment 0: the data has no lookup tables to draw slot values "
                           "from%s",
                           ds->n_slots ? ", and enough examples of its own" : "");
        } else {
            s->augment = per < 10 ? 8 : per < 50 ? 4 : n < BIG_DATA ? 2 : 0;
            train_note(
                    notes,
                    "augment %d: %.0f examples per intent; variants with lookup values are worth "
                    "most to few examples%s",
                    s->augment, per, n >= BIG_DATA ? " and only cost time with many" : "");
        }
    }
    if (s->batch <= 0) {
        s->batch = n < SMALL_DATA ? 8 : n < MID_DATA ? 16 : 32;
        train_note(notes,
                   "batch %d: %d examples; smaller batches give small data more optimizer steps",
                   s->batch, n);
    }
    if (s->lr <= 0) {
        /* A new model: 1e-3 at batches of 32 (measured on SNIPS and ATIS), scaled with the
         * square root of the batch as the gradient noise grows; one pretrained here, half. */
        const double scale = sqrt(s->batch / 32.0);
        if (start == TRAIN_START_INIT) {
            s->lr = parley_train_default_lr(1);
            train_note(notes,
                       "lr %g: fine-tuning a trained encoder (--init) wants BERT's small rate",
                       (double)s->lr);
        } else if (start == TRAIN_START_OWN_TEXT) {
            s->lr = OWN_PRETRAINED_LR * (float)scale;
            train_note(notes,
                       "lr %.2g: 5e-4 at batches of 32 for an encoder pretrained on the "
                       "training text, scaled by sqrt(batch / 32)",
                       (double)s->lr);
        } else {
            s->lr = parley_train_default_lr(0) * (float)scale;
            train_note(notes, "lr %.2g: 1e-3 at batches of 32, scaled by sqrt(batch / 32)",
                       (double)s->lr);
        }
    }
    if (s->weight_decay < 0) {
        s->weight_decay = 0.01f;
        train_note(notes, "weight decay 0.01: BERT's value");
    }
}

void train_size_epochs(train_sizes *s, int n_train, int encoder_idle, int dense, train_notes *notes)
{
    if (s->epochs > 0)
        return;
    if (encoder_idle) {
        s->epochs = 0;
        train_note(notes, "epochs 0: the intent is the sparse features' and no slot is tagged, so "
                          "the encoder has nothing to learn (the sparse pre-fit is the training)");
        return;
    }
    const int per_epoch = (n_train + s->batch - 1) / s->batch;
    const int want = (TARGET_STEPS + per_epoch - 1) / per_epoch;
    const int least = dense ? MIN_EPOCHS_DENSE : MIN_EPOCHS;
    s->epochs = want < least ? least : want > MAX_EPOCHS ? MAX_EPOCHS : want;
    train_note(notes, "epochs %d: %d steps of %d per epoch; aiming at %d steps, %d to %d epochs%s",
               s->epochs, per_epoch, s->batch, TARGET_STEPS, least, MAX_EPOCHS,
               dense ? " (no sparse features: the encoder learns every word alone)" : "");
}

/* The median of the per-intent counts of intent[0..n); counts (n_intents) is filled. */
static double median_count(const int *intent, int n, int n_intents, int *counts)
{
    int *sorted = pl_malloc(((size_t)n_intents + 1) * sizeof *sorted);
    for (int i = 0; i < n_intents; i++)
        counts[i] = 0;
    for (int i = 0; i < n; i++)
        counts[intent[i]]++;
    if (!sorted)
        return (double)n / n_intents; /* the mean will do */
    for (int i = 0; i < n_intents; i++)
        sorted[i] = counts[i];
    qsort(sorted, (size_t)n_intents, sizeof *sorted, cmp_int);
    double med = n_intents % 2 ? sorted[n_intents / 2]
                               : 0.5 * (sorted[n_intents / 2 - 1] + sorted[n_intents / 2]);
    pl_free(sorted);
    return med;
}

parley_status train_class_weights(const int *intent, int n, int n_intents, float **out,
                                  train_notes *notes)
{
    int *counts = pl_malloc(((size_t)n_intents + 1) * sizeof *counts), heavy = 0;
    *out = NULL;
    if (!counts)
        return pl_nomem("intent weights");
    const double med = median_count(intent, n, n_intents, counts);
    for (int i = 0; i < n_intents; i++)
        heavy += counts[i] > med;
    if (heavy && !(*out = pl_malloc((size_t)n_intents * sizeof **out))) {
        pl_free(counts);
        return pl_nomem("intent weights");
    }
    for (int i = 0; heavy && i < n_intents; i++)
        (*out)[i] = counts[i] > med ? (float)(med / counts[i]) : 1.0f;
    if (heavy)
        train_note(notes,
                   "intent weights: %d intent(s) with more than the median %.0f examples count as "
                   "%.0f",
                   heavy, med, med);
    pl_free(counts);
    return PARLEY_OK;
}

/* Examples per intent: n / n_intents (lookup variants included: to the encoder they are
 * examples too). */
static double per_intent(int n, int n_intents)
{
    return (double)n / (n_intents > 0 ? n_intents : 1);
}

/* The note of a choice made on the examples per intent against a bound. */
static void note_per_intent(train_notes *notes, const char *choice, double per, int bound,
                            const char *why)
{
    train_note(notes, "%s: %.0f examples per intent (lookup variants included), %s %d%s", choice,
               per, per < bound ? "under" : "at least", bound, why);
}

int train_intent_sparse_only(int n, int n_intents, int tags_slots, parley_switch want,
                             train_notes *notes)
{
    if (want != PARLEY_SWITCH_AUTO)
        return want == PARLEY_SWITCH_OFF;
    const double per = per_intent(n, n_intents);
    const int below = tags_slots ? SPARSE_ONLY_BELOW_SLOTS : SPARSE_ONLY_BELOW;
    const int only = per < below;
    note_per_intent(notes, only ? "intent encoder off" : "intent encoder on", per, below,
                    only ? ": with so few the intent is the sparse features' alone" : "");
    return only;
}

int train_sparse_on(int n, int n_intents, int written, int tags_slots, int tables,
                    parley_switch want, parley_switch intent_encoder, train_notes *notes)
{
    if (want != PARLEY_SWITCH_AUTO)
        return want == PARLEY_SWITCH_ON;
    if (intent_encoder == PARLEY_SWITCH_OFF)
        return 1; /* the intent asked of them */
    if (tables) {
        train_note(notes, "sparse features on: the data has lookup tables or regexes, which "
                          "reach the model through them");
        return 1;
    }
    if (tags_slots && written >= FEW_EXAMPLES_BELOW) {
        train_note(notes,
                   "sparse features off: %d examples written that tag slots, at least %d: the "
                   "encoder reads each word in its context, and the word features cost the "
                   "slots",
                   written, FEW_EXAMPLES_BELOW);
        return 0;
    }
    const double per = per_intent(n, n_intents);
    const int on = per < SPARSE_OFF_FROM;
    note_per_intent(notes, on ? "sparse features on" : "sparse features off", per, SPARSE_OFF_FROM,
                    on ? "" : ": the encoder has seen each intent's words often enough");
    return on;
}

int train_check_sparse_intent(int n_examples, int tags_slots, parley_switch want)
{
    return want == PARLEY_SWITCH_AUTO && tags_slots && n_examples < FEW_EXAMPLES_BELOW;
}

int train_intent_sparse_enough(int right, int scored, int by_count, train_notes *notes)
{
    const int bar = by_count ? SPARSE_INTENT_ENOUGH_FEW : SPARSE_INTENT_ENOUGH;
    const int enough = scored > 0 && 100.0 * right >= (double)bar * scored;
    const char *verdict = enough == by_count ? "stays" : "goes";
    train_note(notes,
               "intent encoder %s %s: the sparse features alone get the intent of %d of %d "
               "written examples, cross-fitted (%s %d%%)%s",
               verdict, enough ? "off" : "on", right, scored, enough ? "at least" : "under", bar,
               enough     ? ": the encoder is better spent on the slots alone"
               : by_count ? ": the encoder reads it, and the background sentences teach "
                            "where the intents end"
                          : "");
    return enough;
}

int train_few_examples(int n_examples, int intent_sparse_only, int sparse, train_notes *notes)
{
    if (intent_sparse_only) {
        train_note(notes,
                   "few examples: the intent is the sparse features' alone, so they are "
                   "fitted alone first%s and the intents weighted to the median",
                   train_word_norm_by_kind(n_examples) ? ", their word rows normalized by kind,"
                                                       : "");
        return 1;
    }
    const int few = n_examples < FEW_EXAMPLES_BELOW;
    train_note(notes, "%s examples: %d written, %s %d: %s%s", few ? "few" : "many", n_examples,
               few ? "under" : "at least", FEW_EXAMPLES_BELOW,
               !sparse ? ""
               : few   ? "the sparse features are fitted alone first, their word rows "
                         "normalized by kind, and "
                       : "the sparse features train beside the encoder from the first step and ",
               few ? "the intents weighted to the median"
                   : "the intents keep the data's proportions");
    return few;
}

int train_word_norm_by_kind(int n_examples)
{
    return n_examples < FEW_EXAMPLES_BELOW;
}

float train_slot_weight(float want, int sparse_intent_with_slots, double words_per_example,
                        train_notes *notes)
{
    if (want >= 0)
        return want;
    if (!sparse_intent_with_slots)
        return 1.0f;
    const float w = words_per_example > 1 ? (float)words_per_example : 1.0f;
    train_note(notes,
               "slot weight %.3g: the tagged words of an example (the intent is the sparse "
               "features', so the slots' weight sets the word map's steps, not the intent)",
               (double)w);
    return w;
}

float train_slot_map_lr(float sparse_lr, int sparse_intent_with_slots, train_notes *notes)
{
    if (!sparse_intent_with_slots)
        return sparse_lr;
    const float lr = sparse_lr * TRAIN_SLOT_MAP_LR_SCALE;
    train_note(notes,
               "sparse slot map's learning rate %.3g: %d times the sparse maps' (the intent is "
               "the sparse features', fitted first, so this rate moves the slots only)",
               (double)lr, TRAIN_SLOT_MAP_LR_SCALE);
    return lr;
}

parley_status train_intent_slot_tags(char *const *slot_labels, int n_slots, int n_intents,
                                     const int *intent, const size_t *off, const int *slot, int n,
                                     unsigned char **out, train_notes *notes)
{
    nlu_tagset ts;
    parley_status st;
    *out = NULL;
    if ((st = nlu_tagset_init(&ts, slot_labels, n_slots)) != PARLEY_OK)
        return st;
    const size_t NT = (size_t)ts.n_types;
    unsigned char *used = pl_calloc((size_t)n_intents * NT + 1, 1); /* (n_intents, types) */
    unsigned char *tags = pl_malloc((size_t)n_intents * (size_t)n_slots + 1);
    if (!used || !tags) {
        pl_free(used);
        pl_free(tags);
        nlu_tagset_clear(&ts);
        return pl_nomem("the slot types of each intent");
    }
    for (int e = 0; e < n; e++)
        for (size_t k = off[e]; k < off[e + 1]; k++)
            if (slot[k] >= 0 && ts.type[slot[k]] >= 0)
                used[(size_t)intent[e] * NT + (size_t)ts.type[slot[k]]] = 1;
    size_t pairs = 0;
    for (int i = 0; i < n_intents; i++) {
        for (size_t y = 0; y < NT; y++)
            pairs += used[i * NT + y];
        for (int t = 0; t < n_slots; t++)
            tags[(size_t)i * n_slots + t] = ts.type[t] < 0 || used[i * NT + (size_t)ts.type[t]];
    }
    train_note(notes,
               "slot types per intent: %.1f of %zu on average, as the examples tag them "
               "(decoding keeps each intent to its own)",
               n_intents ? (double)pairs / n_intents : 0.0, NT);
    pl_free(used);
    nlu_tagset_clear(&ts);
    *out = tags;
    return PARLEY_OK;
}

int train_prefit_epochs(int n_train, int batch, train_notes *notes)
{
    const int per_epoch = (n_train + batch - 1) / batch;
    int epochs = PREFIT_EPOCHS;
    if ((long)epochs * per_epoch > PREFIT_MAX_STEPS)
        epochs = PREFIT_MAX_STEPS / per_epoch > 1 ? PREFIT_MAX_STEPS / per_epoch : 1;
    train_note(notes, "sparse pre-fit %d epochs of %d steps (batches of %d)", epochs, per_epoch,
               batch);
    return epochs;
}
