/* sparse_train.h — the sparse features in training (nlu/sparse.h): the featurizer learned
 * from the training set and given to the model, and each step's rows of features.
 *
 * The model's sparse weights sit with its other parameters (model.h), so AdamW, clipping,
 * checkpoints and resume treat them like any other weight; the step adds their logits and
 * takes their gradients (bert_train.c through bert_sparse.c).
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
parley_status train_sparse_setup(bert_model **m, const ds_dataset *ds, int on);

/* Resets x to the rows of examples ex[0..nb) of an encoded set whose example e has
 * sentence row e of set and token rows [off[e], off[e + 1]) of set: the packed batch of
 * those examples in that order. */
parley_status train_sparse_batch(const bert_sparse_batch *set, const size_t *off, const int *ex,
                                 int nb, bert_sparse_batch *x);

/* One AdamW step over all of m's parameters (adamw_step's arrays, n_params each), the sparse
 * weights at learning rate sparse_lr instead of p's: a linear model over a few thousand
 * L2-normalized features needs far larger steps than the encoder to learn in the few
 * hundred steps of a small data set. */
void train_sparse_adamw(bert_model *m, const float *grads, float *mom, float *vel,
                        const unsigned char *decay, long t, const adamw_params *p, float sparse_lr);

#endif
