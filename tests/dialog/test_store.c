/* test_store.c — the SQLite context store's failure modes and its schema versions.
 *
 * A store that is locked by another connection, read-only, corrupt, of a newer schema, or
 * another application's database must give a clear error naming the file and be left as
 * it was, byte for byte where the test can see the bytes; an older schema is migrated;
 * a restart continues the conversation. SQLite is used directly here to play the "other
 * process" and to write the damaged files.
 */
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dialog/dialog.h"
#include "dialog/store.h"
#include "sdk/base/alloc.h"
#include "tests/check.h"
#include "tests/dialog/tmp_store.h"

static char dir[4096], path[4200];

static void remove_store(void)
{
    tmp_store_remove(path);
}

static dm_user sample_user(void)
{
    static parley_slot slots[1] = { { "size", "large" } };
    return (dm_user){ .exists = 1,
                      .session_id = "s1",
                      .session_no = 1,
                      .session_start_ms = 1,
                      .last_active_ms = 2,
                      .turns = 1,
                      .form = "pizza_form",
                      .requested_slot = "count",
                      .n_slots = 1,
                      .slots = slots };
}

static parley_status save_one(dm_store *s, const char *user, uint64_t turn)
{
    dm_user u = sample_user();
    u.turns = turn;
    dm_turn_row row = { .turn_id = turn, .session_id = "s1", .text = "hi", .reply = "hello" };
    return dm_store_save(s, user, &u, &row, 0);
}

static void test_roundtrip_and_restart(void)
{
    remove_store();
    dm_store *s;
    CHECK(dm_store_open(path, &(dm_store_params){ .busy_ms = 1000 }, &s) == PARLEY_OK, "%s",
          parley_errmsg());
    CHECK(save_one(s, "alice", 1) == PARLEY_OK, "%s", parley_errmsg());
    dm_store_close(s);
    CHECK(dm_store_open(path, &(dm_store_params){ .busy_ms = 1000 }, &s) == PARLEY_OK, "%s",
          parley_errmsg());
    dm_user u;
    CHECK(dm_store_load(s, "alice", &u) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(u.exists && u.turns == 1 && u.form && !strcmp(u.form, "pizza_form") && u.requested_slot &&
                  !strcmp(u.requested_slot, "count") && u.n_slots == 1 &&
                  !strcmp(u.slots[0].value, "large"),
          "reloaded user differs");
    dm_user_clear(&u);
    CHECK(dm_store_load(s, "nobody", &u) == PARLEY_OK && !u.exists, "unknown user exists");
    dm_store_close(s);

    sqlite3 *db;
    sqlite3_open(path, &db);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
    sqlite3_step(st);
    CHECK(!strcmp((const char *)sqlite3_column_text(st, 0), "wal"), "journal mode %s",
          sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
    sqlite3_step(st);
    CHECK(sqlite3_column_int(st, 0) == DM_STORE_SCHEMA, "schema %d", sqlite3_column_int(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* Another connection holds the write lock: a turn's save waits busy_ms, then fails clearly,
 * and works once the lock is released. */
static void test_locked(void)
{
    remove_store();
    dm_store *s;
    CHECK(dm_store_open(path, &(dm_store_params){ .busy_ms = 50 }, &s) == PARLEY_OK, "%s",
          parley_errmsg());
    sqlite3 *other;
    sqlite3_open(path, &other);
    CHECK(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK, "lock");
    parley_status st = save_one(s, "bob", 1);
    CHECK(st == PARLEY_ERR_IO && strstr(parley_errmsg(), "locked") && strstr(parley_errmsg(), path),
          "locked store: %s %s", parley_status_str(st), parley_errmsg());
    /* Opening a second manager on it fails the same way (the schema check needs the lock). */
    dm_store *s2 = NULL;
    st = dm_store_open(path, &(dm_store_params){ .busy_ms = 50 }, &s2);
    CHECK(st == PARLEY_ERR_IO && strstr(parley_errmsg(), "locked"), "open while locked: %s",
          parley_errmsg());
    dm_store_close(s2);
    sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(other);
    dm_user u;
    CHECK(dm_store_load(s, "bob", &u) == PARLEY_OK && !u.exists, "the failed save left a user");
    dm_user_clear(&u);
    CHECK(save_one(s, "bob", 1) == PARLEY_OK, "after release: %s", parley_errmsg());
    dm_store_close(s);
}

/* Two processes give turns to one user at once, each as the dialog does (read the user,
 * decide, write turn n + 1): every turn of both is kept, numbered 1 to 2 * N, none given
 * out twice. The pause between read and write stands for the decision. */
static void test_two_writers(void)
{
    enum { N = 200 };
    remove_store();
    dm_store *s;
    CHECK(dm_store_open(path, &(dm_store_params){ .busy_ms = 20000 }, &s) == PARLEY_OK, "%s",
          parley_errmsg());
    dm_store_close(s);
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        if ((kids[k] = fork()) == 0) {
            int failed = dm_store_open(path, &(dm_store_params){ .busy_ms = 20000 }, &s) != 0;
            for (int i = 0; !failed && i < N; i++) {
                dm_user u;
                dm_store_turn t;
                if (dm_store_begin(s, "shared", &t, &u) != PARLEY_OK) {
                    failed = 1;
                    break;
                }
                dm_user w = sample_user();
                w.turns = u.turns + 1;
                dm_turn_row row = { .turn_id = w.turns,
                                    .session_id = "s1",
                                    .text = "hi",
                                    .reply = k ? "from b" : "from a" };
                usleep(200);
                failed = dm_store_commit(&t, "shared", &w, &row, 0) != PARLEY_OK;
                if (failed)
                    fprintf(stderr, "writer %d, turn %d: %s\n", k, i, parley_errmsg());
                dm_user_clear(&u);
            }
            dm_store_close(s);
            _exit(failed);
        }
    }
    for (int k = 0; k < 2; k++) {
        int ws = -1;
        waitpid(kids[k], &ws, 0);
        CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "writer %d failed a turn", k);
    }
    CHECK(dm_store_open(path, NULL, &s) == PARLEY_OK, "%s", parley_errmsg());
    dm_user u = { 0 };
    long count = 0;
    char *reply = NULL;
    CHECK(dm_store_load(s, "shared", &u) == PARLEY_OK && u.turns == 2 * N,
          "the user's turns: %llu, want %d", (unsigned long long)u.turns, 2 * N);
    CHECK(dm_store_history(s, "shared", 2 * N, &count, &reply) == PARLEY_OK && count == 2 * N &&
                  reply,
          "history rows kept: %ld of %d", count, 2 * N);
    pl_free(reply);
    dm_user_clear(&u);
    dm_store_close(s);
}

/* The whole file (owned by the caller: free) and its size, or NULL. */
static unsigned char *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size + 1)) &&
        fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *n = size >= 0 ? (size_t)size : 0;
    return buf;
}

static int file_equals(const char *p, const unsigned char *data, size_t n)
{
    size_t got;
    unsigned char *now = slurp(p, &got);
    int same = now && got == n && !memcmp(now, data, n);
    free(now);
    return same;
}

/* The file's journal mode as SQLite reads it ("delete", "wal"...), into buf. */
static const char *journal_mode(const char *p, char *buf, size_t cap)
{
    sqlite3 *db;
    sqlite3_stmt *st = NULL;
    snprintf(buf, cap, "?");
    if (sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        snprintf(buf, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return buf;
}

/* Opens the file at `path` as a store, which must fail with `want` and a detail holding
 * `says`, and leave the file byte for byte as it was, with no -wal file beside it. */
static void refused_untouched(const char *what, parley_status want, const char *says)
{
    size_t n;
    unsigned char *before = slurp(path, &n);
    CHECK(before != NULL, "%s: cannot read the file", what);
    dm_store *s = NULL;
    parley_status st = dm_store_open(path, &(dm_store_params){ .busy_ms = 50 }, &s);
    CHECK(st == want && strstr(parley_errmsg(), says) && strstr(parley_errmsg(), path), "%s: %s %s",
          what, parley_status_str(st), parley_errmsg());
    dm_store_close(s);
    CHECK(before && file_equals(path, before, n), "%s: the file was modified", what);
    char wal[4300];
    snprintf(wal, sizeof wal, "%s-wal", path);
    CHECK(access(wal, F_OK) != 0, "%s: a -wal file was left beside it", what);
    free(before);
}

static void test_not_a_database(void)
{
    remove_store();
    unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)(i * 7 + 3);
    FILE *f = fopen(path, "wb");
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    refused_untouched("junk file", PARLEY_ERR_FORMAT, "not a SQLite database");
    CHECK(file_equals(path, junk, sizeof junk), "the junk file was modified");
}

/* A real store with one page overwritten: the integrity check at open refuses it. */
static void test_corrupt_page(void)
{
    remove_store();
    dm_store *s;
    CHECK(dm_store_open(path, &(dm_store_params){ .busy_ms = 50 }, &s) == PARLEY_OK, "%s",
          parley_errmsg());
    for (int i = 1; i <= 200; i++)
        save_one(s, "carol", (uint64_t)i);
    dm_store_close(s); /* checkpoints the WAL into the file */
    struct stat sb;
    stat(path, &sb);
    CHECK(sb.st_size >= 4 * 4096, "store only %lld bytes", (long long)sb.st_size);
    int fd = open(path, O_WRONLY);
    unsigned char junk[4096];
    memset(junk, 0xA5, sizeof junk);
    CHECK(pwrite(fd, junk, sizeof junk, 2 * 4096) == (ssize_t)sizeof junk, "pwrite");
    close(fd);
    refused_untouched("corrupt page", PARLEY_ERR_FORMAT, "corrupt");
}

static void test_newer_schema(void)
{
    remove_store();
    sqlite3 *db;
    sqlite3_open(path, &db);
    sqlite3_exec(db, "CREATE TABLE future (x); PRAGMA user_version = 99", NULL, NULL, NULL);
    sqlite3_close(db);
    refused_untouched("newer schema", PARLEY_ERR_UNSUPPORTED, "schema version 99 is newer");
    char mode[32];
    CHECK(!strcmp(journal_mode(path, mode, sizeof mode), "delete"),
          "the newer file's journal mode became %s", mode);
    sqlite3_open(path, &db);
    sqlite3_stmt *q;
    sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL);
    sqlite3_step(q);
    CHECK(sqlite3_column_int(q, 0) == 99, "the newer file was changed");
    sqlite3_finalize(q);
    sqlite3_close(db);
}

/* Another application's database: refused before anything is written, so its bytes stay
 * as they were and it is not switched to WAL mode. The same for a file whose
 * schema version looks like parley's but whose tables are not. */
static void test_foreign_database(void)
{
    remove_store();
    sqlite3 *db;
    sqlite3_open(path, &db);
    int rc = sqlite3_exec(db,
                          "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);"
                          "INSERT INTO notes (body) VALUES ('keep me'), ('and me');",
                          NULL, NULL, NULL);
    CHECK(rc == SQLITE_OK, "foreign file: %s", sqlite3_errmsg(db));
    sqlite3_close(db);
    refused_untouched("foreign database", PARLEY_ERR_FORMAT, "another application");
    char mode[32];
    CHECK(!strcmp(journal_mode(path, mode, sizeof mode), "delete"),
          "the foreign file's journal mode became %s", mode);

    remove_store();
    sqlite3_open(path, &db);
    rc = sqlite3_exec(db, "CREATE TABLE users (name TEXT); PRAGMA user_version = 1", NULL, NULL,
                      NULL);
    CHECK(rc == SQLITE_OK, "foreign file: %s", sqlite3_errmsg(db));
    sqlite3_close(db);
    refused_untouched("foreign database with a version", PARLEY_ERR_FORMAT, "not parley's tables");
    CHECK(!strcmp(journal_mode(path, mode, sizeof mode), "delete"),
          "the foreign file's journal mode became %s", mode);

    /* An empty database (a file some tool created) is a new store. */
    remove_store();
    sqlite3_open(path, &db);
    sqlite3_exec(db, "CREATE TABLE t (x); DROP TABLE t", NULL, NULL, NULL);
    sqlite3_close(db);
    dm_store *s = NULL;
    CHECK(dm_store_open(path, &(dm_store_params){ .busy_ms = 50 }, &s) == PARLEY_OK,
          "empty database: %s", parley_errmsg());
    dm_store_close(s);
}

/* A version-1 file (no turns.form column) is migrated and its users carry on. */
static void test_migration_from_v1(void)
{
    remove_store();
    sqlite3 *db;
    sqlite3_open(path, &db);
    int rc = sqlite3_exec(
            db,
            "CREATE TABLE users (user_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, session_no "
            "INTEGER "
            "NOT NULL, session_start INTEGER NOT NULL, last_active INTEGER NOT NULL, turns INTEGER "
            "NOT "
            "NULL, form TEXT, requested_slot TEXT, confirming INTEGER NOT NULL DEFAULT 0) WITHOUT "
            "ROWID;"
            "CREATE TABLE slots (user_id TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, "
            "PRIMARY KEY (user_id, name)) WITHOUT ROWID;"
            "CREATE TABLE turns (user_id TEXT NOT NULL, turn_id INTEGER NOT NULL, session_id TEXT "
            "NOT "
            "NULL, text TEXT, nlu_intent TEXT, confidence REAL, entities TEXT, intent TEXT, action "
            "TEXT, "
            "reply TEXT, t_in INTEGER, t_reply INTEGER, PRIMARY KEY (user_id, turn_id)) WITHOUT "
            "ROWID;"
            "INSERT INTO users VALUES ('dave', 'old', 1, 0, 0, 7, NULL, NULL, 0);"
            "INSERT INTO slots VALUES ('dave', 'size', 'small');"
            "PRAGMA user_version = 1;",
            NULL, NULL, NULL);
    CHECK(rc == SQLITE_OK, "v1 file: %s", sqlite3_errmsg(db));
    sqlite3_close(db);
    dm_store *s;
    CHECK(dm_store_open(path, &(dm_store_params){ .busy_ms = 50 }, &s) == PARLEY_OK,
          "migrating: %s", parley_errmsg());
    if (!s)
        return;
    dm_user u;
    CHECK(dm_store_load(s, "dave", &u) == PARLEY_OK && u.exists && u.turns == 7 && u.n_slots == 1 &&
                  !strcmp(u.slots[0].value, "small"),
          "dave after migration");
    dm_user_clear(&u);
    CHECK(save_one(s, "dave", 8) == PARLEY_OK, "saving after migration: %s", parley_errmsg());
    dm_store_close(s);
}

/* Read-only: file permissions do not stop root, so the check runs as `nobody` in a child. */
static void test_read_only(void)
{
    remove_store();
    dm_store *s;
    CHECK(dm_store_open(path, &(dm_store_params){ .busy_ms = 50 }, &s) == PARLEY_OK, "%s",
          parley_errmsg());
    CHECK(save_one(s, "erin", 1) == PARLEY_OK, "%s", parley_errmsg());
    dm_store_close(s);
    chmod(path, 0444);
    chmod(dir, 0555);
    pid_t pid = fork();
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(77);
        dm_store *r = NULL;
        parley_status st = dm_store_open(path, &(dm_store_params){ .busy_ms = 50 }, &r);
        int ok = st == PARLEY_ERR_IO && strstr(parley_errmsg(), "read-only") &&
                 strstr(parley_errmsg(), path);
        if (!ok)
            fprintf(stderr, "read-only store: %s %s\n", parley_status_str(st), parley_errmsg());
        dm_store_close(r);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    chmod(dir, 0700);
    chmod(path, 0644);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 77)
        printf("read-only check skipped: cannot drop root privileges here\n");
    else
        CHECK(code == 0, "read-only store check failed (exit %d)", code);
    /* Nothing was lost. */
    CHECK(dm_store_open(path, &(dm_store_params){ .busy_ms = 50 }, &s) == PARLEY_OK, "%s",
          parley_errmsg());
    dm_user u = { 0 };
    CHECK(s && dm_store_load(s, "erin", &u) == PARLEY_OK && u.exists && u.turns == 1, "erin lost");
    dm_user_clear(&u);
    dm_store_close(s);
}

int main(void)
{
    if (!tmp_store_dir(dir, sizeof dir, "store"))
        return 1;
    chmod(dir, 0755); /* so the read-only check's unprivileged child can reach the file */
    snprintf(path, sizeof path, "%s/ctx.db", dir);
    test_roundtrip_and_restart();
    test_locked();
    test_two_writers();
    test_not_a_database();
    test_corrupt_page();
    test_newer_schema();
    test_foreign_database();
    test_migration_from_v1();
    test_read_only();
    remove_store();
    rmdir(dir);
    return check_done();
}
