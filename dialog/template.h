/* template.h — reply templates with {slot} references, and the growing string they fill.
 *
 * A template is plain text where `{name}` stands for the value of slot `name` (empty when
 * the slot has none) and `{{` / `}}` stand for literal braces. Templates are checked when
 * the domain loads (dm_template_check), so rendering cannot meet an unknown name.
 */
#ifndef DIALOG_TEMPLATE_H
#define DIALOG_TEMPLATE_H

#include <stddef.h>

#include "dialog/domain.h"
#include "sdk/base/yaml_doc.h"

/* A NUL-terminated string that grows; zero-initialize it. Once an append fails with
 * PARLEY_ERR_NOMEM the text keeps what it had and later appends fail too. */
typedef struct dm_text {
    char *s;
    size_t len, cap;
    int failed;
} dm_text;

parley_status dm_text_append(dm_text *t, const char *s, size_t n);
parley_status dm_text_puts(dm_text *t, const char *s);
/* Hands the string to the caller (owned, pl_free) and empties t; NULL after a failure. */
char *dm_text_take(dm_text *t);
void dm_text_free(dm_text *t);

/* Checks template scalar n against the domain's slots (d->slots must be loaded): an
 * unknown name or an unmatched brace fails with "FILE:LINE:COL: ..." at the character. */
parley_status dm_template_check(const dm_domain *d, const yd_node *n);

/* Sets used[k] (d->n_slots flags) for each slot k the checked template `tmpl` names. */
void dm_template_slots(const dm_domain *d, const char *tmpl, unsigned char *used);

/* Appends template `tmpl` to t with values[i] (NULL = empty) for slot i of d. A lenient
 * render (for unchecked text, such as an action's reply) keeps unknown references and
 * unmatched braces as written; a strict one expects a checked template. */
parley_status dm_template_render(const dm_domain *d, const char *tmpl, char *const *values,
                                 int lenient, dm_text *t);

#endif
