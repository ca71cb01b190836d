/* config.c — the model's config.json: Hugging Face BertConfig keys plus intent_labels and
 * slot_labels, read with every value checked and written so that transformers can read it.
 *
 * It knows shapes and labels, not weights (nlu/model/model_io.c) or the vocabulary
 * (nlu/text/vocab.c). Keys it does not use are ignored, as Hugging Face configs carry many; keys
 * that would change the computation in a way this BERT does not implement (hidden_act other than
 * the erf GELU, relative position embeddings) are refused rather than silently ignored.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nlu/decode.h"
#include "nlu/model/model.h"
#include "nlu/sparse/sparse.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"
#include "sdk/base/json.h"

enum { MAX_CONFIG_BYTES = 16 << 20 };

/* The limits on each size (listed in nlu/model/model.h) are far above any BERT (BERT-large: V
 * 30522, H 1024, L 24, I 4096, P 512), and low enough that nlu/model/model_io.c's bound on weights
 * keeps the forward pass finite. The total is bounded too (BERT_MAX_PARAMS): sizes within their
 * limits can still multiply up to terabytes. */
static const struct {
    const char *key;
    size_t off;
    int max;
} int_keys[] = {
    { "vocab_size", offsetof(bert_config, vocab_size), 1 << 20 },
    { "hidden_size", offsetof(bert_config, hidden), 1 << 16 },
    { "num_hidden_layers", offsetof(bert_config, layers), 1024 },
    { "num_attention_heads", offsetof(bert_config, heads), 1 << 16 },
    { "intermediate_size", offsetof(bert_config, intermediate), 1 << 18 },
    { "max_position_embeddings", offsetof(bert_config, max_positions), 1 << 16 },
    { "type_vocab_size", offsetof(bert_config, type_vocab), 1 << 16 },
};
enum { N_INT_KEYS = sizeof int_keys / sizeof int_keys[0] };

/* The optional keys of a model with sparse features (nlu/sparse/sparse.h): absent means 0, and
 * they are written only when not 0, so a model without them keeps its config.json. */
static const struct {
    const char *key;
    size_t off;
} sparse_keys[] = {
    { "sparse_sentence_features", offsetof(bert_config, sparse_sent) },
    { "sparse_word_features", offsetof(bert_config, sparse_word) },
};
enum { N_SPARSE_KEYS = sizeof sparse_keys / sizeof sparse_keys[0] };

static int *int_field(bert_config *c, int k)
{
    return (int *)((char *)c + int_keys[k].off);
}

static int int_value(const bert_config *c, int k)
{
    return *(const int *)((const char *)c + int_keys[k].off);
}

typedef struct label_ref {
    const char *label;
    int index;
} label_ref;

static int label_ref_cmp(const void *a, const void *b)
{
    const label_ref *x = a, *y = b;
    int c = strcmp(x->label, y->label);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Sets *out to the first index (in list order) whose label appeared before, or to n when
 * none did; NULL labels are passed over. Sorting (label, index) pairs puts the copies of a
 * label side by side, first one first: n log n, where comparing every pair would take
 * minutes for a few hundred thousand labels. */
static parley_status first_repeat(char *const *labels, int n, int *out)
{
    label_ref *refs = pl_malloc((size_t)n * sizeof *refs);
    *out = n;
    if (!refs)
        return pl_nomem("checking %d labels", n);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (labels[i])
            refs[m++] = (label_ref){ labels[i], i };
    qsort(refs, (size_t)m, sizeof *refs, label_ref_cmp);
    for (int k = 1; k < m; k++)
        if (!strcmp(refs[k - 1].label, refs[k].label) && refs[k].index < *out)
            *out = refs[k].index;
    pl_free(refs);
    return PARLEY_OK;
}

/* A label list: non-empty, each label non-empty and unique; slot tags also BIO-shaped.
 * The first label at fault, in list order, is the one named. */
static parley_status check_labels(const char *where, const char *key, char *const *labels, int n,
                                  int bio)
{
    parley_status st;
    int has_o = 0, repeat = n;
    if (n <= 0 || !labels)
        return pl_fail(PARLEY_ERR_CONFIG, "%s: key \"%s\": expected a non-empty list of labels",
                       where, key);
    if ((st = first_repeat(labels, n, &repeat)) != PARLEY_OK)
        return st;
    for (int i = 0; i < n; i++) {
        const char *l = labels[i];
        if (!l || !*l)
            return pl_fail(PARLEY_ERR_CONFIG, "%s: key \"%s\": label %d is empty", where, key, i);
        if (i == repeat)
            return pl_fail(PARLEY_ERR_CONFIG, "%s: key \"%s\": label \"%s\" appears twice", where,
                           key, l);
        if (!bio)
            continue;
        has_o |= !strcmp(l, "O");
        if (strcmp(l, "O") && !((l[0] == 'B' || l[0] == 'I') && l[1] == '-' && l[2]))
            return pl_fail(PARLEY_ERR_CONFIG,
                           "%s: key \"%s\": label \"%s\" is not a BIO tag (O, B-name or I-name)",
                           where, key, l);
    }
    if (bio && !has_o)
        return pl_fail(PARLEY_ERR_CONFIG, "%s: key \"%s\": the labels must include \"O\"", where,
                       key);
    return PARLEY_OK;
}

parley_status bert_config_check(const bert_config *c, const char *where)
{
    parley_status st;
    for (int k = 0; k < N_INT_KEYS; k++) {
        int v = int_value(c, k);
        if (v <= 0)
            return pl_fail(PARLEY_ERR_CONFIG, "%s: key \"%s\": expected a positive integer", where,
                           int_keys[k].key);
        if (v > int_keys[k].max)
            return pl_fail(PARLEY_ERR_CONFIG,
                           "%s: key \"%s\": %d is more than parley supports (%d)", where,
                           int_keys[k].key, v, int_keys[k].max);
    }
    for (int k = 0; k < N_SPARSE_KEYS; k++) {
        int v = *(const int *)((const char *)c + sparse_keys[k].off);
        if (v < 0 || v > SF_MAX_FEATURES)
            return pl_fail(PARLEY_ERR_CONFIG, "%s: key \"%s\": %d is not in [0, %d]", where,
                           sparse_keys[k].key, v, SF_MAX_FEATURES);
    }
    if (c->hidden % c->heads)
        return pl_fail(PARLEY_ERR_CONFIG,
                       "%s: key \"num_attention_heads\": %d does not divide hidden_size %d", where,
                       c->heads, c->hidden);
    if (!(c->ln_eps > 0 && c->ln_eps <= FLT_MAX))
        return pl_fail(PARLEY_ERR_CONFIG, "%s: key \"layer_norm_eps\": expected a positive number",
                       where);
    if (c->intent_temperature != 0 && !(c->intent_temperature >= BERT_MIN_TEMPERATURE &&
                                        c->intent_temperature <= BERT_MAX_TEMPERATURE))
        return pl_fail(PARLEY_ERR_CONFIG,
                       "%s: key \"intent_temperature\": expected a number in [%g, %g]", where,
                       BERT_MIN_TEMPERATURE, BERT_MAX_TEMPERATURE);
    if (c->intent_sparse_only && !c->sparse_sent)
        return pl_fail(PARLEY_ERR_CONFIG,
                       "%s: key \"intent_sparse_only\" is true and the model has no sparse "
                       "sentence features (\"sparse_sentence_features\")",
                       where);
    if ((st = check_labels(where, "intent_labels", c->intent_labels, c->n_intents, 0)) !=
                PARLEY_OK ||
        (st = check_labels(where, "slot_labels", c->slot_labels, c->n_slots, 1)) != PARLEY_OK)
        return st;
    size_t params = bert_param_count(c);
    if (params > BERT_MAX_PARAMS)
        return pl_fail(PARLEY_ERR_CONFIG,
                       "%s: these sizes make %s%zu parameters, more than parley supports (%zu)",
                       where, params == SIZE_MAX ? "more than " : "", params, BERT_MAX_PARAMS);
    return PARLEY_OK;
}

static void free_labels(char **labels, int n)
{
    for (int i = 0; labels && i < n; i++)
        pl_free(labels[i]);
    pl_free(labels);
}

void bert_config_clear(bert_config *c)
{
    if (!c)
        return;
    free_labels(c->intent_labels, c->n_intents);
    free_labels(c->slot_labels, c->n_slots);
    pl_free(c->intent_slot_tags);
    bert_synonyms_clear(&c->synonyms);
    bert_slot_values_clear(&c->slot_values);
    memset(c, 0, sizeof *c);
}

const unsigned char *bert_slot_tags_of(const bert_config *c, int intent)
{
    return c->intent_slot_tags ? c->intent_slot_tags + (size_t)intent * (size_t)c->n_slots : NULL;
}

const float *bert_slot_prior(const bert_config *c, const float *intent_logits, float *scratch)
{
    if (!c->intent_slot_tags)
        return NULL;
    float *probs = scratch, *prior = scratch + c->n_intents;
    nlu_softmax(intent_logits, c->n_intents, c->intent_temperature, probs);
    for (int t = 0; t < c->n_slots; t++)
        prior[t] = 0.0f;
    for (int i = 0; i < c->n_intents; i++) {
        const unsigned char *row = bert_slot_tags_of(c, i);
        for (int t = 0; t < c->n_slots; t++)
            prior[t] += row[t] ? probs[i] : 0.0f;
    }
    return prior;
}

static char **copy_labels(const char *const *src, int n)
{
    char **dst = pl_calloc(n > 0 ? (size_t)n : 0, sizeof *dst);
    for (int i = 0; dst && i < n; i++)
        if (!(dst[i] = pl_strdup(src[i]))) {
            free_labels(dst, i);
            return NULL;
        }
    return dst;
}

parley_status bert_config_set_labels(bert_config *c, const char *const *intents, int n_intents,
                                     const char *const *slots, int n_slots)
{
    char **ni = copy_labels(intents, n_intents), **ns = copy_labels(slots, n_slots);
    if (!ni || !ns) {
        free_labels(ni, n_intents);
        free_labels(ns, n_slots);
        return pl_nomem("the model's labels");
    }
    free_labels(c->intent_labels, c->n_intents);
    free_labels(c->slot_labels, c->n_slots);
    pl_free(c->intent_slot_tags); /* made for the old labels */
    c->intent_slot_tags = NULL;
    c->intent_labels = ni;
    c->n_intents = n_intents;
    c->slot_labels = ns;
    c->n_slots = n_slots;
    return PARLEY_OK;
}

parley_status bert_config_copy(bert_config *dst, const bert_config *src)
{
    *dst = *src;
    dst->intent_labels = dst->slot_labels = NULL;
    dst->intent_slot_tags = NULL;
    dst->n_intents = dst->n_slots = 0;
    memset(&dst->synonyms, 0, sizeof dst->synonyms);
    memset(&dst->slot_values, 0, sizeof dst->slot_values);
    parley_status st =
            bert_config_set_labels(dst, (const char *const *)src->intent_labels, src->n_intents,
                                   (const char *const *)src->slot_labels, src->n_slots);
    if (st == PARLEY_OK)
        st = bert_synonyms_copy(&dst->synonyms, &src->synonyms);
    if (st == PARLEY_OK)
        st = bert_slot_values_copy(&dst->slot_values, &src->slot_values);
    const size_t mask = (size_t)src->n_intents * (size_t)src->n_slots;
    if (st == PARLEY_OK && src->intent_slot_tags) {
        if ((dst->intent_slot_tags = pl_malloc(mask + 1)))
            memcpy(dst->intent_slot_tags, src->intent_slot_tags, mask);
        else
            st = pl_nomem("the model's slot types per intent");
    }
    if (st != PARLEY_OK)
        bert_config_clear(dst); /* leaves it zeroed */
    return st;
}

/* Reads a string list into freshly allocated labels. */
static parley_status read_labels(const cJSON *root, const char *key, const char *where, char ***out,
                                 int *n)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!arr)
        return pl_fail(PARLEY_ERR_CONFIG, "%s: key \"%s\" is missing", where, key);
    int count = cJSON_GetArraySize(arr);
    const char **tmp = pl_calloc(count > 0 ? (size_t)count : 0, sizeof *tmp);
    if (!tmp)
        return pl_nomem("%s: key \"%s\"", where, key);
    int i = 0;
    for (const cJSON *s = cJSON_IsArray(arr) ? arr->child : NULL; s; s = s->next)
        tmp[i++] = cJSON_IsString(s) ? s->valuestring : NULL;
    parley_status st = PARLEY_OK;
    if (!cJSON_IsArray(arr) || i != count) {
        st = pl_fail(PARLEY_ERR_CONFIG, "%s: key \"%s\": expected a list of strings", where, key);
    } else {
        for (int k = 0; k < count && st == PARLEY_OK; k++)
            if (!tmp[k])
                st = pl_fail(PARLEY_ERR_CONFIG, "%s: key \"%s\": item %d is not a string", where,
                             key, k);
    }
    if (st == PARLEY_OK) {
        *out = copy_labels(tmp, count);
        *n = count;
        if (!*out)
            st = pl_nomem("%s: key \"%s\"", where, key);
    }
    pl_free(tmp);
    return st;
}

/* The slot type of a tag label ("x" of "B-x" or "I-x"), or NULL for "O". */
static const char *tag_type(const char *label)
{
    return (label[0] == 'B' || label[0] == 'I') && label[1] == '-' ? label + 2 : NULL;
}

/* Reads "intent_slot_types" (j) into c->intent_slot_tags; the labels are read already. */
static parley_status read_intent_slot_types(const cJSON *j, const char *where, bert_config *c)
{
    const int NI = c->n_intents, NS = c->n_slots;
    if (!cJSON_IsObject(j))
        return pl_fail(PARLEY_ERR_CONFIG,
                       "%s: key \"intent_slot_types\": expected an object of intent: [slot types]",
                       where);
    if (!(c->intent_slot_tags = pl_malloc((size_t)NI * (size_t)NS + 1)))
        return pl_nomem("%s: key \"intent_slot_types\"", where);
    memset(c->intent_slot_tags, 1, (size_t)NI * (size_t)NS);
    for (const cJSON *item = j->child; item; item = item->next) {
        int i = 0;
        while (i < NI && strcmp(c->intent_labels[i], item->string))
            i++;
        if (i == NI)
            return pl_fail(PARLEY_ERR_CONFIG,
                           "%s: key \"intent_slot_types\": \"%s\" is not in intent_labels", where,
                           item->string);
        if (!cJSON_IsArray(item))
            return pl_fail(PARLEY_ERR_CONFIG,
                           "%s: key \"intent_slot_types\": \"%s\": expected a list of slot types",
                           where, item->string);
        unsigned char *row = c->intent_slot_tags + (size_t)i * NS;
        for (int t = 0; t < NS; t++)
            row[t] = tag_type(c->slot_labels[t]) == NULL;
        for (const cJSON *s = item->child; s; s = s->next) {
            int found = 0;
            for (int t = 0; cJSON_IsString(s) && t < NS; t++) {
                const char *type = tag_type(c->slot_labels[t]);
                if (type && !strcmp(type, s->valuestring))
                    row[t] = 1, found = 1;
            }
            if (!found)
                return pl_fail(PARLEY_ERR_CONFIG,
                               "%s: key \"intent_slot_types\": \"%s\": %s%s%s is not a slot "
                               "type of slot_labels",
                               where, item->string, cJSON_IsString(s) ? "\"" : "",
                               cJSON_IsString(s) ? s->valuestring : "an item that is not a string",
                               cJSON_IsString(s) ? "\"" : "");
        }
    }
    return PARLEY_OK;
}

/* "intent_slot_types" for c->intent_slot_tags (not NULL): each intent with the types of
 * its allowed tags, each type once, in slot_labels order. NULL when out of memory. */
static cJSON *intent_slot_types_json(const bert_config *c)
{
    const int NS = c->n_slots;
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < c->n_intents; i++) {
        const unsigned char *row = c->intent_slot_tags + (size_t)i * NS;
        cJSON *types = cJSON_AddArrayToObject(o, c->intent_labels[i]);
        for (int t = 0; types && t < NS; t++) {
            const char *type = tag_type(c->slot_labels[t]);
            int seen = 0;
            for (int u = 0; type && row[t] && u < t && !seen; u++)
                seen = row[u] && tag_type(c->slot_labels[u]) &&
                       !strcmp(tag_type(c->slot_labels[u]), type);
            if (type && row[t] && !seen && !cJSON_AddItemToArray(types, cJSON_CreateString(type)))
                types = NULL;
        }
        if (!types) {
            cJSON_Delete(o);
            o = NULL;
        }
    }
    return o;
}

/* Takes the values from a parsed config object; labels only when `shape_only` is 0. */
static parley_status from_json(const cJSON *root, const char *where, int shape_only, bert_config *c)
{
    parley_status st;
    const cJSON *j;
    if (!cJSON_IsObject(root))
        return pl_fail(PARLEY_ERR_CONFIG, "%s: expected a JSON object", where);
    for (int k = 0; k < N_INT_KEYS; k++) {
        j = cJSON_GetObjectItemCaseSensitive(root, int_keys[k].key);
        if (!j) {
            if (shape_only && !strcmp(int_keys[k].key, "vocab_size"))
                continue;
            return pl_fail(PARLEY_ERR_CONFIG, "%s: key \"%s\" is missing", where, int_keys[k].key);
        }
        double v = cJSON_IsNumber(j) ? j->valuedouble : 0;
        if (!(v >= 1 && v <= INT_MAX) || v != (double)(int)v)
            return pl_fail(PARLEY_ERR_CONFIG, "%s: key \"%s\": expected a positive integer", where,
                           int_keys[k].key);
        *int_field(c, k) = (int)v;
    }
    /* Hugging Face's defaults for the keys that may be absent. */
    c->ln_eps = 1e-12f;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "layer_norm_eps"))) {
        if (!cJSON_IsNumber(j) || !(j->valuedouble > 0 && j->valuedouble <= FLT_MAX))
            return pl_fail(PARLEY_ERR_CONFIG,
                           "%s: key \"layer_norm_eps\": expected a positive number", where);
        c->ln_eps = (float)j->valuedouble;
    }
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "hidden_act"))) {
        if (!cJSON_IsString(j))
            return pl_fail(PARLEY_ERR_CONFIG, "%s: key \"hidden_act\": expected a string", where);
        if (strcmp(j->valuestring, "gelu"))
            return pl_fail(PARLEY_ERR_UNSUPPORTED,
                           "%s: key \"hidden_act\": \"%s\" is not supported (only \"gelu\", the "
                           "exact erf GELU)",
                           where, j->valuestring);
    }
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "position_embedding_type")) &&
        !(cJSON_IsString(j) && !strcmp(j->valuestring, "absolute")))
        return pl_fail(PARLEY_ERR_UNSUPPORTED,
                       "%s: key \"position_embedding_type\": only \"absolute\" position embeddings "
                       "are supported",
                       where);
    if (shape_only)
        return PARLEY_OK;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "intent_temperature"))) {
        if (!cJSON_IsNumber(j) ||
            !(j->valuedouble >= BERT_MIN_TEMPERATURE && j->valuedouble <= BERT_MAX_TEMPERATURE))
            return pl_fail(PARLEY_ERR_CONFIG,
                           "%s: key \"intent_temperature\": expected a number in [%g, %g]", where,
                           BERT_MIN_TEMPERATURE, BERT_MAX_TEMPERATURE);
        c->intent_temperature = (float)j->valuedouble;
    }
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "intent_sparse_only"))) {
        if (!cJSON_IsBool(j))
            return pl_fail(PARLEY_ERR_CONFIG,
                           "%s: key \"intent_sparse_only\": expected true or false", where);
        c->intent_sparse_only = cJSON_IsTrue(j);
    }
    for (int k = 0; k < N_SPARSE_KEYS; k++) {
        if (!(j = cJSON_GetObjectItemCaseSensitive(root, sparse_keys[k].key)))
            continue;
        double v = cJSON_IsNumber(j) ? j->valuedouble : -1;
        if (!(v >= 0 && v <= SF_MAX_FEATURES) || v != (double)(int)v)
            return pl_fail(PARLEY_ERR_CONFIG, "%s: key \"%s\": expected an integer in [0, %d]",
                           where, sparse_keys[k].key, SF_MAX_FEATURES);
        *(int *)((char *)c + sparse_keys[k].off) = (int)v;
    }
    if ((st = read_labels(root, "intent_labels", where, &c->intent_labels, &c->n_intents)) !=
                PARLEY_OK ||
        (st = read_labels(root, "slot_labels", where, &c->slot_labels, &c->n_slots)) != PARLEY_OK)
        return st;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "entity_synonyms")) &&
        (st = bert_synonyms_read(j, where, &c->synonyms)) != PARLEY_OK)
        return st;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "slot_values")) &&
        (st = bert_slot_values_read(j, where, &c->slot_values)) != PARLEY_OK)
        return st;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "intent_slot_types")))
        return read_intent_slot_types(j, where, c);
    return PARLEY_OK;
}

parley_status bert_config_load(const char *path, int shape_only, bert_config *out)
{
    parley_status st;
    char *text = NULL;
    size_t len;
    cJSON *root = NULL;
    memset(out, 0, sizeof *out);
    if ((st = pl_read_file(path, MAX_CONFIG_BYTES, &text, &len)) != PARLEY_OK ||
        (st = pl_json_parse(text, len, path, &root)) != PARLEY_OK ||
        (st = from_json(root, path, shape_only, out)) != PARLEY_OK)
        goto fail;
    if (!shape_only && (st = bert_config_check(out, path)) != PARLEY_OK)
        goto fail;
    cJSON_Delete(root);
    pl_free(text);
    return PARLEY_OK;
fail:
    bert_config_clear(out);
    cJSON_Delete(root);
    pl_free(text);
    return st;
}

/* The shortest decimal that reads back as the same float, so 1e-12 is written "1e-12"
 * rather than the 17 digits of its double widening. */
static double short_float(float f)
{
    char buf[32];
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, (double)f);
        if ((float)strtod(buf, NULL) == f)
            break;
    }
    return strtod(buf, NULL);
}

static cJSON *build_json(const bert_config *c)
{
    cJSON *root = cJSON_CreateObject(), *arch;
    int ok = root && (arch = cJSON_AddArrayToObject(root, "architectures")) &&
             cJSON_AddItemToArray(arch, cJSON_CreateString("BertForJointIntentSlot")) &&
             cJSON_AddStringToObject(root, "model_type", "bert");
    for (int k = 0; ok && k < N_INT_KEYS; k++)
        ok = cJSON_AddNumberToObject(root, int_keys[k].key, int_value(c, k)) != NULL;
    /* The dropout and init values are what Hugging Face's BertConfig would use; parley reads
     * none of them but writes them so the file is complete for transformers. */
    ok = ok && cJSON_AddNumberToObject(root, "layer_norm_eps", short_float(c->ln_eps)) &&
         cJSON_AddStringToObject(root, "hidden_act", "gelu") &&
         cJSON_AddStringToObject(root, "position_embedding_type", "absolute") &&
         cJSON_AddNumberToObject(root, "hidden_dropout_prob", 0.1) &&
         cJSON_AddNumberToObject(root, "attention_probs_dropout_prob", 0.1) &&
         cJSON_AddNumberToObject(root, "initializer_range", 0.02);
    for (int k = 0; ok && k < N_SPARSE_KEYS; k++) {
        int v = *(const int *)((const char *)c + sparse_keys[k].off);
        ok = !v || cJSON_AddNumberToObject(root, sparse_keys[k].key, v);
    }
    cJSON *intents =
            ok ? cJSON_CreateStringArray((const char *const *)c->intent_labels, c->n_intents)
               : NULL;
    ok = intents && cJSON_AddItemToObject(root, "intent_labels", intents);
    if (!ok)
        cJSON_Delete(intents);
    /* Written only when fitted, so an uncalibrated model's file has no such key. */
    if (ok && c->intent_temperature > 0 && c->intent_temperature != 1)
        ok = cJSON_AddNumberToObject(root, "intent_temperature",
                                     short_float(c->intent_temperature)) != NULL;
    if (ok && c->intent_sparse_only)
        ok = cJSON_AddTrueToObject(root, "intent_sparse_only") != NULL;
    cJSON *slots =
            ok ? cJSON_CreateStringArray((const char *const *)c->slot_labels, c->n_slots) : NULL;
    ok = slots && cJSON_AddItemToObject(root, "slot_labels", slots);
    if (!ok)
        cJSON_Delete(slots);
    if (ok && c->intent_slot_tags) {
        cJSON *types = intent_slot_types_json(c);
        if (!(ok = types && cJSON_AddItemToObject(root, "intent_slot_types", types)))
            cJSON_Delete(types);
    }
    if (ok && c->synonyms.n) {
        cJSON *syn = bert_synonyms_json(&c->synonyms);
        if (!(ok = syn && cJSON_AddItemToObject(root, "entity_synonyms", syn)))
            cJSON_Delete(syn);
    }
    if (ok && c->slot_values.n) {
        cJSON *values = bert_slot_values_json(&c->slot_values);
        if (!(ok = values && cJSON_AddItemToObject(root, "slot_values", values)))
            cJSON_Delete(values);
    }
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

parley_status bert_config_write(const bert_config *c, pl_atomic *a)
{
    parley_status st;
    cJSON *root = build_json(c);
    char *text = root ? cJSON_Print(root) : NULL, *out = NULL;
    size_t len = text ? strlen(text) : 0, n = 0;
    if (!text || !(out = pl_malloc(2 * len + 1))) {
        st = pl_nomem("%s: to write the config", a->path);
        goto done;
    }
    /* cJSON indents with tabs; Hugging Face writes two spaces. JSON escapes tabs inside
     * strings, so every raw tab is layout. */
    for (size_t i = 0; i < len; i++) {
        if (text[i] != '\t')
            out[n++] = text[i];
        else if (i && text[i - 1] == ':')
            out[n++] = ' ';
        else
            n += (size_t)sprintf(out + n, "  ");
    }
    out[n++] = '\n';
    st = pl_atomic_write(a, out, n);
done:
    pl_free(out);
    cJSON_free(text);
    cJSON_Delete(root);
    return st;
}
