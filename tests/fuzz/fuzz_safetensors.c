/* fuzz_safetensors.c — libFuzzer target for safetensors files (nlu/model/safetensors.c) and for
 * loading a whole model directory around one (nlu/model/model_io.c).
 *
 * The input is a model.safetensors. First sft_open() alone: a refusal must carry a
 * message; a file it opens must keep nlu/model/safetensors.h's promises (tensors sorted and found
 * by name, numel the product of the shape, nbytes numel times the element size, every tensor inside
 * the mapping and no two overlapping, F32/F16/BF16 readable as FP32 and other dtypes refused as
 * unsupported). Then bert_model_load() on a folder whose config.json and vocab.txt are this file's
 * fixed tiny model (below) and whose model.safetensors is the input: it must refuse with a message
 * or hand out a model of exactly that config whose every weight is finite and at most 1e4 in
 * magnitude (nlu/model/model_io.c's limit).
 *
 * Seeds: `PARLEY_FUZZ_WRITE_SEED=DIR fuzz_safetensors -runs=0` writes the tiny model, with
 * random weights from a fixed seed, into DIR (corpus/safetensors/tiny_f32.safetensors is
 * that file's model.safetensors). config.json fuzzing is fuzz_config.c's.
 */
#include <math.h>
#include <string.h>

#include "nlu/model/model.h"
#include "nlu/model/safetensors.h"
#include "tests/fuzz/fuzz_input.h"

static const char config_json[] =
        "{\"vocab_size\": 12, \"hidden_size\": 4, \"num_hidden_layers\": 1,"
        " \"num_attention_heads\": 2, \"intermediate_size\": 8,"
        " \"max_position_embeddings\": 8, \"type_vocab_size\": 2,"
        " \"intent_labels\": [\"greet\", \"order\"], \"slot_labels\": [\"O\", \"B-size\", "
        "\"I-size\"]}";
static const char vocab_txt[] =
        "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\nc\n##s\npizza\nlarge\n.\n";

static char model_dir[1024];

static size_t elem_size(sft_dtype d)
{
    switch (d) {
    case SFT_F64:
    case SFT_I64:
    case SFT_U64: return 8;
    case SFT_F32:
    case SFT_I32:
    case SFT_U32: return 4;
    case SFT_F16:
    case SFT_BF16:
    case SFT_I16:
    case SFT_U16: return 2;
    default: return 1;
    }
}

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    FUZZ_EXPECT(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
}

static void write_seed(const char *dir)
{
    bert_config c;
    bert_model *m = NULL;
    write_text(dir, "config.json", config_json);
    write_text(dir, "vocab.txt", vocab_txt);
    char path[1100];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FUZZ_EXPECT(bert_config_load(path, 0, &c) == PARLEY_OK, "%s", parley_errmsg());
    FUZZ_EXPECT(bert_model_alloc(&c, NULL, &m) == PARLEY_OK, "%s", parley_errmsg());
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    FUZZ_EXPECT(wp_vocab_load(path, &m->vocab) == PARLEY_OK, "%s", parley_errmsg());
    bert_model_init_random(m, 1);
    FUZZ_EXPECT(bert_model_save(m, dir) == PARLEY_OK, "%s", parley_errmsg());
    bert_model_free(m);
    bert_config_clear(&c);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *seed = getenv("PARLEY_FUZZ_WRITE_SEED");
    if (seed && *seed)
        write_seed(seed);
    snprintf(model_dir, sizeof model_dir, "%s/model", fuzz_dir());
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", model_dir);
    FUZZ_EXPECT(system(cmd) == 0, "cannot make %s", model_dir);
    write_text(model_dir, "config.json", config_json);
    write_text(model_dir, "vocab.txt", vocab_txt);
    return 0;
}

static void check_file(const sft_file *f)
{
    const char *lo = f->map, *hi = lo + f->map_size;
    float *buf = NULL;
    for (int i = 0; i < f->n_tensors; i++) {
        const sft_tensor *t = &f->tensors[i];
        FUZZ_EXPECT(t->name && (!i || strcmp(f->tensors[i - 1].name, t->name) < 0),
                    "tensor %d '%s' out of order", i, t->name);
        FUZZ_EXPECT(sft_find(f, t->name) == t, "tensor '%s' not found by name", t->name);
        FUZZ_EXPECT(t->ndim >= 0 && t->ndim <= SFT_MAX_DIMS, "tensor '%s': %d dims", t->name,
                    t->ndim);
        size_t numel = 1;
        for (int d = 0; d < t->ndim; d++) {
            FUZZ_EXPECT(t->shape[d] >= 0, "tensor '%s': dim %d is %lld", t->name, d,
                        (long long)t->shape[d]);
            numel *= (size_t)t->shape[d];
        }
        FUZZ_EXPECT(numel == t->numel && t->nbytes == numel * elem_size(t->dtype),
                    "tensor '%s': numel %zu, nbytes %zu", t->name, t->numel, t->nbytes);
        const char *p = t->data;
        FUZZ_EXPECT(!t->nbytes || (p >= lo && p + t->nbytes <= hi), "tensor '%s' outside the file",
                    t->name);
        for (int j = 0; j < i && j < 256; j++) {
            const sft_tensor *u = &f->tensors[j];
            const char *q = u->data;
            FUZZ_EXPECT(!t->nbytes || !u->nbytes || p + t->nbytes <= q || q + u->nbytes <= p,
                        "tensors '%s' and '%s' overlap", t->name, u->name);
        }
        buf = realloc(buf, (t->numel ? t->numel : 1) * sizeof *buf);
        FUZZ_EXPECT(buf != NULL, "realloc");
        parley_status st = sft_read_f32(f, t, buf);
        if (t->dtype == SFT_F32 || t->dtype == SFT_F16 || t->dtype == SFT_BF16)
            FUZZ_EXPECT(st == PARLEY_OK, "reading '%s': %s", t->name, parley_errmsg());
        else
            FUZZ_EXPECT(st == PARLEY_ERR_UNSUPPORTED, "reading '%s' of dtype %d: status %d",
                        t->name, (int)t->dtype, (int)st);
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/model.safetensors", model_dir);
    FILE *fp = fopen(path, "wb");
    FUZZ_EXPECT(fp && fwrite(data, 1, size, fp) == size && fclose(fp) == 0, "cannot write %s",
                path);
    sft_file *f = NULL;
    parley_status st = sft_open(path, &f);
    if (st == PARLEY_OK) {
        check_file(f);
        sft_close(f);
    } else {
        FUZZ_EXPECT(f == NULL, "a refused file is not handed out");
        fuzz_expect_refusal(st);
    }
    bert_model *m = NULL;
    st = bert_model_load(model_dir, &m);
    if (st == PARLEY_OK) {
        FUZZ_EXPECT(m && m->cfg.vocab_size == 12 && m->cfg.hidden == 4 && m->cfg.layers == 1 &&
                            m->n_params == bert_param_count(&m->cfg),
                    "the model is the config's");
        for (size_t i = 0; i < m->n_params; i++)
            FUZZ_EXPECT(isfinite(m->params[i]) && fabsf(m->params[i]) <= 1e4f,
                        "parameter %zu is %g: a loaded weight is finite, at most 1e4", i,
                        (double)m->params[i]);
        bert_model_free(m);
    } else {
        FUZZ_EXPECT(m == NULL, "a refused model is not handed out");
        fuzz_expect_refusal(st);
    }
    return 0;
}
