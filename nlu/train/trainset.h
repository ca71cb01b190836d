/* trainset.h — the training set as a run trains on it (trainset.c): every extension of the
 * data as written, in one place and one order, and the profile a recipe is decided from.
 *
 * The extensions, in this order: the built-in replies (builtin.h), the synonyms' surface forms
 * (in the lookup tables, or in copies of the examples: synonyms.h), the lookup or own-value
 * variants (ds_augment_lookups, ds_augment_own_values), the lower-case copies
 * (ds_augment_lowercase), and last the background sentences (background.h). Which of them a
 * run makes is its recipe's (recipe.h); a resumed run makes the same set from the same
 * recipe. Not the recipe's rules (recipe.c) or the training (train.c).
 */
#ifndef NLU_TRAIN_TRAINSET_H
#define NLU_TRAIN_TRAINSET_H

#include <stdint.h>

#include "nlu/data/dataset.h"
#include "nlu/train/recipe.h"
#include "parley/train.h"

/* What the extensions added, by kind (parley_train_progress's counts). */
typedef struct train_set_added {
    int variants;   /* lookup or own-value variants and synonym copies */
    int builtin;    /* built-in replies */
    int lowercase;  /* lower-case copies */
    int background; /* background sentences */
} train_set_added;

/* Extends ds (as loaded) with what the recipe's rows say: the built-in replies, the
 * synonyms' surface forms, augment variants per example drawn with seed, and the lower-case
 * copies. *added receives the counts. */
parley_status train_set_extend(ds_dataset *ds, int augment, int builtin, int lowercase,
                               uint64_t seed, train_set_added *added);

/* Then, last, `background` sentences from beside the default encoder (an error where they
 * are gone), counted in *added. */
parley_status train_set_background(ds_dataset *ds, int background, train_set_added *added);

/* Whether ds's variants were drawn from its own slot values (no lookup tables): counts of
 * examples per intent leave them out, and cross-fitting fits the written examples alone. */
int train_set_own_values(const ds_dataset *ds, const train_set_added *added);

/* The intents of ds's examples that are no variant or copy (written, built-in replies and
 * background sentences), in order: the intents are weighted on these, as a variant shares
 * its example's weight. *out is the caller's (pl_free), *n long. */
parley_status train_set_unvaried_intents(const ds_dataset *ds, int **out, int *n);

/* The profile of a fresh run of p on ds (as loaded; gpu: it trains on a GPU): the data as
 * written, then ds extended by the recipe's extension rows (train_recipe_extension, which
 * read the written profile alone; background sentences excluded) with *added their counts,
 * then the probe where it decides (train_recipe_wants_probe). */
parley_status train_profile_measure(const parley_train_params *p, ds_dataset *ds, int gpu,
                                    train_set_added *added, train_profile *pf);

#endif
