/* store.c — the context store's public calls: picks the back end, and forwards to it.
 *
 * A location with a `postgresql://` or `postgres://` scheme opens store_pg.c, anything
 * else store_sqlite.c. What each call means is in store.h; how it is done, in the back
 * ends. This file also holds what both share: freeing a dm_user and growing its slots.
 */
#include <string.h>

#include "dialog/store_backend.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

enum { DEFAULT_BUSY_MS = 5000, DEFAULT_POOL = 4 };

int dm_store_is_uri(const char *where)
{
    return where && (!strncmp(where, "postgresql://", 13) || !strncmp(where, "postgres://", 11));
}

parley_status dm_store_open(const char *where, const dm_store_params *p, dm_store **out)
{
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "dm_store_open: NULL out");
    *out = NULL;
    if (!where || !*where)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "dm_store_open: no store location");
    dm_store_params q = p ? *p : (dm_store_params){ 0 };
    if (q.busy_ms == 0)
        q.busy_ms = DEFAULT_BUSY_MS;
    if (q.pool_size <= 0)
        q.pool_size = DEFAULT_POOL;
    return dm_store_is_uri(where) ? dm_store_open_pg(where, &q, out)
                                  : dm_store_open_sqlite(where, &q, out);
}

void dm_store_close(dm_store *s)
{
    if (s)
        s->ops->close(s);
}

parley_status dm_store_begin(dm_store *s, const char *user_id, dm_store_turn *t, dm_user *out)
{
    *t = (dm_store_turn){ s, NULL };
    *out = (dm_user){ 0 };
    parley_status st = s->ops->begin(s, user_id, t, out);
    if (st != PARLEY_OK) {
        dm_user_clear(out);
        *t = (dm_store_turn){ 0 };
    }
    return st;
}

parley_status dm_store_commit(dm_store_turn *t, const char *user_id, const dm_user *u,
                              const dm_turn_row *row, long history_limit)
{
    return t->store->ops->commit(t, user_id, u, row, history_limit);
}

void dm_store_abort(dm_store_turn *t)
{
    t->store->ops->abort(t);
}

parley_status dm_store_load(dm_store *s, const char *user_id, dm_user *out)
{
    dm_store_turn t;
    parley_status st = dm_store_begin(s, user_id, &t, out);
    if (st == PARLEY_OK)
        dm_store_abort(&t);
    return st;
}

parley_status dm_store_save(dm_store *s, const char *user_id, const dm_user *u,
                            const dm_turn_row *row, long history_limit)
{
    dm_store_turn t;
    dm_user old;
    parley_status st = dm_store_begin(s, user_id, &t, &old);
    dm_user_clear(&old);
    return st != PARLEY_OK ? st : dm_store_commit(&t, user_id, u, row, history_limit);
}

parley_status dm_store_history(dm_store *s, const char *user_id, uint64_t turn_id, long *count,
                               char **reply)
{
    *count = 0;
    *reply = NULL;
    return s->ops->history(s, user_id, turn_id, count, reply);
}

parley_status dm_store_users(dm_store *s, dm_store_user_fn fn, void *arg)
{
    return s->ops->users(s, fn, arg);
}

parley_status dm_store_turns(dm_store *s, const char *user_id, dm_store_row_fn fn, void *arg)
{
    return s->ops->turns(s, user_id, fn, arg);
}

parley_status dm_store_put(dm_store *s, dm_store_next_fn next, void *arg)
{
    return s->ops->put(s, next, arg);
}

parley_status dm_store_purge(dm_store *s, int64_t before_ms, long *n)
{
    *n = 0;
    return s->ops->purge(s, before_ms, n);
}

void dm_user_clear(dm_user *u)
{
    pl_free(u->session_id);
    pl_free(u->form);
    pl_free(u->requested_slot);
    dm_slots_free(u->slots, u->n_slots);
    *u = (dm_user){ 0 };
}

parley_status dm_user_add_slot(dm_user *u, size_t *cap, const char *name, const char *value)
{
    if (u->n_slots == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        parley_slot *p = pl_realloc(u->slots, nc * sizeof *p);
        if (!p)
            return pl_nomem("reading slots");
        u->slots = p;
        *cap = nc;
    }
    parley_slot *sl = &u->slots[u->n_slots];
    sl->name = pl_strdup(name);
    sl->value = pl_strdup(value);
    u->n_slots++;
    return sl->name && sl->value ? PARLEY_OK : pl_nomem("reading slots");
}
