/* store_backend.h — what a context store back end provides to store.c.
 *
 * store.c holds the public calls of store.h and chooses the back end from the location;
 * each back end (store_sqlite.c, store_pg.c) fills a dm_store_ops and embeds a dm_store as
 * the first member of its own struct. Every call but open has the store's contract in
 * store.h; the back end does the locking it needs. Only store files include this header.
 */
#ifndef DIALOG_STORE_BACKEND_H
#define DIALOG_STORE_BACKEND_H

#include "dialog/store.h"

typedef struct dm_store_ops {
    parley_status (*begin)(dm_store *s, const char *user_id, dm_store_turn *t, dm_user *out);
    parley_status (*commit)(dm_store_turn *t, const char *user_id, const dm_user *u,
                            const dm_turn_row *row, long history_limit);
    void (*abort)(dm_store_turn *t);
    parley_status (*history)(dm_store *s, const char *user_id, uint64_t turn_id, long *count,
                             char **reply);
    parley_status (*users)(dm_store *s, dm_store_user_fn fn, void *arg);
    parley_status (*turns)(dm_store *s, const char *user_id, dm_store_row_fn fn, void *arg);
    parley_status (*put)(dm_store *s, dm_store_next_fn next, void *arg);
    parley_status (*purge)(dm_store *s, int64_t before_ms, long *n);
    void (*close)(dm_store *s);
} dm_store_ops;

struct dm_store {
    const dm_store_ops *ops;
};

/* The back ends' open calls; p is complete (defaults filled in). */
parley_status dm_store_open_sqlite(const char *path, const dm_store_params *p, dm_store **out);
parley_status dm_store_open_pg(const char *uri, const dm_store_params *p, dm_store **out);

/* Appends a copy of (name, value) to u's slots; for the back ends' readers. */
parley_status dm_user_add_slot(dm_user *u, size_t *cap, const char *name, const char *value);

#endif
