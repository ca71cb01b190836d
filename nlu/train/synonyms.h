/* synonyms.h — the training data's synonyms in a training run (synonyms.c).
 *
 * Rasa's `- synonym: CANONICAL` entries and inline canonical values say what a surface form
 * stands for. A model that never saw the surface form as a slot value does not tag it ("a big
 * pizza" held no size), so before the lookup variants are drawn the surface forms join the
 * lookup table of each slot type whose values hold the canonical value (as a value of the
 * table, or as the text or canonical value of a span of that type in a written example): the
 * variants then put them in the examples' sentences, and the sparse features match them as
 * the table's values. Where the slot type has no lookup table, the examples with the
 * canonical value are copied with each surface form in its place instead. The model
 * then records every surface form with its canonical value (config.json "entity_synonyms"),
 * so parsing reports the canonical value beside the span typed (nlu/model/synonyms.c).
 */
#ifndef NLU_TRAIN_SYNONYMS_H
#define NLU_TRAIN_SYNONYMS_H

#include "nlu/data/dataset.h"
#include "nlu/model/model.h"
#include "nlu/train/defaults.h"

/* Adds ds's synonyms' surface forms to the lookup tables described above (compared without
 * case or extra spaces; a value a table holds already is not added again). *added receives
 * the values added; notes (may be NULL) a line that says so. */
parley_status train_synonym_lookups(ds_dataset *ds, int *added, train_notes *notes);

/* For a slot type without a lookup table: a copy of each written example with a span of it
 * whose value (its text, or its canonical value) is a synonym's canonical value, once for
 * each surface form, which takes the span's place (tagged B-/I-; the copy's variant_of is
 * the example). A text the data has already is not added. *added receives the copies;
 * notes (may be NULL) a line that says so. */
parley_status train_synonym_variants(ds_dataset *ds, int *added, train_notes *notes);

/* Replaces *out with ds's synonyms: each surface form -> its canonical value. */
parley_status train_synonyms_of(const ds_dataset *ds, bert_synonyms *out);

#endif
