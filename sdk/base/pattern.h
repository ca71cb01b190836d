/* pattern.h — regular expressions compiled and matched at a bounded cost: a text slot's
 * `pattern:` in a domain.yaml (dialog/), a `regex:` of an nlu.yaml as a sparse feature
 * (nlu/sparse/sparse.c).
 *
 * Patterns are PCRE2 syntax, matched case-insensitively on UTF-8 text and searched for
 * anywhere in the value (write ^ and $ to hold the whole value to it); `$` is the end of
 * the value only, and \C (one byte of a character) is refused. sdk/base/pattern.c is the
 * one file that includes <pcre2.h>, and the one place where PCRE2's results become
 * statuses.
 *
 * Costs are bounded, whatever the pattern and the value: compiling refuses patterns longer
 * than PL_PATTERN_MAX_BYTES or nested deeper than PL_PATTERN_MAX_NEST (and PCRE2 refuses
 * compiled programs over its own 64 K limit), and one search, over every start position
 * together, may take PL_PATTERN_MAX_STEPS steps (a step is one pattern item tried: every
 * backtrack costs one), PL_PATTERN_MAX_DEPTH nested backtracking points and
 * PL_PATTERN_MAX_HEAP_KIB of memory. A search that would need more fails; it never runs
 * on. What a refused or unmatched value means is the caller's business.
 *
 * Threading: a compiled pattern is read-only; match it from any number of threads.
 */
#ifndef SDK_BASE_PATTERN_H
#define SDK_BASE_PATTERN_H

#include <stddef.h>

#include "parley/status.h"

enum {
    PL_PATTERN_MAX_BYTES = 1024,    /* a pattern's length in bytes */
    PL_PATTERN_MAX_NEST = 32,       /* parentheses nested in a pattern */
    PL_PATTERN_MAX_STEPS = 100000,  /* steps of one search, all start positions together */
    PL_PATTERN_MAX_DEPTH = 10000,   /* backtracking points open at once in one search */
    PL_PATTERN_MAX_HEAP_KIB = 4096, /* memory for those backtracking points */
};

typedef struct pl_pattern pl_pattern;

/* Compiles src[0..len). On success *out is owned by the caller (pl_pattern_free). A
 * pattern that does not compile or passes a limit fails with PARLEY_ERR_CONFIG and a
 * detail without a position ("missing closing parenthesis"); *where is then the byte
 * offset in src the complaint is about. */
parley_status pl_pattern_compile(const char *src, size_t len, pl_pattern **out, size_t *where);

/* Searches value[0..len) for p; *found is 1 when it occurs. A search that would pass one
 * of the limits fails with PARLEY_ERR_UNSUPPORTED and a detail naming the limit; invalid
 * UTF-8 in the value is never matched, and is no error. */
parley_status pl_pattern_match(const pl_pattern *p, const char *value, size_t len, int *found);
/* The same search from byte `from` of value (a character's start); when found, the first
 * match is the bytes [span[0], span[1]) of value. */
parley_status pl_pattern_find(const pl_pattern *p, const char *value, size_t len, size_t from,
                              int *found, size_t span[2]);

/* NULL is a no-op. */
void pl_pattern_free(pl_pattern *p);

#endif
