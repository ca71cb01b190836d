/* slot_values.c — the values each slot type takes in a model's training data (config.json
 * "slot_values"), and the resolution of a near miss of one of them (slot_values.h says what
 * resolves to what, and why).
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "nlu/model/model.h"
#include "nlu/model/slot_values.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/numwords.h"

/* ---- storage ---- */

bert_known *bert_slot_values_of(bert_slot_values *v, const char *slot)
{
    int i = pl_names_find(&v->ix, slot, strlen(slot));
    if (i >= 0)
        return &v->slots[i];
    bert_known *s = pl_realloc(v->slots, (size_t)(v->n + 1) * sizeof *s);
    if (s)
        v->slots = s; /* the table borrows the names, which stay where they are */
    char *name = s ? pl_strdup(slot) : NULL;
    if (!name || pl_names_reserve(&v->ix, (size_t)v->n + 1) != PARLEY_OK) {
        pl_free(name);
        return NULL;
    }
    memset(&s[v->n], 0, sizeof *s);
    s[v->n].slot = name;
    pl_names_add(&v->ix, name, strlen(name), v->n);
    return &s[v->n++];
}

const bert_known *bert_slot_values_find(const bert_slot_values *v, const char *slot)
{
    int i = pl_names_find(&v->ix, slot, strlen(slot));
    return i >= 0 ? &v->slots[i] : NULL;
}

parley_status bert_known_add(bert_known *k, const char *value, size_t len)
{
    char *folded = bert_synonym_fold(value, len), *key = NULL, *copy = NULL;
    if (!folded)
        return pl_nomem("a slot value");
    const int known = !*folded || pl_names_find(&k->ix, folded, strlen(folded)) >= 0;
    if (known || k->n >= BERT_SLOT_VALUES_MAX) {
        k->open |= !known; /* a value beyond those kept */
        pl_free(folded);
        return PARLEY_OK;
    }
    char **a = NULL, **b = NULL, **c = NULL;
    if ((key = bert_sound_key(folded)) && (copy = pl_malloc(len + 1)) &&
        (a = pl_realloc(k->values, (size_t)(k->n + 1) * sizeof *a)))
        k->values = a;
    if (a && (b = pl_realloc(k->folded, (size_t)(k->n + 1) * sizeof *b)))
        k->folded = b;
    if (b && (c = pl_realloc(k->keys, (size_t)(k->n + 1) * sizeof *c)))
        k->keys = c;
    if (!c || pl_names_reserve(&k->ix, (size_t)k->n + 1) != PARLEY_OK) {
        pl_free(folded);
        pl_free(key);
        pl_free(copy);
        return pl_nomem("a slot value");
    }
    memcpy(copy, value, len);
    copy[len] = '\0';
    pl_names_add(&k->ix, folded, strlen(folded), k->n);
    k->values[k->n] = copy;
    k->folded[k->n] = folded;
    k->keys[k->n++] = key;
    if (len > k->longest)
        k->longest = len;
    return PARLEY_OK;
}

static void known_clear(bert_known *k)
{
    for (int i = 0; i < k->n; i++) {
        pl_free(k->values[i]);
        pl_free(k->folded[i]);
        pl_free(k->keys[i]);
    }
    pl_free(k->values);
    pl_free(k->folded);
    pl_free(k->keys);
    pl_free(k->slot);
    pl_names_free(&k->ix);
}

void bert_slot_values_clear(bert_slot_values *v)
{
    for (int i = 0; i < v->n; i++)
        known_clear(&v->slots[i]);
    pl_free(v->slots);
    pl_names_free(&v->ix);
    memset(v, 0, sizeof *v);
}

/* Adds every value of src to a new slot type of dst, with its flags. */
static parley_status known_copy(bert_slot_values *dst, const bert_known *src)
{
    bert_known *k = bert_slot_values_of(dst, src->slot);
    if (!k)
        return pl_nomem("the slot values");
    for (int i = 0; i < src->n; i++) {
        parley_status st = bert_known_add(k, src->values[i], strlen(src->values[i]));
        if (st != PARLEY_OK)
            return st;
    }
    k->open = src->open;
    k->digits = src->digits;
    return PARLEY_OK;
}

parley_status bert_slot_values_copy(bert_slot_values *dst, const bert_slot_values *src)
{
    memset(dst, 0, sizeof *dst);
    for (int i = 0; i < src->n; i++) {
        parley_status st = known_copy(dst, &src->slots[i]);
        if (st != PARLEY_OK) {
            bert_slot_values_clear(dst);
            return st;
        }
    }
    return PARLEY_OK;
}

size_t bert_slot_values_longest(const bert_slot_values *v)
{
    size_t most = 0;
    for (int i = 0; i < v->n; i++)
        if (v->slots[i].longest > most)
            most = v->slots[i].longest;
    return most;
}

/* ---- config.json ---- */

static parley_status read_flag(const cJSON *o, const char *key, const char *where, const char *slot,
                               int *out)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (j && !cJSON_IsBool(j))
        return pl_fail(PARLEY_ERR_CONFIG,
                       "%s: key \"slot_values\": \"%s\": \"%s\": expected true or false", where,
                       slot, key);
    *out = cJSON_IsTrue(j);
    return PARLEY_OK;
}

parley_status bert_slot_values_read(const cJSON *j, const char *where, bert_slot_values *out)
{
    if (!cJSON_IsObject(j))
        return pl_fail(PARLEY_ERR_CONFIG,
                       "%s: key \"slot_values\": expected an object of \"slot type\": "
                       "{\"values\": [...]}",
                       where);
    for (const cJSON *s = j->child; s; s = s->next) {
        const cJSON *values = cJSON_GetObjectItemCaseSensitive(s, "values");
        if (!cJSON_IsObject(s) || !cJSON_IsArray(values))
            return pl_fail(PARLEY_ERR_CONFIG,
                           "%s: key \"slot_values\": \"%s\": expected an object with \"values\": "
                           "[strings]",
                           where, s->string);
        bert_known *k = bert_slot_values_of(out, s->string);
        if (!k)
            return pl_nomem("%s: the slot values", where);
        parley_status st;
        if ((st = read_flag(s, "open", where, s->string, &k->open)) != PARLEY_OK ||
            (st = read_flag(s, "digits", where, s->string, &k->digits)) != PARLEY_OK)
            return st;
        for (const cJSON *v = values->child; v; v = v->next) {
            if (!cJSON_IsString(v))
                return pl_fail(PARLEY_ERR_CONFIG,
                               "%s: key \"slot_values\": \"%s\": \"values\": expected strings",
                               where, s->string);
            if ((st = bert_known_add(k, v->valuestring, strlen(v->valuestring))) != PARLEY_OK)
                return pl_wrap(st, "%s", where);
        }
    }
    return PARLEY_OK;
}

cJSON *bert_slot_values_json(const bert_slot_values *v)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < v->n; i++) {
        const bert_known *k = &v->slots[i];
        cJSON *s = cJSON_AddObjectToObject(o, k->slot), *values = NULL;
        int ok = s && (!k->digits || cJSON_AddTrueToObject(s, "digits")) &&
                 (!k->open || cJSON_AddTrueToObject(s, "open")) &&
                 (values = cJSON_CreateStringArray((const char *const *)k->values, k->n));
        if (ok && !cJSON_AddItemToObject(s, "values", values)) {
            cJSON_Delete(values); /* not attached: still the caller's */
            ok = 0;
        }
        if (!ok) {
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}

/* ---- resolving a near miss ---- */

/* What value i stands for: its synonym's canonical value, or itself. */
static const char *canonical(const bert_known *k, const bert_synonyms *syn, int i)
{
    int s = pl_names_find(&syn->ix, k->folded[i], strlen(k->folded[i]));
    return s >= 0 ? syn->to[s] : k->values[i];
}

/* The nearest values found so far: the one canonical value they stand for, or ambiguous. */
typedef struct nearest {
    int best;          /* the least distance seen */
    const char *canon; /* the canonical value at that distance, or NULL */
    int ambiguous;     /* two values at that distance stand for different ones */
} nearest;

static void consider(nearest *n, int d, const char *canon)
{
    if (d < n->best) {
        *n = (nearest){ d, canon, 0 };
    } else if (d == n->best && n->canon && strcmp(n->canon, canon)) {
        n->ambiguous = 1;
    }
}

static int count_words(const char *s)
{
    int n = *s != '\0';
    for (; *s; s++)
        n += *s == ' ';
    return n;
}

/* Whether the words of f are a run of at least half the words of the longer value v. */
static int word_run_of(const char *f, const char *v)
{
    size_t n = strlen(f);
    if (strlen(v) <= n || 2 * count_words(f) < count_words(v))
        return 0;
    for (const char *p = strstr(v, f); p; p = strstr(p + 1, f))
        if ((p == v || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
            return 1;
    return 0;
}

/* Whether a and b hold the same digits in the same order: a value with other numbers is
 * another value ("5th" is not "7th"), however near. */
static int same_digits(const char *a, const char *b)
{
    for (;; a++, b++) {
        while (*a && !(*a >= '0' && *a <= '9'))
            a++;
        while (*b && !(*b >= '0' && *b <= '9'))
            b++;
        if (*a != *b)
            return 0;
        if (!*a)
            return 1;
    }
}

/* The edit bound for a string of n bytes, in steps of one from `from`, one more each `step`
 * bytes, at most `most`; -1 below `from` (no distance resolves it). */
static int bound_for(size_t n, size_t from, size_t step, int most)
{
    if (n < from)
        return -1;
    int b = 1 + (int)((n - from) / step);
    return b < most ? b : most;
}

/* The canonical value f (folded) resolves to by words or distance, or NULL. */
static const char *match(const bert_known *k, const bert_synonyms *syn, const char *f,
                         parley_status *st)
{
    const size_t n = strlen(f);
    nearest by_words = { 1, NULL, 0 };
    for (int i = 0; n >= 3 && i < k->n; i++)
        if (word_run_of(f, k->folded[i]) && same_digits(f, k->folded[i]))
            consider(&by_words, 0, canonical(k, syn, i));
    if (by_words.canon || by_words.ambiguous)
        return by_words.ambiguous ? NULL : by_words.canon;

    /* letters: 1 edit from 4 bytes, 2 from 12, 3 from 20 */
    const int letters = bound_for(n, 4, 8, 3);
    nearest near = { letters + 1, NULL, 0 };
    for (int i = 0; letters >= 0 && i < k->n; i++) {
        int d = bert_edit_distance(f, n, k->folded[i], strlen(k->folded[i]), near.best);
        if (d <= letters && same_digits(f, k->folded[i]))
            consider(&near, d, canonical(k, syn, i));
    }
    if (near.canon || near.ambiguous)
        return near.ambiguous ? NULL : near.canon;

    /* sound: the same key from 3 key letters, 1 edit from 5; and the letters
     * within half the span's length */
    char *key = bert_sound_key(f);
    if (!key) {
        *st = pl_nomem("a slot value's sound");
        return NULL;
    }
    const size_t kn = strlen(key);
    const int sound = kn < 3 ? -1 : kn < 5 ? 0 : bound_for(kn, 5, 4, 1);
    near = (nearest){ sound + 1, NULL, 0 };
    for (int i = 0; sound >= 0 && i < k->n; i++) {
        int d = bert_edit_distance(key, kn, k->keys[i], strlen(k->keys[i]), near.best);
        if (d <= sound && same_digits(f, k->folded[i]) &&
            bert_edit_distance(f, n, k->folded[i], strlen(k->folded[i]), (int)n / 2) <= (int)n / 2)
            consider(&near, d, canonical(k, syn, i));
    }
    pl_free(key);
    return near.ambiguous ? NULL : near.canon;
}

/* Where k's values write digits, text with its number words as digits: *said (owned; NULL
 * when it holds none, or k's values do not write digits), and *f replaced by its folding. */
static parley_status as_digits(const bert_known *k, const char *text, size_t len, char **f,
                               char **said)
{
    int changed = 0;
    *said = NULL;
    if (!k->digits)
        return PARLEY_OK;
    char *d = pl_number_digits(text, len, &changed),
         *g = d && changed ? bert_synonym_fold(d, strlen(d)) : NULL;
    if (!d || (changed && !g)) {
        pl_free(d);
        return pl_nomem("a slot value");
    }
    if (!changed) {
        pl_free(d);
        return PARLEY_OK;
    }
    pl_free(*f);
    *f = g;
    *said = d;
    return PARLEY_OK;
}

parley_status bert_known_resolve(const bert_known *k, const bert_synonyms *syn, const char *text,
                                 size_t len, char **out)
{
    char *said = NULL, *f = bert_synonym_fold(text, len);
    *out = NULL;
    if (!f)
        return pl_nomem("a slot value");
    parley_status st = PARLEY_OK;
    if (*f && pl_names_find(&k->ix, f, strlen(f)) < 0 && /* not a value the slot knows */
        (st = as_digits(k, text, len, &f, &said)) == PARLEY_OK) {
        int i = pl_names_find(&k->ix, f, strlen(f));
        const char *to = i >= 0 ? canonical(k, syn, i) : k->open ? NULL : match(k, syn, f, &st);
        if (st == PARLEY_OK && (to || said) && !(*out = pl_strdup(to ? to : said)))
            st = pl_nomem("a slot value");
    }
    pl_free(said);
    pl_free(f);
    return st;
}

/* ---- the slot type a span's words belong to ---- */

/* a and b have a value in common. */
static int share_value(const bert_known *a, const bert_known *b)
{
    if (a->n > b->n) {
        const bert_known *t = a;
        a = b;
        b = t;
    }
    for (int i = 0; i < a->n; i++)
        if (pl_names_find(&b->ix, a->folded[i], strlen(a->folded[i])) >= 0)
            return 1;
    return 0;
}

parley_status bert_slot_values_owner(const bert_slot_values *v, const bert_known *k,
                                     const char *text, size_t len, const bert_known **owner)
{
    *owner = NULL;
    if (k->open)
        return PARLEY_OK;
    char *f = bert_synonym_fold(text, len);
    if (!f)
        return pl_nomem("a slot value");
    const bert_known *found = NULL;
    int n_found = 0;
    if (*f && pl_names_find(&k->ix, f, strlen(f)) < 0)
        for (int i = 0; i < v->n && n_found < 2; i++) {
            const bert_known *o = &v->slots[i];
            if (o != k && !o->open && pl_names_find(&o->ix, f, strlen(f)) >= 0) {
                found = o;
                n_found++;
            }
        }
    if (n_found == 1 && !share_value(k, found))
        *owner = found;
    pl_free(f);
    return PARLEY_OK;
}
