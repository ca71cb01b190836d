/* train_grads.c — runs one bert_train_step for tests/nlu/test_train_grads.py and writes what
 * it computed, so Python can hold it to torch autograd.
 *
 * Usage: train_grads MODEL_DIR BATCH_JSON OUT_DIR
 * BATCH_JSON: {"len": [B], "ids": [N], "intent": [B], "slot": [N], "slot_weight": w,
 *              "dropout": p, "seed": s, "threads": t}   (the last four optional)
 * OUT_DIR/outputs.json: the loss parts and the logits, floats printed to round-trip;
 * OUT_DIR/grads/: a model directory whose parameters are the gradients, saved by
 * bert_model_save, so Python reads them by their Hugging Face names.
 * Exit status: 0 on success, 2 when the step fails (its status and message on stderr), 1 on
 * a usage or I/O problem of the tool itself.
 */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/bert_train.h"
#include "nlu/safetensors.h"
#include "sdk/pl_alloc.h"

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
        (st = st_read_file(argv[2], 1 << 26, &text, &text_len)) != PARLEY_OK ||
        (st = st_json_parse(text, text_len, argv[2], &root)) != PARLEY_OK) {
        fprintf(stderr, "%s: %s\n", parley_status_str(st), parley_errmsg());
        return 1;
    }
    int B, N, n_intent, n_slot;
    int *len = int_array(root, "len", &B), *ids = int_array(root, "ids", &N);
    int *intent = int_array(root, "intent", &n_intent), *slot = int_array(root, "slot", &n_slot);
    bert_set_threads((int)number(root, "threads", 0));
    bert_batch b = { .n_seq = B, .len = len, .ids = ids };
    bert_labels y = { .intent = intent, .slot = slot,
                      .slot_weight = (float)number(root, "slot_weight", 1.0) };
    const int NI = m->cfg.n_intents, NS = m->cfg.n_slots;
    float *grads = calloc(m->n_params, sizeof *grads);
    float *il = calloc((size_t)B * NI + 1, sizeof *il), *sl = calloc((size_t)N * NS + 1, sizeof *sl);
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
    fprintf(f, "{\"loss\": %.9g, \"intent_loss\": %.9g, \"slot_loss\": %.9g, "
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
    pl_free(text);
    cJSON_Delete(root);
    bert_model_free(m);
    return 0;
}
