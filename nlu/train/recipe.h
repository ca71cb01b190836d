/* recipe.h — the training recipe: what `parley train` does with a data set, decided once from
 * a profile of the data, before any model is built (recipe.c has the table of rows, each
 * with its reason and the heading of bench/RESULTS.md that measured it).
 *
 * A run measures the profile (train_profile_measure: the data as written, the training set
 * as the extension rows make it, and one probe), decides the recipe from it
 * (train_recipe_decide, a pure function, which the golden tests in tests/nlu/train/recipes/
 * hold to files of profile -> recipe), and executes it: train.c reads the recipe and decides
 * nothing. The recipe is saved whole in the training state (a resumed run reads it back) and
 * in OUT/training.json, and its notes are the run's explanation (`parley train --explain`).
 * It is not the arithmetic of training (train.c) or of the sparse pre-fit (sparse_train.c).
 */
#ifndef NLU_TRAIN_RECIPE_H
#define NLU_TRAIN_RECIPE_H

#include <stdint.h>

#include "nlu/data/dataset.h"
#include "nlu/train/defaults.h"
#include "parley/train.h"
#include "sdk/base/error.h"

/* What the recipe is decided from. The regime count is `examples`, the data as written:
 * every rule between small and big data reads it, so what the trainer adds to the data
 * (lookup variants, lower-case copies, built-in replies, background sentences) never moves
 * a run from one regime to another. Per-intent modifiers read `encoder_examples` (what the
 * encoder is shown of the data's own sentences) per intent. */
typedef struct train_profile {
    /* the data as written */
    int examples;       /* examples written in the data: the regime count */
    int intents;        /* intents written */
    int per_intent_min; /* the fewest examples of an intent */
    double per_intent_median;
    int tags_slots;       /* the data tags slot values */
    int lookups, regexes; /* lookup tables and regexes */
    /* where it trains and from what */
    int gpu;        /* the device is a GPU (or auto) */
    int encoder;    /* the default encoder is built */
    int background; /* its background sentences are there */
    /* the training set as the extension rows make it (trainset.c), background excluded */
    int encoder_examples; /* written, lookup variants, synonym copies and built-in replies
                             (not own-value variants or lower-case copies, which show the
                             encoder no sentence the data does not have) */
    int set_examples;     /* that set's examples, all of them */
    double tagged_words;  /* tagged words per example of that set */
    /* the probe: the sparse features' intent, cross-fitted on the written examples */
    int probe_right, probe_scored; /* probe_scored < 0: not measured */
} train_profile;

/* An auto/on/off choice as the recipe took it. */
typedef struct train_recipe {
    /* where the model starts and its shape */
    int from_encoder;         /* the default encoder (else init's, or random weights) */
    int from_init;            /* parley_train_params.init given */
    parley_train_shape shape; /* a new model's (from random weights); 0s but max_positions
                                 where the start brings its own */
    int pretrain_epochs;      /* masked-LM passes on the training text first */
    /* what the training set holds */
    int augment;    /* lookup (or own-value) variants per example */
    int builtin;    /* built-in replies added */
    int lowercase;  /* lower-case copies of examples with capitals in a slot value */
    int background; /* background sentences added */
    /* the model */
    int sparse;             /* sparse features */
    int intent_sparse_only; /* the intent is the sparse features' alone */
    int word_norm_by_kind;  /* sparse word rows normalized by kind */
    int intent_slot_tags;   /* each intent decoded with its own slot types */
    /* the schedule */
    int epochs, batch;
    float lr, weight_decay, dropout, word_dropout, slot_weight, clip;
    float sparse_lr, slot_map_lr;
    float warmup_fraction;
    long warmup_steps;        /* >= 0: given in steps */
    int few_examples;         /* sparse pre-fit and intents weighted to the median */
    int prefit_epochs;        /* passes of the sparse pre-fit (0: none) */
    int crossfit_temperature; /* the temperature fitted on the probe's held-out logits */
    uint64_t seed;
    char *notes; /* one line per decision with its reason (pl_free) */
} train_recipe;

/* Whether the probe decides who reads the intent for this profile (its probe fields are
 * not read). */
int train_recipe_wants_probe(const parley_train_params *p, const train_profile *pf);

/* The rows that make the training set, from the data as written (a run extends its data with
 * them before the rest is decided): *augment, *builtin, *lowercase. */
void train_recipe_extension(const parley_train_params *p, const train_profile *pf, int *augment,
                            int *builtin, int *lowercase);

/* The whole recipe of a run of p on data of profile pf, with its notes. The epochs aim at
 * the profile's set and the recipe's background sentences. *out is the caller's
 * (train_recipe_clear). */
parley_status train_recipe_decide(const parley_train_params *p, const train_profile *pf,
                                  train_recipe *out);

void train_recipe_clear(train_recipe *r);

/* The recipe as a JSON object's text (for the training state and training.json), and back.
 * Notes are kept. *out is the caller's (pl_free). */
parley_status train_recipe_json(const train_recipe *r, char **out);
parley_status train_recipe_parse(const char *json, const char *where, train_recipe *out);

/* The recipe's values, one "name value" line each (floats to 4 significant digits): what the
 * golden tests compare and --explain prints. *out is the caller's (pl_free). */
parley_status train_recipe_values(const train_recipe *r, char **out);

/* The profile's values, one "name value" line each, as the golden tests write a profile
 * (tests/nlu/train/recipes/); train_profile_set sets the field `name` (0: no such field). */
parley_status train_profile_values(const train_profile *pf, char **out);
int train_profile_set(train_profile *pf, const char *name, double value);

/* The table of rows as text: one row per setting, its rule, its reason and its evidence (a
 * heading of bench/RESULTS.md); markdown (docs/training.md's table) when markdown is nonzero.
 * *out is the caller's (pl_free). */
parley_status train_recipe_table(int markdown, char **out);

#endif
