/* defaults.h — training settings sized to the data: what `parley train --data nlu.yaml` uses
 * for every setting it is not given (parley/train.h: epochs or batch 0, lr 0, augment or
 * weight_decay negative), chosen from the number of examples and intents, each choice with
 * a line saying why. These are the rules' arithmetic; which rule applies to which count, and
 * in which order, is the recipe's (recipe.h); what is trained is train.c's.
 */
#ifndef NLU_TRAIN_DEFAULTS_H
#define NLU_TRAIN_DEFAULTS_H

#include <stddef.h>

#include "nlu/data/dataset.h"
#include "parley/train.h"

/* The settings that may be sized; start from p's values (train_sizes_of). */
typedef struct train_sizes {
    int epochs, batch, augment;
    float lr, weight_decay;
} train_sizes;

/* What was chosen, one line per choice ("epochs 80: ..."), NUL-terminated, as long as it
 * takes (text NULL until the first line; train_notes_clear frees it). An allocation failure
 * sticks in `failed`. The functions below take NULL for no notes. */
typedef struct train_notes {
    char *text;
    size_t len, cap;
    int failed;
} train_notes;

/* Adds a line (printf-style, no newline) to n; NULL is a no-op. */
void train_note(train_notes *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void train_notes_clear(train_notes *n);

/* Examples per step of the sparse pre-fit and of its cross-fitting; the folds of the
 * cross-fitting (the probe's, and the temperature's without dev data); the salt of their
 * seed. */
enum { TRAIN_PREFIT_BATCH = 32, TRAIN_CROSSFIT_FOLDS = 3 };
#define TRAIN_PREFIT_SALT 0x505245464954ull

/* p's values, sentinels included. */
train_sizes train_sizes_of(const parley_train_params *p);

/* The shape of a new model. Where want gives any of layers, hidden, heads and intermediate
 * (not PARLEY_AUTO), want's, the others BERT-mini's (4 layers of 256, 4 heads, 1024 feed-forward);
 * the same when n_examples is negative (pretraining: not sized); else sized to n_examples,
 * the examples as written: a small encoder (2 layers of 128, 2 heads, 256 feed-forward)
 * below 2,000, BERT-mini's from there, with a line in notes. max_positions is always want's. */
parley_train_shape train_size_shape(const parley_train_shape *want, int n_examples,
                                    train_notes *notes);

/* Whether n_examples (written, lookup variants not counted; negative: not known) is small
 * data: fewer than 2,000. Below it a new model is the small encoder (train_small_data) and
 * gets background sentences (background.h). */
int train_few_written(int n_examples);

/* Whether train_size_shape makes the small encoder of want and n_examples: no dimension
 * given, and fewer than 2,000 examples. A new model of such data starts from the default
 * encoder where one is built (encoder.h). */
int train_small_data(const parley_train_shape *want, int n_examples);

/* Where a run's model starts, as far as its learning rate goes: random weights (the default
 * encoder's too), a given trained model (--init: BERT's fine-tuning rate), or an encoder
 * pretrained on the training text by the run itself (train_size_pretrain). */
typedef enum train_start {
    TRAIN_START_NEW,
    TRAIN_START_INIT,
    TRAIN_START_OWN_TEXT,
} train_start;

/* The masked-LM epochs on the training text before a new model learns its labels
 * (parley_train_params.pretrain_epochs): want when it is not negative; else 20 for a model
 * from random weights (random_start) without sparse features (dense), with a line in notes,
 * and none otherwise. */
int train_size_pretrain(int want, int random_start, int dense, train_notes *notes);

/* Before augmentation: fills the batch, learning rate, weight decay and augmentation that s
 * leaves to the data from ds (its examples, intents and lookup tables) and start, adding a
 * line to notes for each. */
void train_size_data(train_sizes *s, const ds_dataset *ds, train_start start, train_notes *notes);

/* After augmentation: the epochs, when left to the data, from n_train examples (variants
 * included) in batches of s->batch, so that small data gets enough optimizer steps and big
 * data few enough passes (more of them for a dense model, one without sparse features);
 * none when encoder_idle (the intent is the sparse features' alone and the data tags no
 * slot: the encoder would learn nothing that is used). */
void train_size_epochs(train_sizes *s, int n_train, int encoder_idle, int dense,
                       train_notes *notes);

/* The weight of each intent in the loss, from intent[0..n) (the training set's labels, in
 * [0, n_intents)): an intent with more examples than the median intent counts as the
 * median, so one big catch-all intent (CLINC150's 100 out-of-scope examples beside 5 of
 * each other) does not teach the model to answer it for everything. *out (n_intents, owned
 * by the caller, pl_free) is NULL when every weight is 1. */
parley_status train_class_weights(const int *intent, int n, int n_intents, float **out,
                                  train_notes *notes);

/* Whether the intent is left to the sparse features alone (bert_config.intent_sparse_only):
 * `want` ON or OFF decides; AUTO sizes it from the examples per intent (n / n_intents,
 * lookup variants included: to the encoder they are examples too): below 150, or below 60
 * when the data tags slots (tags_slots nonzero). */
int train_intent_sparse_only(int n, int n_intents, int tags_slots, parley_switch want,
                             train_notes *notes);

/* Whether a new model has sparse features: `want` (--sparse ON or OFF) decides; else
 * they are on when `intent_encoder` (--intent-encoder) is OFF (the intent is asked of
 * them) or the data has lookup tables or regexes (`tables` nonzero: these reach the model
 * only through them); off from 4,000 examples as written (`written`) where the data tags
 * slots (`tags_slots`), where held-out parts of ATIS's training split measured them to
 * cost the slots; and otherwise on below 1,000 examples per intent (n / n_intents, lookup
 * variants included), where they were measured to help. */
int train_sparse_on(int n, int n_intents, int written, int tags_slots, int tables,
                    parley_switch want, parley_switch intent_encoder, train_notes *notes);

/* Whether to measure the sparse features' intent (train_intent_sparse_enough) where
 * train_intent_sparse_only gave the intent to the encoder: `want` (--intent-encoder) is AUTO,
 * the data tags slots and n_examples (as written) is below the few-examples course's bound. */
int train_check_sparse_intent(int n_examples, int tags_slots, parley_switch want);

/* Whether the intent is the sparse features' alone after all, from the written examples
 * whose intent their cross-fitted logits get (right of scored). by_count: whether
 * train_intent_sparse_only gave it to them. Where it gave the intent to the encoder, from
 * 90% the encoder is better spent on the slots alone; where it gave it to the sparse
 * features (checked only where background sentences would come with the encoder), under 72%
 * the encoder reads it. Adds a line to notes either way. */
int train_intent_sparse_enough(int right, int scored, int by_count, train_notes *notes);

/* Whether training takes the few-examples course: the sparse maps fitted alone before the
 * joint training (sparse_train.h, train_sparse_prefit) and the intents weighted to the
 * median (train_class_weights). Always when the intent is the sparse features' alone;
 * otherwise below a number of examples (n_examples, as written). sparse: whether
 * the model has sparse features (the note names them only then). On more data
 * the encoder learns what the sparse features fitted alone would answer out of context, and
 * the intents' proportions in the data are worth keeping. */
int train_few_examples(int n_examples, int intent_sparse_only, int sparse, train_notes *notes);

/* Whether a featurizer for data of n_examples examples (as written) normalizes its word rows by
 * kind (nlu/sparse/sparse.h): below the count that takes the few-examples course. There a word's
 * dozen character n-grams outweighed the word and its neighbours; on more data, where the sparse
 * maps train beside the encoder from the first step, the heavier word features answer out of
 * context what the encoder reads in it (ATIS: slot F1 -0.6 and -1.0 over 2 seeds; SNIPS at 10 and
 * 50 per intent +0.7 and +1.3 over 10; bench/RESULTS.md#fewshot-15 and #fewshot-16). */
int train_word_norm_by_kind(int n_examples);

/* The weight of the slot loss (loss = intent loss + weight * slot loss): `want` when it is
 * not negative; else 1, or, when the intent is the sparse features' alone and the data tags
 * slots (sparse_intent_with_slots), the mean number of tagged words per example
 * (words_per_example, at least 1). The slot loss is a mean over words and the intent loss a
 * mean over examples, so at weight 1 the sparse word map S takes steps a word count smaller
 * than the sentence map U (both by SGD at --sparse-lr); the encoder (AdamW) hardly feels
 * the scale. There the encoder learns the slots only, and the intent does not move with the
 * weight: SNIPS with 10 / 50 per intent, slot F1 38.9 / 60.5 at 1, 45.2 / 64.8 at 8. */
float train_slot_weight(float want, int sparse_intent_with_slots, double words_per_example,
                        train_notes *notes);

/* The peak learning rate of the sparse slot map S, given the sparse maps' `sparse_lr`:
 * TRAIN_SLOT_MAP_LR_SCALE times it when the intent is the sparse features' alone and the
 * data tags slots (sparse_intent_with_slots), else sparse_lr. There the sentence map U is
 * fitted before the encoder and frozen, so S's rate moves the slots only. SNIPS dev (3
 * seeds, 10 / 50 per intent): slot F1 45.4 / 65.2 at 1×, 47.4 / 67.4 with S at 4×, the
 * intents unchanged; U at 4× too would cost CLINC150 1.6 / 0.6 points in scope at 5 / 10
 * per intent, hence S's own rate. */
enum { TRAIN_SLOT_MAP_LR_SCALE = 4 };
float train_slot_map_lr(float sparse_lr, int sparse_intent_with_slots, train_notes *notes);

/* The slot tags each intent may be decoded with (bert_config.intent_slot_tags): an intent
 * takes O and the B- and I- tags of every slot type its own examples tag. Example e (of n)
 * has intent intent[e] and the tags slot[off[e] .. off[e + 1]) (indices into slot_labels,
 * -1 on tokens without one). For a model whose intent is the sparse features' alone: its
 * encoder, trained on the slots only, tags without knowing the intent and lends a slot type
 * to intents that never use it (SNIPS with 10 per intent: slot F1 33.1 without, 38.9 with).
 * Where the encoder learns the intents too it has learned that coupling itself, and the
 * types only cost the slots of a sentence whose intent is wrong (the sample bots: pizza
 * 98.4 to 96.7, smarthome 100 to 97.1). *out ((n_intents, n_slots) flags, the caller's to
 * pl_free). */
parley_status train_intent_slot_tags(char *const *slot_labels, int n_slots, int n_intents,
                                     const int *intent, const size_t *off, const int *slot, int n,
                                     unsigned char **out, train_notes *notes);

/* The passes of the sparse pre-fit (sparse_train.h) over n_train examples in batches of
 * batch: enough steps to fit, at most PREFIT_MAX_STEPS on big data. */
int train_prefit_epochs(int n_train, int batch, train_notes *notes);

#endif
