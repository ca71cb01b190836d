/* background.h — background sentences: general English that a bot was not made for, added
 * to a small training set as its out-of-scope intent (background.c).
 *
 * A model trained on a bot's few examples alone is sure of itself on anything: "what time is
 * it" comes out as one of the bot's intents with a confidence over the dialog's fallback
 * threshold, more so from a pretrained encoder. Given sentences that are none of the bot's
 * intents, it learns where its intents end, as Outlier Exposure (Hendrycks et al., ICLR
 * 2019) teaches a classifier from auxiliary outliers. The trainer adds them only where the
 * encoder reads the intent (train.c, with_background). tools/encoder.sh writes such sentences
 * (WordNet's gloss examples, tools/wordnet_examples.py --background) as a JointBERT folder,
 * every word tagged O and every label out_of_scope, into background/ beside the default
 * encoder. They teach the intent only: their words carry no slot annotation (a sentence of
 * general English may hold "a large house" or "roast chicken", words a bot's tables list),
 * so the trainer scores no tag of theirs (ds_example.untagged). bench/RESULTS.md#fewshot-10
 * and #fewshot-11 have what they change.
 */
#ifndef NLU_TRAIN_BACKGROUND_H
#define NLU_TRAIN_BACKGROUND_H

#include <stddef.h>

#include "nlu/data/dataset.h"
#include "nlu/train/defaults.h"
#include "parley/train.h"

/* The background folder a run on n_examples written examples adds sentences from (unless
 * told not to: parley_train_params.background 0), written into dir (size bytes), or NULL:
 * none when the data has 2,000 examples or more (it has room to show its own edges) or
 * n_examples is negative (not known), or when tools/encoder.sh wrote no background/ beside
 * the default encoder. */
const char *train_background_dir(int n_examples, char *dir, size_t size);

/* How many background sentences a run of p adds: p->background when positive, else sized to
 * the data (a line in notes, which may be NULL). */
int train_background_count(const parley_train_params *p, train_notes *notes);

/* Adds up to n sentences of the background folder dir to ds (finished) as examples of its
 * out-of-scope intent: out_of_scope, or nlu_fallback where ds has that and not the other, or
 * a new out_of_scope, marked untagged (their tags are O and not trained). A sentence whose
 * text ds already has is skipped.
 * *added receives how many were added. */
parley_status train_add_background(ds_dataset *ds, const char *dir, int n, int *added);

#endif
