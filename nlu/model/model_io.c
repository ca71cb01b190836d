/* model_io.c — loading and saving a model directory: config.json, vocab.txt and
 * model.safetensors with Hugging Face BERT tensor names.
 *
 * The table below is the one place that maps Hugging Face names onto the fused in-memory
 * layout (nlu/model/model.h): query, key and value of a layer are three (H, H) tensors in the file
 * and three row blocks of one (3H, H) matrix in memory. Everything a file could get wrong
 * is checked before the model is handed out; the safetensors structure itself is checked by
 * nlu/model/safetensors.c and the JSON values by nlu/model/config.c.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nlu/model/model.h"
#include "nlu/model/safetensors.h"
#include "nlu/sparse/sparse.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"

#define FIELD(name) offsetof(bert_weights, name)
static const struct hf_name {
    const char *name; /* after the "bert." prefix and, per layer, after "encoder.layer.<i>." */
    size_t field;     /* offsetof(bert_weights, x) */
    int part;         /* -1: the whole field; 0, 1, 2: that third of a fused q/k/v field */
    int per_layer;
    int head;            /* a joint head: never carries the "bert." prefix */
    bert_dim rows, cols; /* rows BERT_DIM_1: a vector of cols */
} hf_names[] = {
    { "embeddings.word_embeddings.weight", FIELD(word_emb), -1, 0, 0, BERT_DIM_V, BERT_DIM_H },
    { "embeddings.position_embeddings.weight", FIELD(pos_emb), -1, 0, 0, BERT_DIM_P, BERT_DIM_H },
    { "embeddings.token_type_embeddings.weight", FIELD(type_emb), -1, 0, 0, BERT_DIM_TT,
      BERT_DIM_H },
    { "embeddings.LayerNorm.weight", FIELD(emb_ln_w), -1, 0, 0, BERT_DIM_1, BERT_DIM_H },
    { "embeddings.LayerNorm.bias", FIELD(emb_ln_b), -1, 0, 0, BERT_DIM_1, BERT_DIM_H },
    { "attention.self.query.weight", FIELD(qkv_w), 0, 1, 0, BERT_DIM_H, BERT_DIM_H },
    { "attention.self.query.bias", FIELD(qkv_b), 0, 1, 0, BERT_DIM_1, BERT_DIM_H },
    { "attention.self.key.weight", FIELD(qkv_w), 1, 1, 0, BERT_DIM_H, BERT_DIM_H },
    { "attention.self.key.bias", FIELD(qkv_b), 1, 1, 0, BERT_DIM_1, BERT_DIM_H },
    { "attention.self.value.weight", FIELD(qkv_w), 2, 1, 0, BERT_DIM_H, BERT_DIM_H },
    { "attention.self.value.bias", FIELD(qkv_b), 2, 1, 0, BERT_DIM_1, BERT_DIM_H },
    { "attention.output.dense.weight", FIELD(attn_out_w), -1, 1, 0, BERT_DIM_H, BERT_DIM_H },
    { "attention.output.dense.bias", FIELD(attn_out_b), -1, 1, 0, BERT_DIM_1, BERT_DIM_H },
    { "attention.output.LayerNorm.weight", FIELD(ln1_w), -1, 1, 0, BERT_DIM_1, BERT_DIM_H },
    { "attention.output.LayerNorm.bias", FIELD(ln1_b), -1, 1, 0, BERT_DIM_1, BERT_DIM_H },
    { "intermediate.dense.weight", FIELD(ffn_in_w), -1, 1, 0, BERT_DIM_I, BERT_DIM_H },
    { "intermediate.dense.bias", FIELD(ffn_in_b), -1, 1, 0, BERT_DIM_1, BERT_DIM_I },
    { "output.dense.weight", FIELD(ffn_out_w), -1, 1, 0, BERT_DIM_H, BERT_DIM_I },
    { "output.dense.bias", FIELD(ffn_out_b), -1, 1, 0, BERT_DIM_1, BERT_DIM_H },
    { "output.LayerNorm.weight", FIELD(ln2_w), -1, 1, 0, BERT_DIM_1, BERT_DIM_H },
    { "output.LayerNorm.bias", FIELD(ln2_b), -1, 1, 0, BERT_DIM_1, BERT_DIM_H },
    { "pooler.dense.weight", FIELD(pool_w), -1, 0, 0, BERT_DIM_H, BERT_DIM_H },
    { "pooler.dense.bias", FIELD(pool_b), -1, 0, 0, BERT_DIM_1, BERT_DIM_H },
    { "intent_classifier.weight", FIELD(intent_w), -1, 0, 1, BERT_DIM_NI, BERT_DIM_H },
    { "intent_classifier.bias", FIELD(intent_b), -1, 0, 1, BERT_DIM_1, BERT_DIM_NI },
    { "slot_classifier.weight", FIELD(slot_w), -1, 0, 1, BERT_DIM_NS, BERT_DIM_H },
    { "slot_classifier.bias", FIELD(slot_b), -1, 0, 1, BERT_DIM_1, BERT_DIM_NS },
    /* The sparse features' maps (nlu/sparse/sparse.h): in the file only when FS, FW are not 0. */
    { "sparse_intent_classifier.weight", FIELD(sparse_intent_w), -1, 0, 1, BERT_DIM_NI,
      BERT_DIM_FS },
    { "sparse_slot_classifier.weight", FIELD(sparse_slot_w), -1, 0, 1, BERT_DIM_NS, BERT_DIM_FW },
};
#undef FIELD
enum { N_HF_NAMES = sizeof hf_names / sizeof hf_names[0], NAME_CAP = 96 };

static const char PREFIX[] = "bert.";

/* One tensor of the file, resolved against a config: its full name and shape, and the
 * table entry and layer that say where it lives in a model's parameters (tensor_data). */
typedef struct hf_tensor {
    char name[NAME_CAP];
    const struct hf_name *h;
    int layer;
    int ndim;
    int64_t shape[2];
} hf_tensor;

/* Resolves table entry h for layer l (0 when not per layer) into e. */
static void resolve(const bert_config *c, const struct hf_name *h, int l, int prefixed,
                    hf_tensor *e)
{
    size_t rows = bert_dim_size(c, h->rows), cols = bert_dim_size(c, h->cols);
    e->h = h;
    e->layer = l;
    e->ndim = h->rows == BERT_DIM_1 ? 1 : 2;
    e->shape[0] = (int64_t)(e->ndim == 1 ? cols : rows);
    e->shape[1] = (int64_t)cols;
    if (h->per_layer)
        snprintf(e->name, NAME_CAP, "%sencoder.layer.%d.%s", prefixed ? PREFIX : "", l, h->name);
    else
        snprintf(e->name, NAME_CAP, "%s%s", prefixed && !h->head ? PREFIX : "", h->name);
}

/* Where tensor e lives in m's parameters: (rows, cols) contiguous floats. */
static float *tensor_data(const bert_model *m, const hf_tensor *e)
{
    const struct hf_name *h = e->h;
    size_t numel = bert_dim_size(&m->cfg, h->rows) * bert_dim_size(&m->cfg, h->cols);
    size_t layer_size = h->part >= 0 ? 3 * numel : numel; /* one layer's share of the field */
    float *base = *(float *const *)((const char *)&m->w + h->field);
    return base + (size_t)e->layer * layer_size + (h->part >= 0 ? (size_t)h->part * numel : 0);
}

/* Lists every tensor of a model shaped by c in file order (embeddings, layers, pooler,
 * heads); encoder names carry the "bert." prefix when `prefixed`. *out is owned by the
 * caller. */
static parley_status expand(const bert_config *c, int prefixed, hf_tensor **out, int *count)
{
    int n = 0, per_layer = 0;
    for (int k = 0; k < N_HF_NAMES; k++)
        per_layer += hf_names[k].per_layer;
    hf_tensor *t = pl_calloc(
            (size_t)(N_HF_NAMES - per_layer) + (size_t)per_layer * (size_t)c->layers, sizeof *t);
    if (!t)
        return pl_nomem("the tensor list");
    for (int k = 0; k < N_HF_NAMES; k++) {
        if (!bert_dim_size(c, hf_names[k].cols))
            continue; /* sparse maps of a model without sparse features */
        if (!hf_names[k].per_layer) {
            resolve(c, &hf_names[k], 0, prefixed, &t[n++]);
            continue;
        }
        /* The per-layer names form one block of the table; each layer repeats it. */
        int end = k;
        while (end < N_HF_NAMES && hf_names[end].per_layer)
            end++;
        for (int l = 0; l < c->layers; l++)
            for (int j = k; j < end; j++)
                resolve(c, &hf_names[j], l, prefixed, &t[n++]);
        k = end - 1;
    }
    *out = t;
    *count = n;
    return PARLEY_OK;
}

/* Appends "name" to a comma-separated list in buf; once buf is full it ends the list with
 * "..." and only counts. */
static void list_add(char *buf, size_t cap, int *count, const char *name)
{
    size_t len = strlen(buf);
    int full = len >= 3 && !strcmp(buf + len - 3, "...");
    if (!full && len + strlen(name) + 12 < cap)
        snprintf(buf + len, cap - len, "%s\"%s\"", *count ? ", " : "", name);
    else if (!full)
        snprintf(buf + len, cap - len, ", ...");
    ++*count;
}

/* Old checkpoints converted from TensorFlow name LayerNorm parameters gamma and beta;
 * Hugging Face renames them on load, and so do we. */
static const sft_tensor *find_tensor(const sft_file *f, const char *name)
{
    const sft_tensor *t = sft_find(f, name);
    size_t len = strlen(name);
    char alt[NAME_CAP + 8];
    const char *tails[][2] = { { "LayerNorm.weight", "LayerNorm.gamma" },
                               { "LayerNorm.bias", "LayerNorm.beta" } };
    for (int i = 0; !t && i < 2; i++) {
        size_t tl = strlen(tails[i][0]);
        if (len >= tl && !strcmp(name + len - tl, tails[i][0])) {
            snprintf(alt, sizeof alt, "%.*s%s", (int)(len - tl), name, tails[i][1]);
            t = sft_find(f, alt);
        }
    }
    return t;
}

/* Tensors a checkpoint may carry that are not parameters. */
static int ignorable(const char *name)
{
    if (!strncmp(name, PREFIX, sizeof PREFIX - 1))
        name += sizeof PREFIX - 1;
    return !strcmp(name, "embeddings.position_ids");
}

/* Finds every tensor a model shaped by c needs in f and checks names and shapes, before
 * any memory is spent on the model: a config whose sizes disagree with the file (say a
 * hidden_size of 60000 over a small model) fails here, not after allocating terabytes.
 * On success want[i] is found as src[i] (*want and *src owned by the caller). */
static parley_status match_tensors(const bert_config *c, const sft_file *f, hf_tensor **want,
                                   const sft_tensor ***src, int *n)
{
    parley_status st;
    hf_tensor *w = NULL;
    const sft_tensor **s = NULL;
    unsigned char *used = NULL;
    char list[600] = "";
    int count = 0, prefixed = 0;
    for (int i = 0; i < f->n_tensors && !prefixed; i++)
        prefixed = !strncmp(f->tensors[i].name, PREFIX, sizeof PREFIX - 1) &&
                   !ignorable(f->tensors[i].name);
    if ((st = expand(c, prefixed, &w, n)) != PARLEY_OK)
        goto fail;
    s = pl_calloc((size_t)*n, sizeof *s);
    used = pl_calloc((size_t)f->n_tensors, 1);
    if (!s || !used) {
        st = pl_nomem("%s: the tensor index", f->path);
        goto fail;
    }
    for (int i = 0; i < *n; i++) {
        if ((s[i] = find_tensor(f, w[i].name)))
            used[s[i] - f->tensors] = 1;
        else
            list_add(list, sizeof list, &count, w[i].name);
    }
    if (count) {
        st = pl_fail(PARLEY_ERR_FORMAT, "%s: %d tensor%s missing: %s", f->path, count,
                     count > 1 ? "s are" : " is", list);
        goto fail;
    }
    for (int i = 0; i < f->n_tensors; i++)
        if (!used[i] && !ignorable(f->tensors[i].name))
            list_add(list, sizeof list, &count, f->tensors[i].name);
    if (count) {
        st = pl_fail(PARLEY_ERR_FORMAT,
                     "%s: %d unexpected tensor%s (not part of this %s model): %s", f->path, count,
                     count > 1 ? "s" : "", prefixed ? "\"bert.\"-prefixed" : "unprefixed", list);
        goto fail;
    }
    for (int i = 0; i < *n; i++) {
        const sft_tensor *t = s[i];
        if (t->ndim != w[i].ndim ||
            memcmp(t->shape, w[i].shape, (size_t)t->ndim * sizeof t->shape[0])) {
            char a[64], b[256];
            st = pl_fail(PARLEY_ERR_FORMAT, "%s: tensor \"%s\": expected shape %s, got %s", f->path,
                         t->name, sft_shape_str(a, sizeof a, w[i].shape, w[i].ndim),
                         sft_shape_str(b, sizeof b, t->shape, t->ndim));
            goto fail;
        }
    }
    pl_free(used);
    *want = w;
    *src = s;
    return PARLEY_OK;
fail:
    pl_free(used);
    pl_free(s);
    pl_free(w);
    return st;
}

/* The largest magnitude a weight may have. Trained BERT weights stay below about 10; 1e4
 * leaves room for any real checkpoint while keeping the FP32 forward pass finite for every
 * input at every size nlu/model/config.c allows. With every |w| <= W = 1e4 (biases and LayerNorm
 * parameters included): a LayerNorm output is at most W (sqrt(H) + 1) = A in magnitude,
 * whatever its input, since no normalized value exceeds sqrt(H); a projection of it at most
 * Q = H W A + W (about 1.7e15 at H = 2^16); an attention score at most D Q^2 (2e35, D <=
 * H); the attention and feed-forward outputs at most H W Q and I W Q (4.4e24 at I = 2^18),
 * before the next LayerNorm, which sums in double, brings them back under A; the pooler's
 * tanh is within 1, and the logits within Q. All are below FLT_MAX (3.4e38). Reduced GPU
 * precisions have a far smaller range; nlu/nlu.c refuses non-finite scores whatever made
 * them. */
static const float MAX_ABS_WEIGHT = 1e4f;

/* Fails naming tensor t and the first element of x (t's values, as FP32) that is NaN,
 * infinite, or beyond MAX_ABS_WEIGHT in magnitude. */
static parley_status check_values(const sft_file *f, const sft_tensor *t, const hf_tensor *e,
                                  const float *x)
{
    size_t cols = (size_t)e->shape[e->ndim - 1],
           n = (size_t)e->shape[0] * (e->ndim == 2 ? cols : 1);
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad |= !(fabsf(x[i]) <= MAX_ABS_WEIGHT);
    if (!bad)
        return PARLEY_OK;
    size_t i = 0;
    while (fabsf(x[i]) <= MAX_ABS_WEIGHT)
        i++;
    char at[64], what[64];
    if (e->ndim == 2)
        snprintf(at, sizeof at, "[%zu, %zu]", i / cols, i % cols);
    else
        snprintf(at, sizeof at, "[%zu]", i);
    if (isnan(x[i]))
        snprintf(what, sizeof what, "NaN");
    else if (isinf(x[i]))
        snprintf(what, sizeof what, "%s", x[i] > 0 ? "infinite" : "-infinite");
    else
        snprintf(what, sizeof what, "%g, beyond the limit of %g in magnitude", (double)x[i],
                 (double)MAX_ABS_WEIGHT);
    return pl_fail(PARLEY_ERR_FORMAT, "%s: tensor \"%s\": element %s is %s", f->path, t->name, at,
                   what);
}

static parley_status join(char *buf, const char *dir, const char *file)
{
    if (snprintf(buf, PATH_MAX, "%s/%s", dir, file) >= PATH_MAX)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s: path too long", dir);
    return PARLEY_OK;
}

/* Reads dir/sparse.json into m, whose config.json names sparse features. */
static parley_status load_sparse(bert_model *m, const char *dir)
{
    parley_status st;
    char path[PATH_MAX];
    sf_featurizer *sf = NULL;
    if ((st = join(path, dir, "sparse.json")) != PARLEY_OK ||
        (st = sf_load(path, &sf)) != PARLEY_OK)
        return pl_wrap(st, "%s/config.json names sparse features", dir);
    if ((st = bert_model_set_sparse(m, sf)) != PARLEY_OK)
        return pl_wrap(st, "%s", path);
    return PARLEY_OK;
}

parley_status bert_model_load(const char *dir, bert_model **out)
{
    parley_status st;
    char cfg_path[PATH_MAX], vocab_path[PATH_MAX], sft_path[PATH_MAX];
    bert_config cfg = { 0 };
    wp_vocab *vocab = NULL;
    bert_model *m = NULL;
    sft_file *f = NULL;
    hf_tensor *want = NULL;
    const sft_tensor **src = NULL;
    int n = 0;
    *out = NULL;
    if (!dir) {
        st = pl_fail(PARLEY_ERR_INVALID_ARG, "bert_model_load: no directory");
        goto fail;
    }
    if ((st = join(cfg_path, dir, "config.json")) != PARLEY_OK ||
        (st = join(vocab_path, dir, "vocab.txt")) != PARLEY_OK ||
        (st = join(sft_path, dir, "model.safetensors")) != PARLEY_OK ||
        (st = bert_config_load(cfg_path, 0, &cfg)) != PARLEY_OK ||
        (st = wp_vocab_load(vocab_path, &vocab)) != PARLEY_OK)
        goto fail;
    if (wp_vocab_size(vocab) != cfg.vocab_size) {
        st = pl_fail(PARLEY_ERR_CONFIG, "%s: key \"vocab_size\" is %d, but %s has %d tokens",
                     cfg_path, cfg.vocab_size, vocab_path, wp_vocab_size(vocab));
        goto fail;
    }
    if ((st = sft_open(sft_path, &f)) != PARLEY_OK ||
        (st = match_tensors(&cfg, f, &want, &src, &n)) != PARLEY_OK)
        goto fail;
    st = bert_model_alloc_uninit(&cfg, vocab, &m);
    vocab = NULL; /* the model owns it now, or freed it */
    if (st != PARLEY_OK)
        goto fail;
    for (int i = 0; i < n; i++) {
        float *data = tensor_data(m, &want[i]);
        if ((st = sft_read_f32(f, src[i], data)) != PARLEY_OK ||
            (st = check_values(f, src[i], &want[i], data)) != PARLEY_OK)
            goto fail;
    }
    if ((cfg.sparse_sent || cfg.sparse_word) && (st = load_sparse(m, dir)) != PARLEY_OK)
        goto fail;
    pl_free(src);
    pl_free(want);
    sft_close(f);
    bert_config_clear(&cfg);
    *out = m;
    return PARLEY_OK;
fail:
    pl_free(src);
    pl_free(want);
    sft_close(f);
    bert_model_free(m);
    wp_vocab_free(vocab);
    bert_config_clear(&cfg);
    return st;
}

const char *const bert_model_dir_entries[] = {
    "config.json", "model.safetensors",    "vocab.txt", "sparse.json", "training.json",
    "train_state", "mlm_head.safetensors", NULL
};

parley_status bert_model_save(const bert_model *m, const char *dir)
{
    parley_status st;
    enum { N_FILES = 4 };
    char path[N_FILES][PATH_MAX];
    static const char *const names[N_FILES] = { "config.json", "model.safetensors", "vocab.txt",
                                                "sparse.json" };
    pl_atomic files[N_FILES] = { { 0 } };
    hf_tensor *t = NULL;
    sft_wtensor *wt = NULL;
    int n = 0;
    if (!m || !dir || !m->vocab || (!m->sparse && (m->cfg.sparse_sent || m->cfg.sparse_word))) {
        st = pl_fail(PARLEY_ERR_INVALID_ARG, "bert_model_save: needs a model with a vocabulary "
                                             "(and its sparse features) and a directory");
        goto fail;
    }
    for (int i = 0; i < N_FILES; i++)
        if ((st = join(path[i], dir, names[i])) != PARLEY_OK)
            goto fail;
    if ((st = pl_make_dirs(dir)) != PARLEY_OK || (st = expand(&m->cfg, 1, &t, &n)) != PARLEY_OK)
        goto fail;
    wt = pl_calloc((size_t)n, sizeof *wt);
    if (!wt) {
        st = pl_nomem("%s: the tensor list", path[1]);
        goto fail;
    }
    for (int i = 0; i < n; i++) {
        wt[i].name = t[i].name;
        wt[i].ndim = t[i].ndim;
        memcpy(wt[i].shape, t[i].shape, sizeof t[i].shape);
        wt[i].data = tensor_data(m, &t[i]);
    }
    /* All are written in full before any replaces its old version, so a failure leaves the
     * directory as it was. */
    if ((st = pl_atomic_begin(&files[0], path[0])) != PARLEY_OK ||
        (st = bert_config_write(&m->cfg, &files[0])) != PARLEY_OK ||
        (st = pl_atomic_begin(&files[1], path[1])) != PARLEY_OK ||
        (st = sft_write_f32(&files[1], wt, n)) != PARLEY_OK ||
        (m->sparse && ((st = pl_atomic_begin(&files[3], path[3])) != PARLEY_OK ||
                       (st = sf_write(m->sparse, &files[3])) != PARLEY_OK)) ||
        (st = pl_atomic_begin(&files[2], path[2])) != PARLEY_OK ||
        (st = wp_vocab_save(m->vocab, files[2].tmp_path)) != PARLEY_OK) {
        if (files[2].tmp_path)
            pl_wrap(st, "%s", path[2]); /* the vocabulary's error names the temporary file */
        goto fail;
    }
    for (int i = 0; i < N_FILES; i++)
        if (files[i].path && (st = pl_atomic_commit(&files[i])) != PARLEY_OK)
            goto fail;
    /* A model without sparse features saved over one with them: its sparse.json is stale. */
    if (!m->sparse && unlink(path[3]) != 0 && errno != ENOENT)
        pl_log(PARLEY_LOG_WARN, "%s: cannot remove the stale file: %s", path[3], strerror(errno));
    st = PARLEY_OK;
fail:
    for (int i = 0; i < N_FILES; i++)
        pl_atomic_abort(&files[i]);
    pl_free(wt);
    pl_free(t);
    return st;
}
