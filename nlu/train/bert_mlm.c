/* bert_mlm.c — the masked-language-model head's parameters (names and shapes, initialization,
 * weight decay, its safetensors file; their layout is bert_mlm_point's, nlu/bert_step.c) and
 * BERT's masking of a batch.
 *
 * The head's math (forward, loss, backward) runs in nlu/train/bert_train.c beside the encoder it
 * shares with the joint step; the pretraining loop is nlu/train/pretrain.c. The file layout is
 * Hugging Face's BertForMaskedLM head (cls.predictions.*), without the decoder weight,
 * which is the word embedding table the model directory already holds.
 */
#include <string.h>

#include "nlu/cpu/ops_backward.h"
#include "nlu/model/safetensors.h"
#include "nlu/train/bert_train.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"

/* The head's tensors in array order: name and whether it is (H, H) / (H) / (V). */
enum { MLM_HH, MLM_H, MLM_V };
static const struct {
    const char *name;
    int shape;
    int decays;
} mlm_fields[] = {
    { "cls.predictions.transform.dense.weight", MLM_HH, 1 },
    { "cls.predictions.transform.dense.bias", MLM_H, 0 },
    { "cls.predictions.transform.LayerNorm.weight", MLM_H, 0 },
    { "cls.predictions.transform.LayerNorm.bias", MLM_H, 0 },
    { "cls.predictions.bias", MLM_V, 0 },
};
enum { N_MLM = sizeof mlm_fields / sizeof mlm_fields[0] };
_Static_assert(N_MLM * sizeof(float *) == sizeof(bert_mlm_head), "one entry per head field");

static size_t field_size(const bert_config *c, int k)
{
    const size_t H = (size_t)c->hidden;
    return mlm_fields[k].shape == MLM_HH  ? H * H
           : mlm_fields[k].shape == MLM_H ? H
                                          : (size_t)c->vocab_size;
}

/* The tensor's shape as the file holds it. */
static int field_shape(const bert_config *c, int k, int64_t *shape)
{
    shape[0] = mlm_fields[k].shape == MLM_V ? c->vocab_size : c->hidden;
    shape[1] = c->hidden;
    return mlm_fields[k].shape == MLM_HH ? 2 : 1;
}

void bert_mlm_init(const bert_config *c, float *params, uint64_t seed)
{
    bert_mlm_head h;
    bert_mlm_point(&h, c, params);
    const size_t H = (size_t)c->hidden;
    bert_fill_normal(h.dense_w, H * H, 0.02, seed);
    memset(h.dense_b, 0, H * sizeof(float));
    for (size_t i = 0; i < H; i++)
        h.ln_w[i] = 1.0f;
    memset(h.ln_b, 0, H * sizeof(float));
    memset(h.bias, 0, (size_t)c->vocab_size * sizeof(float));
}

void bert_mlm_decay_mask(const bert_config *c, unsigned char *decay)
{
    for (int k = 0; k < N_MLM; k++) {
        memset(decay, mlm_fields[k].decays, field_size(c, k));
        decay += field_size(c, k);
    }
}

parley_status bert_mlm_save(const bert_config *c, const float *params, const char *path)
{
    sft_wtensor t[N_MLM];
    for (int k = 0; k < N_MLM; k++) {
        t[k] = (sft_wtensor){ .name = mlm_fields[k].name, .data = params };
        t[k].ndim = field_shape(c, k, t[k].shape);
        params += field_size(c, k);
    }
    pl_atomic a;
    parley_status st = pl_atomic_begin(&a, path);
    if (st == PARLEY_OK && (st = sft_write_f32(&a, t, N_MLM)) == PARLEY_OK)
        st = pl_atomic_commit(&a);
    pl_atomic_abort(&a);
    return st;
}

parley_status bert_mlm_load(const bert_config *c, const char *path, float *params)
{
    sft_file *f = NULL;
    parley_status st = sft_open(path, &f);
    if (st != PARLEY_OK)
        return st;
    if (f->n_tensors != N_MLM) {
        st = pl_fail(PARLEY_ERR_FORMAT,
                     "%s: %d tensors; a masked-LM head has %d (cls.predictions.*)", path,
                     f->n_tensors, N_MLM);
        goto done;
    }
    for (int k = 0; k < N_MLM && st == PARLEY_OK; k++) {
        const sft_tensor *t = sft_find(f, mlm_fields[k].name);
        int64_t shape[2];
        int ndim = field_shape(c, k, shape);
        if (!t) {
            st = pl_fail(PARLEY_ERR_FORMAT, "%s: tensor \"%s\" is missing", path,
                         mlm_fields[k].name);
        } else if (t->ndim != ndim || memcmp(t->shape, shape, (size_t)ndim * sizeof shape[0])) {
            char want[64], got[256];
            st = pl_fail(PARLEY_ERR_FORMAT, "%s: tensor \"%s\": expected shape %s, got %s", path,
                         t->name, sft_shape_str(want, sizeof want, shape, ndim),
                         sft_shape_str(got, sizeof got, t->shape, t->ndim));
        } else {
            st = sft_read_f32(f, t, params);
        }
        params += field_size(c, k);
    }
done:
    sft_close(f);
    return st;
}

int bert_mlm_mask(int *ids, int *target, const int *len, int B, int mask_id, int vocab_size,
                  float prob, uint64_t key)
{
    /* Three independent 32-bit draws per position from cpu_dropout_bits: chosen or not,
     * which replacement, and the random piece. */
    const double cut = (double)prob * 0x1p32;
    int chosen = 0;
    size_t at = 0;
    for (int s = 0; s < B; s++) {
        for (int t = 0; t < len[s]; t++) {
            const size_t i = at + (size_t)t;
            target[i] = -1;
            if (t == 0 || t == len[s] - 1 || (double)cpu_dropout_bits(key, 3 * i) >= cut)
                continue;
            target[i] = ids[i];
            chosen++;
            const uint32_t how = cpu_dropout_bits(key, 3 * i + 1) % 10;
            if (how < 8)
                ids[i] = mask_id;
            else if (how == 8)
                ids[i] = (int)(cpu_dropout_bits(key, 3 * i + 2) % (uint32_t)vocab_size);
        }
        at += (size_t)len[s];
    }
    return chosen;
}
