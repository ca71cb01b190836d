/* store_pg.c — the PostgreSQL context store: a pool of connections, the schema, per-user locks.
 *
 * This is parley's one boundary with libpq: pg_fail() and conn_fail() are where libpq's
 * results become a parley_status, with a message naming the server (host, port, database,
 * user: never the password, which may come from the URI, PGPASSWORD or ~/.pgpass) and the
 * cause. The tables and their meaning are store_sqlite.c's (same names, same columns), with
 * the schema version in a table of its own (parley_schema) and migrated in place under an
 * advisory lock, so replicas starting together migrate once.
 *
 * Connections: pool_size per store, opened when first needed; a turn holds one from begin
 * to commit or abort, inside one transaction whose first statement takes the user's
 * advisory lock (pg_advisory_xact_lock on a 64-bit hash of the user id), so turns of one
 * user from any number of processes apply one at a time and each reads what the last one
 * wrote. A connection the server dropped (a restart) is closed and opened again on its next
 * use; a turn whose first statement finds it dropped retries once on a new one, since
 * nothing of that turn was done yet. Timeouts: lock_timeout and statement_timeout from
 * busy_ms, connect_timeout 5 s unless the URI says otherwise. Not here: what the rows mean
 * (dialog.c), choosing this back end (store.c).
 */
#include "parley_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialog/store_backend.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

#if PARLEY_HAVE_POSTGRESQL

#include <libpq-fe.h>
#include <pthread.h>

#include "sdk/base/names.h"
#include "sdk/base/sync.h"

typedef struct pg_store {
    dm_store base; /* first: a dm_store * is a pg_store * */
    char *uri;     /* as given; holds the password when the URI does: never printed */
    char *where;   /* "postgresql server HOST:PORT database DB user USER", for messages */
    int busy_ms;
    int n;             /* pool size */
    PGconn **conns;    /* (n) NULL: not connected (yet, or since the server dropped it) */
    unsigned char *in; /* (n) 1: held by a turn or a call */
    pthread_mutex_t mu;
    pthread_cond_t freed;
} pg_store;

static const dm_store_ops pg_ops;

/* Version 2 in two steps, as in SQLite, so a version-1 database migrates the same way. */
static const char *const migrations[DM_STORE_SCHEMA] = {
    /* 0 → 1 */
    "CREATE TABLE users ("
    "  user_id TEXT PRIMARY KEY,"
    "  session_id TEXT NOT NULL,"
    "  session_no BIGINT NOT NULL,"
    "  session_start BIGINT NOT NULL,"
    "  last_active BIGINT NOT NULL,"
    "  turns BIGINT NOT NULL,"
    "  form TEXT,"
    "  requested_slot TEXT,"
    "  confirming INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX users_last_active ON users (last_active);"
    "CREATE TABLE slots ("
    "  user_id TEXT NOT NULL,"
    "  name TEXT NOT NULL,"
    "  value TEXT NOT NULL,"
    "  PRIMARY KEY (user_id, name));"
    "CREATE TABLE turns ("
    "  user_id TEXT NOT NULL,"
    "  turn_id BIGINT NOT NULL,"
    "  session_id TEXT NOT NULL,"
    "  text TEXT,"
    "  nlu_intent TEXT,"
    "  confidence DOUBLE PRECISION,"
    "  entities TEXT,"
    "  intent TEXT,"
    "  action TEXT,"
    "  reply TEXT,"
    "  t_in BIGINT,"
    "  t_reply BIGINT,"
    "  PRIMARY KEY (user_id, turn_id));",
    /* 1 → 2 */
    "ALTER TABLE turns ADD COLUMN form TEXT;",
};

/* The key of the advisory lock that guards migrations (any fixed number parley owns). */
#define MIGRATION_LOCK "7061726c65790001"

/* ---- the libpq boundary ---------------------------------------------------------------- */

/* One line of libpq's message (it ends in newlines and indents its hints). */
static void one_line(const char *msg, char *buf, size_t cap)
{
    size_t j = 0;
    for (size_t i = 0; msg && msg[i] && j + 1 < cap; i++) {
        char c = msg[i] == '\n' || msg[i] == '\t' ? ' ' : msg[i];
        if (c == ' ' && (j == 0 || buf[j - 1] == ' '))
            continue;
        buf[j++] = c;
    }
    while (j > 0 && buf[j - 1] == ' ')
        j--;
    buf[j] = 0;
}

/* A failed connection attempt: the server cannot be reached, refuses the login, has no such
 * database... libpq's message says which. */
static parley_status conn_fail(pg_store *s, PGconn *c)
{
    char msg[512];
    one_line(c ? PQerrorMessage(c) : "out of memory", msg, sizeof msg);
    return pl_fail(PARLEY_ERR_IO,
                   "store %s: cannot connect: %s; nothing was written (parley tries again on "
                   "the next turn)",
                   s->where, msg);
}

/* A failed statement: its SQLSTATE says whether it timed out, waited too long for a user's
 * lock, or lost the server; the transaction it was in is rolled back by the caller. */
static parley_status pg_fail(pg_store *s, PGconn *c, const PGresult *r, const char *doing)
{
    char msg[512];
    one_line(r && PQresultErrorMessage(r)[0] ? PQresultErrorMessage(r) : PQerrorMessage(c), msg,
             sizeof msg);
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (PQstatus(c) == CONNECTION_BAD)
        return pl_fail(PARLEY_ERR_IO,
                       "store %s: lost the server while %s (%s); nothing of the turn was "
                       "written, parley reconnects on the next turn",
                       s->where, doing, msg);
    if (state && !strcmp(state, "55P03"))
        return pl_fail(PARLEY_ERR_IO,
                       "store %s: a lock was held by another connection past %d ms while %s; "
                       "nothing was changed, try again",
                       s->where, s->busy_ms, doing);
    if (state && !strcmp(state, "57014"))
        return pl_fail(PARLEY_ERR_IO,
                       "store %s: a statement ran past its timeout while %s (%s); nothing "
                       "was changed",
                       s->where, doing, msg);
    return pl_fail(PARLEY_ERR_IO, "store %s: PostgreSQL error while %s: %s%s%s", s->where, doing,
                   msg, state ? " SQLSTATE " : "", state ? state : "");
}

/* Statement parameters as text; numbers are printed into the struct. */
typedef struct pg_args {
    int n;
    const char *v[16];
    char num[16][32];
} pg_args;

static void arg_s(pg_args *a, const char *v)
{
    a->v[a->n++] = v;
}

static void arg_i(pg_args *a, int64_t v)
{
    snprintf(a->num[a->n], sizeof a->num[0], "%" PRId64, v);
    arg_s(a, a->num[a->n]);
}

/* 17 significant digits: a double comes back bit for bit. */
static void arg_d(pg_args *a, double v)
{
    snprintf(a->num[a->n], sizeof a->num[0], "%.17g", v);
    arg_s(a, a->num[a->n]);
}

/* Runs sql with a's parameters (a NULL: sql may hold several statements); *out (when not
 * NULL) gets the result to PQclear. */
static parley_status query(pg_store *s, PGconn *c, const char *sql, const pg_args *a,
                           const char *doing, PGresult **out)
{
    PGresult *r = a ? PQexecParams(c, sql, a->n, NULL, a->v, NULL, NULL, 0) : PQexec(c, sql);
    ExecStatusType rs = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    parley_status ps = PARLEY_OK;
    if (rs != PGRES_COMMAND_OK && rs != PGRES_TUPLES_OK)
        ps = pg_fail(s, c, r, doing);
    if (out && ps == PARLEY_OK)
        *out = r;
    else
        PQclear(r);
    return ps;
}

static parley_status exec(pg_store *s, PGconn *c, const char *sql, const char *doing)
{
    return query(s, c, sql, NULL, doing, NULL);
}

static const char *val(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

static int64_t val_i(const PGresult *r, int row, int col)
{
    return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static parley_status dup_val(const PGresult *r, int row, int col, char **out)
{
    const char *v = val(r, row, col);
    *out = v ? pl_strdup(v) : NULL;
    return v && !*out ? pl_nomem("reading the store") : PARLEY_OK;
}

/* ---- the pool ---------------------------------------------------------------------------- */

/* Notices (a CREATE that skipped, ...) would go to stderr; the library never prints. */
static void quiet(void *arg, const char *msg)
{
    (void)arg;
    pl_log(PARLEY_LOG_DEBUG, "postgresql: %s", msg);
}

static parley_status connect_one(pg_store *s, PGconn **out)
{
    /* The URI comes last so that what it says (connect_timeout, ...) wins. */
    static const char *const keys[] = { "connect_timeout", "application_name", "dbname", NULL };
    const char *vals[] = { "5", "parley", s->uri, NULL };
    PGconn *c = PQconnectdbParams(keys, vals, 1);
    if (!c || PQstatus(c) != CONNECTION_OK) {
        parley_status ps = conn_fail(s, c);
        PQfinish(c);
        return ps;
    }
    PQsetNoticeProcessor(c, quiet, NULL);
    char sql[160];
    /* lock_timeout 0 would mean "wait forever": "do not wait" is 1 ms. Statements get the
     * lock wait plus 10 s of work. */
    int lock_ms = s->busy_ms > 0 ? s->busy_ms : 1;
    snprintf(sql, sizeof sql,
             "SET lock_timeout = %d; SET statement_timeout = %d; SET client_encoding = 'UTF8'",
             lock_ms, lock_ms + 10000);
    parley_status ps = exec(s, c, sql, "configuring the connection");
    if (ps != PARLEY_OK) {
        PQfinish(c);
        return ps;
    }
    *out = c;
    return PARLEY_OK;
}

/* Takes a free connection (waiting for one), connected. */
static parley_status acquire(pg_store *s, int *slot)
{
    pthread_mutex_lock(&s->mu);
    int i;
    for (;;) {
        for (i = 0; i < s->n && s->in[i]; i++) {
        }
        if (i < s->n)
            break;
        pthread_cond_wait(&s->freed, &s->mu);
    }
    s->in[i] = 1;
    pthread_mutex_unlock(&s->mu);
    *slot = i;
    if (s->conns[i] && PQstatus(s->conns[i]) == CONNECTION_OK)
        return PARLEY_OK;
    PQfinish(s->conns[i]);
    s->conns[i] = NULL;
    parley_status ps = connect_one(s, &s->conns[i]);
    if (ps != PARLEY_OK) {
        pthread_mutex_lock(&s->mu);
        s->in[i] = 0;
        pthread_cond_signal(&s->freed);
        pthread_mutex_unlock(&s->mu);
    }
    return ps;
}

/* Gives a connection back; one the server dropped is closed, to be opened again. */
static void release(pg_store *s, int i)
{
    if (s->conns[i] && PQstatus(s->conns[i]) != CONNECTION_OK) {
        PQfinish(s->conns[i]);
        s->conns[i] = NULL;
    }
    pthread_mutex_lock(&s->mu);
    s->in[i] = 0;
    pthread_cond_signal(&s->freed);
    pthread_mutex_unlock(&s->mu);
}

/* Ends the transaction (committed already when ps is OK: the batch did it) and gives the
 * connection back; a failed one is rolled back first. */
static parley_status end_on(pg_store *s, int slot, parley_status ps)
{
    PGconn *c = s->conns[slot];
    if (ps != PARLEY_OK && PQstatus(c) == CONNECTION_OK)
        PQclear(PQexec(c, "ROLLBACK"));
    release(s, slot);
    return ps;
}

/* ---- batches: several statements in one round trip ------------------------------------ */

/* Statements sent together in libpq's pipeline mode: the server runs them in order (so a
 * read after the user's lock sees what the last holder committed) and, after a failure,
 * skips the rest; one round trip instead of one per statement. The capacity is fixed at
 * batch_init, so the pg_args (whose values may point into themselves) never move. */
typedef struct pg_batch {
    int n, cap;
    const char **sql; /* (cap) */
    pg_args *args;    /* (cap) */
    PGresult **rows;  /* (cap) the results that have rows, for the caller; others NULL */
} pg_batch;

static parley_status batch_init(pg_batch *b, int cap)
{
    *b = (pg_batch){ .cap = cap };
    b->sql = pl_calloc((size_t)cap, sizeof *b->sql);
    b->args = pl_calloc((size_t)cap, sizeof *b->args);
    b->rows = pl_calloc((size_t)cap, sizeof *b->rows);
    return b->sql && b->args && b->rows ? PARLEY_OK : pl_nomem("a store batch");
}

static void batch_free(pg_batch *b)
{
    for (int i = 0; b->rows && i < b->n; i++)
        PQclear(b->rows[i]);
    pl_free(b->sql);
    pl_free(b->args);
    pl_free(b->rows);
}

/* Appends a statement; its parameters go into the returned pg_args. */
static pg_args *batch_add(pg_batch *b, const char *sql)
{
    b->sql[b->n] = sql;
    return &b->args[b->n++];
}

/* Sends the batch and reads every result; the first failure is the one reported. */
static parley_status batch_run(pg_store *s, PGconn *c, pg_batch *b, const char *doing)
{
    if (!PQenterPipelineMode(c))
        return pg_fail(s, c, NULL, doing);
    int sent = 0;
    while (sent < b->n && PQsendQueryParams(c, b->sql[sent], b->args[sent].n, NULL, b->args[sent].v,
                                            NULL, NULL, 0))
        sent++;
    int synced = PQpipelineSync(c); /* also after a failed send: what was sent gets run */
    parley_status ps = sent == b->n && synced ? PARLEY_OK : pg_fail(s, c, NULL, doing);
    for (int i = 0; i < sent; i++) {
        PGresult *r = PQgetResult(c);
        if (!r) { /* the connection went away: no more results will come */
            if (ps == PARLEY_OK)
                ps = pg_fail(s, c, NULL, doing);
            break;
        }
        ExecStatusType rs = PQresultStatus(r);
        if (rs != PGRES_COMMAND_OK && rs != PGRES_TUPLES_OK && ps == PARLEY_OK)
            ps = pg_fail(s, c, r, doing);
        if (rs == PGRES_TUPLES_OK)
            b->rows[i] = r;
        else
            PQclear(r);
        PQclear(PQgetResult(c)); /* the NULL that ends each statement's results */
    }
    if (PQstatus(c) == CONNECTION_OK) {
        PQclear(PQgetResult(c)); /* PGRES_PIPELINE_SYNC */
        if (!PQexitPipelineMode(c) && ps == PARLEY_OK)
            ps = pg_fail(s, c, NULL, doing);
    }
    return ps;
}

/* ---- open and migrate ---------------------------------------------------------------------- */

/* "postgresql server HOST:PORT database DB user USER" from the URI, password left out. */
static parley_status describe(pg_store *s)
{
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(s->uri, &err);
    if (!opts) {
        PQfreemem(err);
        /* libpq's message may quote the URI, password and all: it is not repeated. */
        return pl_fail(PARLEY_ERR_CONFIG,
                       "store: not a valid PostgreSQL URI (postgresql://[user[:password]@]"
                       "[host][:port][/database][?param=value...])");
    }
    const char *host = NULL, *port = NULL, *db = NULL, *user = NULL;
    for (PQconninfoOption *o = opts; o->keyword; o++) {
        if (!o->val || !*o->val)
            continue;
        if (!strcmp(o->keyword, "host") || (!strcmp(o->keyword, "hostaddr") && !host))
            host = o->val;
        else if (!strcmp(o->keyword, "port"))
            port = o->val;
        else if (!strcmp(o->keyword, "dbname"))
            db = o->val;
        else if (!strcmp(o->keyword, "user"))
            user = o->val;
    }
    char buf[1024];
    snprintf(buf, sizeof buf, "postgresql server %s:%s database %s user %s",
             host ? host : "(default socket)", port ? port : "5432", db ? db : "(default)",
             user ? user : "(default)");
    PQconninfoFree(opts);
    s->where = pl_strdup(buf);
    return s->where ? PARLEY_OK : pl_nomem("opening the store");
}

static parley_status too_new(pg_store *s, int64_t v)
{
    return pl_fail(PARLEY_ERR_UNSUPPORTED,
                   "store %s: schema version %" PRId64 " is newer than this parley knows (%d); "
                   "use a newer parley, or another database",
                   s->where, v, DM_STORE_SCHEMA);
}

/* The schema version (0: none yet), refusing by reading only a newer one, and a database
 * with parley's table names but no parley version (another application's). */
static parley_status check_ours(pg_store *s, PGconn *c, int64_t *version)
{
    PGresult *r = NULL;
    parley_status ps = query(s, c,
                             "SELECT to_regclass('parley_schema') IS NOT NULL, "
                             "(to_regclass('users') IS NOT NULL)::int + (to_regclass('slots') IS "
                             "NOT NULL)::int + (to_regclass('turns') IS NOT NULL)::int",
                             NULL, "reading the schema", &r);
    if (ps != PARLEY_OK)
        return ps;
    int versioned = !strcmp(PQgetvalue(r, 0, 0), "t");
    int64_t tables = val_i(r, 0, 1);
    PQclear(r);
    *version = 0;
    if (!versioned) {
        if (tables > 0)
            return pl_fail(PARLEY_ERR_FORMAT,
                           "store %s: tables named users, slots or turns exist but no "
                           "parley_schema: another application's; parley left them as they "
                           "were: give the dialog a database (or schema) of its own",
                           s->where);
        return PARLEY_OK;
    }
    if ((ps = query(s, c, "SELECT coalesce(max(version), 0) FROM parley_schema", NULL,
                    "reading the schema version", &r)) != PARLEY_OK)
        return ps;
    *version = val_i(r, 0, 0);
    PQclear(r);
    if (*version > DM_STORE_SCHEMA)
        return too_new(s, *version);
    if (*version > 0 && tables < 3)
        return pl_fail(PARLEY_ERR_FORMAT,
                       "store %s: schema version %" PRId64 ", but not parley's tables (users, "
                       "slots, turns); parley left it as it was",
                       s->where, *version);
    return PARLEY_OK;
}

/* Brings the schema to DM_STORE_SCHEMA in one transaction under the migration lock. */
static parley_status migrate(pg_store *s, PGconn *c)
{
    parley_status ps = exec(s, c, "BEGIN", "migrating the schema");
    if (ps != PARLEY_OK)
        return ps;
    int64_t v = 0;
    PGresult *r = NULL;
    pg_args a = { 0 };
    if ((ps = exec(s, c, "SELECT pg_advisory_xact_lock(x'" MIGRATION_LOCK "'::bigint)",
                   "waiting for another process's migration")) != PARLEY_OK ||
        (ps = exec(s, c, "CREATE TABLE IF NOT EXISTS parley_schema (version INTEGER NOT NULL)",
                   "migrating the schema")) != PARLEY_OK)
        goto fail;
    /* Read again under the lock: another process may have migrated meanwhile. */
    if ((ps = query(s, c, "SELECT coalesce(max(version), 0) FROM parley_schema", NULL,
                    "reading the schema version", &r)) != PARLEY_OK)
        goto fail;
    v = val_i(r, 0, 0);
    PQclear(r);
    if (v > DM_STORE_SCHEMA) {
        ps = too_new(s, v);
        goto fail;
    }
    for (; v < DM_STORE_SCHEMA; v++)
        if ((ps = exec(s, c, migrations[v], "migrating the schema")) != PARLEY_OK)
            goto fail;
    arg_i(&a, v);
    if ((ps = exec(s, c, "DELETE FROM parley_schema", "migrating the schema")) != PARLEY_OK ||
        (ps = query(s, c, "INSERT INTO parley_schema (version) VALUES ($1)", &a,
                    "migrating the schema", NULL)) != PARLEY_OK)
        goto fail;
    return exec(s, c, "COMMIT", "committing the schema");
fail:
    PQclear(PQexec(c, "ROLLBACK"));
    return ps;
}

static void pg_close(dm_store *base)
{
    pg_store *s = (pg_store *)base;
    for (int i = 0; s->conns && i < s->n; i++)
        PQfinish(s->conns[i]);
    pl_free(s->conns);
    pl_free(s->in);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->freed);
    pl_free(s->uri);
    pl_free(s->where);
    pl_free(s);
}

parley_status dm_store_open_pg(const char *uri, const dm_store_params *p, dm_store **out)
{
    pg_store *s = pl_calloc(1, sizeof *s);
    if (!s)
        return pl_nomem("opening the store");
    parley_status ps = pl_mutex_init(&s->mu, "the store's pool");
    if (ps != PARLEY_OK) {
        pl_free(s);
        return ps;
    }
    if ((ps = pl_cond_init(&s->freed, "the store's pool")) != PARLEY_OK) {
        pthread_mutex_destroy(&s->mu);
        pl_free(s);
        return ps;
    }
    s->base.ops = &pg_ops;
    s->busy_ms = p->busy_ms;
    s->n = p->pool_size;
    s->uri = pl_strdup(uri);
    s->conns = pl_calloc((size_t)s->n, sizeof *s->conns);
    s->in = pl_calloc((size_t)s->n, 1);
    if (!s->uri || !s->conns || !s->in) {
        ps = pl_nomem("opening the store");
        goto fail;
    }
    if ((ps = describe(s)) != PARLEY_OK)
        goto fail;
    int slot;
    if ((ps = acquire(s, &slot)) != PARLEY_OK)
        goto fail;
    int64_t v = 0;
    if ((ps = check_ours(s, s->conns[slot], &v)) == PARLEY_OK && v < DM_STORE_SCHEMA)
        ps = migrate(s, s->conns[slot]);
    release(s, slot);
    if (ps != PARLEY_OK)
        goto fail;
    *out = &s->base;
    return PARLEY_OK;
fail:
    pg_close(&s->base);
    return ps;
}

/* ---- one user's turn --------------------------------------------------------------------- */

/* The user's advisory lock, held to the end of the transaction. */
static void add_lock(pg_batch *b, const char *user_id)
{
    arg_i(batch_add(b, "SELECT pg_advisory_xact_lock($1::bigint)"),
          (int64_t)pl_fnv(PL_FNV_SEED, user_id, strlen(user_id)));
}

/* BEGIN, the user's advisory lock, then the reads: results 2 (the user) and 3 (slots). */
static void add_begin(pg_batch *b, const char *user_id)
{
    batch_add(b, "BEGIN");
    add_lock(b, user_id);
}

static parley_status read_user(const PGresult *r, const PGresult *slots, dm_user *u)
{
    parley_status ps = PARLEY_OK;
    if (!r || PQntuples(r) != 1)
        return PARLEY_OK;
    u->exists = 1;
    u->session_no = val_i(r, 0, 1);
    u->session_start_ms = val_i(r, 0, 2);
    u->last_active_ms = val_i(r, 0, 3);
    u->turns = (uint64_t)val_i(r, 0, 4);
    u->confirming = (int)val_i(r, 0, 7);
    if ((ps = dup_val(r, 0, 0, &u->session_id)) == PARLEY_OK &&
        (ps = dup_val(r, 0, 5, &u->form)) == PARLEY_OK)
        ps = dup_val(r, 0, 6, &u->requested_slot);
    size_t cap = 0;
    for (int i = 0; ps == PARLEY_OK && slots && i < PQntuples(slots); i++)
        ps = dm_user_add_slot(u, &cap, PQgetvalue(slots, i, 0), PQgetvalue(slots, i, 1));
    return ps;
}

/* A pooled connection that the server dropped since its last use (a restart) fails the
 * batch before anything was done: it is opened again and the batch sent again, once. */
static parley_status pg_begin(dm_store *base, const char *user_id, dm_store_turn *t, dm_user *out)
{
    pg_store *s = (pg_store *)base;
    parley_status ps;
    for (int attempt = 0;; attempt++) {
        int slot;
        pg_batch b;
        if ((ps = acquire(s, &slot)) != PARLEY_OK)
            return ps;
        if ((ps = batch_init(&b, 4)) == PARLEY_OK) {
            add_begin(&b, user_id);
            arg_s(batch_add(&b, "SELECT session_id, session_no, session_start, last_active, "
                                "turns, form, requested_slot, confirming FROM users WHERE "
                                "user_id = $1"),
                  user_id);
            arg_s(batch_add(&b, "SELECT name, value FROM slots WHERE user_id = $1 ORDER BY "
                                "name COLLATE \"C\""),
                  user_id);
            if ((ps = batch_run(s, s->conns[slot], &b, "reading a user")) == PARLEY_OK)
                ps = read_user(b.rows[2], b.rows[3], out);
        }
        batch_free(&b);
        if (ps == PARLEY_OK) {
            t->conn = (void *)(intptr_t)(slot + 1);
            return PARLEY_OK;
        }
        int dropped = PQstatus(s->conns[slot]) != CONNECTION_OK;
        end_on(s, slot, ps);
        if (!dropped || attempt == 1)
            return ps;
        dm_user_clear(out);
    }
}

static int turn_slot(const dm_store_turn *t)
{
    return (int)(intptr_t)t->conn - 1;
}

/* The user row (inserted or replaced) and its slots: 2 + u->n_slots statements. */
static void add_user(pg_batch *b, const char *user_id, const dm_user *u)
{
    pg_args *a = batch_add(
            b, "INSERT INTO users (user_id, session_id, session_no, session_start, last_active, "
               "turns, form, requested_slot, confirming) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
               "$9) ON CONFLICT (user_id) DO UPDATE SET session_id = EXCLUDED.session_id, "
               "session_no = EXCLUDED.session_no, session_start = EXCLUDED.session_start, "
               "last_active = EXCLUDED.last_active, turns = EXCLUDED.turns, form = "
               "EXCLUDED.form, requested_slot = EXCLUDED.requested_slot, confirming = "
               "EXCLUDED.confirming");
    arg_s(a, user_id);
    arg_s(a, u->session_id);
    arg_i(a, u->session_no);
    arg_i(a, u->session_start_ms);
    arg_i(a, u->last_active_ms);
    arg_i(a, (int64_t)u->turns);
    arg_s(a, u->form);
    arg_s(a, u->requested_slot);
    arg_i(a, u->confirming);
    arg_s(batch_add(b, "DELETE FROM slots WHERE user_id = $1"), user_id);
    for (size_t i = 0; i < u->n_slots; i++) {
        a = batch_add(b, "INSERT INTO slots (user_id, name, value) VALUES ($1, $2, $3)");
        arg_s(a, user_id);
        arg_s(a, u->slots[i].name);
        arg_s(a, u->slots[i].value);
    }
}

/* One history row (replacing a row of the same turn), then the trim to `limit` rows: 2
 * statements. */
static void add_turn(pg_batch *b, const char *user_id, const dm_turn_row *r, long limit)
{
    pg_args *a = batch_add(
            b, "INSERT INTO turns (user_id, turn_id, session_id, text, nlu_intent, confidence, "
               "entities, intent, action, reply, t_in, t_reply, form) VALUES ($1, $2, $3, $4, "
               "$5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (user_id, turn_id) DO "
               "UPDATE SET session_id = EXCLUDED.session_id, text = EXCLUDED.text, nlu_intent "
               "= EXCLUDED.nlu_intent, confidence = EXCLUDED.confidence, entities = "
               "EXCLUDED.entities, intent = EXCLUDED.intent, action = EXCLUDED.action, reply = "
               "EXCLUDED.reply, t_in = EXCLUDED.t_in, t_reply = EXCLUDED.t_reply, form = "
               "EXCLUDED.form");
    arg_s(a, user_id);
    arg_i(a, (int64_t)r->turn_id);
    arg_s(a, r->session_id);
    arg_s(a, r->text);
    arg_s(a, r->nlu_intent);
    arg_d(a, r->confidence);
    arg_s(a, r->entities_json);
    arg_s(a, r->intent);
    arg_s(a, r->action);
    arg_s(a, r->reply);
    arg_i(a, r->t_in_ms);
    arg_i(a, r->t_reply_ms);
    arg_s(a, r->form);
    /* limit 0 keeps all: the trim deletes nothing below turn 1 */
    a = batch_add(b, "DELETE FROM turns WHERE user_id = $1 AND turn_id <= $2");
    arg_s(a, user_id);
    arg_i(a,
          limit > 0 && r->turn_id > (uint64_t)limit ? (int64_t)(r->turn_id - (uint64_t)limit) : 0);
}

/* The user, its slots, the turn row and the trim, and COMMIT: one round trip. */
static parley_status pg_commit(dm_store_turn *t, const char *user_id, const dm_user *u,
                               const dm_turn_row *row, long history_limit)
{
    pg_store *s = (pg_store *)t->store;
    int slot = turn_slot(t);
    pg_batch b;
    parley_status ps = batch_init(&b, 5 + (int)u->n_slots);
    if (ps == PARLEY_OK) {
        add_user(&b, user_id, u);
        add_turn(&b, user_id, row, history_limit);
        batch_add(&b, "COMMIT");
        ps = batch_run(s, s->conns[slot], &b, "saving the turn");
    }
    batch_free(&b);
    return end_on(s, slot, ps);
}

static void pg_abort(dm_store_turn *t)
{
    end_on((pg_store *)t->store, turn_slot(t), PARLEY_ERR_IO);
}

/* ---- whole users: import, purge ------------------------------------------------------------ */

/* Runs a batch that is a whole transaction on a pooled connection. */
static parley_status run_alone(pg_store *s, pg_batch *b, const char *doing)
{
    int slot;
    parley_status ps = acquire(s, &slot);
    if (ps != PARLEY_OK)
        return ps;
    ps = batch_run(s, s->conns[slot], b, doing);
    return end_on(s, slot, ps);
}

/* One transaction on one connection: for each user the source gives, its lock, the user
 * and the history that replaces the stored one (one round trip), then COMMIT. */
static parley_status pg_put(dm_store *base, dm_store_next_fn next, void *arg)
{
    pg_store *s = (pg_store *)base;
    int slot;
    parley_status ps = acquire(s, &slot);
    if (ps != PARLEY_OK)
        return ps;
    PGconn *c = s->conns[slot];
    ps = exec(s, c, "BEGIN", "importing users");
    while (ps == PARLEY_OK) {
        const char *user_id;
        const dm_user *u;
        const dm_turn_row *rows;
        size_t n_rows;
        pg_batch b;
        if ((ps = next(arg, &user_id, &u, &rows, &n_rows)) != PARLEY_OK || !user_id)
            break;
        if ((ps = batch_init(&b, 4 + (int)u->n_slots + 2 * (int)n_rows)) == PARLEY_OK) {
            add_lock(&b, user_id);
            add_user(&b, user_id, u);
            arg_s(batch_add(&b, "DELETE FROM turns WHERE user_id = $1"), user_id);
            for (size_t i = 0; i < n_rows; i++)
                add_turn(&b, user_id, &rows[i], 0);
            ps = batch_run(s, c, &b, "importing a user");
        }
        batch_free(&b);
    }
    if (ps == PARLEY_OK)
        ps = exec(s, c, "COMMIT", "importing users");
    return end_on(s, slot, ps);
}

static parley_status pg_purge(dm_store *base, int64_t before_ms, long *n)
{
    pg_batch b;
    parley_status ps = batch_init(&b, 5);
    if (ps == PARLEY_OK) {
        batch_add(&b, "BEGIN");
        arg_i(batch_add(&b, "DELETE FROM slots WHERE user_id IN (SELECT user_id FROM users "
                            "WHERE last_active < $1)"),
              before_ms);
        arg_i(batch_add(&b, "DELETE FROM turns WHERE user_id IN (SELECT user_id FROM users "
                            "WHERE last_active < $1)"),
              before_ms);
        arg_i(batch_add(&b, "WITH gone AS (DELETE FROM users WHERE last_active < $1 RETURNING "
                            "1) SELECT count(*) FROM gone"),
              before_ms);
        batch_add(&b, "COMMIT");
        if ((ps = run_alone((pg_store *)base, &b, "purging old users")) == PARLEY_OK)
            *n = (long)val_i(b.rows[3], 0, 0);
    }
    batch_free(&b);
    return ps;
}

/* ---- reading for tools --------------------------------------------------------------------- */

/* Runs one read-only query on a pooled connection; *out to PQclear. */
static parley_status read_query(pg_store *s, const char *sql, const pg_args *a, const char *doing,
                                PGresult **out)
{
    int slot;
    parley_status ps = acquire(s, &slot);
    if (ps != PARLEY_OK)
        return ps;
    ps = query(s, s->conns[slot], sql, a, doing, out);
    release(s, slot);
    return ps;
}

static parley_status pg_history(dm_store *base, const char *user_id, uint64_t turn_id, long *count,
                                char **reply)
{
    pg_args a = { 0 };
    arg_s(&a, user_id);
    arg_i(&a, (int64_t)turn_id);
    PGresult *r = NULL;
    parley_status ps = read_query((pg_store *)base,
                                  "SELECT count(*), (SELECT reply FROM turns WHERE user_id = $1 "
                                  "AND turn_id = $2) FROM turns WHERE user_id = $1",
                                  &a, "reading history", &r);
    if (ps != PARLEY_OK)
        return ps;
    *count = (long)val_i(r, 0, 0);
    ps = dup_val(r, 0, 1, reply);
    PQclear(r);
    return ps;
}

static parley_status pg_users(dm_store *base, dm_store_user_fn fn, void *arg)
{
    PGresult *r = NULL;
    parley_status ps =
            read_query((pg_store *)base, "SELECT user_id FROM users ORDER BY user_id COLLATE \"C\"",
                       NULL, "listing users", &r);
    if (ps != PARLEY_OK)
        return ps;
    for (int i = 0; ps == PARLEY_OK && i < PQntuples(r); i++)
        ps = fn(PQgetvalue(r, i, 0), arg);
    PQclear(r);
    return ps;
}

static parley_status pg_turns(dm_store *base, const char *user_id, dm_store_row_fn fn, void *arg)
{
    pg_args a = { 0 };
    arg_s(&a, user_id);
    PGresult *r = NULL;
    parley_status ps = read_query((pg_store *)base,
                                  "SELECT turn_id, session_id, text, nlu_intent, confidence, "
                                  "entities, intent, action, reply, form, t_in, t_reply FROM "
                                  "turns WHERE user_id = $1 ORDER BY turn_id",
                                  &a, "reading history", &r);
    if (ps != PARLEY_OK)
        return ps;
    for (int i = 0; ps == PARLEY_OK && i < PQntuples(r); i++) {
        dm_turn_row row = {
            .turn_id = (uint64_t)val_i(r, i, 0),
            .session_id = val(r, i, 1),
            .text = val(r, i, 2),
            .nlu_intent = val(r, i, 3),
            .confidence = val(r, i, 4) ? strtod(val(r, i, 4), NULL) : 0.0,
            .entities_json = val(r, i, 5),
            .intent = val(r, i, 6),
            .action = val(r, i, 7),
            .reply = val(r, i, 8),
            .form = val(r, i, 9),
            .t_in_ms = val(r, i, 10) ? val_i(r, i, 10) : 0,
            .t_reply_ms = val(r, i, 11) ? val_i(r, i, 11) : 0,
        };
        ps = fn(&row, arg);
    }
    PQclear(r);
    return ps;
}

static const dm_store_ops pg_ops = {
    .begin = pg_begin,
    .commit = pg_commit,
    .abort = pg_abort,
    .history = pg_history,
    .users = pg_users,
    .turns = pg_turns,
    .put = pg_put,
    .purge = pg_purge,
    .close = pg_close,
};

#else /* !PARLEY_HAVE_POSTGRESQL */

parley_status dm_store_open_pg(const char *uri, const dm_store_params *p, dm_store **out)
{
    (void)uri;
    (void)p;
    (void)out;
    return pl_fail(PARLEY_ERR_NOT_BUILT,
                   "store: a postgresql:// store needs a parley built with libpq (libpq-dev)");
}

#endif
