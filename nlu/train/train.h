/* train.h — training a joint intent/slot model: the loop behind `parley train`.
 *
 * train_run() reads a training set (Rasa nlu.yaml or a JointBERT folder, nlu/data/dataset.h),
 * builds or loads a model, and runs AdamW over shuffled mini-batches: linear warmup then
 * linear decay of the learning rate to 0, dropout, gradient clipping by global norm. After
 * each epoch it scores the dev set (if any) through the inference path and keeps the best
 * model by sentence accuracy in the output directory; without a dev set it keeps the last
 * epoch. Everything it writes is crash-safe (temporary file + rename).
 *
 * Where the model comes from:
 *   - init set: that model directory (its vocabulary, shape and max positions); when its
 *     label lists differ from the training set's, both heads are replaced by new ones
 *     drawn from normal(0, 0.02);
 *   - otherwise a new model of the given shape, initialized as BERT is, with the
 *     vocabulary from `vocab` or, without it, learned from the training text (wp_learn.h).
 *
 * Augmentation: with `augment` > 0, each training example with a span of a slot type that
 * has a lookup table (Rasa's `- lookup: SLOT`) gets up to that many variants, every such
 * span replaced by a value drawn from its table (ds_augment_lookups, drawn from the seed).
 * JointBERT folders have no lookup tables, so this changes nothing there. Synonyms and
 * regexes do not reach the trainer (dataset.h says why).
 *
 * Labels: the intents and slot tags of the training set (sorted, see dataset.h). A word's
 * tag goes to its first word piece; other pieces, [CLS] and [SEP] are not scored. Dev
 * examples whose intent or slot type the training set lacks are kept and scored: the model
 * cannot predict those labels, so they count as wrong.
 *
 * Resumable: at each epoch end, and when the progress callback asks to stop, the loop
 * writes OUT/train_state/ (the current weights as a model directory, the AdamW moments,
 * and state.json with the step, the settings and the best dev score), switching to it
 * with one rename. With `resume` set the loop continues from there and ends with exactly
 * the weights an uninterrupted run would have. Everything random is a function of the
 * seed and the step (the epoch's shuffle, each step's dropout), so a given seed and thread
 * count give byte-identical files. The state is removed when the run completes.
 *
 * Batches are packed without padding (bert.h), so sequences of different lengths cost
 * nothing extra and the loop does not bucket by length.
 *
 * The library never prints: progress goes to the callback. Not thread-safe in itself: it
 * sets the math's thread count (bert_set_threads) for the process.
 */
#ifndef NLU_TRAIN_TRAIN_H
#define NLU_TRAIN_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "nlu/data/dataset.h"
#include "nlu/data/metrics.h"
#include "nlu/model.h"

typedef enum train_event {
    TRAIN_START, /* the data and model are ready; step > 0 when resuming */
    TRAIN_STEP,  /* one optimizer step is done */
    TRAIN_EPOCH, /* an epoch is done, scored on dev (when there is one) and saved */
} train_event;

typedef struct train_scores {
    double intent_accuracy; /* fractions in [0, 1] */
    double slot_f1;
    double sentence_accuracy;
} train_scores;

typedef struct train_progress {
    train_event event;
    int epoch, epochs;     /* the epoch running or just done (1-based), of all planned */
    long step, steps;      /* optimizer steps done over the whole run, and planned */
    float loss;            /* mean training loss over this epoch's steps so far */
    float lr;              /* the learning rate of the last step */
    double examples_per_s; /* training throughput in this call so far (0 at first) */
    double eta_s;          /* estimated seconds to the end, dev scoring excluded */
    int has_dev;           /* TRAIN_EPOCH with a dev set: dev holds its scores */
    train_scores dev;
    int best; /* TRAIN_EPOCH: this epoch is the best so far (or the last,
                 without dev) and was saved to the output directory */
    /* TRAIN_START: what is being trained. */
    int n_train, n_dev; /* examples */
    int n_intents, n_tags;
    int vocab_size;
    int n_truncated;    /* training examples cut to max_positions */
    int n_augmented;    /* of n_train, the variants made from lookup tables */
    int vocab_learned;  /* the vocabulary was learned from the training text */
    int heads_replaced; /* init's heads were replaced (other labels) */
    /* TRAIN_EPOCH of pretraining (nlu/train/pretrain.h): the held-out lines' masked-LM scores. */
    int has_mlm;
    double mlm_loss, mlm_accuracy;
    size_t n_params;
    const bert_config *config; /* borrowed for the call */
    const char *device;        /* what trains: "cpu", or the GPU and precision (borrowed) */
} train_progress;

/* Called on the training thread. Return nonzero to stop: the loop saves the training state
 * (so `resume` can continue) and train_run returns PARLEY_OK with result.stopped set. */
typedef int (*train_progress_fn)(const train_progress *p, void *user_data);

typedef struct train_params {
    const char *data;  /* training set: nlu.yaml or a JointBERT folder (required) */
    const char *dev;   /* dev set, or NULL */
    const char *out;   /* model directory to write (required) */
    const char *init;  /* model directory to start from, or NULL */
    const char *vocab; /* vocab.txt for a new model; NULL learns one */
    int vocab_size;    /* size of a learned vocabulary; 0 = WP_LEARN_DEFAULT_SIZE */
    /* Shape of a new model (ignored with init). */
    int layers, hidden, heads, intermediate, max_positions;
    int epochs, batch;
    int augment;           /* variants per example from lookup tables (0 = none) */
    float lr;              /* peak learning rate; 0 = train_default_lr(init != NULL) */
    float warmup_fraction; /* warmup steps as a fraction of all steps ... */
    long warmup_steps;     /* ... or, when >= 0, this many steps */
    float weight_decay;    /* AdamW's decoupled decay; never on biases and LayerNorm */
    float dropout;
    float word_dropout; /* chance that a training piece is replaced by [UNK] */
    float slot_weight;  /* loss = intent CE + slot_weight * slot CE */
    float clip;         /* maximum global gradient norm; 0 = no clipping */
    uint64_t seed;
    int threads;           /* 0 = all cores */
    const char *device;    /* "cpu" (NULL and "" too), "cuda", "cuda:N", or "auto" (the GPU
                              when one is usable); see nlu/cuda/cuda_train.h for the GPU */
    const char *precision; /* on a GPU: "bf16" (NULL: the default) or "fp32" */
    int resume;            /* continue OUT/train_state; the settings above are then taken
                              from the state (data, dev, out, threads, device, precision
                              and the callback are still read from here) */
    train_progress_fn progress;
    void *user_data;
} train_params;

typedef struct train_result {
    int epochs_done;
    long steps_done;
    int stopped;           /* the callback asked to stop; the state is saved */
    double wall_s;         /* this call, loading and scoring included */
    double examples_per_s; /* training throughput of this call */
    int has_dev;
    int best_epoch;    /* the epoch in the output directory (the last without dev) */
    train_scores best; /* its dev scores (has_dev) */
} train_result;

/* The defaults: a 4-layer, 256-wide model (BERT-mini's shape), 128 positions, a learned
 * vocabulary of up to 8000 tokens, 30 epochs of batches of 32, 2 lookup variants per
 * example, lr 0 (see below) with 10% warmup, weight decay 0.01, dropout 0.1, word
 * dropout 0.1, slot weight 1, clip 1, seed 42, all cores. With them the sample pizza bot
 * (samples/pizza/nlu.yaml: 315 distinct examples + 240 lookup variants) trains in under a
 * minute on 2 cores (27-51 s measured on a busy machine, bench/RESULTS.md).
 * Unlike most params structs, zero is a real value for several fields (dropout, weight
 * decay, clip): start from this function, not from a zeroed struct. */
train_params train_params_default(void);
/* The default peak learning rate for a model trained from scratch or from init. */
float train_default_lr(int from_init);

/* Trains as described above. *result (may be NULL) is filled on success. Errors name the
 * file (file:line:col for the data), the option or the tensor at fault. */
parley_status train_run(const train_params *p, train_result *result);

/* Scores model m on ds through the inference path: tokenize, bert_forward, the first
 * piece's tag for each word, BIO repaired as parley_nlu_parse reports it. Labels are
 * compared by name. *out is owned by the caller (mt_report_free). */
parley_status train_evaluate(const bert_model *m, const ds_dataset *ds, mt_report **out);

#endif
