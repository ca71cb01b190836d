/* store.h — the context store: each user's session, slots, form and turn history.
 *
 * One interface, two back ends, chosen by the location dm_store_open() is given: a path is
 * a SQLite file (store_sqlite.c), a `postgresql://` or `postgres://` URI is a PostgreSQL
 * database (store_pg.c). Both hold the same tables with the same meaning, a versioned
 * schema migrated forward in place (a newer schema is refused), and one transaction per
 * turn. The dialog manager talks only to this header and never learns which back end it
 * has; each back end is the one place its library's errors become parley_status values.
 *
 * A turn is dm_store_begin() (reads the user's context under a lock held until the turn
 * ends: PostgreSQL's lock on that user, SQLite's write lock on the file; so turns of one user
 * from several processes apply one at a time) then dm_store_commit() or dm_store_abort(),
 * exactly one of them, on the thread that called dm_store_begin().
 *
 * Threading: a dm_store may be used from many threads at once (SQLite: one connection
 * behind a mutex, which a turn holds from begin to end; PostgreSQL: a pool of connections,
 * a turn holds one from begin to end).
 * Durability: a committed turn survives a crash of the process; a failed one wrote nothing.
 */
#ifndef DIALOG_STORE_H
#define DIALOG_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "dialog/dialog.h"

typedef struct dm_store dm_store;

/* The schema version this build writes (both back ends). */
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
    parley_slot *slots;
} dm_user;

/* One turn for the history. Borrowed pointers (owned ones when dm_store_turns fills it). */
typedef struct dm_turn_row {
    uint64_t turn_id;
    const char *session_id;
    const char *text;
    const char *nlu_intent;
    double confidence;
    const char *entities_json; /* the NLU's entities as a JSON array of {name, value} */
    const char *intent;        /* the intent acted on */
    const char *action;
    const char *reply;
    const char *form; /* the active form after the turn */
    int64_t t_in_ms, t_reply_ms;
} dm_turn_row;

/* How to open a store; zero fields mean defaults. */
typedef struct dm_store_params {
    int busy_ms;   /* how long to wait for a lock another process holds (SQLite), or for a
                      user's lock and any statement (PostgreSQL); negative = not at all;
                      0 = 5000 */
    int pool_size; /* PostgreSQL connections per process; 0 = 4 (SQLite: ignored) */
} dm_store_params;

/* Opens `where`: a SQLite file (created when missing) or a PostgreSQL URI (passwords from
 * the URI, PGPASSWORD or ~/.pgpass, as libpq reads them; never logged or put in an error).
 * Creates or migrates the schema. Fails with a message naming the file or the server (never
 * the password) and the cause: unreachable server, refused login, no such database, a
 * read-only or locked file (PARLEY_ERR_IO); not a database, corrupt, or another
 * application's (PARLEY_ERR_FORMAT); a newer schema (PARLEY_ERR_UNSUPPORTED); PostgreSQL in
 * a build without libpq (PARLEY_ERR_NOT_BUILT). A refused store is left as it was. On
 * success *out is owned by the caller (dm_store_close). p may be NULL. */
parley_status dm_store_open(const char *where, const dm_store_params *p, dm_store **out);
/* NULL is a no-op. No turn may be open. */
void dm_store_close(dm_store *s);
/* Whether `where` names a PostgreSQL database rather than a file. */
int dm_store_is_uri(const char *where);

/* One turn in progress, between dm_store_begin and dm_store_commit/abort. */
typedef struct dm_store_turn {
    dm_store *store;
    void *conn; /* the back end's hold (PostgreSQL: a pooled connection in a transaction) */
} dm_store_turn;

/* Starts user_id's turn: takes the lock (the user's, or the SQLite file's, waiting up to
 * busy_ms for another process) and reads the context into
 * *out (zeroed first; free with dm_user_clear). On failure nothing is held. */
parley_status dm_store_begin(dm_store *s, const char *user_id, dm_store_turn *t, dm_user *out);
/* Writes the user's context and the turn's history row, trims the history to
 * `history_limit` turns (0 = keep all) and commits; ends the turn either way. On failure
 * nothing changed. */
parley_status dm_store_commit(dm_store_turn *t, const char *user_id, const dm_user *u,
                              const dm_turn_row *row, long history_limit);
/* Ends a turn without writing anything. */
void dm_store_abort(dm_store_turn *t);

/* A turn without a decision in between, for tests and tools: load is begin + abort, save
 * is begin + commit. */
parley_status dm_store_load(dm_store *s, const char *user_id, dm_user *out);
parley_status dm_store_save(dm_store *s, const char *user_id, const dm_user *u,
                            const dm_turn_row *row, long history_limit);

/* The number of history rows kept for a user, and turn_id's reply (owned, pl_free; NULL
 * when that turn is not kept), for tests and tools. */
parley_status dm_store_history(dm_store *s, const char *user_id, uint64_t turn_id, long *count,
                               char **reply);

/* Every user id, in byte order, to fn (borrowed for the call); fn's failure stops the walk
 * and is returned. */
typedef parley_status (*dm_store_user_fn)(const char *user_id, void *arg);
parley_status dm_store_users(dm_store *s, dm_store_user_fn fn, void *arg);
/* A user's kept history rows in turn order, to fn (borrowed for the call). */
typedef parley_status (*dm_store_row_fn)(const dm_turn_row *row, void *arg);
parley_status dm_store_turns(dm_store *s, const char *user_id, dm_store_row_fn fn, void *arg);
/* The source of users for dm_store_put: sets *user_id (NULL when none is left), *u, *rows
 * and *n_rows, borrowed until its next call; a failure ends the put and is returned. */
typedef parley_status (*dm_store_next_fn)(void *arg, const char **user_id, const dm_user **u,
                                          const dm_turn_row **rows, size_t *n_rows);
/* Writes every user next() gives (context and history rows, replacing what the store had
 * for that user) in one transaction: all of them, or none when next() or a write fails.
 * For imports. */
parley_status dm_store_put(dm_store *s, dm_store_next_fn next, void *arg);
/* Deletes every user last active before before_ms (wall-clock ms), with their slots and
 * history, in one transaction; *n: how many users. */
parley_status dm_store_purge(dm_store *s, int64_t before_ms, long *n);

void dm_user_clear(dm_user *u);

#endif
