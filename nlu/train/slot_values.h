/* slot_values.h — the values each slot type knows, as a training run records them in the model
 * (config.json "slot_values", nlu/model/slot_values.h), so that parsing resolves a near miss
 * of one of them.
 */
#ifndef NLU_TRAIN_SLOT_VALUES_H
#define NLU_TRAIN_SLOT_VALUES_H

#include "nlu/data/dataset.h"
#include "nlu/model/model.h"

/* Replaces *out with ds's slot values, per slot type in this order until
 * BERT_SLOT_VALUES_MAX (the rest make the slot type open): the values its written examples
 * tag (their words, then their inline canonical values), its lookup table, every synonym
 * (canonical value and surface forms) one of those values belongs to, then the values the
 * data's variants and copies tag. A slot type's values write digits when most of them hold
 * a word that starts with a digit, and more of them than hold a number word
 * (sdk/base/numwords.h): addresses and temperatures, not titles with a number now and then.
 * A slot type is also open where the bot does not list its values: no lookup table, no
 * synonym of its values, and its written examples tag most values once (fewer than two
 * tags a value on average: artists, titles, places of a large set). There a value the data
 * never shows is as likely as a near miss of one it does, so only number words resolve
 * (on SNIPS's dev values: 8.2% of the values train never tags were moved to one it does,
 * with every slot type listed; bench/RESULTS.md#near-misses). */
parley_status train_slot_values_of(const ds_dataset *ds, bert_slot_values *out);

#endif
