/* encoder.h — the default encoder that a new model of few examples starts from (encoder.c):
 * where it is looked for, and what an init of "none" means.
 */
#ifndef NLU_TRAIN_ENCODER_H
#define NLU_TRAIN_ENCODER_H

#include <stddef.h>

#include "parley/train.h"

/* Where the default encoder lives: $PARLEY_ENCODER when set, else
 * $XDG_CACHE_HOME/parley/encoder, else $HOME/.cache/parley/encoder, written into dir (size
 * bytes). 0 when there is no such place: PARLEY_ENCODER is "none" or empty, neither
 * variable is set, or the path does not fit. tools/encoder.sh builds it there. */
int train_encoder_path(char *dir, size_t size);

/* train_encoder_path, and 1 only when a model is there (config.json, model.safetensors and
 * vocab.txt). */
int train_default_encoder(char *dir, size_t size);

/* p->init, or NULL when it is NULL or "none" (a new model from random weights, and no
 * default encoder). */
const char *train_init_dir(const parley_train_params *p);

#endif
