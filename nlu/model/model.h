/* model.h — a joint intent/slot BERT model in memory, and its model directory on disk.
 *
 * A model directory holds config.json (Hugging Face BertConfig keys plus intent_labels and
 * slot_labels), model.safetensors (HF BERT tensor names, with or without the "bert." prefix,
 * plus intent_classifier.* and slot_classifier.*) and vocab.txt; a model with sparse features
 * (nlu/sparse/sparse.h) also sparse.json, and the tensors sparse_intent_classifier.weight and
 * sparse_slot_classifier.weight.
 *
 * In memory every parameter is FP32 in one contiguous array (bert_model.params), laid out as
 * bert_weights describes, so an optimizer can walk it flat; query, key and value are fused into
 * one (3H, H) matrix per layer. F16 and BF16 files are widened on load.
 *
 * Dimension letters used in shape comments across nlu/:
 *   V vocab size, P max positions, TT token types, H hidden size, L layers, NH heads,
 *   D = H / NH head size, I intermediate size, NI intents, NS slot tags,
 *   B sequences in a batch, N tokens in a batch (all sequences packed, no padding),
 *   FS and FW sparse sentence and word features (nlu/sparse/sparse.h; 0 when the model has none).
 * A loaded model is immutable: share it between threads freely.
 */
#ifndef NLU_MODEL_H
#define NLU_MODEL_H

#include <stddef.h>

#include "nlu/model/slot_values.h"
#include "nlu/text/vocab.h"
#include "parley/nlu.h"
#include "parley/status.h"
#include "sdk/base/names.h"

/* What the slot values a model extracts stand for (nlu/model/synonyms.c): config.json
 * "entity_synonyms", {"surface form": "canonical value"}, from the training data's synonyms. */
typedef struct bert_synonyms {
    int n;
    char **from; /* (n) surface forms, folded (bert_synonym_fold); owned */
    char **to;   /* (n) their canonical values as written; owned */
    pl_names ix; /* from -> index */
} bert_synonyms;

typedef struct bert_config {
    int vocab_size;    /* V */
    int hidden;        /* H */
    int layers;        /* L */
    int heads;         /* NH */
    int intermediate;  /* I */
    int max_positions; /* P */
    int type_vocab;    /* TT */
    float ln_eps;
    int n_intents; /* NI */
    char **intent_labels;
    int n_slots; /* NS, slot tags including "O" */
    char **slot_labels;
    /* config.json "intent_temperature": intent probabilities are softmax(logits / T), T fitted
     * on dev data after training so that a confidence threshold means the same across models
     * (nlu/train/calibrate.c); 0 (the key absent) means 1. */
    float intent_temperature;
    int sparse_sent; /* FS sentence features (config.json "sparse_sentence_features"), or 0 */
    int sparse_word; /* FW word features ("sparse_word_features"), or 0 */
    /* config.json "intent_sparse_only": true when the intent is the sparse features' alone
     * (the encoder's intent logits are not used, in training or after); needs FS > 0. Set by
     * training on few examples per intent, where an encoder trained from scratch memorizes
     * them and adds noise to the sparse features' answer (nlu/train/defaults.c). */
    int intent_sparse_only;
    /* config.json "intent_slot_types": {"INTENT": ["SLOT TYPE", ...], ...}: the slot types an
     * intent listed there may be tagged with (an intent not listed may take any). In memory
     * (NI, NS) flags, nonzero where slot tag t may be decoded with intent i ("O" always may);
     * NULL when the key is absent. Set by training when the intent is the sparse features'
     * alone: the encoder then tags without knowing the intent (nlu/train/defaults.h). */
    unsigned char *intent_slot_tags;
    bert_synonyms synonyms; /* config.json "entity_synonyms"; empty when the key is absent */
    /* config.json "slot_values": the values each slot type knows, for resolving near misses
     * (nlu/model/slot_values.h); empty when the key is absent */
    bert_slot_values slot_values;
} bert_config;

/* The range of intent_temperature a config may hold. */
#define BERT_MIN_TEMPERATURE 0.01
#define BERT_MAX_TEMPERATURE 100.0

typedef struct bert_weights {
    float *word_emb;        /* (V, H) */
    float *pos_emb;         /* (P, H) */
    float *type_emb;        /* (TT, H) */
    float *emb_ln_w;        /* (H) */
    float *emb_ln_b;        /* (H) */
    float *qkv_w;           /* (L, 3H, H) rows: query, then key, then value */
    float *qkv_b;           /* (L, 3H) */
    float *attn_out_w;      /* (L, H, H) */
    float *attn_out_b;      /* (L, H) */
    float *ln1_w;           /* (L, H) attention.output.LayerNorm */
    float *ln1_b;           /* (L, H) */
    float *ffn_in_w;        /* (L, I, H) intermediate.dense */
    float *ffn_in_b;        /* (L, I) */
    float *ffn_out_w;       /* (L, H, I) output.dense */
    float *ffn_out_b;       /* (L, H) */
    float *ln2_w;           /* (L, H) output.LayerNorm */
    float *ln2_b;           /* (L, H) */
    float *pool_w;          /* (H, H) pooler.dense */
    float *pool_b;          /* (H) */
    float *intent_w;        /* (NI, H) intent_classifier */
    float *intent_b;        /* (NI) */
    float *slot_w;          /* (NS, H) slot_classifier */
    float *slot_b;          /* (NS) */
    float *sparse_intent_w; /* (NI, FS) sparse_intent_classifier, no bias; empty when FS = 0 */
    float *sparse_slot_w;   /* (NS, FW) sparse_slot_classifier, no bias; empty when FW = 0 */
} bert_weights;

typedef struct bert_model {
    bert_config cfg;
    bert_weights w; /* pointers into params */
    float *params;  /* (n_params) owned */
    size_t n_params;
    wp_vocab *vocab;              /* owned */
    struct sf_featurizer *sparse; /* owned; NULL when FS = FW = 0 (nlu/sparse/sparse.h) */
} bert_model;

/* The most parameters a model may have: 2^32, 16 GiB of FP32, some ten times BERT-large. */
#define BERT_MAX_PARAMS ((size_t)1 << 32)

/* Checks that a config is usable (positive sizes within parley's limits, heads divide
 * hidden, labels present, at most BERT_MAX_PARAMS parameters); `where` names the source in
 * the error ("model/config.json"). The limits on each size: vocab_size 2^20, hidden_size
 * 2^16, num_hidden_layers 1024, num_attention_heads 2^16, intermediate_size 2^18,
 * max_position_embeddings 2^16, type_vocab_size 2^16. */
parley_status bert_config_check(const bert_config *c, const char *where);
/* The slot tags intent i may be decoded with (NS flags, intent_slot_tags' row), or NULL
 * when it may take any. */
const unsigned char *bert_slot_tags_of(const bert_config *c, int intent);

/* The prior of each slot tag for nlu_word_tags (nlu/decode.h) when the intent is uncertain:
 * the probability, under softmax(intent_logits / intent_temperature), that the intent takes
 * tag t (1 for O). scratch holds NI + NS floats; returns the prior (NS) in it, or NULL when
 * the model has no intent_slot_tags (nothing is computed then). */
const float *bert_slot_prior(const bert_config *c, const float *intent_logits, float *scratch);

/* Copies a config (labels included) into dst, which the caller frees with bert_config_clear. */
parley_status bert_config_copy(bert_config *dst, const bert_config *src);
void bert_config_clear(bert_config *c);

/* Reads config.json into *out (the caller frees it with bert_config_clear; on failure it is
 * cleared). With shape_only 0 everything is required and checked with bert_config_check.
 * With shape_only 1 vocab_size and the label lists are optional and not read, and nothing
 * is checked beyond each value's type: for shaping a new model whose vocabulary and labels
 * come from elsewhere. layer_norm_eps and hidden_act default as in Hugging Face. */
parley_status bert_config_load(const char *path, int shape_only, bert_config *out);
/* Replaces c's labels with copies of the given ones (unchecked). */
parley_status bert_config_set_labels(bert_config *c, const char *const *intents, int n_intents,
                                     const char *const *slots, int n_slots);
/* Writes c as config.json text into a file being written (sdk/base/files.h). */
struct pl_atomic;
parley_status bert_config_write(const bert_config *c, struct pl_atomic *a);

/* ---- Synonyms (nlu/model/synonyms.c) ---- */
/* s[0..len) as synonyms compare it: code points lower-cased, whitespace runs one space, none
 * at the ends; owned by the caller (pl_free), NULL when out of memory. */
char *bert_synonym_fold(const char *s, size_t len);
/* Adds from[0..len) (folded) -> to; a surface form given twice keeps its first value, and an
 * empty one is ignored. */
parley_status bert_synonyms_add(bert_synonyms *s, const char *from, size_t len, const char *to);
/* *out: the canonical value of value[0..len) (borrowed from s), or NULL when it is no
 * synonym's surface form. Fails only when out of memory. */
parley_status bert_synonyms_find(const bert_synonyms *s, const char *value, size_t len,
                                 const char **out);
/* The longest canonical value, in bytes (0 when there is none). */
size_t bert_synonyms_longest(const bert_synonyms *s);
parley_status bert_synonyms_copy(bert_synonyms *dst, const bert_synonyms *src);
void bert_synonyms_clear(bert_synonyms *s);
/* Reads "entity_synonyms" (j) into out; `where` names the file in errors. */
struct cJSON;
parley_status bert_synonyms_read(const struct cJSON *j, const char *where, bert_synonyms *out);
/* The object "entity_synonyms" is written as, or NULL when out of memory. */
struct cJSON *bert_synonyms_json(const bert_synonyms *s);

/* The dimension letters as values, for tables that describe tensors (BERT_DIM_1 is 1). */
typedef enum bert_dim {
    BERT_DIM_1,
    BERT_DIM_V,
    BERT_DIM_P,
    BERT_DIM_TT,
    BERT_DIM_H,
    BERT_DIM_3H,
    BERT_DIM_I,
    BERT_DIM_NI,
    BERT_DIM_NS,
    BERT_DIM_FS,
    BERT_DIM_FW,
} bert_dim;
size_t bert_dim_size(const bert_config *c, bert_dim d);

/* Number of FP32 parameters for a config (SIZE_MAX when that does not fit a size_t), and
 * the pointer layout over `params`. */
size_t bert_param_count(const bert_config *c);
void bert_weights_point(bert_weights *w, const bert_config *c, float *params);

/* Allocates a model for `cfg` (copied) with zeroed parameters. Takes ownership of vocab
 * (freed on failure too); vocab may be NULL, but such a model cannot be saved. Fails on a
 * config bert_config_check refuses or a vocabulary whose size is not cfg->vocab_size. */
parley_status bert_model_alloc(const bert_config *cfg, wp_vocab *vocab, bert_model **out);
/* The same with the parameters left uninitialized, for a caller that writes every one
 * (loading), so the memory is touched once instead of twice. */
parley_status bert_model_alloc_uninit(const bert_config *cfg, wp_vocab *vocab, bert_model **out);

/* Gives m the featurizer f (owned from then on, freed on failure too; NULL removes it):
 * f's feature counts must be cfg's FS and FW (PARLEY_ERR_CONFIG otherwise). */
parley_status bert_model_set_sparse(bert_model *m, struct sf_featurizer *f);

/* Loads a model directory, checking everything: config keys and types, vocab size against
 * config, every tensor's presence, shape and dtype (F32, F16, BF16), unexpected tensors,
 * header offsets (in file, not overlapping), truncation; with sparse features, sparse.json
 * and its feature counts against config.json. Errors name the file and tensor. */
parley_status bert_model_load(const char *dir, bert_model **out);

/* Fills the parameters the way BERT initializes them: normal(0, 0.02) weights, zero biases,
 * LayerNorm weight 1 and bias 0, and (as torch's padding_idx does) a zero [PAD] embedding
 * row. Deterministic for a seed. */
void bert_model_init_random(bert_model *m, unsigned long long seed);
/* n values drawn from normal(0, std), deterministic for a seed (the generator above). */
void bert_fill_normal(float *p, size_t n, double std, unsigned long long seed);

/* Writes config.json, model.safetensors (F32, HF names with the "bert." prefix), vocab.txt
 * and, with sparse features, sparse.json into `dir` (created with its parents if missing). Each
 * file is written to a temporary name and renamed, so an interrupted save never leaves a broken
 * file. */
parley_status bert_model_save(const bert_model *m, const char *dir);
/* What a model directory may hold, NULL-terminated: the files above, and those training and
 * pretraining add (training.json, train_state/, mlm_head.safetensors). A directory that
 * holds anything else is not replaced (pl_dir_replace). */
extern const char *const bert_model_dir_entries[];

void bert_model_free(bert_model *m);

/* The model's shape as the public API tells it (parley_nlu_get_info). */
void bert_model_info(const bert_model *m, parley_nlu_info *out);

#endif
