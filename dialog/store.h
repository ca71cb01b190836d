/* store.h — the context store: each user's session, slots, form and turn history in SQLite.
 *
 * One SQLite file in WAL mode (readers never wait for the writer; another process may use
 * the same file), with a versioned schema (PRAGMA user_version) that dm_store_open()
 * migrates forward in one transaction. dialog/store.c is the only file that includes
 * <sqlite3.h> and the one place where SQLite result codes become parley_status values.
 *
 * Threading: a dm_store may be used from many threads; its calls are serialized inside by
 * a mutex (one connection, so the process never waits on itself for SQLite's locks).
 * Durability: synchronous=NORMAL, so a committed turn survives a crash of the process;
 * after a power loss the last turns may be rolled back, never half-written.
 */
#ifndef DIALOG_STORE_H
#define DIALOG_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "dialog/dialog.h"

typedef struct dm_store dm_store;

/* The schema version this build writes. */
#define DM_STORE_SCHEMA 2

/* A user's context between turns. Every pointer is owned by the struct. */
typedef struct dm_user {
    int exists; /* 0: the user has never been seen (the rest is zero) */
    char *session_id;
    int64_t session_no; /* sessions this user has had, the current one included */
    int64_t session_start_ms;
    int64_t last_active_ms;
    uint64_t turns;       /* turns this user has had */
    char *form;           /* the active form, or NULL */
    char *requested_slot; /* the slot that form last asked for, or NULL */
    int confirming;       /* 1 while the form waits for a yes or no */
    size_t n_slots;
    dm_slot *slots;
} dm_user;

/* One turn for the history. Borrowed pointers. */
typedef struct dm_turn_row {
    uint64_t turn_id;
    const char *session_id;
    const char *text;
    const char *nlu_intent;
    float confidence;
    const char *entities_json; /* the NLU's entities as a JSON array of {name, value} */
    const char *intent;        /* the intent acted on */
    const char *action;
    const char *reply;
    const char *form; /* the active form after the turn */
    int64_t t_in_ms, t_reply_ms;
} dm_turn_row;

/* Opens or creates `path` (busy_ms: how long to wait for another process's lock; negative =
 * not at all). Fails with a message naming the file for a read-only file or folder
 * (PARLEY_ERR_IO), a lock held past busy_ms (PARLEY_ERR_IO), a file that is not a database,
 * is corrupt or is another application's database (PARLEY_ERR_FORMAT), a schema newer than
 * DM_STORE_SCHEMA (PARLEY_ERR_UNSUPPORTED); such a file is left as it was. On success *out
 * is owned by the caller (dm_store_close). */
parley_status dm_store_open(const char *path, int busy_ms, dm_store **out);
/* NULL is a no-op. */
void dm_store_close(dm_store *s);

/* Reads a user's context into *out (zeroed first; free with dm_user_clear). */
parley_status dm_store_load(dm_store *s, const char *user_id, dm_user *out);

/* Writes a user's context and the turn's history row in one transaction, then trims the
 * user's history to `history_limit` turns (0 = keep all). On failure nothing changed. */
parley_status dm_store_save(dm_store *s, const char *user_id, const dm_user *u,
                            const dm_turn_row *row, long history_limit);

/* The number of history rows kept for a user, and turn_id's reply (owned, pl_free; NULL
 * when that turn is not kept), for tests and tools. */
parley_status dm_store_history(dm_store *s, const char *user_id, uint64_t turn_id, long *count,
                               char **reply);

void dm_user_clear(dm_user *u);

#endif
