/* encoder.c — the default encoder: a small encoder pretrained on general English that a new
 * model of few examples starts from, and where `parley train` finds it.
 *
 * tools/encoder.sh builds it once (WordNet's example sentences, `parley pretrain` at the small
 * shape) into the cache folder below; nothing is shipped in the repository. Where it is not
 * built, a new model starts from random weights. The measurements behind it are in
 * bench/RESULTS.md#fewshot-9.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nlu/train/defaults.h"
#include "nlu/train/encoder.h"
#include "nlu/train/wp_learn.h"
#include "sdk/base/files.h"

/* Whether dir/name is a file (folder nonzero: a folder). */
static int is_entry(const char *dir, const char *name, int folder)
{
    char path[4096];
    struct stat st;
    return snprintf(path, sizeof path, "%s/%s", dir, name) < (int)sizeof path &&
           stat(path, &st) == 0 && (folder ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

/* Where the default encoder lives: $PARLEY_ENCODER when set, else parley's cache folder;
 * 0 when there is no such place (PARLEY_ENCODER "none" or empty, no cache folder). */
static int encoder_path(char *dir, size_t size)
{
    const char *env = getenv("PARLEY_ENCODER");
    if (!env)
        return pl_cache_dir("encoder", dir, size);
    int n = snprintf(dir, size, "%s", env);
    return n > 0 && (size_t)n < size && strcmp(dir, "none") != 0;
}

int train_default_encoder(char *dir, size_t size)
{
    return encoder_path(dir, size) && is_entry(dir, "config.json", 0) &&
           is_entry(dir, "model.safetensors", 0) && is_entry(dir, "vocab.txt", 0);
}

int train_encoder_folder(const char *name, char *path, size_t size)
{
    char dir[4096];
    return encoder_path(dir, sizeof dir) && is_entry(dir, name, 1) &&
           snprintf(path, size, "%s/%s", dir, name) < (int)size;
}

const char *train_init_dir(const parley_train_params *p)
{
    return p->init && strcmp(p->init, "none") != 0 ? p->init : NULL;
}

const char *train_start_dir(const parley_train_params *p, int n_examples, char *dir, size_t size)
{
    if (p->init)
        return train_init_dir(p);
    int default_vocab = !p->vocab && (!p->vocab_size || p->vocab_size == WP_LEARN_DEFAULT_SIZE);
    return default_vocab && train_small_data(&p->shape, n_examples) &&
                           train_default_encoder(dir, size)
                   ? dir
                   : NULL;
}
