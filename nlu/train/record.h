/* record.h — OUT/training.json: how a model directory was made (record.c).
 *
 * parley_train_run() opens a record when it starts, adds every epoch's loss and dev scores
 * as they come, and writes the file when the run completes. The public side
 * (parley_train_record_compare, parley_train_record_data) reads it back. One record per
 * run, on the run's thread.
 */
#ifndef NLU_TRAIN_RECORD_H
#define NLU_TRAIN_RECORD_H

#include "parley/train.h"

typedef struct train_record train_record;

/* Starts the record of a run with params p on n_examples written examples (lookup variants
 * not counted): the checksums of the data and of the model it starts from (train_start_dir)
 * are taken now. On success *out is owned by the caller (train_record_free). */
parley_status train_record_open(const parley_train_params *p, int n_examples, train_record **out);
/* Adds the run's recipe (train_recipe_json's text) as "recipe". */
parley_status train_record_recipe(train_record *r, const char *json);
/* Adds an epoch (a PARLEY_TRAIN_EPOCH progress). Out of memory only loses the line. */
void train_record_epoch(train_record *r, const parley_train_progress *pr);
/* Writes DIR/training.json atomically for the run that ended with res; dir is OUT, or the
 * folder that is about to replace it. */
parley_status train_record_write(train_record *r, const char *dir, const parley_train_result *res);
/* NULL is a no-op. */
void train_record_free(train_record *r);

#endif
