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

/* p->init, or NULL when it is NULL or "none" (a new model from random weights, and no
 * default encoder). */
const char *train_init_dir(const parley_train_params *p);

#endif
