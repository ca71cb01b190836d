/* train_grads.c — runs one bert_train_step for tests/nlu/train/test_train_grads.py and writes
 * what it computed, so Python can hold it to torch autograd.
 *
 * Usage: train_grads MODEL_DIR BATCH_JSON OUT_DIR
 * BATCH_JSON: {"len": [B], "ids": [N], "intent": [B], "slot": [N], "slot_weight": w,
 *              "dropout": p, "seed": s, "threads": t}   (the last four optional)
 *             plus, for a model with sparse features, "sent": B rows and "tok": N rows, each
 *             a list of [feature, value] pairs, and optionally "intent_weight": [NI].
 * OUT_DIR/outputs.json: the loss parts and the logits, floats printed to round-trip;
 * OUT_DIR/grads/: a model directory whose parameters are the gradients, saved by
 * bert_model_save, so Python reads them by their Hugging Face names.
 * With "target": [N] in place of "intent" and "slot", the step is bert_mlm_step_ws with
 * the head in MODEL_DIR/mlm_head.safetensors: outputs.json holds loss, masked and
 * correct, and the head's gradients go to OUT_DIR/grads/mlm_head.safetensors.
 * Exit status: 0 on success, 2 when the step fails (its status and message on stderr), 1 on
 * a usage or I/O problem of the tool itself.
 */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/train/bert_train.h"
#include "sdk/base/alloc.h"
#include "sdk/base/files.h"
#include "sdk/base/json.h"

/* A JSON array of ints into a new array (n elements). */
static int *int_array(const cJSON *root, const char *name, int *n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, name);
    *n = cJSON_GetArraySize(a);
    int *out = calloc(*n > 0 ? (size_t)*n : 1, sizeof *out), i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a) out[i++] = (int)e->valuedouble;
    return out;
}

/* Rows of sparse features: a JSON list of rows, each a list of [index, value] pairs. */
static void read_rows(const cJSON *root, const char *name, sf_rows *out)
{
    const cJSON *row, *pair;
    cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(root, name))
    {
        int n = cJSON_GetArraySize(row), k = 0;
        int *index = calloc((size_t)n + 1, sizeof *index);
        float *value = calloc((size_t)n + 1, sizeof *value);
        cJSON_ArrayForEach(pair, row)
        {
            index[k] = (int)cJSON_GetArrayItem(pair, 0)->valuedouble;
            value[k++] = (float)cJSON_GetArrayItem(pair, 1)->valuedouble;
        }
        if (sf_rows_push(out, index, value, n) != PARLEY_OK)
            exit(1);
        free(index), free(value);
    }
}

/* A JSON array of numbers into a new float array, or NULL when root has no such key. */
static float *float_array(const cJSON *root, const char *name)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, name), *e;
    if (!a)
        return NULL;
    float *out = calloc((size_t)cJSON_GetArraySize(a) + 1, sizeof *out);
    int i = 0;
    cJSON_ArrayForEach(e, a) out[i++] = (float)e->valuedouble;
    return out;
}

static double number(const cJSON *root, const char *name, double fallback)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, name);
    return cJSON_IsNumber(e) ? e->valuedouble : fallback;
}

static void write_floats(FILE *f, const char *name, const float *x, size_t n)
{
    fprintf(f, ",\n \"%s\": [", name);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%.9g", i ? ", " : "", x[i]);
    fputc(']', f);
}

static int fail(parley_status st, int rc)
{
    fprintf(stderr, "%s: %s\n", parley_status_str(st), parley_errmsg());
    return rc;
}

/* The MLM variant: returns the exit status. */
static int mlm_step(bert_model *m, const cJSON *root, const char *model_dir, const char *out_dir,
                    const int *len, int B, const int *ids)
{
    char path[PATH_MAX];
    int n_target, rc = 1;
    int *target = int_array(root, "target", &n_target);
    size_t n_head = bert_mlm_param_count(&m->cfg);
    float *head = calloc(n_head, sizeof *head), *head_grads = calloc(n_head, sizeof *head_grads);
    float *grads = calloc(m->n_params, sizeof *grads);
    bert_train_ws ws = { 0 };
    bert_mlm_loss loss;
    bert_batch b = { .n_seq = B, .len = len, .ids = ids };
    parley_status st;
    bert_set_threads((int)number(root, "threads", 0));
    snprintf(path, sizeof path, "%s/mlm_head.safetensors", model_dir);
    if ((st = bert_mlm_load(&m->cfg, path, head)) != PARLEY_OK) {
        rc = fail(st, 1);
        goto done;
    }
    if ((st = bert_mlm_step_ws(&ws, m, head, &b, target, (float)number(root, "dropout", 0.0),
                               (uint64_t)number(root, "seed", 0), grads, head_grads, &loss)) !=
        PARLEY_OK) {
        rc = fail(st, 2);
        goto done;
    }
    snprintf(path, sizeof path, "%s/outputs.json", out_dir);
    FILE *f = fopen(path, "w");
    if (!f ||
        fprintf(f, "{\"loss\": %.9g, \"masked\": %d, \"correct\": %d}\n", loss.loss, loss.masked,
                loss.correct) < 0 ||
        fclose(f) != 0) {
        perror(path);
        goto done;
    }
    memcpy(m->params, grads, m->n_params * sizeof *grads);
    snprintf(path, sizeof path, "%s/grads", out_dir);
    if ((st = bert_model_save(m, path)) != PARLEY_OK) {
        rc = fail(st, 1);
        goto done;
    }
    snprintf(path, sizeof path, "%s/grads/mlm_head.safetensors", out_dir);
    rc = (st = bert_mlm_save(&m->cfg, head_grads, path)) != PARLEY_OK ? fail(st, 1) : 0;
done:
    bert_train_ws_free(&ws);
    free(target), free(head), free(head_grads), free(grads);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s MODEL_DIR BATCH_JSON OUT_DIR\n", argv[0]);
        return 1;
    }
    bert_model *m = NULL;
    char *text = NULL;
    size_t text_len = 0;
    cJSON *root = NULL;
    parley_status st;
    if ((st = bert_model_load(argv[1], &m)) != PARLEY_OK ||
        (st = pl_read_file(argv[2], 1 << 26, &text, &text_len)) != PARLEY_OK ||
        (st = pl_json_parse(text, text_len, argv[2], &root)) != PARLEY_OK) {
        fprintf(stderr, "%s: %s\n", parley_status_str(st), parley_errmsg());
        return 1;
    }
    int B, N, n_intent, n_slot;
    int *len = int_array(root, "len", &B), *ids = int_array(root, "ids", &N);
    if (cJSON_GetObjectItemCaseSensitive(root, "target")) {
        int rc = mlm_step(m, root, argv[1], argv[3], len, B, ids);
        free(len), free(ids);
        pl_free(text);
        cJSON_Delete(root);
        bert_model_free(m);
        return rc;
    }
    int *intent = int_array(root, "intent", &n_intent), *slot = int_array(root, "slot", &n_slot);
    bert_set_threads((int)number(root, "threads", 0));
    bert_batch b = { .n_seq = B, .len = len, .ids = ids };
    bert_sparse_batch x = { 0 };
    read_rows(root, "sent", &x.sent);
    read_rows(root, "tok", &x.tok);
    float *intent_weight = float_array(root, "intent_weight");
    bert_labels y = { .intent = intent,
                      .slot = slot,
                      .slot_weight = (float)number(root, "slot_weight", 1.0),
                      .sparse = &x,
                      .intent_weight = intent_weight };
    const int NI = m->cfg.n_intents, NS = m->cfg.n_slots;
    float *grads = calloc(m->n_params, sizeof *grads);
    float *il = calloc((size_t)B * NI + 1, sizeof *il),
          *sl = calloc((size_t)N * NS + 1, sizeof *sl);
    bert_loss loss;
    st = bert_train_step(m, &b, &y, (float)number(root, "dropout", 0.0),
                         (uint64_t)number(root, "seed", 0), grads, &loss, il, sl);
    if (st != PARLEY_OK) {
        fprintf(stderr, "%s: %s\n", parley_status_str(st), parley_errmsg());
        return 2;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/outputs.json", argv[3]);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fprintf(f,
            "{\"loss\": %.9g, \"intent_loss\": %.9g, \"slot_loss\": %.9g, "
            "\"intent_correct\": %d, \"slot_scored\": %d, \"slot_correct\": %d",
            loss.total, loss.intent, loss.slot, loss.intent_correct, loss.slot_scored,
            loss.slot_correct);
    write_floats(f, "intent_logits", il, (size_t)B * NI);
    write_floats(f, "slot_logits", sl, (size_t)N * NS);
    fputs("}\n", f);
    if (fclose(f) != 0) {
        perror(path);
        return 1;
    }
    /* The model is not needed any more: its parameters become the gradients. */
    memcpy(m->params, grads, m->n_params * sizeof *grads);
    snprintf(path, sizeof path, "%s/grads", argv[3]);
    if ((st = bert_model_save(m, path)) != PARLEY_OK) {
        fprintf(stderr, "%s: %s\n", parley_status_str(st), parley_errmsg());
        return 1;
    }
    free(len), free(ids), free(intent), free(slot), free(grads), free(il), free(sl);
    free(intent_weight);
    bert_sparse_batch_free(&x);
    pl_free(text);
    cJSON_Delete(root);
    bert_model_free(m);
    return 0;
}
