/* checkpoint.h — the training state a stopped run resumes from, OUT/train_state/
 * (checkpoint.c): its checkpoints and which is the latest.
 *
 *   latest              the name of the current checkpoint directory, one line
 *   step-NNNNNNNNN/     config.json, model.safetensors, vocab.txt: the weights after step N
 *                       (a model directory in its own right); optim.safetensors: the AdamW
 *                       moments "adam_m" and "adam_v" (n_params each); state.json: the step,
 *                       the run's recipe whole (recipe.h), the data's fingerprints and the
 *                       best dev score so far.
 * A checkpoint directory is written in full before `latest` is renamed to point to it, then
 * the older ones are removed, so a crash at any moment leaves a complete checkpoint (or none
 * yet). What a run does with the state (when it saves, what it checks on resume) is
 * train.c's.
 */
#ifndef NLU_TRAIN_CHECKPOINT_H
#define NLU_TRAIN_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "nlu/model/model.h"
#include "nlu/train/recipe.h"
#include "parley/train.h"

/* What state.json holds. */
typedef struct train_checkpoint {
    long step, steps, warmup; /* warmup: steps */
    train_recipe recipe;      /* read: the caller's (train_recipe_clear) */
    const char *data;         /* written: the training data's path */
    uint64_t data_hash, dev_hash;
    int has_best, best_epoch;
    parley_train_scores best;
} train_checkpoint;

/* Writes checkpoint step-<c->step> into state_dir (made when missing): m's files, the moments
 * (n_params each) and c; makes it the latest and removes the older ones (but "best"). */
parley_status train_checkpoint_save(const char *state_dir, const train_checkpoint *c,
                                    const bert_model *m, const float *adam_m, const float *adam_v);

/* The directory of state_dir's latest checkpoint, into dir (PATH_MAX bytes). */
parley_status train_checkpoint_latest(const char *state_dir, char *dir);

/* Reads checkpoint dir's state.json into *c (its recipe whole). */
parley_status train_checkpoint_read(const char *dir, train_checkpoint *c);

/* Reads checkpoint dir's moments (n_params each) into adam_m and adam_v. */
parley_status train_checkpoint_moments(const char *dir, size_t n_params, float *adam_m,
                                       float *adam_v);

#endif
