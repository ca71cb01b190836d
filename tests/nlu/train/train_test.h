/* train_test.h — what the tests of the training loops (test_train_loop.c,
 * test_pretrain.c, test_api.c) share: a progress callback that records what a run reported, paths
 * by value, whole-file reads, byte-for-byte comparison of model directories, and clean-up.
 */
#ifndef TESTS_NLU_TRAIN_TEST_H
#define TESTS_NLU_TRAIN_TEST_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parley/parley.h"
#include "tests/check.h"

/* What a run reported through parley_train_progress (parley/train.h), for the
 * parley_train_params.progress callback train_watch with a train_seen as user_data. */
typedef struct train_seen {
    int starts, steps, epochs, last_epoch, learned, replaced, dev_epochs, mlm_epochs;
    int n_train, n_dev, n_augmented, n_background, n_builtin, n_lowercase;
    char device[64]; /* what trained */
    long last_step, steps_total;
    float first_loss, last_loss;
    double last_eta;
    parley_train_scores dev;                           /* the last epoch's, with a dev set */
    double first_mlm_acc, last_mlm_acc, last_mlm_loss; /* pretraining's held-out scores */
    long stop_at_step;                                 /* ask to stop after this step (0 = never) */
} train_seen;

/* Every test trains with a peak learning rate of at most this. */
#define TRAIN_TEST_MAX_LR 3e-3f

/* Records p into the train_seen u, checking that steps come in order and the learning
 * rate stays in [0, TRAIN_TEST_MAX_LR]; asks to stop after step u->stop_at_step. */
static inline int train_watch(const parley_train_progress *p, void *u)
{
    train_seen *s = u;
    switch (p->event) {
    case PARLEY_TRAIN_START:
        s->starts++;
        s->learned = p->vocab_learned;
        s->replaced = p->heads_replaced;
        s->steps_total = p->steps;
        s->n_train = p->n_train;
        s->n_dev = p->n_dev;
        s->n_augmented = p->n_augmented;
        s->n_background = p->n_background;
        s->n_builtin = p->n_builtin;
        s->n_lowercase = p->n_lowercase;
        snprintf(s->device, sizeof s->device, "%s", p->device);
        break;
    case PARLEY_TRAIN_STEP:
        CHECK(p->step == s->last_step + 1 || s->steps == 0, "steps in order: %ld after %ld",
              p->step, s->last_step);
        if (s->steps++ == 0)
            s->first_loss = p->loss;
        s->last_step = p->step;
        s->last_eta = p->eta_s;
        CHECK(p->lr >= 0 && p->lr <= TRAIN_TEST_MAX_LR * 1.0001f, "lr %g", (double)p->lr);
        break;
    case PARLEY_TRAIN_EPOCH:
        s->epochs++;
        s->last_epoch = p->epoch;
        s->last_loss = p->loss;
        if (p->has_dev) {
            s->dev_epochs++;
            s->dev = p->dev;
        }
        if (p->has_mlm) {
            if (s->mlm_epochs++ == 0)
                s->first_mlm_acc = p->mlm_accuracy;
            s->last_mlm_acc = p->mlm_accuracy;
            s->last_mlm_loss = p->mlm_loss;
        }
        break;
    }
    return s->stop_at_step && p->event == PARLEY_TRAIN_STEP && p->step == s->stop_at_step;
}

typedef struct path {
    char s[1024];
} path;

/* dir/name, by value, so no buffer is shared between calls. */
static inline path path_in(const char *dir, const char *name)
{
    path p;
    snprintf(p.s, sizeof p.s, "%.500s/%.500s", dir, name);
    return p;
}

/* The whole file, NUL-terminated (caller frees), its size in *len; NULL if unreadable. */
static inline char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (s = malloc((size_t)n + 1)) && fread(s, 1, (size_t)n, f) == (size_t)n) {
        *len = (size_t)n;
        s[n] = '\0';
    } else {
        free(s);
        s = NULL;
    }
    fclose(f);
    return s;
}

/* True when files names[0..n) of directories a and b exist and are byte-identical. */
static inline int same_files(const char *a, const char *b, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        size_t la = 0, lb = 0;
        char *x = read_all(path_in(a, names[i]).s, &la), *y = read_all(path_in(b, names[i]).s, &lb);
        int same = x && y && la == lb && !memcmp(x, y, la);
        free(x);
        free(y);
        if (!same)
            return 0;
    }
    return 1;
}

/* True when the model files (config.json, model.safetensors, vocab.txt) are identical. */
static inline int same_model_files(const char *a, const char *b)
{
    static const char *const names[] = { "config.json", "model.safetensors", "vocab.txt" };
    return same_files(a, b, names, 3);
}

static inline int exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* The tiny set's files (in the folder every training test gets as argv[1]) and the test's
 * temporary directory. */
typedef struct tiny_files {
    char data[512];   /* nlu.yaml: 40 examples of 4 intents */
    char dev[512];    /* dev.yaml: 6 examples, one of an intent the training set lacks */
    char bad[512];    /* bad.yaml: an annotation left open on line 4 */
    char lookup[512]; /* lookup.yaml: city examples and a lookup table of cities */
    char tmp[64];     /* /tmp/parley-test-NAME-XXXXXX */
} tiny_files;

/* The start of a test's main: fills f from argv[1] and makes its temporary directory.
 * Returns 0, or the exit code after printing why not. */
static inline int train_test_start(int argc, char **argv, const char *name, tiny_files *f)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATA_DIR (tests/nlu/train/tiny)\n", argv[0]);
        return 2;
    }
    snprintf(f->data, sizeof f->data, "%.490s/nlu.yaml", argv[1]);
    snprintf(f->dev, sizeof f->dev, "%.490s/dev.yaml", argv[1]);
    snprintf(f->bad, sizeof f->bad, "%.490s/bad.yaml", argv[1]);
    snprintf(f->lookup, sizeof f->lookup, "%.490s/lookup.yaml", argv[1]);
    snprintf(f->tmp, sizeof f->tmp, "/tmp/parley-test-%.20s-XXXXXX", name);
    if (!mkdtemp(f->tmp)) {
        perror("mkdtemp");
        return 1;
    }
    return 0;
}

/* rm -r dir (best effort). */
static inline void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        path p = path_in(dir, e->d_name);
        struct stat sb;
        if (lstat(p.s, &sb) == 0 && S_ISDIR(sb.st_mode))
            rm_tree(p.s);
        else
            unlink(p.s);
    }
    closedir(d);
    rmdir(dir);
}

/* Counts temporary files (".tmp-" in the name) under dir, `depth` levels of subdirectories
 * deep. */
static inline int count_tmp(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d))) {
        struct stat sb;
        path p = path_in(dir, e->d_name);
        n += strstr(e->d_name, ".tmp-") != NULL;
        if (depth > 0 && e->d_name[0] != '.' && lstat(p.s, &sb) == 0 && S_ISDIR(sb.st_mode))
            n += count_tmp(p.s, depth - 1);
    }
    closedir(d);
    return n;
}

#endif
