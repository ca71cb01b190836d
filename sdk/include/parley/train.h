/* parley/train.h — training, pretraining and scoring joint intent/slot models from an
 * application: what `parley train`, `parley pretrain` and `parley eval` do, as calls.
 *
 * parley_train_run() trains a model on annotated examples (a Rasa-style nlu.yaml or a
 * JointBERT folder) and writes a model directory that parley_nlu_open() loads;
 * parley_pretrain_run() pretrains an encoder on plain text for training to start from;
 * parley_eval_run() scores an open model on annotated examples. A run reports its progress
 * to a callback, which can also stop it; a stopped training run can be resumed. This header
 * is not inference (parley/nlu.h) and not the model format (docs/models.md describes the
 * model directory, docs/training.md the data formats).
 *
 *   parley_train_params p = parley_train_params_default();
 *   p.data = "nlu.yaml";
 *   p.out = "models/new";
 *   parley_train_result res;
 *   if (parley_train_run(&p, &res) != PARLEY_OK) error: parley_errmsg() says what and where
 *
 * Threading: each run executes on the calling thread and returns when it is done; its
 * callback runs on that same thread, between steps. To stop a run from another thread, set
 * an atomic flag there and return it from the callback (it is called after every optimizer
 * step). parley_nlu calls (and pipelines) on other threads may run during a run; they share
 * the cores. Process-wide effect: parley_train_run() and parley_pretrain_run() set the CPU
 * math's thread count (`threads`: OpenMP and OpenBLAS) for the whole process at their start,
 * as parley_nlu_open() does, and parley_nlu calls anywhere in the process use it from then
 * on: choose `threads` to leave cores to a pipeline that keeps serving. Run one training or
 * pretraining at a time in a process: a second one would change the thread count under the
 * first, and a seed gives the same files only with the same thread count. parley_eval_run()
 * follows the threading rule of its parley_nlu handle.
 *
 * Files: an output directory is replaced whole or not at all: the new one is built beside
 * it (OUT.parley-new) and swapped in with one atomic rename, so a stopped, failed or
 * crashed run leaves the output directory either as it was or complete. OUT must hold
 * nothing but a model's files (training.json, train_state/ included): it is refused
 * otherwise (PARLEY_ERR_INVALID_ARG naming the entry).
 */
#ifndef PARLEY_TRAIN_H
#define PARLEY_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "parley/nlu.h"
#include "parley/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- progress ------------------------------------------------------------------------- */

typedef enum parley_train_event {
    PARLEY_TRAIN_START = 0, /* the data and the model are ready; step > 0 when resuming */
    PARLEY_TRAIN_STEP = 1,  /* one optimizer step is done */
    PARLEY_TRAIN_EPOCH = 2, /* an epoch is done, scored (dev or held-out lines) and saved */
} parley_train_event;

/* The shape of a BERT encoder. In parley_train_params, layers, hidden, heads and
 * intermediate all PARLEY_AUTO mean "sized to the data" (parley_train_params_default); any
 * of them given, the others at PARLEY_AUTO take BERT-mini's values (4 layers, 256 wide,
 * 4 heads, 1024). */
typedef struct parley_train_shape {
    int layers;        /* encoder layers */
    int hidden;        /* hidden size, a multiple of heads */
    int heads;         /* attention heads */
    int intermediate;  /* feed-forward size */
    int max_positions; /* longest input in word pieces, [CLS] and [SEP] included (>= 3) */
} parley_train_shape;

/* Scores of a model on annotated examples, fractions in [0, 1]. */
typedef struct parley_train_scores {
    double intent_accuracy;
    double slot_f1;           /* over slot chunks, micro-averaged (conlleval rules) */
    double sentence_accuracy; /* the intent and every word's tag right */
} parley_train_scores;

/* What a run reports; borrowed for the callback's duration. */
typedef struct parley_train_progress {
    parley_train_event event;
    int pretraining;       /* training: nonzero in the events of its masked-LM pretraining of
                              a new model on the training text (pretrain_epochs), which come
                              before its own PARLEY_TRAIN_START and count their own epochs */
    int epoch, epochs;     /* the epoch running or just done (1-based), of all planned */
    long step, steps;      /* optimizer steps done over the whole run, and planned */
    float loss;            /* mean training loss over this epoch's steps so far */
    float lr;              /* the learning rate of the last step */
    double examples_per_s; /* training throughput of this call so far (0 before a step) */
    double eta_s;          /* estimated seconds to the end, scoring excluded (0 at first) */
    int has_dev;           /* PARLEY_TRAIN_EPOCH of training with a dev set: dev is set */
    parley_train_scores dev;
    int best;    /* PARLEY_TRAIN_EPOCH: this epoch was saved to the output directory (training:
                    the best on dev so far, or the latest without dev; pretraining: always,
                    but never in a training run's own) */
    int has_mlm; /* PARLEY_TRAIN_EPOCH of pretraining with held-out lines: the next two */
    double mlm_loss, mlm_accuracy; /* held-out masked-LM loss, share of pieces guessed */
    /* PARLEY_TRAIN_START (and unchanged after it): what is trained. */
    int n_train, n_dev;    /* examples (pretraining: training and held-out lines) */
    int n_intents, n_tags; /* the model's labels (0 in pretraining) */
    int vocab_size;
    int n_truncated;    /* training examples (or lines) cut to max_positions */
    int n_augmented;    /* of n_train, slot-value variants (params.augment) */
    int n_background;   /* of n_train, the background sentences added (params.background) */
    int n_builtin;      /* of n_train, the built-in replies added (params.builtin) */
    int n_lowercase;    /* of n_train, lower-case copies of examples whose slot values have
                           capitals (data of under 2,000 examples; docs/training.md has why) */
    int vocab_learned;  /* the vocabulary was learned from the training text */
    int heads_replaced; /* init's heads were replaced (its labels differ from the data's) */
    parley_train_shape shape;
    size_t n_params;                  /* parameters trained */
    int sparse_sentence, sparse_word; /* the model's sparse features (0 and 0: none) */
    const char *device;               /* what trains: "cpu", or the GPU and precision (borrowed) */
    const char *chosen; /* training: the settings sized to the data, one line each ("epochs
                           80: why"), or NULL when every one was given (borrowed) */
} parley_train_progress;

/* Called on the running thread at PARLEY_TRAIN_START, after every step and after every
 * epoch. Return 0 to go on, nonzero to stop: the run then saves what it needs and returns
 * PARLEY_OK with `stopped` set in its result (see each run for what is kept). It must not
 * start another run. */
typedef int (*parley_train_progress_fn)(const parley_train_progress *progress, void *user_data);

/* ---- training ------------------------------------------------------------------------- */

/* "Decide for me": a number of parley_train_params that the run's recipe sizes to the data
 * (pretrain_epochs, epochs, batch, lr, augment, weight_decay, slot_weight, background). The
 * recipe is decided once, before any model is built, from a profile of the data; the run
 * reports it, each choice with its reason, in parley_train_progress.chosen, and
 * parley_train_explain() prints it without training (docs/training.md). */
#define PARLEY_AUTO (-1)

/* An auto/on/off choice of parley_train_params (sparse, intent_encoder, builtin): AUTO (0,
 * what a zeroed field holds) lets the recipe decide. */
typedef enum parley_switch {
    PARLEY_SWITCH_AUTO = 0,
    PARLEY_SWITCH_ON = 1,
    PARLEY_SWITCH_OFF = 2,
} parley_switch;

/* How a training run goes. Start from parley_train_params_default(): zero is a real value
 * for several fields (the dropouts, slot_weight, clip, the warmup, seed), so a zeroed struct
 * is not the defaults. The defaults leave every setting the recipe sizes at PARLEY_AUTO or
 * PARLEY_SWITCH_AUTO. Strings are borrowed for the call. */
typedef struct parley_train_params {
    const char *data;  /* training examples: an nlu.yaml (.yaml/.yml) or a JointBERT folder
                          (seq.in, seq.out, label); required */
    const char *dev;   /* dev examples (either kind), scored after every epoch; NULL = none */
    const char *out;   /* the model directory to write, made with its parents; required */
    const char *init;  /* a model directory to start from (an earlier or pretrained model);
                          NULL for a new model: under 2,000 examples with no shape or
                          vocabulary given, it starts from the default encoder where
                          tools/encoder.sh built one ($PARLEY_ENCODER, else
                          $XDG_CACHE_HOME or ~/.cache, /parley/encoder), else from random
                          weights; "none": a new model from random weights */
    const char *vocab; /* a new model's vocab.txt; NULL learns one from the training text */
    int vocab_size;    /* most tokens of a learned vocabulary; 0 = 8000 */
    parley_train_shape shape; /* a new model's shape (all PARLEY_AUTO but max_positions:
                                 sized to the data); ignored with init */
    int pretrain_epochs;      /* the run's model first learns the training text with the
                                 masked-LM objective (parley_pretrain_run's loop, in memory,
                                 on the CPU) for this many passes, then its labels from there
                                 (sized: at the rate and for the epochs of a pretrained
                                 encoder); 0 = none; PARLEY_AUTO = sized to the data (20 for a
                                 new model from random weights without sparse features
                                 trained on the CPU, else none; docs/training.md).
                                 A stop in them keeps nothing to resume */
    int epochs;               /* passes over the data, >= 1; PARLEY_AUTO = sized to the data */
    int batch;                /* examples per step, >= 1; PARLEY_AUTO = sized to the data */
    int augment;              /* up to this many variants of each example, its slot values
                                 drawn from the nlu.yaml's lookup tables, or where it has
                                 none from the values the intent's own examples tag; 0 =
                                 none; PARLEY_AUTO = sized to the data */
    float lr;                 /* peak learning rate, > 0; PARLEY_AUTO = sized to the batch
                                 (new model), or parley_train_default_lr(1) with init */
    float warmup_fraction;    /* linear warmup over this fraction of all steps, in [0, 1] ... */
    long warmup_steps;        /* ... or, when >= 0, over this many steps; then linear decay */
    float weight_decay;       /* AdamW's decoupled decay; never on biases and LayerNorm;
                                 PARLEY_AUTO = sized to the data */
    float dropout;            /* in [0, 1) */
    float word_dropout;       /* chance that a training word piece is shown as [UNK], in [0, 1) */
    float slot_weight;        /* loss = intent loss + slot_weight * slot loss; PARLEY_AUTO
                                 = sized to the data */
    float clip;               /* largest global gradient norm; 0 = no clipping */
    uint64_t seed;            /* of the initialization, shuffles, dropout and variants */
    int threads;              /* CPU threads; 0 = all cores */
    const char *device;       /* "cpu" (NULL and "" too), "cuda", "cuda:N", or "auto" (the GPU
                                 when one is usable, the CPU when the model has sparse
                                 features: the GPU trainer does not train them, and a GPU
                                 named outright refuses them) */
    const char *precision;    /* on a GPU: "bf16" (NULL) or "fp32" */
    parley_switch sparse;     /* sparse features beside the encoder (words and character
                                 n-grams for the intent, per word for the tags;
                                 docs/training.md); AUTO = sized to the data (on below
                                 1,000 examples per intent and, where slots are tagged,
                                 below 4,000 examples; on with lookup tables or
                                 regexes, or with intent_encoder OFF) */
    float sparse_lr;          /* peak learning rate of their weights (SGD with momentum 0.9, same
                                 warmup and decay as lr; the slot map's is 4 times it when the
                                 intent is theirs alone); 0 = PARLEY_TRAIN_DEFAULT_SPARSE_LR */
    parley_switch intent_encoder; /* with sparse features: ON (the intent from the encoder and
                                   the sparse features) or OFF (from the sparse features
                                   alone); AUTO = sized to the data (off below 150 examples
                                   per intent, 60 when slots are tagged, or where the sparse
                                   features alone read 90% of few examples with slots,
                                   cross-fitted; docs/training.md) */
    int background;               /* up to this many sentences of general English (written
                                     by tools/encoder.sh beside the default encoder) added to
                                     data of under 2,000 examples as its out-of-scope intent
                                     (out_of_scope, or the data's nlu_fallback) where the
                                     encoder reads the intent, so requests the bot does not
                                     serve fall back; 0 = none; PARLEY_AUTO = sized to the data */
    parley_switch builtin;        /* common replies ("yep", "nah", "see ya") added as examples
                                     of the intents named greet, goodbye, affirm, deny and
                                     thank_you; AUTO = on for data of under 2,000 examples */
    int resume;                   /* nonzero: continue the stopped run in out/train_state/ with its
                                     own settings; only data, dev, out, threads, device, precision,
                                     progress and user_data are read from here */
    parley_train_progress_fn progress; /* or NULL */
    void *user_data;                   /* passed to progress */
} parley_train_params;

typedef struct parley_train_result {
    int epochs_done;
    long steps_done;
    int stopped;             /* the callback asked to stop; out/train_state/ is kept ... */
    int stopped_pretraining; /* ... unless it was in the pretraining (pretrain_epochs):
                                then nothing is kept, and a new run starts over */
    double wall_s;           /* this call, loading and scoring included */
    double examples_per_s;   /* training throughput of this call */
    int has_dev;
    int best_epoch;           /* the epoch in the output directory (the last without dev) */
    parley_train_scores best; /* its dev scores (has_dev) */
} parley_train_result;

/* The defaults: a new model of a shape sized to the data (BERT-mini's, 4 layers, 256 wide,
 * 4 heads, 1024 feed-forward, from 2,000 examples; 2 layers of 128, 2 heads, 256 below;
 * 128 positions) with a learned vocabulary of up to 8000 tokens; epochs,
 * batch, lr, lookup variants and weight decay sized to the data (PARLEY_AUTO: batches of
 * 8 to 32, about 1200 optimizer steps in 20 (30 without sparse features) to 80 epochs;
 * docs/training.md has the rules), 10% warmup, dropout 0.1, word dropout 0.1,
 * slot weight 1, clip 1, seed 42, all cores, the CPU. */
PARLEY_API parley_train_params parley_train_params_default(void);

/* The sparse features' weights are a linear model over L2-normalized features, trained by
 * SGD with momentum (Adam's per-weight steps let it memorize rare n-grams): at rate 1 it fits
 * in a few hundred steps and generalizes as a linear SVM does (bench/RESULTS.md, "Few-shot"). */
#define PARLEY_TRAIN_DEFAULT_SPARSE_LR 1.0f

/* The peak learning rate at batches of 32: 1e-3 for a new model, 5e-5 starting from init
 * (a new model's rate sized to the data scales 1e-3 by sqrt(batch / 32)). */
PARLEY_API float parley_train_default_lr(int from_init);

/* Trains: reads the data, builds the model (init's, with new intent and slot heads when
 * its labels are not the data's; or a new one), and runs AdamW over shuffled mini-batches
 * with warmup then linear decay, dropout and clipping. After every epoch it scores the dev
 * set and keeps the best epoch by sentence accuracy (without dev, the latest), its intent
 * confidences calibrated on dev (config.json "intent_temperature"; without dev they are
 * not), in out/train_state/best/, and saves out/train_state/, from which `resume`
 * continues. When the run completes, that model and its record replace `out` whole (the
 * state goes with the old folder). A stop from the callback saves the state at the current
 * step and puts the best epoch so far in place the same way, the state kept in it; a run
 * that fails leaves `out` as it was, its state in out/train_state/. A resumed
 * run ends with exactly the files an uninterrupted one writes. The same seed and thread count give
 * the same files. On success *result (may be NULL) is filled. Errors name the file (FILE:LINE:COL
 * in the data), the setting or the tensor at fault. */
PARLEY_API parley_status parley_train_run(const parley_train_params *params,
                                          parley_train_result *result);

/* What parley_train_run() would do with params, without training (`parley train --explain`):
 * the profile of the data (as written, as the run extends it, and the probe of its sparse
 * features), the recipe decided from it with the reason of each choice, and the table of
 * rules with the benchmark that measured each (bench/RESULTS.md). Reads the data (and the
 * default encoder's folder); writes nothing. On success *text (NUL-terminated) is owned by
 * the caller: free it with parley_train_explain_free(). Any thread. */
PARLEY_API parley_status parley_train_explain(const parley_train_params *params, char **text);
/* Frees what parley_train_explain() returned. NULL is a no-op. */
PARLEY_API void parley_train_explain_free(char *text);

/* ---- pretraining ---------------------------------------------------------------------- */

/* How a masked-language-model pretraining goes. Start from parley_pretrain_params_default(). */
typedef struct parley_pretrain_params {
    /* out, init, vocab, vocab_size, shape, epochs, batch, lr (0: 1e-3), warmup, weight_decay,
     * dropout, clip, seed, threads, device ("cpu" only), progress and user_data as in
     * training; data, dev, augment, word_dropout, slot_weight, precision and resume are not
     * used. */
    parley_train_params train;
    const char *const *text; /* (n_text) plain-text files, one sentence per line; borrowed */
    int n_text;
    float mask_prob; /* chance that a piece is chosen for prediction, in (0, 1) */
    float holdout;   /* fraction of the lines held out for scoring, in [0, 0.5] */
} parley_pretrain_params;

typedef struct parley_pretrain_result {
    int epochs_done;
    long steps_done;
    int stopped; /* the callback asked to stop; the model so far is saved */
    double wall_s, examples_per_s;
    int n_train, n_holdout;        /* lines */
    double mlm_loss, mlm_accuracy; /* held-out scores after the last epoch (0 without) */
} parley_pretrain_result;

/* parley_train_params_default()'s optimizer, BERT-mini's shape, 10 epochs of batches of 64,
 * mask_prob 0.15, holdout 0.02. */
PARLEY_API parley_pretrain_params parley_pretrain_params_default(void);

/* Pretrains an encoder: reads the text (blank lines and repeats dropped; invalid UTF-8 is
 * an error naming FILE:LINE:COL), holds out a share of the lines, learns a vocabulary from
 * the rest (or takes `vocab`) and trains BERT's masked-LM objective (of the chosen pieces
 * 80% [MASK], 10% a random piece, 10% kept, drawn anew every step). After every epoch the
 * held-out lines are scored and `out` receives the model (placeholder labels: intent
 * "none", tag "O") and mlm_head.safetensors; parley_train_run() with init = out fine-tunes
 * it, parley_pretrain_run() with init = out goes on pretraining it. A stop from the
 * callback saves the model so far. On success *result (may be NULL) is filled. */
PARLEY_API parley_status parley_pretrain_run(const parley_pretrain_params *params,
                                             parley_pretrain_result *result);

/* ---- scoring -------------------------------------------------------------------------- */

/* One example as parley_eval_run() scored it; borrowed for the callback's duration. */
typedef struct parley_eval_example {
    int index;                      /* 0-based, in the data set's order */
    const char *gold_intent;        /* the annotation */
    const char *const *gold_tags;   /* (parse->n_words) BIO tags, one per word */
    const parley_nlu_result *parse; /* the model's parse of the example's text */
} parley_eval_example;

/* Called on the running thread after each example is scored. Return 0 to go on, nonzero
 * to stop: parley_eval_run() then reports the examples scored so far, with `stopped` set. */
typedef int (*parley_eval_fn)(const parley_eval_example *example, void *user_data);

typedef struct parley_eval_params {
    int batch;                 /* utterances per parley_nlu_parse_batch() call; 0 = 32 */
    parley_eval_fn on_example; /* or NULL */
    void *user_data;           /* passed to on_example */
} parley_eval_params;

/* The scores, as `parley eval` prints them. Owned by the caller (parley_eval_report_free). */
typedef struct parley_eval_report {
    long n_examples;        /* examples scored */
    int stopped;            /* on_example asked to stop: the scores cover n_examples */
    int n_truncated;        /* examples longer than the model's positions; their last
                               words were tagged "O" */
    int n_intents;          /* intents of the data set */
    int n_slot_types;       /* slot types of the data set */
    double intent_accuracy; /* fractions in [0, 1]; 0 over no examples */
    double slot_precision;  /* over slot chunks (type and both ends right), micro-averaged */
    double slot_recall;
    double slot_f1;
    double sentence_accuracy; /* the intent and every word's tag right */
    double tag_accuracy;      /* words with the right tag */
} parley_eval_report;

/* Defaults for every field; a zeroed struct means the same. */
PARLEY_API parley_eval_params parley_eval_params_default(void);

/* Parses every example of `data` (an nlu.yaml or a JointBERT folder) with `nlu` and scores
 * the predicted intent and tags against the annotation: intent accuracy; slot precision,
 * recall and F1 over chunks (conlleval rules, as seqeval's default mode); sentence and tag
 * accuracy; per-label scores and confusions (in the texts below). Labels are compared by
 * name, so labels the model does not know count as wrong. `params` may be NULL. On success
 * *out is owned by the caller (parley_eval_report_free). */
PARLEY_API parley_status parley_eval_run(parley_nlu *nlu, const char *data,
                                         const parley_eval_params *params,
                                         parley_eval_report **out);

/* The whole report as JSON text (ratios as fractions) or as a table for people
 * (percentages), with at most max_confusions intent and slot confusions each (negative =
 * all). *out is borrowed from the report: valid until the next call of the same function on
 * it or parley_eval_report_free(). A report is not synchronized: one thread at a time. */
PARLEY_API parley_status parley_eval_report_json(parley_eval_report *report, int max_confusions,
                                                 const char **out);
PARLEY_API parley_status parley_eval_report_table(parley_eval_report *report, int max_confusions,
                                                  const char **out);

/* NULL is a no-op. */
PARLEY_API void parley_eval_report_free(parley_eval_report *report);

/* ---- the training record ------------------------------------------------------------- */

/* A completed run writes out/training.json: the data and dev files with their paths and
 * checksums, the model it started from (init, or the default encoder) with its checksum,
 * the options that shape the weights (seed included), the parley version,
 * the device and threads, and every epoch's loss and dev scores. */

/* What a run with these params would do to the model already in params->out. */
typedef enum parley_train_verdict {
    PARLEY_TRAIN_NEW = 0,        /* there is no model there */
    PARLEY_TRAIN_UNRECORDED = 1, /* a model without training.json (made elsewhere or earlier) */
    PARLEY_TRAIN_UP_TO_DATE = 2, /* made from the same data (same bytes), dev, init, options;
                                    a model that started from the default encoder, or would
                                    now, is not once the encoder changed, came or went */
    PARLEY_TRAIN_CHANGED = 3,    /* from the same data file, but its contents or the options
                                    differ: retraining brings it up to date */
    PARLEY_TRAIN_OTHER_DATA = 4, /* made from another data file: retraining replaces it */
} parley_train_verdict;

/* Compares params (data, dev, init and options; data must be given) with the record in
 * params->out, reading the data files and the starting model's to checksum them. Any
 * thread. */
PARLEY_API parley_status parley_train_record_compare(const parley_train_params *params,
                                                     parley_train_verdict *verdict);
/* The absolute path of the data the model in model_dir was trained from, in buf (cap
 * bytes); PARLEY_ERR_NOT_FOUND when it has no training.json. */
PARLEY_API parley_status parley_train_record_data(const char *model_dir, char *buf, size_t cap);
/* The command that trains the model in model_dir again as it was made, in buf (cap bytes):
 * `parley train --data DATA [--dev DEV] --out MODEL_DIR` with the options the record says
 * were given (those that differ from parley_train_params_default()), each word quoted for a
 * POSIX shell where it needs it. DATA is `data` (borrowed; NULL: the recorded data's absolute
 * path), and `--force` ends the command when that is another file than the one the model was
 * made from (parley train keeps such a model otherwise). NOT_FOUND without training.json;
 * INVALID_ARG when cap is too small (the message says how much is needed). Any thread. */
PARLEY_API parley_status parley_train_record_command(const char *model_dir, const char *data,
                                                     char *buf, size_t cap);

/* ---- training data -------------------------------------------------------------------- */

/* One example as the trainer reads it. Borrowed from the parley_data that holds it. */
typedef struct parley_data_example {
    const char *text;   /* its words joined by single spaces */
    const char *intent; /* its intent */
    int n_slots;
    const char *const *slots; /* (n_slots) the slot of each annotated value, in text order */
} parley_data_example;

/* A value of a lookup table that an example holds without marking it as a slot ("how big is
 * a large" with `large` in the table `size`): the model learns it as no slot there, against
 * the table. Words are compared as the model's lookup features compare them: whole,
 * lower-cased, accents stripped, without the punctuation at their ends. Borrowed from the
 * parley_data that holds it. */
typedef struct parley_data_unmarked {
    int example;       /* index into parley_data.examples */
    const char *table; /* the lookup table's name (its slot) */
    const char *value; /* the value as compared: the example's words so normalized, joined
                          by single spaces */
} parley_data_unmarked;

/* A data set's examples. Owned by the caller (parley_data_free). */
typedef struct parley_data {
    int n_examples;
    const parley_data_example *examples; /* (n_examples) in file order, repeats dropped */
    int n_duplicates;                    /* repeated examples (same text, tags and intent) */
    int n_unmarked;
    const parley_data_unmarked *unmarked; /* (n_unmarked) in example order */
} parley_data;

/* Reads an nlu.yaml or a JointBERT folder as parley_train_run() would (errors name
 * FILE:LINE:COL), for tools that check training data. Any thread. */
PARLEY_API parley_status parley_data_read(const char *path, parley_data **out);
/* NULL is a no-op. */
PARLEY_API void parley_data_free(parley_data *data);

#ifdef __cplusplus
}
#endif
#endif
