/* train.h — what the training loop (nlu/train/train.c) offers inside the library beyond
 * its public face: the run itself, parley_train_run(), and its params, progress and result
 * are public (parley/train.h); this header adds the scorer the loop uses for dev sets and
 * the masked-LM pretraining of a run's new model on its own text (pretrain.c's loop).
 *
 * How a run goes, beyond what parley/train.h says:
 *   - init's heads are replaced, when its label lists differ from the training set's, by
 *     new ones drawn from normal(0, 0.02); a new model is initialized as BERT is;
 *   - augmentation gives each training example with a span of a slot type that has a
 *     lookup table (Rasa's `- lookup: SLOT`) up to `augment` variants, every such span
 *     replaced by a value drawn from its table (ds_augment_lookups, from the seed); data
 *     without lookup tables (JointBERT folders have none) draws from the values its own
 *     examples of the same intent tag (ds_augment_own_values). Synonyms' surface forms join
 *     the lookup tables first (or, for a slot without one, take the canonical value's place
 *     in copies of its examples), and the model records their canonical values (synonyms.h);
 *     lookup tables and regexes reach it through the sparse features;
 *   - with sparse features on (the default), the featurizer is learned from the training
 *     set after augmentation (nlu/sparse/sparse.h, train/sparse_train.c) and its two maps train
 *     with the rest, at their own peak learning rate; the GPU trainer refuses such a model;
 *   - a new model from random weights without sparse features (full SNIPS) first learns the
 *     training text with the masked-LM objective on the CPU (train_pretrain_model, below;
 *     pretrain_epochs), then its labels at half a new model's learning rate;
 *   - labels are the training set's intents and slot tags (sorted, see dataset.h). A word's
 *     tag goes to its first word piece; other pieces, [CLS] and [SEP] are not scored. Dev
 *     examples whose intent or slot type the training set lacks are kept and scored: the
 *     model cannot predict those labels, so they count as wrong;
 *   - everything random is a function of the seed and the step (the epoch's shuffle, each
 *     step's dropout), which is what makes a resumed run end byte-identical;
 *   - batches are packed without padding (bert.h), so the loop does not bucket by length.
 * With the defaults the sample pizza bot (samples/pizza/nlu.yaml: 315 distinct examples +
 * 240 lookup variants) trains in under a minute on 2 cores (bench/RESULTS.md).
 */
#ifndef NLU_TRAIN_TRAIN_H
#define NLU_TRAIN_TRAIN_H

#include "nlu/data/dataset.h"
#include "nlu/data/metrics.h"
#include "nlu/model/model.h"
#include "parley/train.h"

/* Scores model m on ds through the inference path: tokenize, bert_forward, the first
 * piece's tag for each word, BIO repaired as parley_nlu_parse reports it. Labels are
 * compared by name. *out is owned by the caller (mt_report_free). With temperature non-NULL
 * it also fits the intent temperature on ds (nlu/train/calibrate.h) into *temperature. */
parley_status train_evaluate(const bert_model *m, const ds_dataset *ds, mt_report **out,
                             float *temperature);

/* Pretrains m's encoder in place with parley_pretrain_run's masked-LM loop on lines[0..n)
 * (repeats dropped, p->holdout of them held out and scored after every epoch), with p's
 * settings; p->text, n_text, train.out, init, vocab and shape are not read, and nothing is
 * written. m stays the caller's; only its encoder (embeddings and layers) changes, the
 * MLM head is made and dropped here. Progress events carry pretraining = 1; a stop leaves
 * m as far as it got, with result->stopped set. result may be NULL. */
parley_status train_pretrain_model(bert_model *m, const char *const *lines, int n,
                                   const parley_pretrain_params *p, parley_pretrain_result *result);

#endif
