/* tmp_store.h — a scratch folder for a test's SQLite store, and removing a store with its
 * -wal and -shm files. */
#ifndef TESTS_DIALOG_TMP_STORE_H
#define TESTS_DIALOG_TMP_STORE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

static inline void tmp_store_remove(const char *path)
{
    static const char *const suffix[] = { "", "-wal", "-shm" };
    for (int i = 0; i < 3; i++) {
        char p[4300];
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

#endif
