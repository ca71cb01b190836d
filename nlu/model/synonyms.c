/* synonyms.c — what a slot value the model extracts stands for: the training data's synonyms
 * (Rasa's `- synonym:` entries and inline canonical values), kept in config.json as
 * "entity_synonyms": {"surface form": "canonical value", ...}.
 *
 * As Rasa's EntitySynonymMapper, a value maps whatever its slot type, compared without case
 * (code points lower-cased one by one, utf8proc's simple mapping) and with the whitespace
 * between its words taken as one space. It does not change what the model tags, only the
 * value reported beside the span typed (parley_nlu_slot.canonical); the trainer teaches the
 * model the surface forms (nlu/train/synonyms.c).
 */
#include <string.h>

#include <cjson/cJSON.h>
#include <utf8proc.h>

#include "nlu/model/model.h"
#include "nlu/text/tokenizer.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

char *bert_synonym_fold(const char *s, size_t len)
{
    /* a lower-cased code point never needs more than 4 bytes */
    char *out = pl_malloc(4 * len + 1);
    if (!out)
        return NULL;
    const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s, *end = p + len;
    size_t n = 0;
    int space = 0;
    utf8proc_int32_t cp;
    for (utf8proc_ssize_t k; p < end && (k = utf8proc_iterate(p, end - p, &cp)) > 0; p += k) {
        if (wp_is_space((uint32_t)cp)) {
            space = n > 0;
            continue;
        }
        if (space)
            out[n++] = ' ';
        space = 0;
        n += (size_t)utf8proc_encode_char(utf8proc_tolower(cp), (utf8proc_uint8_t *)out + n);
    }
    out[n] = '\0';
    return out;
}

parley_status bert_synonyms_add(bert_synonyms *s, const char *from, size_t len, const char *to)
{
    char *key = bert_synonym_fold(from, len), *canon = pl_strdup(to);
    char **f = key && canon ? pl_realloc(s->from, (size_t)(s->n + 1) * sizeof *f) : NULL;
    if (f)
        s->from = f;
    char **t = f ? pl_realloc(s->to, (size_t)(s->n + 1) * sizeof *t) : NULL;
    if (t)
        s->to = t;
    if (!t || pl_names_reserve(&s->ix, (size_t)s->n + 1) != PARLEY_OK) {
        pl_free(key);
        pl_free(canon);
        return pl_nomem("a synonym");
    }
    /* The first canonical value given for a surface form is kept. */
    if (!*key || pl_names_add(&s->ix, key, strlen(key), s->n) >= 0) {
        pl_free(key);
        pl_free(canon);
        return PARLEY_OK;
    }
    s->from[s->n] = key;
    s->to[s->n++] = canon;
    return PARLEY_OK;
}

parley_status bert_synonyms_find(const bert_synonyms *s, const char *value, size_t len,
                                 const char **out)
{
    *out = NULL;
    if (!s->n)
        return PARLEY_OK;
    char *key = bert_synonym_fold(value, len);
    if (!key)
        return pl_nomem("a slot value's synonym");
    int k = pl_names_find(&s->ix, key, strlen(key));
    pl_free(key);
    *out = k >= 0 ? s->to[k] : NULL;
    return PARLEY_OK;
}

size_t bert_synonyms_longest(const bert_synonyms *s)
{
    size_t most = 0;
    for (int i = 0; i < s->n; i++)
        if (strlen(s->to[i]) > most)
            most = strlen(s->to[i]);
    return most;
}

void bert_synonyms_clear(bert_synonyms *s)
{
    for (int i = 0; i < s->n; i++) {
        pl_free(s->from[i]);
        pl_free(s->to[i]);
    }
    pl_free(s->from);
    pl_free(s->to);
    pl_names_free(&s->ix);
    memset(s, 0, sizeof *s);
}

parley_status bert_synonyms_copy(bert_synonyms *dst, const bert_synonyms *src)
{
    memset(dst, 0, sizeof *dst);
    for (int i = 0; i < src->n; i++) {
        parley_status st = bert_synonyms_add(dst, src->from[i], strlen(src->from[i]), src->to[i]);
        if (st != PARLEY_OK) {
            bert_synonyms_clear(dst);
            return st;
        }
    }
    return PARLEY_OK;
}

parley_status bert_synonyms_read(const cJSON *j, const char *where, bert_synonyms *out)
{
    if (!cJSON_IsObject(j))
        return pl_fail(PARLEY_ERR_CONFIG,
                       "%s: key \"entity_synonyms\": expected an object of \"surface form\": "
                       "\"canonical value\"",
                       where);
    for (const cJSON *e = j->child; e; e = e->next) {
        if (!cJSON_IsString(e))
            return pl_fail(PARLEY_ERR_CONFIG,
                           "%s: key \"entity_synonyms\": \"%s\": expected a string (the "
                           "canonical value)",
                           where, e->string);
        parley_status st = bert_synonyms_add(out, e->string, strlen(e->string), e->valuestring);
        if (st != PARLEY_OK)
            return pl_wrap(st, "%s", where);
    }
    return PARLEY_OK;
}

cJSON *bert_synonyms_json(const bert_synonyms *s)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < s->n; i++)
        if (!cJSON_AddStringToObject(o, s->from[i], s->to[i])) {
            cJSON_Delete(o);
            return NULL;
        }
    return o;
}
