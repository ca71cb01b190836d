/* names.c — the name → index table of names.h: open addressing with linear probing.
 *
 * The table has a power-of-two number of places, at least twice the names it may hold, so
 * a probe meets an empty place soon. It does not own or copy the names it indexes.
 */
#include <string.h>

#include "sdk/base/names.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

uint64_t pl_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* The place holding name[0..len), or the empty place where it would go. */
static pl_name_entry *place(const pl_names *t, const char *name, size_t len)
{
    size_t i = (size_t)pl_fnv(PL_FNV_SEED, name, len) & t->mask;
    while (t->entry[i].name && (t->entry[i].len != len || memcmp(t->entry[i].name, name, len) != 0))
        i = (i + 1) & t->mask;
    return &t->entry[i];
}

parley_status pl_names_reserve(pl_names *t, size_t cap)
{
    size_t places = 8;
    while (places < 2 * cap)
        places *= 2;
    if (t->entry && places <= t->mask + 1)
        return PARLEY_OK;
    pl_names bigger = { pl_calloc(places, sizeof *bigger.entry), places - 1 };
    if (!bigger.entry)
        return pl_nomem("a table of %zu names", cap);
    for (size_t i = 0; t->entry && i <= t->mask; i++)
        if (t->entry[i].name)
            *place(&bigger, t->entry[i].name, t->entry[i].len) = t->entry[i];
    pl_free(t->entry);
    *t = bigger;
    return PARLEY_OK;
}

int pl_names_add(pl_names *t, const char *name, size_t len, int index)
{
    pl_name_entry *e = place(t, name, len);
    if (e->name)
        return e->index;
    *e = (pl_name_entry){ name, len, index };
    return -1;
}

int pl_names_find(const pl_names *t, const char *name, size_t len)
{
    if (!t->entry)
        return -1;
    const pl_name_entry *e = place(t, name, len);
    return e->name ? e->index : -1;
}

void pl_names_free(pl_names *t)
{
    pl_free(t->entry);
    *t = (pl_names){ 0 };
}
