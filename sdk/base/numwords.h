/* numwords.h — English cardinal numbers as words and as digits, both ways: the recognizer's
 * language model says the digits a bot's examples write ("42" → "forty two",
 * services/asr_lang.c), and the NLU writes as digits the numbers a transcript spells out for a
 * slot whose values write digits ("twelve baker street" → "12 baker street",
 * nlu/model/slot_values.c). One table of words serves both, so what one side spells the
 * other reads back.
 *
 * The words read: zero to nineteen, the tens, "hundred" and "thousand", a leading "a" before
 * them ("a hundred"), an "and" after them ("a hundred and five"), tens and ones joined by a
 * hyphen ("twenty-one"); compared without ASCII case. A run of them makes the largest number
 * it can (below 1,000,000), and the next run starts where that number ends ("one two" → "1 2").
 * Pure functions: any thread.
 */
#ifndef SDK_BASE_NUMWORDS_H
#define SDK_BASE_NUMWORDS_H

#include <stddef.h>

#include "sdk/base/strbuf.h"

/* Appends n (0-9999) in English words, each preceded by a space ("42" → " forty two"). */
void pl_number_spell(pl_strbuf *o, int n);

/* Appends n read in pairs of digits, as people say house numbers and years ("1600" →
 * " sixteen hundred", "221" → " two twenty one", "1905" → " nineteen oh five", "2024" →
 * " twenty twenty four"), and answers 1; answers 0 and appends nothing when n has no such
 * reading apart from pl_number_spell's (under 100, over 9999, whole hundreds under 1000,
 * whole thousands). */
int pl_number_pairs(pl_strbuf *o, int n);

/* text[0..len) with each run of number words replaced by its digits and the words joined by
 * single spaces (whitespace runs and the ends dropped); other words are kept as written.
 * Owned by the caller (pl_free); NULL when out of memory. *changed (may be NULL) is 1 when a
 * number was written as digits. The result is never longer than len bytes. */
char *pl_number_digits(const char *text, size_t len, int *changed);

#endif
