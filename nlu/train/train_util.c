/* train_util.c — the shared pieces of the training loops (see train_util.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nlu/cuda/cuda_bert.h"
#include "nlu/train/encoder.h"
#include "nlu/train/train_util.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"

double train_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t train_mix(uint64_t a, uint64_t b)
{
    uint64_t z = a + 0x9e3779b97f4a7c15ull * (b + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

float train_lr_at(float peak, long warmup, long steps, long s)
{
    if (s < warmup)
        return peak * (float)((double)s / (double)(warmup > 1 ? warmup : 1));
    double left = (double)(steps - s) / (double)(steps - warmup > 1 ? steps - warmup : 1);
    return peak * (float)(left > 0 ? left : 0);
}

void train_clip_grads(float *g, size_t n, float clip)
{
    /* Sixteen float lanes the compiler can vectorize, folded into a double every block of
     * 1024: exact enough for a norm and several times faster than a double loop. */
    enum { LANES = 16, BLOCK = 1024 };
    double sum = 0;
    size_t i = 0;
    while (i + LANES <= n) {
        float acc[LANES] = { 0 };
        for (size_t end = i + BLOCK < n ? i + BLOCK : n; i + LANES <= end; i += LANES)
            for (int j = 0; j < LANES; j++)
                acc[j] += g[i + j] * g[i + j];
        for (int j = 0; j < LANES; j++)
            sum += acc[j];
    }
    for (; i < n; i++)
        sum += (double)g[i] * (double)g[i];
    float coef = (float)((double)clip / (sqrt(sum) + 1e-6));
    if (clip > 0 && coef < 1)
        for (i = 0; i < n; i++)
            g[i] *= coef;
}

void train_shuffle(int *perm, int n, uint64_t key)
{
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(train_mix(key, (uint64_t)i) % (uint64_t)(i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

parley_status train_parse_device(const char *device, int *gpu)
{
    if (!device || !*device) {
        *gpu = CUDA_DEVICE_CPU;
        return PARLEY_OK;
    }
    parley_status st = cuda_device_parse(device, gpu);
    if (st == PARLEY_OK && *gpu == CUDA_DEVICE_AUTO)
        *gpu = cuda_device_count() > 0 ? 0 : CUDA_DEVICE_CPU;
    return st;
}

bert_config train_config_of(const parley_train_shape *s)
{
    return (bert_config){ .hidden = s->hidden,
                          .layers = s->layers,
                          .heads = s->heads,
                          .intermediate = s->intermediate,
                          .max_positions = s->max_positions,
                          .type_vocab = 2,
                          .ln_eps = 1e-12f };
}

parley_train_shape train_shape_of(const bert_config *c)
{
    return (parley_train_shape){ c->layers, c->hidden, c->heads, c->intermediate,
                                 c->max_positions };
}

parley_status train_check_common(const parley_train_params *p, const char *who, int sized)
{
    /* sized: epochs, batch and weight decay may be PARLEY_AUTO, the recipe's to size; lr may
     * be PARLEY_AUTO either way (pretraining: 1e-3) */
#define COUNT_OK(x) ((x) >= 1 || (sized && (x) == PARLEY_AUTO))
    if (!COUNT_OK(p->epochs) || !COUNT_OK(p->batch) || !(p->lr > 0 || p->lr == PARLEY_AUTO) ||
        p->threads < 0 || p->vocab_size < 0 ||
        !(p->warmup_fraction >= 0 && p->warmup_fraction <= 1) ||
        !(p->weight_decay >= 0 || (sized && p->weight_decay == PARLEY_AUTO)) ||
        !(p->dropout >= 0 && p->dropout < 1) || p->clip < 0)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "%s: a setting is out of range (epochs and batch >= 1, lr > 0%s; weight "
                       "decay, clip, threads, vocabulary size >= 0; warmup in [0, 1]; dropout in "
                       "[0, 1))",
                       who,
                       sized ? "; any of them, or the weight decay, PARLEY_AUTO to size it to the "
                               "data"
                             : "; lr PARLEY_AUTO: 1e-3");
#undef COUNT_OK
    const parley_train_shape *sh = &p->shape;
#define DIM_OK(x) ((x) >= 1 || (x) == PARLEY_AUTO)
    if (!train_init_dir(p) && !(DIM_OK(sh->layers) && DIM_OK(sh->hidden) && DIM_OK(sh->heads) &&
                                DIM_OK(sh->intermediate)))
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "%s: layers, hidden, heads and intermediate must be >= 1, or PARLEY_AUTO "
                       "to size them to the data",
                       who);
#undef DIM_OK
    if (!train_init_dir(p) && p->shape.max_positions < 3)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "%s: max positions must be >= 3 ([CLS], a piece, [SEP])", who);
    return PARLEY_OK;
}

void train_meter_step(train_meter *m, double t0, int n, double loss)
{
    m->t_train += train_now_s() - t0;
    m->steps_done++;
    m->ex_done += n;
    m->loss_sum += loss;
    m->loss_steps++;
}

void train_meter_epoch(train_meter *m)
{
    m->loss_sum = 0;
    m->loss_steps = 0;
}

double train_meter_rate(const train_meter *m)
{
    return m->t_train > 0 ? (double)m->ex_done / m->t_train : 0;
}

void train_meter_report(const train_meter *m, parley_train_event ev, long step, long steps,
                        long epoch_steps, parley_train_progress *pr)
{
    pr->event = ev;
    pr->step = step;
    pr->steps = steps;
    long e = ev == PARLEY_TRAIN_STEP && step % epoch_steps ? step / epoch_steps + 1
                                                           : step / epoch_steps;
    pr->epoch = e < 1 ? 1 : (int)e;
    pr->loss = m->loss_steps ? (float)(m->loss_sum / (double)m->loss_steps) : 0.0f;
    pr->examples_per_s = train_meter_rate(m);
    pr->eta_s = m->steps_done ? m->t_train / (double)m->steps_done * (double)(steps - step) : 0;
}

parley_status train_path_join(char *buf, const char *dir, const char *name)
{
    if (snprintf(buf, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s: path too long", dir);
    return PARLEY_OK;
}

void train_remove_entries(const char *dir, const char *const *keep, int n_keep, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[PATH_MAX];
    if (!d)
        return;
    while ((de = readdir(d))) {
        int skip = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
        for (int k = 0; k < n_keep && !skip; k++)
            skip = keep[k] && !strcmp(de->d_name, keep[k]);
        if (skip || snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path)
            continue;
        struct stat sb;
        if (depth > 0 && lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            train_remove_entries(path, NULL, 0, depth - 1);
            if (rmdir(path) != 0)
                pl_log(PARLEY_LOG_WARN, "train: cannot remove %s: %s", path, strerror(errno));
        } else if (unlink(path) != 0) {
            pl_log(PARLEY_LOG_WARN, "train: cannot remove %s: %s", path, strerror(errno));
        }
    }
    closedir(d);
}

parley_status train_write_file(const char *path, const char *text)
{
    pl_atomic a;
    parley_status st = pl_atomic_begin(&a, path);
    if (st == PARLEY_OK && (st = pl_atomic_write(&a, text, strlen(text))) == PARLEY_OK)
        st = pl_atomic_commit(&a);
    pl_atomic_abort(&a);
    return st;
}
