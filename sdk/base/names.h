/* names.h — a table from names to indices, so no module scans a list for a name.
 *
 * The dialog keeps one per kind of name in a domain, the data sets one per label list while
 * they are built: finding or adding a name costs O(1) on average, so loading is linear in
 * the input and a duplicate is found as it is added. It is open addressing over FNV-1a that
 * grows by doubling; it is not a general map: the names are borrowed and must outlive the
 * table (and stay where they are), the values are indices, and nothing is removed.
 *
 * Threading: build it on one thread; a built table is read-only and may be shared.
 */
#ifndef SDK_BASE_NAMES_H
#define SDK_BASE_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "parley/status.h"

typedef struct pl_name_entry {
    const char *name; /* borrowed; NULL = an empty place */
    size_t len;
    int index;
} pl_name_entry;

/* A zeroed table is a valid empty one (pl_names_find answers -1). */
typedef struct pl_names {
    pl_name_entry *entry; /* (mask + 1) places, at most half of them used */
    size_t mask;
} pl_names;

/* FNV-1a over n bytes from h (start with PL_FNV_SEED): the table's hash, and the one the
 * dialog picks reply variations with and the data sets find repeated texts with. */
#define PL_FNV_SEED 0xcbf29ce484222325ULL
uint64_t pl_fnv(uint64_t h, const void *p, size_t n);

/* Makes room for `cap` names in all (pl_names_free): on a zeroed table, or on one that
 * holds names already, which then moves to a bigger array. Growing one name at a time
 * costs amortized O(1): the places double. */
parley_status pl_names_reserve(pl_names *t, size_t cap);

/* Adds name[0..len) → index, unless the name is there already: answers the index it
 * already has, or -1 when it was added. Room for it must have been reserved. */
int pl_names_add(pl_names *t, const char *name, size_t len, int index);

/* The index of name[0..len), or -1. */
int pl_names_find(const pl_names *t, const char *name, size_t len);

/* Frees the places (not the names) and zeroes the table. */
void pl_names_free(pl_names *t);

#endif
