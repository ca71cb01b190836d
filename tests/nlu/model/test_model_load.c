/* test_model_load.c — the model directory: layout, random init, save, and a load that
 * refuses every broken file with a message naming the file and the tensor or key.
 *
 * Each broken case is built in a temporary directory from a good model, by editing its
 * config.json or the JSON header of its model.safetensors, or by cutting the file.
 * Also: exact save/load round trips (with and without the "bert." prefix, unaligned data),
 * a crash-safe save under a file-size limit, and allocation failure injected at every
 * allocation of load and save.
 */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "nlu/model/model.h"
#include "nlu/model/safetensors.h"
#include "sdk/base/error.h"
#include "tests/check.h"
#include "tests/fault.h"

static char root[64];

/* --- files ------------------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n)
        n = 0;
    b[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void spit(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len)
        fprintf(stderr, "cannot write %s\n", path);
    if (f)
        fclose(f);
}

static int same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    int same = x && y && la == lb && !memcmp(x, y, la);
    free(x);
    free(y);
    return same;
}

static const char *in(const char *dir, const char *file)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, file);
    return buf[k];
}

/* A fresh case directory holding a copy of the good model. */
static const char *case_dir(const char *name)
{
    static char dir[256];
    char src[256];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    mkdir(dir, 0777);
    snprintf(src, sizeof src, "%s/good", root);
    const char *files[] = { "config.json", "vocab.txt", "model.safetensors" };
    for (int i = 0; i < 3; i++) {
        size_t n;
        char *b = slurp(in(src, files[i]), &n);
        spit(in(dir, files[i]), b, n);
        free(b);
    }
    return dir;
}

static int no_temp_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int clean = 1;
    while (d && (e = readdir(d)))
        clean &= strstr(e->d_name, ".tmp-") == NULL;
    if (d)
        closedir(d);
    return clean;
}

/* --- editing JSON -------------------------------------------------------------------- */

static cJSON *config_read(const char *dir)
{
    size_t n;
    char *b = slurp(in(dir, "config.json"), &n);
    cJSON *j = cJSON_Parse(b);
    free(b);
    return j;
}

static void config_write(const char *dir, cJSON *j)
{
    char *t = cJSON_Print(j);
    spit(in(dir, "config.json"), t, strlen(t));
    cJSON_free(t);
    cJSON_Delete(j);
}

static cJSON *header_read(const char *dir)
{
    size_t n;
    uint64_t hl;
    char *b = slurp(in(dir, "model.safetensors"), &n);
    memcpy(&hl, b, 8);
    cJSON *j = cJSON_ParseWithLength(b + 8, hl);
    free(b);
    return j;
}

/* Rewrites dir's model.safetensors with header h (taking it) over the same data, plus
 * `extra` bytes at the end. The new header is never padded to 8 bytes (one space is added
 * if it happens to be), so data offsets are unaligned: the reader must cope. */
static void header_write(const char *dir, cJSON *h, const void *extra, size_t extra_len)
{
    size_t n;
    uint64_t hl;
    char *b = slurp(in(dir, "model.safetensors"), &n);
    memcpy(&hl, b, 8);
    char *t = cJSON_PrintUnformatted(h);
    size_t tl = strlen(t);
    char *out = malloc(8 + tl + 1 + (n - 8 - hl) + extra_len);
    memcpy(out + 8, t, tl);
    if ((8 + tl) % 4 == 0)
        out[8 + tl++] = ' ';
    uint64_t nl = tl;
    memcpy(out, &nl, 8);
    memcpy(out + 8 + tl, b + 8 + hl, n - 8 - hl);
    if (extra_len)
        memcpy(out + 8 + tl + (n - 8 - hl), extra, extra_len);
    spit(in(dir, "model.safetensors"), out, 8 + tl + (n - 8 - hl) + extra_len);
    free(out);
    free(b);
    cJSON_free(t);
    cJSON_Delete(h);
}

static cJSON *int_array(int a, int b)
{
    int v[2] = { a, b };
    return cJSON_CreateIntArray(v, 2);
}

static cJSON *entry(cJSON *h, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(h, name);
}

/* --- checking ------------------------------------------------------------------------ */

static void expect_fail(const char *dir, parley_status want, const char *s1, const char *s2,
                        const char *what)
{
    bert_model *m = (bert_model *)&m;
    parley_status st = bert_model_load(dir, &m);
    const char *msg = parley_errmsg();
    if (getenv("VERBOSE"))
        printf("%-40s %s\n", what, msg);
    CHECK(st == want, "%s: got %s, want %s (%s)", what, parley_status_str(st),
          parley_status_str(want), msg);
    CHECK(m == NULL, "%s: *out is NULL on failure", what);
    CHECK(strstr(msg, s1) != NULL, "%s: message names '%s': %s", what, s1, msg);
    CHECK(!s2 || strstr(msg, s2) != NULL, "%s: message names '%s': %s", what, s2, msg);
    if (st == PARLEY_OK)
        bert_model_free(m);
}

static void config_check(const bert_config *a, const bert_config *b, const char *what)
{
    CHECK(a->vocab_size == b->vocab_size && a->hidden == b->hidden && a->layers == b->layers &&
                  a->heads == b->heads && a->intermediate == b->intermediate &&
                  a->max_positions == b->max_positions && a->type_vocab == b->type_vocab &&
                  a->ln_eps == b->ln_eps,
          "%s: shape", what);
    int same = a->n_intents == b->n_intents && a->n_slots == b->n_slots;
    for (int i = 0; same && i < a->n_intents; i++)
        same = !strcmp(a->intent_labels[i], b->intent_labels[i]);
    for (int i = 0; same && i < a->n_slots; i++)
        same = !strcmp(a->slot_labels[i], b->slot_labels[i]);
    CHECK(same, "%s: labels", what);
}

static void expect_equal(const char *dir, const bert_model *want, const char *what)
{
    bert_model *m = NULL;
    parley_status st = bert_model_load(dir, &m);
    CHECK(st == PARLEY_OK, "%s: load: %s", what, parley_errmsg());
    if (!m)
        return;
    config_check(&m->cfg, &want->cfg, what);
    CHECK(m->n_params == want->n_params &&
                  !memcmp(m->params, want->params, m->n_params * sizeof(float)),
          "%s: parameters equal exactly", what);
    CHECK(wp_vocab_size(m->vocab) == wp_vocab_size(want->vocab) &&
                  !strcmp(wp_vocab_token(m->vocab, 7), wp_vocab_token(want->vocab, 7)),
          "%s: vocabulary", what);
    bert_model_free(m);
}

/* --- the good model ------------------------------------------------------------------ */

enum { V = 12, H = 8, L = 2, NH = 2, I = 16, P = 16, TT = 2 };
static const char *intents[] = { "greet", "order", "bye" };
static const char *slots[] = { "O", "B-size", "I-size", "B-topping" };

static bert_model *good_model(void)
{
    const char *tokens[V] = { "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a",
                              "b",     "c",     "d",     "##e",   "f",      "g" };
    bert_config c = { .vocab_size = V,
                      .hidden = H,
                      .layers = L,
                      .heads = NH,
                      .intermediate = I,
                      .max_positions = P,
                      .type_vocab = TT,
                      .ln_eps = 1e-12f };
    wp_vocab *v = NULL;
    bert_model *m = NULL;
    CHECK(wp_vocab_from_tokens(tokens, V, &v) == PARLEY_OK, "vocab: %s", parley_errmsg());
    CHECK(bert_config_set_labels(&c, intents, 3, slots, 4) == PARLEY_OK, "labels");
    CHECK(bert_model_alloc(&c, v, &m) == PARLEY_OK, "alloc: %s", parley_errmsg());
    bert_config_clear(&c);
    if (m)
        bert_model_init_random(m, 7);
    return m;
}

static void test_layout(const bert_model *m)
{
    size_t layer = 3 * H * H + 3 * H + H * H + H + 2 * H + I * H + I + H * I + H + 2 * H;
    size_t want = V * H + P * H + TT * H + 2 * H + L * layer + H * H + H + 3 * H + 3 + 4 * H + 4;
    CHECK(bert_param_count(&m->cfg) == want && m->n_params == want, "param count %zu, want %zu",
          m->n_params, want);
    CHECK(m->w.slot_b + 4 == m->params + m->n_params, "the layout ends at the end of params");
    CHECK(m->w.qkv_w == m->w.emb_ln_b + H && m->w.qkv_b == m->w.qkv_w + L * 3 * H * H,
          "fused q/k/v blocks");

    /* bert-base-uncased has 109,482,240 parameters (pooler included, no heads). */
    bert_config base = { .vocab_size = 30522,
                         .hidden = 768,
                         .layers = 12,
                         .heads = 12,
                         .intermediate = 3072,
                         .max_positions = 512,
                         .type_vocab = 2,
                         .n_intents = 0,
                         .n_slots = 0 };
    CHECK(bert_param_count(&base) == 109482240, "BERT-base count %zu", bert_param_count(&base));
}

static void test_init(const bert_model *m)
{
    bert_model *again = good_model();
    CHECK(again && !memcmp(again->params, m->params, m->n_params * sizeof(float)),
          "same seed, same weights");
    bert_model_init_random(again, 8);
    CHECK(memcmp(again->params, m->params, m->n_params * sizeof(float)) != 0,
          "another seed, other weights");
    bert_model_free(again);

    int ones = 1, zeros = 1;
    for (int i = 0; i < H; i++) {
        ones &= m->w.emb_ln_w[i] == 1 && m->w.ln1_w[H + i] == 1 && m->w.ln2_w[i] == 1;
        zeros &= m->w.emb_ln_b[i] == 0 && m->w.qkv_b[2 * H + i] == 0 && m->w.pool_b[i] == 0 &&
                 m->w.word_emb[i] == 0;
    }
    CHECK(ones && zeros, "LayerNorm 1 and 0, biases 0, [PAD] row 0");
    double s = 0, s2 = 0;
    size_t n = (size_t)L * I * H;
    for (size_t i = 0; i < n; i++) {
        s += m->w.ffn_in_w[i];
        s2 += (double)m->w.ffn_in_w[i] * m->w.ffn_in_w[i];
    }
    double mean = s / n, sd = sqrt(s2 / n - mean * mean);
    CHECK(fabs(mean) < 0.004 && sd > 0.017 && sd < 0.023, "normal(0, 0.02): mean %g sd %g", mean,
          sd);
}

/* --- cases --------------------------------------------------------------------------- */

static void test_round_trip(const bert_model *m, const char *good)
{
    expect_equal(good, m, "round trip");
    char again[256];
    snprintf(again, sizeof again, "%s/again", root);
    CHECK(bert_model_save(m, again) == PARLEY_OK, "save again: %s", parley_errmsg());
    CHECK(same_file(in(good, "model.safetensors"), in(again, "model.safetensors")) &&
                  same_file(in(good, "config.json"), in(again, "config.json")),
          "saving is deterministic");
    CHECK(no_temp_files(good), "no temporary files left");

    sft_file *f = NULL;
    CHECK(sft_open(in(good, "model.safetensors"), &f) == PARLEY_OK, "sft_open: %s",
          parley_errmsg());
    if (f) {
        uint64_t hl;
        memcpy(&hl, f->map, 8);
        const char *h = (const char *)f->map + 8, *close = memrchr(h, '}', hl);
        CHECK((8 + hl) % 8 == 0 && close && strspn(close + 1, " ") >= (size_t)(h + hl - close - 1),
              "header padded with spaces to a multiple of 8");
        CHECK(strstr(h, "\"__metadata__\":{\"format\":\"pt\"}") != NULL, "metadata format pt");
        CHECK(f->n_tensors == 5 + 16 * L + 2 + 4, "%d tensors", f->n_tensors);
        const sft_tensor *q = sft_find(f, "bert.encoder.layer.1.attention.self.key.weight");
        CHECK(q && q->dtype == SFT_F32 && q->ndim == 2 && q->shape[0] == H && q->shape[1] == H &&
                      !memcmp(q->data, m->w.qkv_w + (3 + 1) * H * H, H * H * sizeof(float)),
              "key of layer 1 is rows [H, 2H) of the fused block");
        CHECK(sft_find(f, "intent_classifier.weight") &&
                      !sft_find(f, "bert.intent_classifier.weight"),
              "heads unprefixed");
        sft_close(f);
    }

    /* Without the prefix, with unaligned data, with TensorFlow-style LayerNorm names. */
    const char *d = case_dir("unprefixed");
    cJSON *h = header_read(d), *out = cJSON_CreateObject();
    while (h->child) {
        cJSON *e = cJSON_DetachItemViaPointer(h, h->child);
        const char *name = strncmp(e->string, "bert.", 5) ? e->string : e->string + 5;
        cJSON_AddItemToObject(out, name, e);
    }
    cJSON_Delete(h);
    header_write(d, out, NULL, 0);
    expect_equal(d, m, "without the bert. prefix");

    d = case_dir("gamma");
    h = header_read(d);
    cJSON *e = cJSON_DetachItemFromObject(h, "bert.embeddings.LayerNorm.weight");
    cJSON_AddItemToObject(h, "bert.embeddings.LayerNorm.gamma", e);
    header_write(d, h, NULL, 0);
    expect_equal(d, m, "LayerNorm.gamma");

    /* A position_ids buffer (int64) is ignored; an unknown config key too. */
    d = case_dir("position_ids");
    h = header_read(d);
    int64_t ids[P];
    for (int i = 0; i < P; i++)
        ids[i] = i;
    size_t n;
    char *b = slurp(in(d, "model.safetensors"), &n);
    uint64_t hl;
    memcpy(&hl, b, 8);
    free(b);
    int end = (int)(n - 8 - hl);
    e = cJSON_AddObjectToObject(h, "bert.embeddings.position_ids");
    cJSON_AddStringToObject(e, "dtype", "I64");
    cJSON_AddItemToObject(e, "shape", int_array(1, P));
    cJSON_AddItemToObject(e, "data_offsets", int_array(end, end + (int)sizeof ids));
    header_write(d, h, ids, sizeof ids);
    cJSON *c = config_read(d);
    cJSON_AddStringToObject(c, "problem_type", "single_label_classification");
    config_write(d, c);
    expect_equal(d, m, "position_ids and extra config keys");
}

static void test_bad_tensors(void)
{
    const char *d = case_dir("missing");
    cJSON *h = header_read(d);
    cJSON_DeleteItemFromObject(h, "bert.encoder.layer.1.output.dense.bias");
    cJSON_DeleteItemFromObject(h, "slot_classifier.weight");
    header_write(d, h, NULL, 0);
    expect_fail(d, PARLEY_ERR_FORMAT, "2 tensors are missing",
                "\"bert.encoder.layer.1.output.dense.bias\"", "missing tensors");
    CHECK(strstr(parley_errmsg(), "\"slot_classifier.weight\"") &&
                  strstr(parley_errmsg(), "model.safetensors"),
          "every missing tensor named: %s", parley_errmsg());

    d = case_dir("unexpected");
    h = header_read(d);
    cJSON *e = cJSON_AddObjectToObject(h, "bert.encoder.layer.9.output.dense.bias");
    cJSON_AddStringToObject(e, "dtype", "F32");
    cJSON_AddItemToObject(e, "shape", cJSON_CreateIntArray((int[]){ 0 }, 1));
    cJSON_AddItemToObject(e, "data_offsets", int_array(0, 0));
    header_write(d, h, NULL, 0);
    expect_fail(d, PARLEY_ERR_FORMAT, "model.safetensors",
                "unexpected tensor (not part of this \"bert.\"-prefixed model): "
                "\"bert.encoder.layer.9.output.dense.bias\"",
                "unexpected tensor");

    d = case_dir("mixed_prefix");
    h = header_read(d);
    e = cJSON_DetachItemFromObject(h, "bert.pooler.dense.bias");
    cJSON_AddItemToObject(h, "pooler.dense.bias", e);
    header_write(d, h, NULL, 0);
    expect_fail(d, PARLEY_ERR_FORMAT, "model.safetensors", "\"bert.pooler.dense.bias\"",
                "prefix on some tensors only");

    d = case_dir("shape");
    h = header_read(d);
    cJSON_ReplaceItemInObject(entry(h, "bert.pooler.dense.weight"), "shape", int_array(4, 16));
    header_write(d, h, NULL, 0);
    expect_fail(d, PARLEY_ERR_FORMAT,
                "\"bert.pooler.dense.weight\": expected shape [8, 8], got [4, 16]",
                "model.safetensors", "wrong shape");

    d = case_dir("dtype");
    h = header_read(d);
    cJSON_ReplaceItemInObject(entry(h, "bert.encoder.layer.0.attention.self.value.weight"), "dtype",
                              cJSON_CreateString("I32"));
    header_write(d, h, NULL, 0);
    expect_fail(d, PARLEY_ERR_UNSUPPORTED, "model.safetensors",
                "\"bert.encoder.layer.0.attention.self.value.weight\": dtype I32", "I32 tensor");

    d = case_dir("dtype_unknown");
    h = header_read(d);
    cJSON_ReplaceItemInObject(entry(h, "slot_classifier.bias"), "dtype",
                              cJSON_CreateString("Q4_K"));
    header_write(d, h, NULL, 0);
    expect_fail(d, PARLEY_ERR_UNSUPPORTED, "model.safetensors",
                "\"slot_classifier.bias\": dtype \"Q4_K\"", "unknown dtype");

    d = case_dir("offsets_len");
    h = header_read(d);
    cJSON_ReplaceItemInObject(entry(h, "bert.pooler.dense.weight"), "shape", int_array(8, 7));
    header_write(d, h, NULL, 0);
    expect_fail(d, PARLEY_ERR_FORMAT, "\"bert.pooler.dense.weight\": data_offsets",
                "shape [8, 7] of F32 needs 224", "data_offsets disagree with shape");

    d = case_dir("offsets_beyond");
    h = header_read(d);
    cJSON *o = cJSON_GetObjectItem(entry(h, "slot_classifier.bias"), "data_offsets");
    int b = (int)cJSON_GetArrayItem(o, 1)->valuedouble + 1000;
    cJSON_ReplaceItemInObject(entry(h, "slot_classifier.bias"), "data_offsets",
                              int_array(b, b + 16));
    header_write(d, h, NULL, 0);
    expect_fail(d, PARLEY_ERR_FORMAT, "\"slot_classifier.bias\": data_offsets",
                "run past the end of the data", "offsets beyond the data");

    d = case_dir("overlap");
    h = header_read(d);
    cJSON_ReplaceItemInObject(entry(h, "slot_classifier.bias"), "data_offsets", int_array(8, 24));
    header_write(d, h, NULL, 0);
    expect_fail(d, PARLEY_ERR_FORMAT, "overlap", "\"slot_classifier.bias\"", "overlapping tensors");

    d = case_dir("offsets_type");
    h = header_read(d);
    cJSON_ReplaceItemInObject(entry(h, "intent_classifier.bias"), "data_offsets",
                              cJSON_CreateString("0-12"));
    header_write(d, h, NULL, 0);
    expect_fail(d, PARLEY_ERR_FORMAT, "\"intent_classifier.bias\": \"data_offsets\"",
                "model.safetensors", "data_offsets not an array");

    d = case_dir("shape_type");
    h = header_read(d);
    cJSON_ReplaceItemInObject(entry(h, "intent_classifier.bias"), "shape",
                              cJSON_CreateIntArray((int[]){ -3 }, 1));
    header_write(d, h, NULL, 0);
    expect_fail(d, PARLEY_ERR_FORMAT, "\"intent_classifier.bias\": \"shape\"", "model.safetensors",
                "negative shape");

    d = case_dir("twice");
    h = header_read(d);
    e = cJSON_Duplicate(entry(h, "intent_classifier.bias"), 1);
    cJSON_AddItemToObject(h, "intent_classifier.bias", e);
    header_write(d, h, NULL, 0);
    expect_fail(d, PARLEY_ERR_FORMAT, "\"intent_classifier.bias\" appears twice",
                "model.safetensors", "tensor named twice");

    /* Broken files: cut, too short, impossible header length, header not JSON. */
    d = case_dir("truncated");
    size_t n;
    char *blob = slurp(in(d, "model.safetensors"), &n);
    spit(in(d, "model.safetensors"), blob, n - 100);
    expect_fail(d, PARLEY_ERR_FORMAT, "model.safetensors", "truncated", "truncated file");
    spit(in(d, "model.safetensors"), blob, 5);
    expect_fail(d, PARLEY_ERR_FORMAT, "model.safetensors", "too short", "5-byte file");
    uint64_t big = n;
    memcpy(blob, &big, 8);
    spit(in(d, "model.safetensors"), blob, n);
    expect_fail(d, PARLEY_ERR_FORMAT, "model.safetensors", "header length",
                "header length beyond the file");
    free(blob);
    const char *texts[] = { "{\"a\": [1, 2}", "[1, 2, 3]", "{\"x\":{}} junk", "{}" };
    const char *says[] = { "header:1:", "not a JSON object", "unexpected text", NULL };
    for (int i = 0; i < 4; i++) {
        char buf[64] = { 0 };
        uint64_t len = strlen(texts[i]);
        memcpy(buf, &len, 8);
        memcpy(buf + 8, texts[i], len);
        spit(in(d, "model.safetensors"), buf, 8 + len);
        if (says[i])
            expect_fail(d, PARLEY_ERR_FORMAT, "model.safetensors", says[i], texts[i]);
        else
            expect_fail(d, PARLEY_ERR_FORMAT, "model.safetensors", "are missing", "empty header");
    }
}

static void config_case(const char *name, const char *key, cJSON *value, parley_status want,
                        const char *says)
{
    const char *d = case_dir(name);
    cJSON *c = config_read(d);
    if (value && !cJSON_ReplaceItemInObject(c, key, value))
        cJSON_AddItemToObject(c, key, value); /* a key the file lacks */
    else if (!value)
        cJSON_DeleteItemFromObject(c, key);
    config_write(d, c);
    char quoted[64];
    snprintf(quoted, sizeof quoted, "key \"%s\"", key);
    expect_fail(d, want, in(d, "config.json"), says ? says : quoted, name);
    CHECK(strstr(parley_errmsg(), quoted) != NULL, "%s: names %s: %s", name, quoted,
          parley_errmsg());
}

static void test_bad_config(void)
{
    config_case("cfg_missing", "hidden_size", NULL, PARLEY_ERR_CONFIG, "is missing");
    config_case("cfg_type", "hidden_size", cJSON_CreateString("8"), PARLEY_ERR_CONFIG,
                "expected a positive integer");
    config_case("cfg_fraction", "num_hidden_layers", cJSON_CreateNumber(1.5), PARLEY_ERR_CONFIG,
                "positive integer");
    config_case("cfg_zero", "intermediate_size", cJSON_CreateNumber(0), PARLEY_ERR_CONFIG,
                "positive integer");
    config_case("cfg_heads", "num_attention_heads", cJSON_CreateNumber(3), PARLEY_ERR_CONFIG,
                "does not divide");
    config_case("cfg_act", "hidden_act", cJSON_CreateString("relu"), PARLEY_ERR_UNSUPPORTED,
                "\"relu\" is not supported");
    config_case("cfg_eps", "layer_norm_eps", cJSON_CreateNumber(-1), PARLEY_ERR_CONFIG,
                "positive number");
    config_case("cfg_temp_zero", "intent_temperature", cJSON_CreateNumber(0), PARLEY_ERR_CONFIG,
                "expected a number in [0.01, 100]");
    config_case("cfg_temp_big", "intent_temperature", cJSON_CreateNumber(1e3), PARLEY_ERR_CONFIG,
                "expected a number in");
    config_case("cfg_temp_type", "intent_temperature", cJSON_CreateString("2"), PARLEY_ERR_CONFIG,
                "expected a number in");
    config_case("cfg_intents", "intent_labels", NULL, PARLEY_ERR_CONFIG, "is missing");
    config_case("cfg_intents_type", "intent_labels", cJSON_CreateString("greet"), PARLEY_ERR_CONFIG,
                "list of strings");
    config_case("cfg_intents_empty", "intent_labels", cJSON_CreateArray(), PARLEY_ERR_CONFIG,
                "non-empty");
    const char *dup[] = { "O", "B-size", "B-size" };
    config_case("cfg_slots_dup", "slot_labels", cJSON_CreateStringArray(dup, 3), PARLEY_ERR_CONFIG,
                "\"B-size\" appears twice");
    const char *no_o[] = { "B-size", "I-size" };
    config_case("cfg_slots_o", "slot_labels", cJSON_CreateStringArray(no_o, 2), PARLEY_ERR_CONFIG,
                "include \"O\"");
    const char *not_bio[] = { "O", "size" };
    config_case("cfg_slots_bio", "slot_labels", cJSON_CreateStringArray(not_bio, 2),
                PARLEY_ERR_CONFIG, "not a BIO tag");
    const char *blank[] = { "greet", "" };
    config_case("cfg_blank", "intent_labels", cJSON_CreateStringArray(blank, 2), PARLEY_ERR_CONFIG,
                "label 1 is empty");
    config_case("cfg_vocab", "vocab_size", cJSON_CreateNumber(V + 1), PARLEY_ERR_CONFIG,
                "vocab.txt");

    const char *d = case_dir("cfg_syntax");
    const char *bad = "{\n  \"hidden_size\": 8,\n  oops\n}\n";
    spit(in(d, "config.json"), bad, strlen(bad));
    expect_fail(d, PARLEY_ERR_FORMAT, "config.json:3:", "not valid JSON", "config not JSON");
    spit(in(d, "config.json"), "[8]", 3);
    expect_fail(d, PARLEY_ERR_CONFIG, "config.json", "JSON object", "config not an object");

    /* The vocabulary's own count disagreeing with a config that still matches the tensors. */
    d = case_dir("vocab_short");
    const char *short_vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n";
    spit(in(d, "vocab.txt"), short_vocab, strlen(short_vocab));
    expect_fail(d, PARLEY_ERR_CONFIG, "config.json", "vocab.txt has 6 tokens",
                "vocab shorter than vocab_size");

    const char *files[] = { "config.json", "vocab.txt", "model.safetensors" };
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "no_%d", i);
        d = case_dir(name);
        unlink(in(d, files[i]));
        bert_model *m = NULL;
        parley_status st = bert_model_load(d, &m);
        CHECK(st != PARLEY_OK && m == NULL && strstr(parley_errmsg(), in(d, files[i])),
              "missing %s: %s %s", files[i], parley_status_str(st), parley_errmsg());
        CHECK(i == 1 || st == PARLEY_ERR_NOT_FOUND, "missing %s is NOT_FOUND", files[i]);
    }
    expect_fail("/nonexistent/model", PARLEY_ERR_NOT_FOUND, "/nonexistent/model/config.json", NULL,
                "no directory");
}

/* "intent_slot_types": read into per-intent tag flags (an intent not listed takes every
 * tag), written back with every intent, and refused with the key named when it names an
 * intent or a slot type the model lacks. */
static void test_intent_slot_types(void)
{
    const char *d = case_dir("slot_types");
    cJSON *c = config_read(d), *types = cJSON_AddObjectToObject(c, "intent_slot_types");
    const char *order_types[] = { "size" };
    cJSON_AddItemToObject(types, "order", cJSON_CreateStringArray(order_types, 1));
    cJSON_AddArrayToObject(types, "bye");
    config_write(d, c);
    bert_model *m = NULL;
    CHECK(bert_model_load(d, &m) == PARLEY_OK, "load with intent_slot_types: %s", parley_errmsg());
    if (m) {
        const unsigned char *greet = bert_slot_tags_of(&m->cfg, 0),
                            *order = bert_slot_tags_of(&m->cfg, 1),
                            *bye = bert_slot_tags_of(&m->cfg, 2);
        CHECK(greet && greet[0] && greet[1] && greet[2] && greet[3], "greet (not listed): all");
        CHECK(order && order[0] && order[1] && order[2] && !order[3],
              "order: O, B-size, I-size, not B-topping");
        CHECK(bye && bye[0] && !bye[1] && !bye[2] && !bye[3], "bye: O alone");
        const char *again = case_dir("slot_types_again");
        CHECK(bert_model_save(m, again) == PARLEY_OK, "save: %s", parley_errmsg());
        cJSON *w = config_read(again), *t = cJSON_GetObjectItem(w, "intent_slot_types");
        char *text = t ? cJSON_PrintUnformatted(t) : NULL;
        CHECK(text && !strcmp(text, "{\"greet\":[\"size\",\"topping\"],\"order\":[\"size\"],"
                                    "\"bye\":[]}"),
              "written back: %s", text ? text : "(none)");
        cJSON_free(text);
        cJSON_Delete(w);
        bert_model *back = NULL;
        CHECK(bert_model_load(again, &back) == PARLEY_OK && back &&
                      !memcmp(back->cfg.intent_slot_tags, m->cfg.intent_slot_tags, 3 * 4),
              "read back the same: %s", parley_errmsg());
        bert_model_free(back);
        bert_model_free(m);
    }
    bert_model *plain = good_model();
    CHECK(plain && !plain->cfg.intent_slot_tags && bert_slot_tags_of(&plain->cfg, 0) == NULL,
          "a model without the key: any tag with any intent");
    bert_model_free(plain);

    config_case("cfg_slot_types_type", "intent_slot_types", cJSON_CreateString("size"),
                PARLEY_ERR_CONFIG, "expected an object of intent: [slot types]");
    cJSON *bad = cJSON_CreateObject();
    cJSON_AddArrayToObject(bad, "pay");
    config_case("cfg_slot_types_intent", "intent_slot_types", bad, PARLEY_ERR_CONFIG,
                "\"pay\" is not in intent_labels");
    bad = cJSON_CreateObject();
    const char *colour[] = { "colour" };
    cJSON_AddItemToObject(bad, "order", cJSON_CreateStringArray(colour, 1));
    config_case("cfg_slot_types_type_name", "intent_slot_types", bad, PARLEY_ERR_CONFIG,
                "\"order\": \"colour\" is not a slot type of slot_labels");
    bad = cJSON_CreateObject();
    cJSON_AddStringToObject(bad, "order", "size");
    config_case("cfg_slot_types_list", "intent_slot_types", bad, PARLEY_ERR_CONFIG,
                "\"order\": expected a list of slot types");
}

/* --- sizes and values ---------------------------------------------------------------- */

/* The largest single request since the counter was reset, through parley's allocator. */
static size_t peak_request;

static void *peak_malloc(size_t n, void *ud)
{
    (void)ud;
    peak_request = n > peak_request ? n : peak_request;
    return malloc(n);
}

static void *peak_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    peak_request = n > peak_request ? n : peak_request;
    return realloc(p, n);
}

static void peak_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

/* Sizes within every limit but far from the file's: the tensors are compared with the
 * config before the model is allocated, so nothing near the model's claimed size (3.1e9
 * parameters, 12 GB) is ever asked for. */
static void test_sizes(void)
{
    const char *d = case_dir("huge_hidden");
    cJSON *c = config_read(d);
    cJSON_ReplaceItemInObject(c, "hidden_size", cJSON_CreateNumber(16000));
    cJSON_ReplaceItemInObject(c, "intermediate_size", cJSON_CreateNumber(16000));
    config_write(d, c);
    parley_allocator a = { peak_malloc, peak_realloc, peak_free, NULL };
    peak_request = 0;
    parley_set_allocator(&a);
    expect_fail(d, PARLEY_ERR_FORMAT,
                "\"bert.embeddings.word_embeddings.weight\": expected shape "
                "[12, 16000], got [12, 8]",
                "model.safetensors", "config sizes far beyond the file's");
    parley_set_allocator(NULL);
    CHECK(peak_request > 0 && peak_request < (1u << 20),
          "no allocation near the model's claimed size: largest %zu bytes", peak_request);

    config_case("cfg_too_wide", "hidden_size", cJSON_CreateNumber(1 << 17), PARLEY_ERR_CONFIG,
                "131072 is more than parley supports (65536)");
    config_case("cfg_too_long", "max_position_embeddings", cJSON_CreateNumber(1 << 17),
                PARLEY_ERR_CONFIG, "is more than parley supports (65536)");
    /* Each size within its limit, the product far beyond BERT_MAX_PARAMS. */
    d = case_dir("cfg_params");
    c = config_read(d);
    cJSON_ReplaceItemInObject(c, "hidden_size", cJSON_CreateNumber(1 << 16));
    cJSON_ReplaceItemInObject(c, "intermediate_size", cJSON_CreateNumber(1 << 18));
    cJSON_ReplaceItemInObject(c, "num_hidden_layers", cJSON_CreateNumber(1024));
    config_write(d, c);
    expect_fail(d, PARLEY_ERR_CONFIG, "config.json", "parameters, more than parley supports",
                "too many parameters");
}

/* Labels by the hundred thousand: checked in n log n (pairwise, this takes many minutes). */
static void test_many_labels(void)
{
    enum { N = 500000 };
    char **names = malloc(N * sizeof *names);
    for (int i = 0; i < N; i++) {
        names[i] = malloc(16);
        snprintf(names[i], 16, "intent_%d", i);
    }
    const char *d = case_dir("labels_many");
    cJSON *c = config_read(d);
    cJSON_ReplaceItemInObject(c, "intent_labels",
                              cJSON_CreateStringArray((const char *const *)names, N));
    config_write(d, c);
    expect_fail(d, PARLEY_ERR_FORMAT, "\"intent_classifier.weight\": expected shape [500000, 8]",
                "model.safetensors", "500000 distinct labels: on to the shape check");

    snprintf(names[N - 1], 16, "intent_%d", 123);
    d = case_dir("labels_many_dup");
    c = config_read(d);
    cJSON_ReplaceItemInObject(c, "intent_labels",
                              cJSON_CreateStringArray((const char *const *)names, N));
    config_write(d, c);
    expect_fail(d, PARLEY_ERR_CONFIG, "label \"intent_123\" appears twice", "config.json",
                "500000 labels, the last a repeat");
    for (int i = 0; i < N; i++)
        free(names[i]);
    free(names);
}

/* Weights that are not numbers, or too big to keep the forward pass finite, are refused
 * with the tensor and the element. */
static void test_bad_values(void)
{
    static const struct {
        float value;
        const char *says;
    } cases[] = {
        { NAN, "element [3, 5] is NaN" },
        { -INFINITY, "element [3, 5] is -infinite" },
        { 2e4f, "element [3, 5] is 20000, beyond the limit of 10000 in magnitude" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char d[256];
        snprintf(d, sizeof d, "%s/values_%zu", root, k);
        bert_model *m = good_model();
        if (!m)
            return;
        m->w.ffn_in_w[I * H + 3 * H + 5] = cases[k].value; /* layer 1, row 3, column 5 */
        m->w.ffn_in_w[I * H + 3 * H + 6] = NAN;            /* only the first is named */
        CHECK(bert_model_save(m, d) == PARLEY_OK, "save: %s", parley_errmsg());
        expect_fail(d, PARLEY_ERR_FORMAT, "\"bert.encoder.layer.1.intermediate.dense.weight\"",
                    cases[k].says, cases[k].says);
        bert_model_free(m);
    }
    /* The bound itself is allowed, and so is any value under it. */
    char d[256];
    snprintf(d, sizeof d, "%s/values_ok", root);
    bert_model *m = good_model();
    if (!m)
        return;
    m->w.slot_b[0] = -1e4f;
    m->w.pos_emb[7] = 9999.5f;
    CHECK(bert_model_save(m, d) == PARLEY_OK, "save: %s", parley_errmsg());
    expect_equal(d, m, "weights at the bound");
    bert_model_free(m);
}

static void test_save_failures(const bert_model *m, const char *good)
{
    char path[256];
    snprintf(path, sizeof path, "%s/good/config.json/sub", root);
    parley_status st = bert_model_save(m, path);
    CHECK(st == PARLEY_ERR_IO && strstr(parley_errmsg(), path), "save under a file: %s",
          parley_errmsg());

    /* A disk that fills up: nothing under the final names changes, nothing is left over. */
    const char *d = case_dir("full");
    bert_model *other = good_model();
    bert_model_init_random(other, 99);
    other->cfg.intent_labels[0][0] = 'G';
    struct rlimit old, small = { 4096, 4096 };
    getrlimit(RLIMIT_FSIZE, &old);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &small);
    st = bert_model_save(other, d);
    setrlimit(RLIMIT_FSIZE, &old);
    CHECK(st == PARLEY_ERR_IO && strstr(parley_errmsg(), in(d, "model.safetensors")),
          "disk full: %s %s", parley_status_str(st), parley_errmsg());
    CHECK(same_file(in(d, "model.safetensors"), in(good, "model.safetensors")) &&
                  same_file(in(d, "config.json"), in(good, "config.json")),
          "disk full leaves the old files");
    CHECK(no_temp_files(d), "disk full leaves no temporary files");
    CHECK(bert_model_save(other, d) == PARLEY_OK && no_temp_files(d), "then a save succeeds: %s",
          parley_errmsg());
    expect_equal(d, other, "overwritten model");
    bert_model_free(other);
}

/* --- allocation failure injection (tests/fault.h) ------------------------------------ */

static parley_status load_free(void *dir)
{
    bert_model *got = NULL;
    parley_status st = bert_model_load(dir, &got);
    bert_model_free(got);
    return st;
}

typedef struct save_case {
    const bert_model *m;
    const char *dir;
} save_case;

static parley_status save_clean(void *ctx)
{
    const save_case *c = ctx;
    parley_status st = bert_model_save(c->m, c->dir);
    CHECK(no_temp_files(c->dir), "save, allocation %ld failing: temporary files left",
          fault_fail_at);
    return st;
}

static void test_alloc_failures(const bert_model *m, const char *good)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/nomem", root);
    long points = fault_sweep("load", load_free, (void *)good);
    CHECK(points > 4, "load: %ld allocation failure points", points);
    save_case c = { m, dir };
    points = fault_sweep("save", save_clean, &c);
    CHECK(points > 4, "save: %ld allocation failure points", points);
    expect_equal(dir, m, "model saved after the injection loop");
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/parley-model-XXXXXX");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    char good[128];
    snprintf(good, sizeof good, "%s/good", root);
    bert_model *m = good_model();
    if (!m)
        return check_done();
    test_layout(m);
    test_init(m);
    CHECK(bert_model_save(m, good) == PARLEY_OK, "save: %s", parley_errmsg());
    test_round_trip(m, good);
    test_bad_tensors();
    test_bad_config();
    test_intent_slot_types();
    test_sizes();
    test_many_labels();
    test_bad_values();
    test_save_failures(m, good);
    test_alloc_failures(m, good);
    bert_model_free(m);

    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (!check_failures && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return check_done();
}
