/* test_store_pg.c — what only the PostgreSQL store has: its refusals, its error messages,
 * and per-user order across connections.
 *
 * Run by tests/pg_server.py (PARLEY_TEST_PG names a throwaway server; skips with 77
 * without it). A newer schema and another application's tables are refused and left as
 * they were; a wrong password, a missing database and a server nobody listens on fail
 * with a message naming the server and the cause, never the password; a version-1 schema
 * is migrated; a user's lock held elsewhere fails that user's turn after busy_ms. Then the lost
 * update: threads on two stores (two pools, as two processes have) run turns of ONE user at once.
 * Done as the store does it (the user's advisory lock first), every turn counts; done the same way
 * without the lock (libpq directly, the read-modify-write a store without the lock would do), turns
 * are lost: the test shows that the lock is what keeps them.
 */
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialog/store.h"
#include "sdk/base/alloc.h"
#include "sdk/base/names.h"
#include "tests/check.h"
#include "tests/dialog/tmp_store.h"

enum { THREADS = 8, TURNS_EACH = 25 };

static char uri[1024];

static void sql(const char *q)
{
    PGconn *c = PQconnectdb(uri);
    PQsetNoticeProcessor(c, tmp_store_pg_quiet, NULL);
    PGresult *r = PQexec(c, q);
    CHECK(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK, "%s: %s",
          q, PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
}

static long sql_long(const char *q)
{
    PGconn *c = PQconnectdb(uri);
    PGresult *r = PQexec(c, q);
    long v = PQresultStatus(r) == PGRES_TUPLES_OK ? strtol(PQgetvalue(r, 0, 0), NULL, 10) : -1;
    PQclear(r);
    PQfinish(c);
    return v;
}

static void test_refusals(void)
{
    tmp_store_remove(uri);
    sql("CREATE TABLE parley_schema (version INTEGER NOT NULL); INSERT INTO parley_schema "
        "VALUES (99)");
    dm_store *s = NULL;
    parley_status st = dm_store_open(uri, NULL, &s);
    CHECK(st == PARLEY_ERR_UNSUPPORTED && strstr(parley_errmsg(), "newer") &&
                  strstr(parley_errmsg(), "postgresql server"),
          "newer schema: %s %s", parley_status_str(st), parley_errmsg());
    CHECK(sql_long("SELECT max(version) FROM parley_schema") == 99 &&
                  sql_long("SELECT count(*) FROM pg_tables WHERE tablename = 'users'") == 0,
          "a refused store was changed");
    dm_store_close(s);

    tmp_store_remove(uri);
    sql("CREATE TABLE users (id INTEGER)");
    st = dm_store_open(uri, NULL, &s);
    CHECK(st == PARLEY_ERR_FORMAT && strstr(parley_errmsg(), "another application"),
          "foreign tables: %s %s", parley_status_str(st), parley_errmsg());
    CHECK(sql_long("SELECT count(*) FROM pg_tables WHERE tablename = 'parley_schema'") == 0,
          "a foreign database was changed");
    dm_store_close(s);
    sql("DROP TABLE users");
}

/* Version 1 (no turns.form) migrates in place and keeps its rows. */
static void test_migration(void)
{
    tmp_store_remove(uri);
    sql("CREATE TABLE parley_schema (version INTEGER NOT NULL); INSERT INTO parley_schema "
        "VALUES (1);"
        "CREATE TABLE users (user_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, session_no "
        "BIGINT NOT NULL, session_start BIGINT NOT NULL, last_active BIGINT NOT NULL, turns "
        "BIGINT NOT NULL, form TEXT, requested_slot TEXT, confirming INTEGER NOT NULL DEFAULT "
        "0);"
        "CREATE TABLE slots (user_id TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, "
        "PRIMARY KEY (user_id, name));"
        "CREATE TABLE turns (user_id TEXT NOT NULL, turn_id BIGINT NOT NULL, session_id TEXT "
        "NOT NULL, text TEXT, nlu_intent TEXT, confidence DOUBLE PRECISION, entities TEXT, "
        "intent TEXT, action TEXT, reply TEXT, t_in BIGINT, t_reply BIGINT, PRIMARY KEY "
        "(user_id, turn_id));"
        "INSERT INTO users VALUES ('dave', 's', 1, 1, 2, 7, NULL, NULL, 0);"
        "INSERT INTO slots VALUES ('dave', 'size', 'small')");
    dm_store *s = NULL;
    CHECK(dm_store_open(uri, NULL, &s) == PARLEY_OK, "migrating: %s", parley_errmsg());
    dm_user u = { 0 };
    CHECK(s && dm_store_load(s, "dave", &u) == PARLEY_OK && u.exists && u.turns == 7 &&
                  u.n_slots == 1 && !strcmp(u.slots[0].value, "small"),
          "dave after the migration");
    dm_user_clear(&u);
    dm_store_close(s);
    CHECK(sql_long("SELECT max(version) FROM parley_schema") == DM_STORE_SCHEMA &&
                  sql_long("SELECT count(*) FROM information_schema.columns WHERE table_name = "
                           "'turns' AND column_name = 'form'") == 1,
          "schema not migrated");
}

/* The URI with its password replaced, its database replaced, or its port moved. */
static void test_connection_errors(void)
{
    char good[1024], bad[1024], pw[256];
    tmp_store_pg_uri(good, sizeof good, "postgres");
    const char *colon = strchr(good + 13, ':'), *at = strchr(good, '@');
    snprintf(pw, sizeof pw, "%.*s", (int)(at - colon - 1), colon + 1);
    snprintf(bad, sizeof bad, "%.*s:wrong-secret%s", (int)(colon - good), good, at);
    dm_store *s = NULL;
    parley_status st = dm_store_open(bad, NULL, &s);
    CHECK(st == PARLEY_ERR_IO && strstr(parley_errmsg(), "password authentication failed") &&
                  strstr(parley_errmsg(), "user parley") &&
                  !strstr(parley_errmsg(), "wrong-secret"),
          "wrong password: %s %s", parley_status_str(st), parley_errmsg());

    tmp_store_pg_uri(bad, sizeof bad, "no_such_db");
    st = dm_store_open(bad, NULL, &s);
    CHECK(st == PARLEY_ERR_IO && strstr(parley_errmsg(), "no_such_db") &&
                  strstr(parley_errmsg(), "does not exist") && !strstr(parley_errmsg(), pw),
          "missing database: %s %s", parley_status_str(st), parley_errmsg());

    /* Nobody listens on port 1 of the socket folder. */
    tmp_store_pg_uri(bad, sizeof bad, "postgres");
    char *port = strstr(bad, "port=");
    snprintf(port, sizeof bad - (size_t)(port - bad), "port=1");
    st = dm_store_open(bad, NULL, &s);
    CHECK(st == PARLEY_ERR_IO && strstr(parley_errmsg(), "cannot connect") &&
                  strstr(parley_errmsg(), ":1 ") && !strstr(parley_errmsg(), pw),
          "no server: %s %s", parley_status_str(st), parley_errmsg());

    st = dm_store_open("postgresql://a:b@host/x?no_such_param=1", NULL, &s);
    CHECK(st == PARLEY_ERR_CONFIG && !strstr(parley_errmsg(), "a:b"), "bad URI: %s %s",
          parley_status_str(st), parley_errmsg());
}

/* Another connection holds user "held"'s lock: a turn waits busy_ms (lock_timeout), fails
 * naming the cause, and works once the lock is released. */
static void test_lock_timeout(void)
{
    tmp_store_remove(uri);
    dm_store *s = NULL;
    CHECK(dm_store_open(uri, &(dm_store_params){ .busy_ms = 200 }, &s) == PARLEY_OK, "open: %s",
          parley_errmsg());
    if (!s)
        return;
    PGconn *other = PQconnectdb(uri);
    char q[128];
    snprintf(q, sizeof q, "SELECT pg_advisory_lock(%lld)",
             (long long)(int64_t)pl_fnv(PL_FNV_SEED, "held", 4));
    PQclear(PQexec(other, q));
    dm_store_turn t;
    dm_user u;
    parley_status st = dm_store_begin(s, "held", &t, &u);
    CHECK(st == PARLEY_ERR_IO && strstr(parley_errmsg(), "past 200 ms"), "held lock: %s %s",
          parley_status_str(st), parley_errmsg());
    CHECK(dm_store_load(s, "free", &u) == PARLEY_OK, "another user waited: %s", parley_errmsg());
    dm_user_clear(&u);
    PQfinish(other); /* releases the lock */
    CHECK(dm_store_begin(s, "held", &t, &u) == PARLEY_OK, "after release: %s", parley_errmsg());
    dm_user_clear(&u);
    dm_store_abort(&t);
    dm_store_close(s);
}

/* Each thread: TURNS_EACH turns of user "same", through its own store or raw libpq. */
typedef struct worker {
    dm_store *store; /* NULL: the lock-less read-modify-write with libpq */
    int failed;
} worker;

static void *run_turns(void *arg)
{
    worker *w = arg;
    PGconn *c = w->store ? NULL : PQconnectdb(uri);
    for (int k = 0; k < TURNS_EACH; k++) {
        if (w->store) {
            dm_store_turn t;
            dm_user u;
            if (dm_store_begin(w->store, "same", &t, &u) != PARLEY_OK) {
                w->failed++;
                continue;
            }
            u.exists = 1;
            u.turns++;
            if (!u.session_id)
                u.session_id = pl_strdup("s");
            dm_turn_row row = { .turn_id = u.turns, .session_id = "s", .text = "hi" };
            w->failed += dm_store_commit(&t, "same", &u, &row, 0) != PARLEY_OK;
            dm_user_clear(&u);
        } else {
            /* The same steps with no lock: read the counter, then write counter + 1. */
            PQclear(PQexec(c, "BEGIN"));
            PGresult *r = PQexec(c, "SELECT turns FROM users WHERE user_id = 'same'");
            long n = PQntuples(r) ? strtol(PQgetvalue(r, 0, 0), NULL, 10) : 0;
            PQclear(r);
            char q[300];
            snprintf(q, sizeof q,
                     "INSERT INTO users VALUES ('same', 's', 1, 1, 1, %ld, NULL, NULL, 0) ON "
                     "CONFLICT (user_id) DO UPDATE SET turns = EXCLUDED.turns",
                     n + 1);
            PQclear(PQexec(c, q));
            r = PQexec(c, "COMMIT");
            w->failed += PQresultStatus(r) != PGRES_COMMAND_OK;
            PQclear(r);
        }
    }
    PQfinish(c);
    return NULL;
}

static long run_race(dm_store *const stores[2], int locked)
{
    pthread_t th[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){ locked ? stores[i % 2] : NULL, 0 };
        pthread_create(&th[i], NULL, run_turns, &w[i]);
    }
    int failed = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        failed += w[i].failed;
    }
    CHECK(failed == 0, "%d turns failed (locked %d)", failed, locked);
    return sql_long("SELECT turns FROM users WHERE user_id = 'same'");
}

static void test_lost_update(void)
{
    tmp_store_remove(uri);
    dm_store *stores[2] = { NULL, NULL };
    for (int i = 0; i < 2; i++)
        CHECK(dm_store_open(uri, &(dm_store_params){ .pool_size = THREADS / 2 }, &stores[i]) ==
                      PARLEY_OK,
              "open: %s", parley_errmsg());
    if (!stores[0] || !stores[1])
        return;
    long with_lock = run_race(stores, 1);
    long rows = sql_long("SELECT count(*) FROM turns WHERE user_id = 'same'");
    CHECK(with_lock == THREADS * TURNS_EACH && rows == with_lock,
          "with the user's lock: counter %ld, %ld history rows, of %d turns", with_lock, rows,
          THREADS * TURNS_EACH);
    sql("DELETE FROM users; DELETE FROM turns");
    long without = run_race(stores, 0);
    CHECK(without < THREADS * TURNS_EACH, "without the lock no update was lost (%ld)", without);
    printf("one user, %d turns from %d threads on 2 pools: counter %ld with the lock, %ld "
           "without\n",
           THREADS * TURNS_EACH, THREADS, with_lock, without);
    dm_store_close(stores[0]);
    dm_store_close(stores[1]);
}

int main(void)
{
    if (!getenv("PARLEY_TEST_PG")) {
        printf("skip: PARLEY_TEST_PG is not set (run me through tests/pg_server.py)\n");
        return 77;
    }
    tmp_store_name(uri, sizeof uri, "", "pgstore");
    test_refusals();
    test_migration();
    test_connection_errors();
    test_lock_timeout();
    test_lost_update();
    return check_done();
}
