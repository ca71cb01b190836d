/* sparse_train.h — the sparse features in training (nlu/sparse/sparse.h): the featurizer learned
 * from the training set and given to the model, and each step's rows of features.
 *
 * The model's sparse weights sit with its other parameters (nlu/model/model.h), so clipping,
 * checkpoints and resume treat them like any other weight; the step adds their logits and
 * takes their gradients (bert_train.c through bert_sparse.c). They differ in how they
 * learn: fitted alone first (the pre-fit below), then by SGD with momentum beside the
 * encoder's AdamW.
 */
#ifndef NLU_TRAIN_SPARSE_TRAIN_H
#define NLU_TRAIN_SPARSE_TRAIN_H

#include "nlu/bert.h"
#include "nlu/data/dataset.h"
#include "nlu/train/bert_train.h"

/* With `on`, replaces *m by the same model with a featurizer learned from ds's texts and
 * lookup tables, and zero sparse weights (a vocabulary that comes out empty leaves the model
 * without); without `on`, by the same model without sparse features (when it had some, as an
 * --init model may). The encoder and heads are copied. *m is freed when replaced. */
parley_status train_sparse_setup(bert_model **m, const ds_dataset *ds, int on,
                                 int word_norm_by_kind);

/* Resets x to the rows of examples ex[0..nb) of an encoded set whose example e has
 * sentence row e of set and token rows [off[e], off[e + 1]) of set: the packed batch of
 * those examples in that order. */
parley_status train_sparse_batch(const bert_sparse_batch *set, const size_t *off, const int *ex,
                                 int nb, bert_sparse_batch *x);

/* One step over all of m's parameters (adamw_step's arrays, n_params each): AdamW for the
 * encoder and heads, SGD with momentum 0.9 for the sparse weights, at learning rate sparse_lr
 * for the intent map U and slot_lr for the slot map S (their momentum kept in mom; vel unused
 * there), except U of a model whose intent is theirs alone (intent_sparse_only), left as the
 * pre-fit made it. Adam's per-weight step sizes give a feature seen in one example as large a
 * weight as a common one, so the linear model memorizes rare n-grams; plain gradient steps
 * keep the weights near the smallest that fit, as a linear SVM's are (bench/RESULTS.md,
 * "Few-shot": 67.5 against 72.5 on CLINC150 k = 5). */
void train_sparse_update(bert_model *m, const float *grads, float *mom, float *vel,
                         const unsigned char *decay, long t, const adamw_params *p, float sparse_lr,
                         float slot_lr);

/* The training set as the pre-fit reads it (train.c's encoded set): example e has intent
 * intent[e], sentence row e of rows->sent and token rows [off[e], off[e + 1]) of rows->tok,
 * whose slot tags are slot[off[e] ...] (-1: not scored), and was written in the data
 * (source[e] = e) or made from example source[e] by lookup substitution. A written example
 * and its variants share one example's weight in the intent loss (an intent whose examples
 * hold many lookup values would otherwise count each several times, and its words with
 * them); each is a whole example to the slots. source NULL: all written. Borrowed.
 * crossfit_written: cross-fitting fits on the written examples alone, for variants whose
 * slot values were drawn from the data's own examples (ds_augment_own_values): a held-out
 * example's values would reach the fits through them. */
typedef struct sparse_prefit_set {
    int n;
    int crossfit_written;
    const int *source;
    const size_t *off;
    const int *intent, *slot;
    const bert_sparse_batch *rows;
} sparse_prefit_set;

typedef struct sparse_prefit_params {
    int epochs, batch;
    float lr, slot_lr; /* of U and S: SGD with momentum 0.9, as train_sparse_update */
    float slot_weight;
    uint64_t seed;
    const float *class_weight; /* (n_intents) each intent's weight in the loss; NULL: 1 */
} sparse_prefit_params;

/* Fits m's sparse weights alone, the encoder left out (its logits taken as zero): SGD on
 * the sparse logits' loss (per example: weighted intent cross-entropy + slot_weight times
 * the mean cross-entropy of its tagged words), for p->epochs passes over the set in an order drawn
 * from p->seed. This is a convex problem (two linear softmax classifiers), so it is solved
 * well before the encoder starts; the joint training then teaches the encoder what the
 * sparse features miss, instead of letting a network that can memorize a small training
 * set take the whole loss before the features have learned anything. *final_loss (may be
 * NULL) is the mean loss of the last pass. Only the sparse weights change. */
parley_status train_sparse_prefit(bert_model *m, const sparse_prefit_set *set,
                                  const sparse_prefit_params *p, double *final_loss);

/* Held-out intent logits (n, n_intents) of every example of set, variants included, by
 * `folds`-fold cross-fitting: the sparse intent map is fitted as by train_sparse_prefit on
 * the examples outside a fold (each intent's written examples dealt round the folds in an
 * order drawn from p->seed, variants following their source; the written ones alone where
 * set->crossfit_written) and scores the fold's. m is
 * only read (its config and shapes); what the folds fit is thrown away. For calibrating a
 * model whose intent is the sparse features' alone without a dev set (calibrate.h). */
parley_status train_sparse_crossfit(const bert_model *m, const sparse_prefit_set *set,
                                    const sparse_prefit_params *p, int folds, float *logits);

/* The recipe's probe (recipe.h), before any model is built: the intent of ds's written
 * examples (variant_of -1) by `folds`-fold cross-fitting of a sparse intent map alone over a
 * featurizer learned from ds (word rows by kind as word_norm_by_kind), fitted as
 * train_sparse_crossfit fits (p; crossfit_written as there). *right of *scored get their
 * intent; *scored is 0 where ds yields no sentence features. */
parley_status train_sparse_probe(const ds_dataset *ds, int word_norm_by_kind, int crossfit_written,
                                 const sparse_prefit_params *p, int folds, int *right, int *scored);

#endif
