/* checkpoint.c — the training state on disk (checkpoint.h): a checkpoint written whole before
 * it becomes the latest, and read back for --resume.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "nlu/model/safetensors.h"
#include "nlu/train/checkpoint.h"
#include "nlu/train/train_util.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"
#include "sdk/base/json.h"

enum { STATE_VERSION = 2, STATE_MAX_BYTES = 1 << 20 };
static const char STATE_FORMAT[] = "parley-train-state";

static parley_status state_json(const train_checkpoint *r, char **out)
{
    char hex[2][20], *json = NULL;
    cJSON *root = cJSON_CreateObject(), *best = NULL, *recipe = NULL;
    if (train_recipe_json(&r->recipe, &json) == PARLEY_OK)
        recipe = cJSON_Parse(json);
    pl_free(json);
    snprintf(hex[0], sizeof hex[0], "%016llx", (unsigned long long)r->data_hash);
    snprintf(hex[1], sizeof hex[1], "%016llx", (unsigned long long)r->dev_hash);
    int ok = root && cJSON_AddStringToObject(root, "format", STATE_FORMAT) &&
             cJSON_AddNumberToObject(root, "version", STATE_VERSION) &&
             cJSON_AddNumberToObject(root, "step", (double)r->step) &&
             cJSON_AddNumberToObject(root, "steps", (double)r->steps) &&
             cJSON_AddNumberToObject(root, "warmup_steps", (double)r->warmup) && recipe &&
             cJSON_AddItemToObject(root, "recipe", recipe) &&
             cJSON_AddStringToObject(root, "data", r->data) &&
             cJSON_AddStringToObject(root, "data_hash", hex[0]) &&
             cJSON_AddStringToObject(root, "dev_hash", hex[1]);
    if (ok && r->has_best) {
        ok = (best = cJSON_AddObjectToObject(root, "best")) &&
             cJSON_AddNumberToObject(best, "epoch", r->best_epoch) &&
             cJSON_AddNumberToObject(best, "intent_accuracy", r->best.intent_accuracy) &&
             cJSON_AddNumberToObject(best, "slot_f1", r->best.slot_f1) &&
             cJSON_AddNumberToObject(best, "sentence_accuracy", r->best.sentence_accuracy);
    }
    if (recipe && !cJSON_GetObjectItemCaseSensitive(root, "recipe"))
        cJSON_Delete(recipe); /* not attached */
    char *text = ok ? cJSON_Print(root) : NULL, *copy = text ? pl_malloc(strlen(text) + 2) : NULL;
    if (copy)
        sprintf(copy, "%s\n", text);
    cJSON_free(text);
    cJSON_Delete(root);
    *out = copy;
    return copy ? PARLEY_OK : pl_nomem("writing the training state");
}

parley_status train_checkpoint_save(const char *state_dir, const train_checkpoint *c,
                                    const bert_model *m, const float *adam_m, const float *adam_v)
{
    parley_status st;
    char name[32], dir[PATH_MAX], path[PATH_MAX], *json = NULL;
    pl_atomic a = { .fd = -1 };
    size_t n = m->n_params;
    sft_wtensor t[2] = { { "adam_m", 1, { (int64_t)n }, adam_m },
                         { "adam_v", 1, { (int64_t)n }, adam_v } };
    snprintf(name, sizeof name, "step-%09ld", c->step);
    if ((st = pl_make_dir(state_dir)) != PARLEY_OK ||
        (st = train_path_join(dir, state_dir, name)) != PARLEY_OK ||
        (st = bert_model_save(m, dir)) != PARLEY_OK ||
        (st = train_path_join(path, dir, "optim.safetensors")) != PARLEY_OK ||
        (st = pl_atomic_begin(&a, path)) != PARLEY_OK ||
        (st = sft_write_f32(&a, t, 2)) != PARLEY_OK || (st = pl_atomic_commit(&a)) != PARLEY_OK ||
        (st = state_json(c, &json)) != PARLEY_OK ||
        (st = train_path_join(path, dir, "state.json")) != PARLEY_OK ||
        (st = train_write_file(path, json)) != PARLEY_OK)
        goto fail;
    /* The switch: until this rename the previous checkpoint stays the latest. */
    snprintf(dir, sizeof dir, "%s\n", name);
    if ((st = train_path_join(path, state_dir, "latest")) != PARLEY_OK ||
        (st = train_write_file(path, dir)) != PARLEY_OK)
        goto fail;
    const char *keep[3] = { "latest", name, "best" };
    train_remove_entries(state_dir, keep, 3, 1);
fail:
    pl_atomic_abort(&a);
    pl_free(json);
    return st == PARLEY_OK ? st : pl_wrap(st, "saving the training state");
}

static parley_status json_num(const cJSON *o, const char *key, const char *where, double lo,
                              double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi))
        return pl_fail(PARLEY_ERR_FORMAT, "%s: \"%s\" is missing or out of range", where, key);
    *out = v->valuedouble;
    return PARLEY_OK;
}

static parley_status json_hex(const cJSON *o, const char *key, const char *where, int base,
                              uint64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char *end;
    errno = 0;
    unsigned long long x = cJSON_IsString(v) ? strtoull(v->valuestring, &end, base) : 0;
    if (!cJSON_IsString(v) || errno || end == v->valuestring || *end)
        return pl_fail(PARLEY_ERR_FORMAT, "%s: \"%s\" is missing or not a number in a string",
                       where, key);
    *out = (uint64_t)x;
    return PARLEY_OK;
}

parley_status train_checkpoint_read(const char *dir, train_checkpoint *r)
{
    parley_status st;
    char path[PATH_MAX], *text = NULL;
    size_t len;
    cJSON *root = NULL;
    double v[4];
    if ((st = train_path_join(path, dir, "state.json")) != PARLEY_OK ||
        (st = pl_read_file(path, STATE_MAX_BYTES, &text, &len)) != PARLEY_OK ||
        (st = pl_json_parse(text, len, path, &root)) != PARLEY_OK)
        goto fail;
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, STATE_FORMAT)) {
        st = pl_fail(PARLEY_ERR_FORMAT, "%s: not a parley training state (\"format\")", path);
        goto fail;
    }
    const cJSON *recipe = cJSON_GetObjectItemCaseSensitive(root, "recipe");
    char *recipe_text = cJSON_IsObject(recipe) ? cJSON_PrintUnformatted(recipe) : NULL;
    if ((st = json_num(root, "version", path, STATE_VERSION, STATE_VERSION, &v[0])) != PARLEY_OK ||
        (st = json_num(root, "step", path, 0, 1e15, &v[1])) != PARLEY_OK ||
        (st = json_num(root, "warmup_steps", path, 0, 1e15, &v[2])) != PARLEY_OK ||
        (st = json_hex(root, "data_hash", path, 16, &r->data_hash)) != PARLEY_OK ||
        (st = json_hex(root, "dev_hash", path, 16, &r->dev_hash)) != PARLEY_OK ||
        (st = recipe_text ? train_recipe_parse(recipe_text, path, &r->recipe)
                          : pl_fail(PARLEY_ERR_FORMAT, "%s: no \"recipe\"", path)) != PARLEY_OK) {
        cJSON_free(recipe_text);
        goto fail;
    }
    cJSON_free(recipe_text);
    r->step = (long)v[1];
    r->warmup = (long)v[2];
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(root, "best");
    if (best) {
        if ((st = json_num(best, "epoch", path, 1, INT_MAX, &v[0])) != PARLEY_OK ||
            (st = json_num(best, "intent_accuracy", path, 0, 1, &r->best.intent_accuracy)) !=
                    PARLEY_OK ||
            (st = json_num(best, "slot_f1", path, 0, 1, &r->best.slot_f1)) != PARLEY_OK ||
            (st = json_num(best, "sentence_accuracy", path, 0, 1, &r->best.sentence_accuracy)) !=
                    PARLEY_OK)
            goto fail;
        r->has_best = 1;
        r->best_epoch = (int)v[0];
    }
fail:
    cJSON_Delete(root);
    pl_free(text);
    return st;
}

parley_status train_checkpoint_latest(const char *state_dir, char *dir)
{
    parley_status st;
    char path[PATH_MAX], *text = NULL;
    size_t len;
    if ((st = train_path_join(path, state_dir, "latest")) != PARLEY_OK)
        return st;
    if (access(path, F_OK) != 0)
        return pl_fail(PARLEY_ERR_NOT_FOUND,
                       "%s: no training state to resume (is this the --out of a stopped run?)",
                       path);
    if ((st = pl_read_file(path, 256, &text, &len)) != PARLEY_OK)
        return st;
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        text[--len] = '\0';
    if (strncmp(text, "step-", 5) || strchr(text, '/') ||
        (st = train_path_join(dir, state_dir, text)) != PARLEY_OK)
        st = pl_fail(PARLEY_ERR_FORMAT, "%s: \"%s\" does not name a checkpoint", path, text);
    pl_free(text);
    return st;
}

parley_status train_checkpoint_moments(const char *dir, size_t n_params, float *adam_m,
                                       float *adam_v)
{
    parley_status st;
    char path[PATH_MAX];
    sft_file *f = NULL;
    float *dst[2] = { adam_m, adam_v };
    const char *names[2] = { "adam_m", "adam_v" };
    if ((st = train_path_join(path, dir, "optim.safetensors")) != PARLEY_OK ||
        (st = sft_open(path, &f)) != PARLEY_OK)
        goto fail;
    for (int i = 0; i < 2; i++) {
        const sft_tensor *t = sft_find(f, names[i]);
        if (!t || t->ndim != 1 || t->shape[0] != (int64_t)n_params) {
            st = pl_fail(PARLEY_ERR_FORMAT, "%s: tensor \"%s\" is missing or not of shape [%zu]",
                         path, names[i], n_params);
            goto fail;
        }
        if ((st = sft_read_f32(f, t, dst[i])) != PARLEY_OK)
            goto fail;
    }
fail:
    sft_close(f);
    return st == PARLEY_OK ? st : pl_wrap(st, "--resume");
}
