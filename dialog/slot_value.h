/* slot_value.h — turning what a user said into a slot's canonical value.
 *
 * Words are compared after trimming, collapsing inner whitespace and folding ASCII case.
 * A synonym maps a variant to its canonical text first; then the slot's type decides:
 * a categorical slot takes the allowed value as the domain writes it (what the user said,
 * or the one value a typing slip away from it: sdk/base/slip.h), a number slot takes
 * digits or an English number word ("two", "twelve") within its range, a text slot takes
 * the words as said when they match its pattern.
 */
#ifndef DIALOG_SLOT_VALUE_H
#define DIALOG_SLOT_VALUE_H

#include "dialog/domain.h"

/* The most bytes a slot value may have: each value said, and a list slot's values joined. */
enum { DM_SLOT_VALUE_MAX = 1024 };

/* The canonical value of `raw` for slot s. On success *out is owned by the caller
 * (pl_free). A value the slot does not accept fails with PARLEY_ERR_INVALID_ARG and a
 * detail that says why ("'huge' is not one of: small, medium, large"). A value that cannot
 * be judged within the limits fails with PARLEY_ERR_UNSUPPORTED: one longer than
 * DM_SLOT_VALUE_MAX (refused whole, never cut), or one on which the slot's pattern passes
 * its limits (pattern.h). */
parley_status dm_slot_normalize(const dm_slot_def *s, const char *raw, char **out);

/* Whether `text`, written as a synonym's canonical value, passes slot s's type check (no
 * synonym applies, no length limit, no typing slip); as dm_slot_normalize otherwise. */
parley_status dm_slot_accept(const dm_slot_def *s, const char *text, char **out);

/* Copies `raw` trimmed, with runs of whitespace made one space, ASCII letters lowered when
 * `fold` is set. Owned by the caller; NULL when out of memory. */
char *dm_words(const char *raw, int fold);

#endif
