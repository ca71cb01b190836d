/* template.c — {slot} templates: the load-time check and the per-turn rendering.
 *
 * Both walk a template with the same scanner (next_piece), so what the check accepts is
 * exactly what rendering understands. This file knows nothing about which response or
 * variation is chosen; dialog.c decides that.
 */
#include <string.h>

#include "dialog/template.h"
#include "sdk/base/alloc.h"

parley_status dm_text_append(dm_text *t, const char *s, size_t n)
{
    if (t->failed)
        return PARLEY_ERR_NOMEM;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = pl_realloc(t->s, cap);
        if (!p) {
            t->failed = 1;
            return pl_nomem("a reply");
        }
        t->s = p;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
    return PARLEY_OK;
}

parley_status dm_text_puts(dm_text *t, const char *s)
{
    return dm_text_append(t, s, strlen(s));
}

char *dm_text_take(dm_text *t)
{
    char *s = NULL;
    if (t->failed)
        pl_free(t->s);
    else
        s = t->s ? t->s : pl_strdup("");
    *t = (dm_text){ 0 };
    return s;
}

void dm_text_free(dm_text *t)
{
    pl_free(t->s);
    *t = (dm_text){ 0 };
}

/* One piece of a template from position *i: literal text [*start, *start + *len), or a
 * reference whose name is that range (*is_ref = 1). Returns 0 at the end, -1 on a brace
 * error at *start. */
static int next_piece(const char *s, size_t *i, size_t *start, size_t *len, int *is_ref)
{
    size_t p = *i;
    if (!s[p])
        return 0;
    *is_ref = 0;
    if ((s[p] == '{' && s[p + 1] == '{') || (s[p] == '}' && s[p + 1] == '}')) {
        *start = p;
        *len = 1;
        *i = p + 2;
        return 1;
    }
    if (s[p] == '}') {
        *start = p;
        return -1;
    }
    if (s[p] == '{') {
        const char *close = strchr(s + p + 1, '}');
        const char *open = strchr(s + p + 1, '{');
        if (!close || (open && open < close) || close == s + p + 1) {
            *start = p;
            return -1;
        }
        *is_ref = 1;
        *start = p + 1;
        *len = (size_t)(close - (s + p + 1));
        *i = (size_t)(close - s) + 1;
        return 1;
    }
    size_t q = p;
    while (s[q] && s[q] != '{' && s[q] != '}')
        q++;
    *start = p;
    *len = q - p;
    *i = q;
    return 1;
}

static int find_slot(const dm_domain *d, const char *name, size_t len)
{
    return pl_names_find(&d->slot_ix, name, len);
}

/* The error for a reference to an unknown slot, s[start, start + len) of scalar n, with the
 * nearest slot name offered. */
static parley_status unknown_slot(const dm_domain *d, const yd_node *n, const char *s, size_t start,
                                  size_t len)
{
    char name[64];
    const char *near = NULL;
    const char **names = pl_malloc((d->n_slots ? d->n_slots : 1) * sizeof *names);
    if (names && len < sizeof name) {
        memcpy(name, s + start, len);
        name[len] = '\0';
        for (size_t k = 0; k < d->n_slots; k++)
            names[k] = d->slots[k].name;
        near = yd_nearest(name, names, d->n_slots);
    }
    pl_free(names);
    return yd_fail_at(n, start, PARLEY_ERR_CONFIG,
                      "the template names slot '%.*s', which is not under slots:%s%s%s", (int)len,
                      s + start, near ? " (did you mean '" : "", near ? near : "",
                      near ? "'?)" : "");
}

parley_status dm_template_check(const dm_domain *d, const yd_node *n)
{
    const char *s;
    parley_status st = yd_str(n, &s);
    if (st != PARLEY_OK)
        return st;
    size_t i = 0, start = 0, len = 0;
    int is_ref, r;
    while ((r = next_piece(s, &i, &start, &len, &is_ref)) != 0) {
        if (r < 0)
            return yd_fail_at(n, start, PARLEY_ERR_CONFIG,
                              "unmatched brace in a reply template (write {{ or }} for a "
                              "literal brace, {slot} for a slot's value)");
        if (is_ref && find_slot(d, s + start, len) < 0 &&
            (st = dm_domain_problem(d, unknown_slot(d, n, s, start, len))) != PARLEY_OK)
            return st;
    }
    return PARLEY_OK;
}

void dm_template_slots(const dm_domain *d, const char *tmpl, unsigned char *used)
{
    size_t i = 0, start = 0, len = 0;
    int is_ref;
    while (next_piece(tmpl, &i, &start, &len, &is_ref) > 0) {
        int k = is_ref ? find_slot(d, tmpl + start, len) : -1;
        if (k >= 0)
            used[k] = 1;
    }
}

parley_status dm_template_render(const dm_domain *d, const char *tmpl, char *const *values,
                                 int lenient, dm_text *t)
{
    size_t i = 0, start = 0, len = 0;
    int is_ref, r;
    while ((r = next_piece(tmpl, &i, &start, &len, &is_ref)) > 0) {
        parley_status st;
        int k = is_ref ? find_slot(d, tmpl + start, len) : -1;
        if (k >= 0)
            st = values[k] ? dm_text_puts(t, values[k]) : PARLEY_OK;
        else if (is_ref) /* only in lenient text: keep the unknown reference as written */
            st = dm_text_append(t, tmpl + start - 1, len + 2);
        else
            st = dm_text_append(t, tmpl + start, len);
        if (st != PARLEY_OK)
            return st;
    }
    if (r < 0 && lenient)
        return dm_text_puts(t, tmpl + start);
    /* The domain loader checked every domain template, so r < 0 cannot happen for them. */
    return r < 0 ? pl_fail(PARLEY_ERR_INTERNAL, "unchecked reply template") : PARLEY_OK;
}
