/* tmpdir.h — a scratch directory for a test's files: made once, named paths inside it,
 * removed at the end.
 *
 * tmpdir_make("name") creates /tmp/parley-test-name-XXXXXX (exits on failure: a test
 * without its directory cannot run); tmpdir_path("f") is that directory's "f", in one of a
 * few rotating buffers, so up to four paths can be alive in one expression;
 * tmpdir_remove() deletes the directory and all in it. Not for paths kept long.
 */
#ifndef TESTS_TMPDIR_H
#define TESTS_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

static char tmpdir_name[256];

static inline void tmpdir_make(const char *what)
{
    snprintf(tmpdir_name, sizeof tmpdir_name, "/tmp/parley-test-%s-XXXXXX", what);
    if (!mkdtemp(tmpdir_name)) {
        perror("mkdtemp");
        exit(1);
    }
}

static inline const char *tmpdir_path(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir_name, name);
    return buf[k];
}

static inline void tmpdir_remove(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir_name);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir_name);
}

#endif
