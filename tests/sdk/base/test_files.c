/* test_files.c — the base layer's file, JSON and lock helpers (sdk/base/files.h, json.h,
 * sync.h): whole-file reads and their limits, mkdir -p, atomic replacement (the old file
 * stays whole until the commit, nothing is left behind on abort or failure), JSON errors with
 * line:col, the failure detail of pl_nomem, and allocation-failure sweeps.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parley/parley.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"
#include "sdk/base/json.h"
#include "sdk/base/sync.h"
#include "tests/check.h"
#include "tests/fault.h"

static char root[] = "/tmp/parley_test_files_XXXXXX";

static const char *path_in(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", root, name);
    return buf[k];
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Entries in `dir` other than . and .. (a leftover temporary file would show here). */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static void test_read_file(void)
{
    char *buf = NULL;
    size_t len = 0;
    write_text(path_in("small.txt"), "hello\nworld\n");
    CHECK(pl_read_file(path_in("small.txt"), 100, &buf, &len) == PARLEY_OK, "read: %s",
          parley_errmsg());
    CHECK(buf && len == 12 && !strcmp(buf, "hello\nworld\n"), "read gave %zu bytes", len);
    pl_free(buf);

    buf = NULL;
    CHECK(pl_read_file(path_in("small.txt"), 11, &buf, NULL) == PARLEY_ERR_FORMAT && !buf,
          "a file over the cap is refused");
    CHECK(strstr(parley_errmsg(), "small.txt") != NULL, "the error names the file: %s",
          parley_errmsg());
    CHECK(pl_read_file(path_in("missing.txt"), 100, &buf, NULL) == PARLEY_ERR_NOT_FOUND,
          "a missing file is NOT_FOUND");
    CHECK(strstr(parley_errmsg(), "missing.txt") && strstr(parley_errmsg(), "cannot open"),
          "detail: %s", parley_errmsg());
    CHECK(pl_read_file(root, 100, &buf, NULL) == PARLEY_ERR_IO, "a directory is not a file");
}

static void test_make_dirs(void)
{
    struct stat sb;
    CHECK(pl_make_dirs(path_in("a/b/c")) == PARLEY_OK, "mkdir -p: %s", parley_errmsg());
    CHECK(stat(path_in("a/b/c"), &sb) == 0 && S_ISDIR(sb.st_mode), "a/b/c is a directory");
    CHECK(pl_make_dirs(path_in("a/b/c")) == PARLEY_OK, "an existing directory is fine");
    write_text(path_in("plain"), "x");
    CHECK(pl_make_dir(path_in("plain")) == PARLEY_ERR_IO, "a file in the way is an error");
    CHECK(strstr(parley_errmsg(), "plain") != NULL, "detail: %s", parley_errmsg());
    CHECK(pl_make_dirs(path_in("plain/sub")) != PARLEY_OK, "a file in the path is an error");
}

static void test_atomic(void)
{
    const char *dir = path_in("atomic");
    const char *target = path_in("atomic/model.bin");
    CHECK(pl_make_dir(dir) == PARLEY_OK, "mkdir: %s", parley_errmsg());
    write_text(target, "old contents");

    pl_atomic a;
    CHECK(pl_atomic_begin(&a, target) == PARLEY_OK, "begin: %s", parley_errmsg());
    CHECK(pl_atomic_write(&a, "new", 3) == PARLEY_OK, "write: %s", parley_errmsg());
    char *buf = NULL;
    CHECK(pl_read_file(target, 100, &buf, NULL) == PARLEY_OK && !strcmp(buf, "old contents"),
          "before the commit readers see the old file");
    pl_free(buf);
    CHECK(entries(dir) == 2, "the temporary file sits beside the target");
    CHECK(pl_atomic_commit(&a) == PARLEY_OK, "commit: %s", parley_errmsg());
    buf = NULL;
    CHECK(pl_read_file(target, 100, &buf, NULL) == PARLEY_OK && !strcmp(buf, "new"),
          "after the commit readers see the new file");
    pl_free(buf);
    CHECK(entries(dir) == 1, "nothing is left beside the target after a commit");

    CHECK(pl_atomic_begin(&a, target) == PARLEY_OK, "begin: %s", parley_errmsg());
    CHECK(pl_atomic_write(&a, "discarded", 9) == PARLEY_OK, "write: %s", parley_errmsg());
    pl_atomic_abort(&a);
    pl_atomic_abort(&a); /* a finished pl_atomic may be aborted again */
    buf = NULL;
    CHECK(pl_read_file(target, 100, &buf, NULL) == PARLEY_OK && !strcmp(buf, "new"),
          "an aborted write leaves the file as it was");
    pl_free(buf);
    CHECK(entries(dir) == 1, "nothing is left behind after an abort");

    CHECK(pl_atomic_begin(&a, path_in("no/such/dir/file")) == PARLEY_ERR_IO,
          "a missing directory fails at begin");
    CHECK(strstr(parley_errmsg(), "no/such/dir/file") != NULL, "detail: %s", parley_errmsg());
}

/* The text of a small file, or "" (static buffer). */
static const char *text_of(const char *path)
{
    static char buf[64];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
    return buf;
}

/* A directory replaced whole: renamed in when missing, exchanged (the old one removed, a
 * symbolic link in it removed and not followed) when there, refused while it holds an entry
 * not allowed (a leftover temporary file of an allowed one is fine), as it was then. */
static void test_dir_replace(void)
{
    static const char *const allowed[] = { "a.txt", "sub", NULL };
    char staged[600], dir[600];
    snprintf(dir, sizeof dir, "%s", path_in("model"));
    CHECK(pl_dir_staging(dir, staged, sizeof staged) == PARLEY_OK &&
                  !strcmp(staged + strlen(staged) - 16, "model.parley-new"),
          "staging %s", staged);
    CHECK(pl_dir_staging(path_in("model/"), staged, sizeof staged) == PARLEY_OK &&
                  !strcmp(staged + strlen(staged) - 16, "model.parley-new"),
          "staging of a path ending in '/': %s", staged);
    CHECK(mkdir(staged, 0777) == 0, "mkdir");
    write_text(path_in("model.parley-new/a.txt"), "one");
    CHECK(pl_dir_replace(staged, dir, allowed) == PARLEY_OK &&
                  !strcmp(text_of(path_in("model/a.txt")), "one") && access(staged, F_OK) != 0,
          "into a missing folder: %s", parley_errmsg());
    write_text(path_in("kept.txt"), "kept");
    CHECK(mkdir(path_in("model/sub"), 0777) == 0 &&
                  symlink(path_in("kept.txt"), path_in("model/sub/link")) == 0,
          "a link in the old folder");
    write_text(path_in("model/.a.txt.tmp-123456"), "left over");
    CHECK(mkdir(staged, 0777) == 0, "mkdir");
    write_text(path_in("model.parley-new/a.txt"), "two");
    CHECK(pl_dir_replace(staged, dir, allowed) == PARLEY_OK &&
                  !strcmp(text_of(path_in("model/a.txt")), "two") && entries(dir) == 1 &&
                  access(staged, F_OK) != 0 && !strcmp(text_of(path_in("kept.txt")), "kept"),
          "over a folder: %s, %d entries", parley_errmsg(), entries(dir));
    write_text(path_in("model/notes.txt"), "mine");
    CHECK(mkdir(staged, 0777) == 0, "mkdir");
    write_text(path_in("model.parley-new/a.txt"), "three");
    parley_status st = pl_dir_replace(staged, dir, allowed);
    CHECK(st == PARLEY_ERR_INVALID_ARG && strstr(parley_errmsg(), "notes.txt") &&
                  !strcmp(text_of(path_in("model/a.txt")), "two") &&
                  !strcmp(text_of(path_in("model/notes.txt")), "mine"),
          "a folder holding other files: %s", parley_errmsg());
    CHECK(pl_remove_tree(staged) == PARLEY_OK && access(staged, F_OK) != 0 &&
                  pl_remove_tree(staged) == PARLEY_OK,
          "removing a tree, and a missing one: %s", parley_errmsg());
}

static void test_json(void)
{
    cJSON *j = NULL;
    const char *good = " {\"a\": [1, 2]}\n";
    CHECK(pl_json_parse(good, strlen(good), "good.json", &j) == PARLEY_OK && j, "parse: %s",
          parley_errmsg());
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(j, "a")) == 2, "the tree is the text's");
    cJSON_Delete(j);

    const char *bad = "{\n  \"a\": [1,\n  2,, 3]\n}";
    CHECK(pl_json_parse(bad, strlen(bad), "bad.json", &j) == PARLEY_ERR_FORMAT && !j,
          "bad syntax is refused");
    CHECK(strstr(parley_errmsg(), "bad.json:3:") != NULL, "the error gives the line: %s",
          parley_errmsg());

    const char *trailing = "{}\n  x";
    CHECK(pl_json_parse(trailing, strlen(trailing), "t.json", &j) == PARLEY_ERR_FORMAT,
          "text after the value is refused");
    CHECK(strstr(parley_errmsg(), "t.json:2:3") != NULL, "the error points at it: %s",
          parley_errmsg());
}

static void test_detail_helpers(void)
{
    CHECK(pl_nomem("%s: the tag table", "m.json") == PARLEY_ERR_NOMEM, "pl_nomem's status");
    CHECK(!strcmp(parley_errmsg(), "m.json: the tag table: out of memory"), "detail: %s",
          parley_errmsg());
    CHECK(pl_nomem(NULL) == PARLEY_ERR_NOMEM && !strcmp(parley_errmsg(), "out of memory"),
          "pl_nomem(NULL): %s", parley_errmsg());

    pthread_mutex_t mu;
    pthread_cond_t c;
    CHECK(pl_mutex_init(&mu, "test") == PARLEY_OK, "mutex: %s", parley_errmsg());
    CHECK(pl_cond_init(&c, "test") == PARLEY_OK, "cond: %s", parley_errmsg());
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += 1000000;
    if (until.tv_nsec >= 1000000000L)
        until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&mu);
    int rc = pthread_cond_timedwait(&c, &mu, &until);
    pthread_mutex_unlock(&mu);
    CHECK(rc == ETIMEDOUT, "a monotonic deadline 1 ms ahead times out (rc %d)", rc);
    pthread_cond_destroy(&c);
    pthread_mutex_destroy(&mu);
}

static parley_status read_op(void *ctx)
{
    char *buf = NULL;
    parley_status st = pl_read_file(ctx, 100, &buf, NULL);
    pl_free(buf);
    return st;
}

static parley_status json_op(void *ctx)
{
    cJSON *j = NULL;
    const char *text = ctx;
    parley_status st = pl_json_parse(text, strlen(text), "sweep.json", &j);
    cJSON_Delete(j);
    return st;
}

static parley_status atomic_op(void *ctx)
{
    pl_atomic a;
    parley_status st = pl_atomic_begin(&a, ctx);
    if (st != PARLEY_OK)
        return st;
    if ((st = pl_atomic_write(&a, "x", 1)) != PARLEY_OK) {
        pl_atomic_abort(&a);
        return st;
    }
    return pl_atomic_commit(&a);
}

int main(void)
{
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    test_read_file();
    test_make_dirs();
    test_atomic();
    test_dir_replace();
    test_json();
    test_detail_helpers();
    CHECK(fault_sweep("pl_read_file", read_op, (void *)path_in("small.txt")) >= 1,
          "the read allocates");
    CHECK(fault_sweep("pl_json_parse", json_op, "{\"a\": [1, {\"b\": \"c\"}]}") >= 3,
          "the parse allocates");
    CHECK(fault_sweep("pl_atomic", atomic_op, (void *)path_in("atomic/swept")) >= 2,
          "the atomic write allocates");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0, "cleanup");
    return check_done();
}
