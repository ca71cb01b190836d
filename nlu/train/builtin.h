/* builtin.h — built-in examples: common short replies added to a small bot's conventional
 * intents (builtin.c).
 *
 * A bot written from a few examples per intent knows "yes" and "bye" but not "yep", "nah"
 * or "see ya": the replies every dialog hears, which no bot author lists in full. Where a
 * bot names an intent as Rasa's templates and most bots do (greet, goodbye, affirm, deny,
 * thank_you), the trainer adds a list of such replies, written for parley, as more
 * examples of it, the way an assistant platform's built-in yes / no / stop intents come with
 * their utterances. They teach the intent only (ds_example.untagged, as the background
 * sentences): a reply holds no slot value. bench/RESULTS.md#fewshot-13 has
 * what they change.
 */
#ifndef NLU_TRAIN_BUILTIN_H
#define NLU_TRAIN_BUILTIN_H

#include "nlu/data/dataset.h"
#include "nlu/train/defaults.h"

/* Whether a run on n_examples written examples adds them: `want` (--builtin) ON or OFF
 * decides; AUTO: where the data has under 2,000 examples (as the background sentences: more
 * data shows its own replies). */
int train_builtin_on(parley_switch want, int n_examples);

/* Adds to ds (finished) the built-in replies of each conventional intent it has, as examples
 * of it marked untagged; a reply whose text ds already has is skipped. *added receives how
 * many were added; notes (may be NULL) a line that says so. */
parley_status train_add_builtin(ds_dataset *ds, int *added, train_notes *notes);

#endif
