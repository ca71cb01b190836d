/* names.h — a table from names to indices, so the dialog never scans a list for a name.
 *
 * The domain keeps one per kind of name (intents, slots, responses, forms, actions, a
 * categorical slot's values, a slot's synonyms) and the loader builds short-lived ones (the
 * `entities:` list, the NLU model's labels): finding or adding a name costs O(1) on
 * average, so loading a domain is linear in its size and a duplicate is found as it is
 * added. It is open addressing over FNV-1a, sized once; it is not a general map: the names
 * are borrowed and must outlive the table, the values are indices, and nothing is removed.
 *
 * Threading: build it on one thread; a built table is read-only and may be shared.
 */
#ifndef DIALOG_NAMES_H
#define DIALOG_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "parley/status.h"

typedef struct dm_name_entry {
    const char *name; /* borrowed; NULL = an empty place */
    size_t len;
    int index;
} dm_name_entry;

/* A zeroed table is a valid empty one (dm_names_find answers -1). */
typedef struct dm_names {
    dm_name_entry *entry; /* (mask + 1) places, at most half of them used */
    size_t mask;
} dm_names;

/* FNV-1a over n bytes from h (start with DM_FNV_SEED); also picks reply variations. */
#define DM_FNV_SEED 0xcbf29ce484222325ULL
uint64_t dm_fnv(uint64_t h, const void *p, size_t n);

/* Makes room for up to `cap` names in a zeroed table (dm_names_free). */
parley_status dm_names_init(dm_names *t, size_t cap);

/* Adds name[0..len) → index, unless the name is there already: answers the index it
 * already has, or -1 when it was added. At most `cap` names may be added. */
int dm_names_add(dm_names *t, const char *name, size_t len, int index);

/* The index of name[0..len), or -1. */
int dm_names_find(const dm_names *t, const char *name, size_t len);

/* Frees the places (not the names) and zeroes the table. */
void dm_names_free(dm_names *t);

#endif
