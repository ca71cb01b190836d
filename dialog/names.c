/* names.c — the name → index table of names.h: open addressing with linear probing.
 *
 * The table has a power-of-two number of places, at least twice the names it may hold, so
 * a probe meets an empty place soon. It does not own or copy the names it indexes.
 */
#include <string.h>

#include "dialog/names.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

uint64_t dm_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

parley_status dm_names_init(dm_names *t, size_t cap)
{
    size_t places = 8;
    while (places < 2 * cap)
        places *= 2;
    t->entry = pl_calloc(places, sizeof *t->entry);
    if (!t->entry)
        return pl_nomem("a table of %zu names", cap);
    t->mask = places - 1;
    return PARLEY_OK;
}

/* The place holding name[0..len), or the empty place where it would go. */
static dm_name_entry *place(const dm_names *t, const char *name, size_t len)
{
    size_t i = (size_t)dm_fnv(DM_FNV_SEED, name, len) & t->mask;
    while (t->entry[i].name && (t->entry[i].len != len || memcmp(t->entry[i].name, name, len) != 0))
        i = (i + 1) & t->mask;
    return &t->entry[i];
}

int dm_names_add(dm_names *t, const char *name, size_t len, int index)
{
    dm_name_entry *e = place(t, name, len);
    if (e->name)
        return e->index;
    *e = (dm_name_entry){ name, len, index };
    return -1;
}

int dm_names_find(const dm_names *t, const char *name, size_t len)
{
    if (!t->entry)
        return -1;
    const dm_name_entry *e = place(t, name, len);
    return e->name ? e->index : -1;
}

void dm_names_free(dm_names *t)
{
    pl_free(t->entry);
    *t = (dm_names){ 0 };
}
