/* slot_value.c — slot type checks and canonical values (synonyms, categories, numbers).
 *
 * Pure functions of a slot definition and a string: no store, no session. Lists are not
 * handled here (dialog.c normalizes each value of a list slot and joins them).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialog/slot_value.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/slip.h"

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

char *dm_words(const char *raw, int fold)
{
    char *out = pl_malloc(strlen(raw) + 1);
    if (!out)
        return NULL;
    size_t n = 0;
    for (const char *p = raw; *p; p++) {
        if (is_space(*p)) {
            if (n && out[n - 1] != ' ')
                out[n++] = ' ';
            continue;
        }
        out[n++] = fold && *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
    }
    if (n && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
    return out;
}

/* English number words a user may type or an ASR may write for a count. */
static const char *const number_words[] = {
    "zero",     "one",     "two",     "three",     "four",     "five",     "six",
    "seven",    "eight",   "nine",    "ten",       "eleven",   "twelve",   "thirteen",
    "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
};

static int parse_number(const char *key, double *out)
{
    char *end;
    double v = strtod(key, &end);
    if (end != key && *end == '\0' && isfinite(v)) {
        *out = v;
        return 1;
    }
    for (size_t i = 0; i < sizeof number_words / sizeof *number_words; i++)
        if (!strcmp(key, number_words[i])) {
            *out = (double)i;
            return 1;
        }
    return 0;
}

static parley_status list_values(const dm_slot_def *s, const char *raw)
{
    char list[512];
    size_t n = 0;
    for (size_t i = 0; i < s->n_values && n < sizeof list - 8; i++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", s->values[i]);
    return pl_fail(PARLEY_ERR_INVALID_ARG, "'%s' is not one of: %s", raw, list);
}

static parley_status check_number(const dm_slot_def *s, const char *raw, const char *key,
                                  char **out)
{
    double v;
    if (!parse_number(key, &v))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "'%s' is not a number", raw);
    if (s->integer && v != floor(v))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "'%s' is not a whole number", raw);
    if (v < s->min || v > s->max)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s is outside %g..%g", raw, s->min, s->max);
    char buf[64];
    snprintf(buf, sizeof buf, "%.15g", v);
    *out = pl_strdup(buf);
    return *out ? PARLEY_OK : pl_nomem("a slot value");
}

/* The allowed value of categorical slot s one typing slip from key (folded), where exactly
 * one is; else -1. */
static int slipped_value(const dm_slot_def *s, const char *key)
{
    int found = -1;
    for (size_t i = 0; i < s->n_values; i++)
        if (pl_one_slip(key, strlen(key), s->folded[i], strlen(s->folded[i]))) {
            if (found >= 0)
                return -1; /* two are as near: neither is meant more than the other */
            found = (int)i;
        }
    return found;
}

/* The slot's value for `said` (a value as kept: the words said, or a synonym's canonical
 * text), compared as dm_words(said, 1); `raw` is what the user said, for messages. With
 * `slips`, a categorical value also takes the one allowed value a typing slip away. */
static parley_status judge(const dm_slot_def *s, const char *raw, const char *said, int slips,
                           char **out)
{
    char *key = dm_words(said, 1);
    if (!key)
        return pl_nomem("a slot value");
    parley_status st = PARLEY_OK;
    switch (s->type) {
    case DM_SLOT_CATEGORICAL: {
        int v = pl_names_find(&s->value_ix, key, strlen(key));
        if (v < 0 && slips)
            v = slipped_value(s, key);
        if (v < 0) {
            st = list_values(s, raw);
            break;
        }
        *out = pl_strdup(s->values[v]);
        st = *out ? PARLEY_OK : pl_nomem("a slot value");
        break;
    }
    case DM_SLOT_NUMBER: st = check_number(s, raw, key, out); break;
    case DM_SLOT_TEXT: {
        int found = 1;
        if (s->pattern &&
            (st = pl_pattern_match(s->pattern, said, strlen(said), &found)) != PARLEY_OK) {
            st = pl_wrap(st, "slot '%s'", s->name);
            break;
        }
        if (!found) {
            st = pl_fail(PARLEY_ERR_INVALID_ARG, "'%s' does not have the expected form", raw);
            break;
        }
        *out = pl_strdup(said);
        st = *out ? PARLEY_OK : pl_nomem("a slot value");
        break;
    }
    }
    pl_free(key);
    return st;
}

parley_status dm_slot_accept(const dm_slot_def *s, const char *text, char **out)
{
    *out = NULL;
    return judge(s, text, text, 0, out);
}

parley_status dm_slot_normalize(const dm_slot_def *s, const char *raw, char **out)
{
    *out = NULL;
    size_t len = strlen(raw);
    if (len > DM_SLOT_VALUE_MAX)
        return pl_fail(PARLEY_ERR_UNSUPPORTED,
                       "slot '%s': a value of %zu bytes is longer than the %d a slot value may "
                       "have",
                       s->name, len, DM_SLOT_VALUE_MAX);
    char *key = dm_words(raw, 1), *said = dm_words(raw, 0);
    parley_status st;
    if (!key || !said) {
        st = pl_nomem("a slot value");
    } else if (!*key) {
        st = pl_fail(PARLEY_ERR_INVALID_ARG, "an empty value");
    } else {
        /* A synonym replaces what was said with its canonical text, which the type checks. */
        int k = pl_names_find(&s->synonym_ix, key, strlen(key));
        st = judge(s, raw, k >= 0 ? s->synonyms[k].to : said, 1, out);
    }
    pl_free(key);
    pl_free(said);
    return st;
}
