/* tmp_store.h — a scratch folder for a test's store, a store location in it, and removing a
 * store (its -wal and -shm files too).
 *
 * With PARLEY_TEST_PG set (tests/dialog/with_pg.py sets it: a postgresql:// URI with "{db}"
 * where the database name goes), a store location is instead a fresh PostgreSQL database on
 * that throwaway server, and removing it drops and creates it again, empty: so one test
 * runs against either back end.
 */
#ifndef TESTS_DIALOG_TMP_STORE_H
#define TESTS_DIALOG_TMP_STORE_H

#include "parley_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if PARLEY_HAVE_POSTGRESQL
#include <libpq-fe.h>
#endif

/* Makes $TMPDIR/parley-<tag>-XXXXXX into dir; 0 on failure. */
static inline int tmp_store_dir(char *dir, size_t cap, const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, cap, "%s/parley-%s-XXXXXX", tmp ? tmp : "/tmp", tag);
    if (mkdtemp(dir))
        return 1;
    perror("mkdtemp");
    return 0;
}

/* PARLEY_TEST_PG with {db} replaced by db into out. */
static inline void tmp_store_pg_uri(char *out, size_t cap, const char *db)
{
    const char *t = getenv("PARLEY_TEST_PG"), *at = strstr(t, "{db}");
    snprintf(out, cap, "%.*s%s%s", (int)(at ? at - t : (long)strlen(t)), t, at ? db : "",
             at ? at + 4 : "");
}

#if PARLEY_HAVE_POSTGRESQL
static inline void tmp_store_pg_quiet(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;
}
#endif

/* Drops database `db` if it exists and creates it again; 0 on failure (printed). */
static inline int tmp_store_pg_reset(const char *db)
{
#if PARLEY_HAVE_POSTGRESQL
    char uri[1024], sql[300];
    tmp_store_pg_uri(uri, sizeof uri, "postgres");
    PGconn *c = PQconnectdb(uri);
    int ok = PQstatus(c) == CONNECTION_OK;
    PQsetNoticeProcessor(c, tmp_store_pg_quiet, NULL);
    for (int i = 0; ok && i < 2; i++) {
        snprintf(sql, sizeof sql,
                 i ? "CREATE DATABASE \"%s\"" : "DROP DATABASE IF EXISTS \"%s\" WITH (FORCE)", db);
        PGresult *r = PQexec(c, sql);
        ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
    }
    if (!ok)
        fprintf(stderr, "tmp_store: resetting database %s: %s\n", db, PQerrorMessage(c));
    PQfinish(c);
    return ok;
#else
    fprintf(stderr, "tmp_store: database %s: this build has no libpq\n", db);
    return 0;
#endif
}

/* The store called `name` for this test: dir/name.db, or (PARLEY_TEST_PG set) the URI of a
 * new, empty database named after it and this process. */
static inline void tmp_store_name(char *out, size_t cap, const char *dir, const char *name)
{
    if (!getenv("PARLEY_TEST_PG")) {
        snprintf(out, cap, "%s/%s.db", dir, name);
        return;
    }
    char db[128];
    snprintf(db, sizeof db, "t_%s_%ld", name, (long)getpid());
    tmp_store_pg_uri(out, cap, db);
    tmp_store_pg_reset(db);
}

/* Empties a PostgreSQL store: drops parley's tables (quicker than a new database). */
static inline void tmp_store_pg_empty(const char *uri)
{
#if PARLEY_HAVE_POSTGRESQL
    PGconn *c = PQconnectdb(uri);
    PQsetNoticeProcessor(c, tmp_store_pg_quiet, NULL);
    PGresult *r = PQexec(c, "DROP TABLE IF EXISTS users, slots, turns, parley_schema");
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        fprintf(stderr, "tmp_store: emptying the store: %s\n", PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
#else
    (void)uri;
#endif
}

/* Removes a SQLite store, or empties a PostgreSQL one. */
static inline void tmp_store_remove(const char *path)
{
    if (!strncmp(path, "postgresql://", 13)) {
        tmp_store_pg_empty(path);
        return;
    }
    static const char *const suffix[] = { "", "-wal", "-shm" };
    for (int i = 0; i < 3; i++) {
        char p[4300];
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

#endif
