/* sparse_io.c — sparse.json, the featurizer of a model directory (format in sparse.h): read
 * with every value checked, and written atomically.
 *
 * It does not compute features (sparse.c) and does not check the file against the model's
 * weights (nlu/model/model_io.c compares the counts with config.json).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nlu/sparse/sparse_impl.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"
#include "sdk/base/json.h"

static const char FORMAT[] = "parley-sparse";
/* Version 2 added the sentence's match features ("L:", "R:"); a version 1 vocabulary has
 * none, so its model reads and runs as it always did. Version 3 says how its word rows are
 * normalized and whether lookup values match with a typing slip ("word_norm", "lookup_slips",
 * both required); versions 1 and 2 did neither, and are written again as 3 saying so. */
enum { VERSION = 3, SETTINGS_FROM = 3, OLDEST_VERSION = 1, MAX_BYTES = 256 << 20 };
/* IDF is ln((1 + n) / (1 + df)) + 1: between 1 and 1 + ln of the text count. */
static const double MAX_IDF = 100.0;

/* The array under key in o, or NULL after a failure naming path and key. */
static const cJSON *get_array(const cJSON *o, const char *key, const char *path, parley_status *st)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsArray(a) && cJSON_GetArraySize(a) <= SF_MAX_FEATURES)
        return a;
    *st = pl_fail(PARLEY_ERR_FORMAT, "%s: \"%s\" is missing, not a list, or longer than %d", path,
                  key, SF_MAX_FEATURES);
    return NULL;
}

/* Reads a list of distinct strings into t. */
static parley_status read_names(const cJSON *o, const char *what, const char *path, sf_strtab *t)
{
    parley_status st = PARLEY_OK;
    const cJSON *a = o ? get_array(o, "features", path, &st) : NULL, *s;
    int i = 0, id;
    if (!o)
        return pl_fail(PARLEY_ERR_FORMAT, "%s: \"%s\" is missing or not an object", path, what);
    if (!a)
        return st;
    cJSON_ArrayForEach(s, a)
    {
        if (!cJSON_IsString(s))
            return pl_fail(PARLEY_ERR_FORMAT, "%s: %s feature %d is not a string", path, what, i);
        if ((st = sf_strtab_add(t, s->valuestring, strlen(s->valuestring), &id)) != PARLEY_OK)
            return st;
        if (id != i)
            return pl_fail(PARLEY_ERR_FORMAT, "%s: %s feature %d (\"%s\") repeats feature %d", path,
                           what, i, s->valuestring, id);
        i++;
    }
    return PARLEY_OK;
}

static parley_status read_idf(const cJSON *o, const char *path, sf_featurizer *f)
{
    parley_status st = PARLEY_OK;
    const cJSON *a = get_array(o, "idf", path, &st), *v;
    if (!a)
        return st;
    if (cJSON_GetArraySize(a) != f->sent.n)
        return pl_fail(PARLEY_ERR_FORMAT, "%s: %d IDF values for %d sentence features", path,
                       cJSON_GetArraySize(a), f->sent.n);
    if (!(f->idf = pl_malloc(((size_t)f->sent.n + 1) * sizeof *f->idf)))
        return pl_nomem("%s: IDF", path);
    int i = 0;
    cJSON_ArrayForEach(v, a)
    {
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1.0 && v->valuedouble <= MAX_IDF))
            return pl_fail(PARLEY_ERR_FORMAT, "%s: IDF value %d is not a number in [1, %g]", path,
                           i, MAX_IDF);
        f->idf[i++] = (float)v->valuedouble;
    }
    return PARLEY_OK;
}

/* The object under key (NULL when absent), or a failure when it is not an object. */
static parley_status get_object(const cJSON *root, const char *key, const char *path,
                                const cJSON **out)
{
    *out = cJSON_GetObjectItemCaseSensitive(root, key);
    if (*out && !cJSON_IsObject(*out))
        return pl_fail(PARLEY_ERR_FORMAT, "%s: \"%s\" is not an object", path, key);
    return PARLEY_OK;
}

/* Adds the lookup tables (regex 0) or regexes (1) of object o, each a list of strings. */
static parley_status read_tables(const cJSON *o, int regex, const char *path, sf_featurizer *f)
{
    parley_status st;
    const cJSON *t;
    const char *what = regex ? "regex" : "lookup table";
    cJSON_ArrayForEach(t, o)
    {
        int n = cJSON_GetArraySize(t), i = 0;
        const cJSON *v;
        const char **values = pl_calloc((size_t)n + 1, sizeof *values);
        if (!values)
            return pl_nomem("%s: %s \"%s\"", path, what, t->string);
        cJSON_ArrayForEach(v, t) values[i++] = cJSON_IsString(v) ? v->valuestring : NULL;
        for (i = 0; i < n && values[i]; i++)
            ;
        if (!cJSON_IsArray(t) || i < n)
            st = pl_fail(PARLEY_ERR_FORMAT, "%s: %s \"%s\" is not a list of strings", path, what,
                         t->string);
        else if (regex)
            st = sf_featurizer_add_regex(f, t->string, n, values);
        else
            st = sf_featurizer_add_lookup(f, t->string, n, values);
        pl_free(values);
        if (st != PARLEY_OK)
            return st == PARLEY_ERR_NOMEM ? st : pl_wrap(st, "%s", path);
    }
    return PARLEY_OK;
}

/* Reads version 3's "word_norm" ("row" or "kind") and "lookup_slips" (true or false). */
static parley_status read_settings(const cJSON *root, const char *path, int *by_kind, int *slips)
{
    const cJSON *norm = cJSON_GetObjectItemCaseSensitive(root, "word_norm"),
                *lookup = cJSON_GetObjectItemCaseSensitive(root, "lookup_slips");
    if (!cJSON_IsString(norm) ||
        (strcmp(norm->valuestring, "row") && strcmp(norm->valuestring, "kind")))
        return pl_fail(PARLEY_ERR_FORMAT, "%s: \"word_norm\" is missing or not \"row\" or \"kind\"",
                       path);
    if (!cJSON_IsBool(lookup))
        return pl_fail(PARLEY_ERR_FORMAT, "%s: \"lookup_slips\" is missing or not true or false",
                       path);
    *by_kind = !strcmp(norm->valuestring, "kind");
    *slips = cJSON_IsTrue(lookup);
    return PARLEY_OK;
}

parley_status sf_load(const char *path, sf_featurizer **out)
{
    parley_status st;
    char *text = NULL;
    size_t len;
    cJSON *root = NULL;
    sf_featurizer *f = NULL;
    *out = NULL;
    if ((st = pl_read_file(path, MAX_BYTES, &text, &len)) != PARLEY_OK ||
        (st = pl_json_parse(text, len, path, &root)) != PARLEY_OK)
        goto fail;
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format"),
                *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, FORMAT) || !cJSON_IsNumber(ver) ||
        ver->valuedouble < OLDEST_VERSION || ver->valuedouble > VERSION ||
        ver->valuedouble != (int)ver->valuedouble) {
        st = pl_fail(PARLEY_ERR_FORMAT,
                     "%s: not parley's sparse features version %d to %d (\"format\": "
                     "\"%s\", \"version\": %d to %d expected)",
                     path, OLDEST_VERSION, VERSION, FORMAT, OLDEST_VERSION, VERSION);
        goto fail;
    }
    const cJSON *sent = cJSON_GetObjectItemCaseSensitive(root, "sentence"),
                *word = cJSON_GetObjectItemCaseSensitive(root, "word"), *lookups, *regexes;
    int by_kind = 0, slips = 0;
    if ((ver->valuedouble >= SETTINGS_FROM &&
         (st = read_settings(root, path, &by_kind, &slips)) != PARLEY_OK) ||
        (st = get_object(root, "lookups", path, &lookups)) != PARLEY_OK ||
        (st = get_object(root, "regexes", path, &regexes)) != PARLEY_OK ||
        (st = sf_featurizer_new(cJSON_GetArraySize(lookups), cJSON_GetArraySize(regexes), &f)) !=
                PARLEY_OK)
        goto fail;
    f->word_norm_by_kind = by_kind;
    f->lookup_slips = slips; /* before the tables, whose slips are kept with them */
    if ((st = read_tables(lookups, 0, path, f)) != PARLEY_OK ||
        (st = read_tables(regexes, 1, path, f)) != PARLEY_OK ||
        (st = read_names(cJSON_IsObject(sent) ? sent : NULL, "sentence", path, &f->sent)) !=
                PARLEY_OK ||
        (st = read_idf(sent, path, f)) != PARLEY_OK ||
        (st = read_names(cJSON_IsObject(word) ? word : NULL, "word", path, &f->word)) != PARLEY_OK)
        goto fail;
    *out = f;
    f = NULL;
fail:
    sf_free(f);
    cJSON_Delete(root);
    pl_free(text);
    return st;
}

/* The names of t as a JSON list (cJSON makes no list of none from a NULL array). */
static cJSON *names_json(const sf_strtab *t)
{
    return t->n ? cJSON_CreateStringArray((const char *const *)t->names, t->n)
                : cJSON_CreateArray();
}

/* A lookup table's values as a JSON list, in the order they were added. */
static cJSON *values_json(const sf_lookup *l)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < l->n; i++) {
        cJSON *v = cJSON_CreateString(sf_lookup_value(l, i));
        if (!v || !cJSON_AddItemToArray(a, v)) {
            cJSON_Delete(v);
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}

/* Adds item under key, or deletes it (cJSON keeps no item it failed to add). */
static int add(cJSON *o, const char *key, cJSON *item)
{
    if (item && cJSON_AddItemToObject(o, key, item))
        return 1;
    cJSON_Delete(item);
    return 0;
}

static cJSON *build_json(const sf_featurizer *f)
{
    cJSON *root = cJSON_CreateObject(), *sent, *word, *lookups, *regexes, *idf;
    int ok = root && cJSON_AddStringToObject(root, "format", FORMAT) &&
             cJSON_AddNumberToObject(root, "version", VERSION) &&
             cJSON_AddStringToObject(root, "word_norm", f->word_norm_by_kind ? "kind" : "row") &&
             cJSON_AddBoolToObject(root, "lookup_slips", f->lookup_slips) &&
             (sent = cJSON_AddObjectToObject(root, "sentence")) &&
             add(sent, "features", names_json(&f->sent)) &&
             (idf = cJSON_AddArrayToObject(sent, "idf")) &&
             (word = cJSON_AddObjectToObject(root, "word")) &&
             add(word, "features", names_json(&f->word)) &&
             (lookups = cJSON_AddObjectToObject(root, "lookups")) &&
             (regexes = cJSON_AddObjectToObject(root, "regexes"));
    for (int i = 0; ok && i < f->sent.n; i++)
        ok = cJSON_AddItemToArray(idf, cJSON_CreateNumber(f->idf[i]));
    for (int l = 0; ok && l < f->n_lookups; l++)
        ok = add(lookups, f->lookups[l].name, values_json(&f->lookups[l]));
    for (int r = 0; ok && r < f->n_regexes; r++)
        ok = add(regexes, f->regexes[r].name,
                 f->regexes[r].n
                         ? cJSON_CreateStringArray((const char *const *)f->regexes[r].sources,
                                                   f->regexes[r].n)
                         : cJSON_CreateArray());
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

parley_status sf_write(const sf_featurizer *f, pl_atomic *a)
{
    parley_status st;
    cJSON *root = build_json(f);
    char *text = root ? cJSON_PrintUnformatted(root) : NULL;
    if (!text)
        st = pl_nomem("%s: writing the sparse features", a->path);
    else if ((st = pl_atomic_write(a, text, strlen(text))) == PARLEY_OK)
        st = pl_atomic_write(a, "\n", 1);
    cJSON_free(text);
    cJSON_Delete(root);
    return st;
}
