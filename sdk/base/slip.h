/* slip.h — typing slips: whether what a user typed is one slip away from a known value.
 *
 * A slip is one code point (UTF-8) left out, added or changed, or two neighbours swapped.
 * Only values of PL_SLIP_MIN to PL_SLIP_MAX code points are matched with a slip: shorter ones
 * are too near other words ("ham" / "jam"), longer ones would cost more than a value is
 * worth checking. The NLU's lookup tables (nlu/sparse/sparse_match.c, which indexes the values'
 * variants for large tables) and the dialog's categorical values (dialog/slot_value.c) use
 * the same bounds.
 *
 * Pure functions; safe from any thread.
 */
#ifndef SDK_BASE_SLIP_H
#define SDK_BASE_SLIP_H

#include <stddef.h>

enum { PL_SLIP_MIN = 5, PL_SLIP_MAX = 64 };

/* The number of code points of s[0..len) (UTF-8: the bytes that do not continue one). */
int pl_code_points(const char *s, size_t len);

/* Whether typed[0..typed_len) is one slip away from value[0..value_len), a value of
 * PL_SLIP_MIN to PL_SLIP_MAX code points (0 when they are equal). */
int pl_one_slip(const char *typed, size_t typed_len, const char *value, size_t value_len);

#endif
