/* encoder.h — the default encoder that a new model of few examples starts from (encoder.c):
 * where it is looked for, and what an init of "none" means.
 */
#ifndef NLU_TRAIN_ENCODER_H
#define NLU_TRAIN_ENCODER_H

#include <stddef.h>

#include "parley/train.h"

/* 1 when the default encoder is there (config.json, model.safetensors and vocab.txt), its
 * folder written into dir (size bytes): $PARLEY_ENCODER when set ("none" or empty: no
 * default encoder), else $XDG_CACHE_HOME/parley/encoder, else $HOME/.cache/parley/encoder
 * (pl_cache_dir). tools/encoder.sh builds it there. */
int train_default_encoder(char *dir, size_t size);

/* 1 when the default encoder's folder (as train_default_encoder looks for it) holds the
 * folder `name`, its path written into path (size bytes): tools/encoder.sh writes the
 * background sentences there too (background.h). */
int train_encoder_folder(const char *name, char *path, size_t size);

/* p->init, or NULL when it is NULL or "none" (a new model from random weights, and no
 * default encoder). */
const char *train_init_dir(const parley_train_params *p);

/* The model a new run of p on n_examples written examples starts from: train_init_dir(p),
 * else the default encoder (its folder written into dir) when p gives no init, vocabulary or
 * shape and the data is small (train_small_data), else NULL. n_examples < 0: not known, so
 * not small. */
const char *train_start_dir(const parley_train_params *p, int n_examples, char *dir, size_t size);

#endif
