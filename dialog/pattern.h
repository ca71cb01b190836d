/* pattern.h — a text slot's `pattern:`, compiled and matched at a bounded cost.
 *
 * Patterns are PCRE2 syntax, matched case-insensitively on UTF-8 text and searched for
 * anywhere in the value (write ^ and $ to hold the whole value to it); `$` is the end of
 * the value only, and \C (one byte of a character) is refused. dialog/pattern.c is the one
 * file that includes <pcre2.h>, and the one place where PCRE2's results become statuses.
 *
 * Costs are bounded, whatever the pattern and the value: compiling refuses patterns longer
 * than DM_PATTERN_MAX_BYTES or nested deeper than DM_PATTERN_MAX_NEST (and PCRE2 refuses
 * compiled programs over its own 64 K limit), and one search, over every start position
 * together, may take DM_PATTERN_MAX_STEPS steps (a step is one pattern item tried: every
 * backtrack costs one), DM_PATTERN_MAX_DEPTH nested backtracking points and
 * DM_PATTERN_MAX_HEAP_KIB of memory. A search that would need more fails; it never runs
 * on. What a refused or unmatched value means for a turn is slot_value.c's business.
 *
 * Threading: a compiled pattern is read-only; match it from any number of threads.
 */
#ifndef DIALOG_PATTERN_H
#define DIALOG_PATTERN_H

#include <stddef.h>

#include "parley/status.h"

enum {
    DM_PATTERN_MAX_BYTES = 1024,    /* a pattern's length in bytes */
    DM_PATTERN_MAX_NEST = 32,       /* parentheses nested in a pattern */
    DM_PATTERN_MAX_STEPS = 100000,  /* steps of one search, all start positions together */
    DM_PATTERN_MAX_DEPTH = 10000,   /* backtracking points open at once in one search */
    DM_PATTERN_MAX_HEAP_KIB = 4096, /* memory for those backtracking points */
};

typedef struct dm_pattern dm_pattern;

/* Compiles src[0..len). On success *out is owned by the caller (dm_pattern_free). A
 * pattern that does not compile or passes a limit fails with PARLEY_ERR_CONFIG and a
 * detail without a position ("missing closing parenthesis"); *where is then the byte
 * offset in src the complaint is about. */
parley_status dm_pattern_compile(const char *src, size_t len, dm_pattern **out, size_t *where);

/* Searches value[0..len) for p; *found is 1 when it occurs. A search that would pass one
 * of the limits fails with PARLEY_ERR_UNSUPPORTED and a detail naming the limit; invalid
 * UTF-8 in the value is never matched, and is no error. */
parley_status dm_pattern_match(const dm_pattern *p, const char *value, size_t len, int *found);

/* NULL is a no-op. */
void dm_pattern_free(dm_pattern *p);

#endif
