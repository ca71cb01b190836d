/* pretrain.h — masked-language-model pretraining of the encoder: the loop behind
 * `parley pretrain`, whose output `parley train --init` fine-tunes.
 *
 * pretrain_run() reads plain text (one sentence or utterance per line; blank lines and
 * exact repeats dropped), holds out a fraction of the lines, learns a WordPiece vocabulary
 * from the rest (or takes one), and trains BERT's masked-LM objective (bert_train.h: 15%
 * of the pieces chosen, of those 80% [MASK], 10% a random piece, 10% unchanged; the masks
 * drawn anew every step from the seed, as RoBERTa's dynamic masking) with AdamW, warmup
 * then linear decay, dropout and gradient clipping, as train.h. There is no
 * next-sentence objective: the lines are short utterances, and RoBERTa found NSP
 * unnecessary. Only the encoder (embeddings and layers) and the MLM head learn; the pooler
 * and the joint heads keep their initialization, for fine-tuning to replace or train.
 *
 * After each epoch the held-out lines are scored with fixed masks (the same positions
 * every epoch, no dropout): mean masked-LM loss and the share of masked pieces guessed
 * right. The output directory then receives the model (config.json, model.safetensors,
 * vocab.txt; its labels are the placeholders intent "none" and tag "O") and
 * mlm_head.safetensors (cls.predictions.*), each file written atomically. A run started
 * with `init` continues from that model, and from its mlm_head.safetensors when present.
 * Same seed and thread count, same files.
 *
 * Progress goes to the train_progress callback of train.h: TRAIN_START (n_train and n_dev
 * count lines), TRAIN_STEP, TRAIN_EPOCH with has_mlm and the held-out scores. A nonzero
 * return stops after the current step; the model so far is saved. Not thread-safe in
 * itself: it sets the math's thread count for the process.
 */
#ifndef NLU_TRAIN_PRETRAIN_H
#define NLU_TRAIN_PRETRAIN_H

#include "nlu/train/train.h"

typedef struct pretrain_params {
    /* out, init, vocab, vocab_size, the shape, epochs, batch, lr (0: 1e-3), warmup,
     * weight_decay, dropout, clip, seed, threads, device, progress and user_data as in
     * train_params; data, dev, augment, word_dropout, slot_weight and resume are not used. */
    train_params t;
    const char *const *text; /* (n_text) plain-text files, one sentence per line */
    int n_text;
    float mask_prob; /* chance that a piece is chosen for prediction */
    float holdout;   /* fraction of the lines held out for scoring, in [0, 0.5] */
} pretrain_params;

typedef struct pretrain_result {
    int epochs_done;
    long steps_done;
    int stopped; /* the callback asked to stop; the model so far is saved */
    double wall_s, examples_per_s;
    int n_train, n_holdout;        /* lines */
    double mlm_loss, mlm_accuracy; /* held-out scores after the last epoch (0 without) */
} pretrain_result;

/* The defaults: train_params_default()'s shape and optimizer, 10 epochs of batches of 64,
 * mask_prob 0.15, holdout 0.02. */
pretrain_params pretrain_params_default(void);

/* Pretrains as described above. *result (may be NULL) is filled on success. Errors name the
 * file and line of bad text, the option or the tensor at fault. */
parley_status pretrain_run(const pretrain_params *p, pretrain_result *result);

#endif
