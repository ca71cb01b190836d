/* train_util.h — the pieces of a training loop that fine-tuning (train.c) and
 * masked-language-model pretraining (pretrain.c) share: the clock, the hash every random
 * draw of a run comes from, the learning-rate schedule, gradient clipping, the epoch
 * shuffle, the device, and the model's shape between the public and the internal form.
 *
 * Reproducibility rests on train_mix: a loop draws everything random as a pure function of
 * (seed, something counted), never from a stream, so a run can be replayed or resumed at
 * any step.
 */
#ifndef NLU_TRAIN_TRAIN_UTIL_H
#define NLU_TRAIN_TRAIN_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "nlu/model/model.h"
#include "parley/train.h"

/* Monotonic seconds. */
double train_now_s(void);

/* splitmix64's finalizer: a well-mixed 64-bit function of (a, b). */
uint64_t train_mix(uint64_t a, uint64_t b);

/* The learning rate of step s (0-based) of `steps`: linear warmup from 0 over `warmup`
 * steps to `peak`, then linear decay to 0 at the last step (Hugging Face's
 * get_linear_schedule_with_warmup). */
float train_lr_at(float peak, long warmup, long steps, long s);

/* Scales the n gradients so their global L2 norm is at most clip (torch's
 * clip_grad_norm_: factor clip / (norm + 1e-6), applied only when below 1); clip 0 = off. */
void train_clip_grads(float *g, size_t n, float clip);

/* perm (n) = a permutation of 0..n-1, Fisher-Yates driven by key. */
void train_shuffle(int *perm, int n, uint64_t key);

/* The training device: *gpu = CUDA_DEVICE_CPU (cuda_bert.h) for NULL, "" and "cpu", the
 * index for "cuda" and "cuda:N", and for "auto" GPU 0 when one is usable, else the CPU.
 * Anything else is PARLEY_ERR_INVALID_ARG. Whether the GPU works shows when it is opened. */
parley_status train_parse_device(const char *device, int *gpu);

/* Checks the settings training and pretraining share (epochs, batch, lr, threads, warmup,
 * weight decay, dropout, clip, vocabulary size; max positions of a new model); `who` names
 * the loop in the message. With `sized`, epochs, batch and weight decay PARLEY_AUTO pass
 * (the recipe sizes them: nlu/train/recipe.h); lr PARLEY_AUTO passes either way. Each loop
 * checks its own settings beside it. */
parley_status train_check_common(const parley_train_params *p, const char *who, int sized);

/* What a loop counts in one call for its progress reports (throughput, time to go, the
 * epoch's mean loss), the same way for training and pretraining. */
typedef struct train_meter {
    double t_train;           /* seconds spent in steps in this call */
    long steps_done, ex_done; /* steps and examples trained in this call */
    double loss_sum;          /* this epoch's losses in this call */
    long loss_steps;
} train_meter;

/* Counts a step that began at t0 (train_now_s) over n examples with mean loss `loss`. */
void train_meter_step(train_meter *m, double t0, int n, double loss);
/* Starts the next epoch's mean loss. */
void train_meter_epoch(train_meter *m);
/* Examples per second over this call's steps (0 before the first). */
double train_meter_rate(const train_meter *m);
/* Fills pr's event, step, steps, epoch (the one running during it, the one just done at its
 * end, at least 1), loss, examples_per_s and eta_s. */
void train_meter_report(const train_meter *m, parley_train_event ev, long step, long steps,
                        long epoch_steps, parley_train_progress *pr);

/* A new model's configuration of shape s (token types 2, BERT's LayerNorm epsilon; no
 * vocabulary size and no labels yet). */
bert_config train_config_of(const parley_train_shape *s);
/* The shape of configuration c. */
parley_train_shape train_shape_of(const bert_config *c);

/* dir/name into buf (PATH_MAX bytes); INVALID_ARG when it does not fit. */
parley_status train_path_join(char *buf, const char *dir, const char *name);

/* Removes what `dir` holds except the entries named keep[0..n_keep), `depth` levels of
 * subdirectories deep (the training state has one). Best effort: what cannot be removed
 * stays and is logged. */
void train_remove_entries(const char *dir, const char *const *keep, int n_keep, int depth);

/* Writes text to path atomically (pl_atomic). */
parley_status train_write_file(const char *path, const char *text);

#endif
