/* parley/parley.h — the whole public API of libparley in one include.
 *
 * Link with `pkg-config --cflags --libs parley`. Every function documents ownership
 * (borrowed / owned by caller / takes ownership) and its threading rule in its own header.
 */
#ifndef PARLEY_H
#define PARLEY_H

#include "parley/status.h"
#include "parley/nlu.h"
#include "parley/pipeline.h"
#include "parley/dialog.h"
#include "parley/train.h"
#include "parley/asr.h"

#endif
