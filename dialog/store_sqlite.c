/* store_sqlite.c — the SQLite context store: schema, migrations, one transaction per turn.
 *
 * One file in WAL mode (readers never wait for the writer; another process may use the
 * same file), one connection per process behind a mutex (so the process never waits on
 * itself for SQLite's locks), synchronous=NORMAL (a committed turn survives a crash of the
 * process; after a power loss the last turns may be rolled back, never half-written).
 * This is parley's one boundary with SQLite: sqlite_fail() is the only function that turns
 * a SQLite result code into a parley_status, with a message naming the store file and
 * what to do about it. The store knows users, slots and history rows as strings and
 * numbers; what they mean is dialog.c's business.
 *
 * Schema history (PRAGMA user_version):
 *   1  users (session, form, counters), slots (user, name, value), turns (history)
 *   2  turns.form: the active form after each turn
 * A new version appends one migration step below; opening an older file runs the missing
 * steps in one transaction, and a newer file is refused rather than misread. Whether the
 * file is a parley store at all (or a new, empty one) is checked by reading only, before
 * anything is written to it, so a file that is refused is left exactly as it was.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialog/store_backend.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/sync.h"

typedef struct sq_store {
    dm_store base; /* first: a dm_store * is a sq_store * */
    sqlite3 *db;
    char *path;
    int busy_ms;
    pthread_mutex_t mu;
} sq_store;

static const dm_store_ops sqlite_ops;

static const char *const migrations[DM_STORE_SCHEMA] = {
    /* 0 → 1 */
    "CREATE TABLE users ("
    "  user_id TEXT PRIMARY KEY,"
    "  session_id TEXT NOT NULL,"
    "  session_no INTEGER NOT NULL,"
    "  session_start INTEGER NOT NULL,"
    "  last_active INTEGER NOT NULL,"
    "  turns INTEGER NOT NULL,"
    "  form TEXT,"
    "  requested_slot TEXT,"
    "  confirming INTEGER NOT NULL DEFAULT 0"
    ") WITHOUT ROWID;"
    "CREATE TABLE slots ("
    "  user_id TEXT NOT NULL,"
    "  name TEXT NOT NULL,"
    "  value TEXT NOT NULL,"
    "  PRIMARY KEY (user_id, name)"
    ") WITHOUT ROWID;"
    "CREATE TABLE turns ("
    "  user_id TEXT NOT NULL,"
    "  turn_id INTEGER NOT NULL,"
    "  session_id TEXT NOT NULL,"
    "  text TEXT,"
    "  nlu_intent TEXT,"
    "  confidence REAL,"
    "  entities TEXT,"
    "  intent TEXT,"
    "  action TEXT,"
    "  reply TEXT,"
    "  t_in INTEGER,"
    "  t_reply INTEGER,"
    "  PRIMARY KEY (user_id, turn_id)"
    ") WITHOUT ROWID;",
    /* 1 → 2 */
    "ALTER TABLE turns ADD COLUMN form TEXT;",
};

/* ---- the SQLite boundary ------------------------------------------------------------- */

static parley_status sqlite_fail(sq_store *s, int rc, const char *doing)
{
    const char *path = s->path;
    const char *detail = s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_NOMEM: return pl_nomem("store %s: %s", path, doing);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return pl_fail(PARLEY_ERR_IO,
                       "store %s: locked by another connection or process while %s (waited %d ms); "
                       "nothing was changed, try again when it is released",
                       path, doing, s->busy_ms > 0 ? s->busy_ms : 0);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
        return pl_fail(PARLEY_ERR_IO,
                       "store %s: cannot write while %s (%s): the file or its folder is read-only; "
                       "parley needs to write the store and its -wal and -shm files beside it",
                       path, doing, detail);
    case SQLITE_CANTOPEN:
        return pl_fail(PARLEY_ERR_IO,
                       "store %s: cannot open it while %s (%s): check that the folder "
                       "exists and is writable",
                       path, doing, detail);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
        return pl_fail(
                PARLEY_ERR_FORMAT,
                "store %s: not a SQLite database, or corrupt (%s, while %s); parley left the "
                "file as it was: restore a backup or move it away to start afresh",
                path, detail, doing);
    case SQLITE_FULL:
    case SQLITE_IOERR:
        return pl_fail(PARLEY_ERR_IO, "store %s: input/output error while %s (%s)", path, doing,
                       detail);
    default:
        return pl_fail(PARLEY_ERR_IO, "store %s: SQLite error while %s: %s", path, doing, detail);
    }
}

/* ---- small helpers over the boundary --------------------------------------------------- */

static parley_status exec(sq_store *s, const char *sql, const char *doing)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? PARLEY_OK : sqlite_fail(s, rc, doing);
}

static parley_status prepare(sq_store *s, const char *sql, sqlite3_stmt **st, const char *doing)
{
    int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
    return rc == SQLITE_OK ? PARLEY_OK : sqlite_fail(s, rc, doing);
}

/* Runs a statement with no result rows to its end, and finalizes it. */
static parley_status run(sq_store *s, sqlite3_stmt *st, const char *doing)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? PARLEY_OK : sqlite_fail(s, rc, doing);
}

/* Binds text or NULL; SQLITE_TRANSIENT makes SQLite copy it. */
static int bind_text(sqlite3_stmt *st, int i, const char *v)
{
    return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static parley_status column_dup(sqlite3_stmt *st, int i, char **out)
{
    const unsigned char *v = sqlite3_column_text(st, i);
    *out = NULL;
    if (!v)
        return PARLEY_OK;
    *out = pl_strdup((const char *)v);
    return *out ? PARLEY_OK : pl_nomem("reading the store");
}

/* ---- open and migrate ---------------------------------------------------------------- */

/* Runs a statement that answers one row (a PRAGMA) and copies its first column's text. */
static parley_status one_text(sq_store *s, const char *sql, const char *doing, char *buf,
                              size_t cap)
{
    sqlite3_stmt *st;
    parley_status ps = prepare(s, sql, &st, doing);
    if (ps != PARLEY_OK)
        return ps;
    int rc = sqlite3_step(st);
    const char *v = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    snprintf(buf, cap, "%s", v ? v : "");
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? PARLEY_OK : sqlite_fail(s, rc, doing);
}

static parley_status user_version(sq_store *s, int *out)
{
    char v[32];
    parley_status ps =
            one_text(s, "PRAGMA user_version", "reading the schema version", v, sizeof v);
    *out = ps != PARLEY_OK ? 0 : atoi(v);
    return ps;
}

static parley_status quick_check(sq_store *s)
{
    char r[256];
    parley_status ps = one_text(s, "PRAGMA quick_check(1)", "checking the file", r, sizeof r);
    if (ps == PARLEY_OK && strcmp(r, "ok") != 0)
        ps = pl_fail(PARLEY_ERR_FORMAT,
                     "store %s: corrupt (%s); parley left the file as it was: restore a backup or "
                     "move it away to start afresh",
                     s->path, r);
    return ps;
}

static parley_status too_new(sq_store *s, int v)
{
    return pl_fail(PARLEY_ERR_UNSUPPORTED,
                   "store %s: schema version %d is newer than this parley knows (%d); use a "
                   "newer parley, or another store file",
                   s->path, v, DM_STORE_SCHEMA);
}

/* Refuses, by reading only, a file that is not a parley store: a schema version newer than
 * this build's, a database with tables but no parley version (another application's), or
 * a parley version without parley's tables. A new, empty database passes. */
static parley_status check_ours(sq_store *s)
{
    int v = 0;
    sqlite3_stmt *st;
    parley_status ps = user_version(s, &v);
    if (ps != PARLEY_OK)
        return ps;
    if (v > DM_STORE_SCHEMA)
        return too_new(s, v);
    if ((ps = prepare(s,
                      "SELECT (SELECT count(*) FROM sqlite_master), (SELECT count(*) FROM "
                      "sqlite_master WHERE type = 'table' AND name IN ('users', 'slots', "
                      "'turns'))",
                      &st, "reading the schema")) != PARLEY_OK)
        return ps;
    int rc = sqlite3_step(st);
    int objects = sqlite3_column_int(st, 0), ours = sqlite3_column_int(st, 1);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return sqlite_fail(s, rc, "reading the schema");
    if (v == 0 && objects > 0)
        return pl_fail(PARLEY_ERR_FORMAT,
                       "store %s: a SQLite database of another application (%d schema objects "
                       "and no parley schema version); parley left it as it was: give the "
                       "dialog a store file of its own",
                       s->path, objects);
    if (v > 0 && ours < 3)
        return pl_fail(PARLEY_ERR_FORMAT,
                       "store %s: schema version %d, but not parley's tables (users, slots, "
                       "turns); parley left it as it was: give the dialog a store file of its "
                       "own",
                       s->path, v);
    return PARLEY_OK;
}

/* Brings the schema to DM_STORE_SCHEMA in one write transaction, which also proves the
 * file is writable and not locked by someone else. */
static parley_status migrate(sq_store *s)
{
    parley_status ps = exec(s, "BEGIN IMMEDIATE", "starting the schema check");
    if (ps != PARLEY_OK)
        return ps;
    int v = 0;
    if ((ps = user_version(s, &v)) != PARLEY_OK)
        goto fail;
    /* Checked again under the lock: another process may have moved on since. */
    if (v > DM_STORE_SCHEMA) {
        ps = too_new(s, v);
        goto fail;
    }
    for (; v < DM_STORE_SCHEMA; v++) {
        char sql[64];
        if ((ps = exec(s, migrations[v], "migrating the schema")) != PARLEY_OK)
            goto fail;
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v + 1);
        if ((ps = exec(s, sql, "migrating the schema")) != PARLEY_OK)
            goto fail;
    }
    if ((ps = exec(s, "COMMIT", "committing the schema")) != PARLEY_OK)
        goto fail;
    return PARLEY_OK;
fail:
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return ps;
}

static parley_status set_wal(sq_store *s)
{
    char mode[32];
    parley_status ps =
            one_text(s, "PRAGMA journal_mode = WAL", "switching to WAL mode", mode, sizeof mode);
    if (ps == PARLEY_OK && strcmp(mode, "wal") != 0)
        ps = pl_fail(PARLEY_ERR_IO,
                     "store %s: cannot use WAL mode (journal mode stays '%s'); "
                     "is the file on a file system without shared memory?",
                     s->path, mode);
    return ps;
}

static void sq_close(dm_store *base)
{
    sq_store *s = (sq_store *)base;
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->mu);
    pl_free(s->path);
    pl_free(s);
}

parley_status dm_store_open_sqlite(const char *path, const dm_store_params *p, dm_store **out)
{
    int busy_ms = p->busy_ms;
    sq_store *s = pl_calloc(1, sizeof *s);
    if (!s)
        return pl_nomem("opening the store");
    s->base.ops = &sqlite_ops;
    s->busy_ms = busy_ms;
    s->path = pl_strdup(path);
    parley_status ps = s->path ? pl_mutex_init(&s->mu, path) : pl_nomem("opening the store");
    if (ps != PARLEY_OK) {
        pl_free(s->path);
        pl_free(s);
        return ps;
    }
    int rc = sqlite3_open_v2(
            path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        ps = sqlite_fail(s, rc, "opening");
        goto fail;
    }
    sqlite3_extended_result_codes(s->db, 1);
    if (sqlite3_db_readonly(s->db, "main") == 1) {
        ps = sqlite_fail(s, SQLITE_READONLY, "opening");
        goto fail;
    }
    sqlite3_busy_timeout(s->db, busy_ms > 0 ? busy_ms : 0);
    /* Read-only checks first: a file refused by them is left exactly as it was. */
    if ((ps = quick_check(s)) != PARLEY_OK || (ps = check_ours(s)) != PARLEY_OK ||
        (ps = set_wal(s)) != PARLEY_OK ||
        (ps = exec(s, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", "configuring")) !=
                PARLEY_OK ||
        (ps = migrate(s)) != PARLEY_OK)
        goto fail;
    *out = &s->base;
    return PARLEY_OK;
fail:
    sq_close(&s->base);
    return ps;
}

/* ---- one user's context -------------------------------------------------------------- */

static parley_status load_slots(sq_store *s, const char *user_id, dm_user *u)
{
    sqlite3_stmt *st;
    parley_status ps = prepare(s, "SELECT name, value FROM slots WHERE user_id = ? ORDER BY name",
                               &st, "reading slots");
    if (ps != PARLEY_OK)
        return ps;
    bind_text(st, 1, user_id);
    int rc;
    size_t cap = 0;
    while (ps == PARLEY_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        ps = dm_user_add_slot(u, &cap, (const char *)sqlite3_column_text(st, 0),
                              (const char *)sqlite3_column_text(st, 1));
    if (ps == PARLEY_OK && rc != SQLITE_DONE)
        ps = sqlite_fail(s, rc, "reading slots");
    sqlite3_finalize(st);
    return ps;
}

static parley_status load_user(sq_store *s, const char *user_id, dm_user *u)
{
    sqlite3_stmt *st;
    parley_status ps =
            prepare(s,
                    "SELECT session_id, session_no, session_start, last_active, turns, form, "
                    "requested_slot, confirming FROM users WHERE user_id = ?",
                    &st, "reading a user");
    if (ps != PARLEY_OK)
        return ps;
    bind_text(st, 1, user_id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        u->exists = 1;
        u->session_no = sqlite3_column_int64(st, 1);
        u->session_start_ms = sqlite3_column_int64(st, 2);
        u->last_active_ms = sqlite3_column_int64(st, 3);
        u->turns = (uint64_t)sqlite3_column_int64(st, 4);
        u->confirming = sqlite3_column_int(st, 7);
        if ((ps = column_dup(st, 0, &u->session_id)) == PARLEY_OK &&
            (ps = column_dup(st, 5, &u->form)) == PARLEY_OK)
            ps = column_dup(st, 6, &u->requested_slot);
    } else if (rc != SQLITE_DONE) {
        ps = sqlite_fail(s, rc, "reading a user");
    }
    sqlite3_finalize(st);
    if (ps == PARLEY_OK && u->exists)
        ps = load_slots(s, user_id, u);
    return ps;
}

/* A turn is one write transaction from the read to the commit (BEGIN IMMEDIATE takes
 * SQLite's write lock, waiting busy_ms for another process to release it), so a turn of the
 * same user in another process on this file waits and then reads what this one wrote: two
 * processes never give out the same turn number. The process's mutex is held as long, since
 * its one connection holds one transaction at a time; sq_commit or sq_abort releases both. */
static parley_status sq_begin(dm_store *base, const char *user_id, dm_store_turn *t, dm_user *out)
{
    sq_store *s = (sq_store *)base;
    (void)t;
    pthread_mutex_lock(&s->mu);
    parley_status ps = exec(s, "BEGIN IMMEDIATE", "starting a turn");
    if (ps == PARLEY_OK && (ps = load_user(s, user_id, out)) != PARLEY_OK)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    if (ps != PARLEY_OK)
        pthread_mutex_unlock(&s->mu);
    return ps;
}

static void sq_abort(dm_store_turn *t)
{
    sq_store *s = (sq_store *)t->store;
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&s->mu);
}

static parley_status save_user(sq_store *s, const char *user_id, const dm_user *u)
{
    sqlite3_stmt *st;
    parley_status ps =
            prepare(s,
                    "INSERT OR REPLACE INTO users (user_id, session_id, session_no, "
                    "session_start, last_active, turns, form, requested_slot, confirming) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    &st, "saving a user");
    if (ps != PARLEY_OK)
        return ps;
    bind_text(st, 1, user_id);
    bind_text(st, 2, u->session_id);
    sqlite3_bind_int64(st, 3, u->session_no);
    sqlite3_bind_int64(st, 4, u->session_start_ms);
    sqlite3_bind_int64(st, 5, u->last_active_ms);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)u->turns);
    bind_text(st, 7, u->form);
    bind_text(st, 8, u->requested_slot);
    sqlite3_bind_int(st, 9, u->confirming);
    if ((ps = run(s, st, "saving a user")) != PARLEY_OK)
        return ps;

    if ((ps = prepare(s, "DELETE FROM slots WHERE user_id = ?", &st, "saving slots")) != PARLEY_OK)
        return ps;
    bind_text(st, 1, user_id);
    if ((ps = run(s, st, "saving slots")) != PARLEY_OK)
        return ps;
    for (size_t i = 0; i < u->n_slots; i++) {
        if ((ps = prepare(s, "INSERT INTO slots (user_id, name, value) VALUES (?, ?, ?)", &st,
                          "saving slots")) != PARLEY_OK)
            return ps;
        bind_text(st, 1, user_id);
        bind_text(st, 2, u->slots[i].name);
        bind_text(st, 3, u->slots[i].value);
        if ((ps = run(s, st, "saving slots")) != PARLEY_OK)
            return ps;
    }
    return PARLEY_OK;
}

static parley_status save_turn(sq_store *s, const char *user_id, const dm_turn_row *r, long limit)
{
    sqlite3_stmt *st;
    parley_status ps =
            prepare(s,
                    "INSERT INTO turns (user_id, turn_id, session_id, text, "
                    "nlu_intent, confidence, entities, intent, action, reply, t_in, t_reply, "
                    "form) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    &st, "saving the turn");
    if (ps != PARLEY_OK)
        return ps;
    bind_text(st, 1, user_id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)r->turn_id);
    bind_text(st, 3, r->session_id);
    bind_text(st, 4, r->text);
    bind_text(st, 5, r->nlu_intent);
    sqlite3_bind_double(st, 6, r->confidence);
    bind_text(st, 7, r->entities_json);
    bind_text(st, 8, r->intent);
    bind_text(st, 9, r->action);
    bind_text(st, 10, r->reply);
    sqlite3_bind_int64(st, 11, r->t_in_ms);
    sqlite3_bind_int64(st, 12, r->t_reply_ms);
    bind_text(st, 13, r->form);
    if ((ps = run(s, st, "saving the turn")) != PARLEY_OK)
        return ps;
    if (limit <= 0 || r->turn_id <= (uint64_t)limit)
        return PARLEY_OK;
    if ((ps = prepare(s, "DELETE FROM turns WHERE user_id = ? AND turn_id <= ?", &st,
                      "trimming the history")) != PARLEY_OK)
        return ps;
    bind_text(st, 1, user_id);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)(r->turn_id - (uint64_t)limit));
    return run(s, st, "trimming the history");
}

/* What one write transaction does; `a` is the caller's. */
typedef parley_status (*write_fn)(sq_store *s, const void *a);

/* Runs fn in one write transaction under the mutex; on failure it is rolled back. */
static parley_status in_write(sq_store *s, const char *doing, write_fn fn, const void *a)
{
    pthread_mutex_lock(&s->mu);
    parley_status ps = exec(s, "BEGIN IMMEDIATE", doing);
    if (ps == PARLEY_OK) {
        if ((ps = fn(s, a)) == PARLEY_OK)
            ps = exec(s, "COMMIT", doing);
        if (ps != PARLEY_OK)
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    }
    pthread_mutex_unlock(&s->mu);
    return ps;
}

/* A user and rows to write: one turn (commit, trimmed to limit) or an imported user. */
typedef struct user_write {
    const char *user_id;
    const dm_user *u;
    const dm_turn_row *rows;
    size_t n_rows;
    long limit;
    int replace_history;
} user_write;

static parley_status write_user(sq_store *s, const void *a)
{
    const user_write *w = a;
    sqlite3_stmt *st;
    parley_status ps = save_user(s, w->user_id, w->u);
    if (ps == PARLEY_OK && w->replace_history) {
        if ((ps = prepare(s, "DELETE FROM turns WHERE user_id = ?", &st, "replacing history")) !=
            PARLEY_OK)
            return ps;
        bind_text(st, 1, w->user_id);
        ps = run(s, st, "replacing history");
    }
    for (size_t i = 0; ps == PARLEY_OK && i < w->n_rows; i++)
        ps = save_turn(s, w->user_id, &w->rows[i], w->limit);
    return ps;
}

/* Ends the transaction sq_begin opened: writes, commits, or rolls back on failure. */
static parley_status sq_commit(dm_store_turn *t, const char *user_id, const dm_user *u,
                               const dm_turn_row *row, long history_limit)
{
    sq_store *s = (sq_store *)t->store;
    user_write w = { user_id, u, row, 1, history_limit, 0 };
    parley_status ps = write_user(s, &w);
    if (ps == PARLEY_OK)
        ps = exec(s, "COMMIT", "saving the turn");
    if (ps != PARLEY_OK)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&s->mu);
    return ps;
}

typedef struct put_args {
    dm_store_next_fn next;
    void *arg;
} put_args;

/* Every user the source gives, each replacing what the store held for it. */
static parley_status put_all(sq_store *s, const void *a)
{
    const put_args *pa = a;
    parley_status ps;
    for (;;) {
        user_write w = { .replace_history = 1 };
        if ((ps = pa->next(pa->arg, &w.user_id, &w.u, &w.rows, &w.n_rows)) != PARLEY_OK ||
            !w.user_id)
            return ps;
        if ((ps = write_user(s, &w)) != PARLEY_OK)
            return ps;
    }
}

static parley_status sq_put(dm_store *base, dm_store_next_fn next, void *arg)
{
    put_args a = { next, arg };
    return in_write((sq_store *)base, "importing users", put_all, &a);
}

typedef struct purge_args {
    int64_t before_ms;
    long *n;
} purge_args;

static parley_status purge_old(sq_store *s, const void *a)
{
    const purge_args *pa = a;
    static const char *const sql[] = {
        "DELETE FROM slots WHERE user_id IN (SELECT user_id FROM users WHERE last_active < ?)",
        "DELETE FROM turns WHERE user_id IN (SELECT user_id FROM users WHERE last_active < ?)",
        "DELETE FROM users WHERE last_active < ?",
    };
    parley_status ps = PARLEY_OK;
    for (int i = 0; ps == PARLEY_OK && i < 3; i++) {
        sqlite3_stmt *st;
        if ((ps = prepare(s, sql[i], &st, "purging old users")) != PARLEY_OK)
            return ps;
        sqlite3_bind_int64(st, 1, pa->before_ms);
        if ((ps = run(s, st, "purging old users")) == PARLEY_OK && i == 2)
            *pa->n = (long)sqlite3_changes(s->db);
    }
    return ps;
}

static parley_status sq_purge(dm_store *base, int64_t before_ms, long *n)
{
    purge_args a = { before_ms, n };
    return in_write((sq_store *)base, "purging old users", purge_old, &a);
}

/* ---- reading for tools ----------------------------------------------------------------- */

static parley_status sq_history(dm_store *base, const char *user_id, uint64_t turn_id, long *count,
                                char **reply)
{
    sq_store *s = (sq_store *)base;
    sqlite3_stmt *st;
    pthread_mutex_lock(&s->mu);
    parley_status ps = prepare(s,
                               "SELECT count(*), (SELECT reply FROM turns WHERE user_id = ?1 AND "
                               "turn_id = ?2) FROM turns WHERE user_id = ?1",
                               &st, "reading history");
    if (ps == PARLEY_OK) {
        bind_text(st, 1, user_id);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)turn_id);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *count = (long)sqlite3_column_int64(st, 0);
            ps = column_dup(st, 1, reply);
        } else {
            ps = sqlite_fail(s, rc, "reading history");
        }
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&s->mu);
    return ps;
}

/* The user ids, copied out under the mutex, so fn may call the store. */
static parley_status sq_users(dm_store *base, dm_store_user_fn fn, void *arg)
{
    sq_store *s = (sq_store *)base;
    dm_user ids = { 0 }; /* the ids as slot names: a growing list of strings */
    size_t cap = 0;
    sqlite3_stmt *st;
    pthread_mutex_lock(&s->mu);
    parley_status ps =
            prepare(s, "SELECT user_id FROM users ORDER BY user_id", &st, "listing users");
    if (ps == PARLEY_OK) {
        int rc;
        while (ps == PARLEY_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
            ps = dm_user_add_slot(&ids, &cap, (const char *)sqlite3_column_text(st, 0), "");
        if (ps == PARLEY_OK && rc != SQLITE_DONE)
            ps = sqlite_fail(s, rc, "listing users");
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; ps == PARLEY_OK && i < ids.n_slots; i++)
        ps = fn(ids.slots[i].name, arg);
    dm_user_clear(&ids);
    return ps;
}

static const char *col(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

/* Rows go to fn under the mutex: fn must not call the store. */
static parley_status sq_turns(dm_store *base, const char *user_id, dm_store_row_fn fn, void *arg)
{
    sq_store *s = (sq_store *)base;
    sqlite3_stmt *st;
    pthread_mutex_lock(&s->mu);
    parley_status ps = prepare(s,
                               "SELECT turn_id, session_id, text, nlu_intent, confidence, "
                               "entities, intent, action, reply, form, t_in, t_reply FROM turns "
                               "WHERE user_id = ? ORDER BY turn_id",
                               &st, "reading history");
    if (ps == PARLEY_OK) {
        bind_text(st, 1, user_id);
        int rc;
        while (ps == PARLEY_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            dm_turn_row r = {
                .turn_id = (uint64_t)sqlite3_column_int64(st, 0),
                .session_id = col(st, 1),
                .text = col(st, 2),
                .nlu_intent = col(st, 3),
                .confidence = sqlite3_column_double(st, 4),
                .entities_json = col(st, 5),
                .intent = col(st, 6),
                .action = col(st, 7),
                .reply = col(st, 8),
                .form = col(st, 9),
                .t_in_ms = sqlite3_column_int64(st, 10),
                .t_reply_ms = sqlite3_column_int64(st, 11),
            };
            ps = fn(&r, arg);
        }
        if (ps == PARLEY_OK && rc != SQLITE_DONE)
            ps = sqlite_fail(s, rc, "reading history");
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&s->mu);
    return ps;
}

static const dm_store_ops sqlite_ops = {
    .begin = sq_begin,
    .commit = sq_commit,
    .abort = sq_abort,
    .history = sq_history,
    .users = sq_users,
    .turns = sq_turns,
    .put = sq_put,
    .purge = sq_purge,
    .close = sq_close,
};
