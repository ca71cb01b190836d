/* files.c — the file and directory helpers every module shares (see files.h): errors named
 * after the path, whole-file reads with a size cap, directories made on demand, and writes that
 * replace a file atomically, directories replaced whole.
 *
 * No format lives here: safetensors is nlu/model/safetensors.c, JSON parsing json.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"

parley_status pl_errno_fail(const char *path, const char *what)
{
    int err = errno;
    return pl_fail(err == ENOENT ? PARLEY_ERR_NOT_FOUND : PARLEY_ERR_IO, "%s: cannot %s: %s", path,
                   what, strerror(err));
}

parley_status pl_make_dir(const char *dir)
{
    struct stat sb;
    if (mkdir(dir, 0777) == 0 || (errno == EEXIST && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)))
        return PARLEY_OK;
    return pl_fail(PARLEY_ERR_IO, "%s: cannot create the directory: %s", dir,
                   errno == EEXIST ? "a file of that name exists" : strerror(errno));
}

parley_status pl_read_file(const char *path, size_t max_size, char **out, size_t *len)
{
    parley_status st;
    char *buf = NULL;
    struct stat sb;
    size_t got = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *out = NULL;
    if (fd < 0)
        return pl_errno_fail(path, "open");
    if (fstat(fd, &sb) != 0) {
        st = pl_errno_fail(path, "stat");
        goto fail;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = pl_fail(PARLEY_ERR_IO, "%s: not a regular file", path);
        goto fail;
    }
    if ((unsigned long long)sb.st_size > max_size) {
        st = pl_fail(PARLEY_ERR_FORMAT, "%s: %lld bytes, more than the %zu this file may have",
                     path, (long long)sb.st_size, max_size);
        goto fail;
    }
    buf = pl_malloc((size_t)sb.st_size + 1);
    if (!buf) {
        st = pl_nomem("%s: %lld bytes", path, (long long)sb.st_size);
        goto fail;
    }
    while (got < (size_t)sb.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            st = r < 0 ? pl_errno_fail(path, "read")
                       : pl_fail(PARLEY_ERR_IO, "%s: shrank while being read", path);
            goto fail;
        }
        got += (size_t)r;
    }
    buf[got] = '\0';
    close(fd);
    *out = buf;
    if (len)
        *len = got;
    return PARLEY_OK;
fail:
    pl_free(buf);
    close(fd);
    return st;
}

parley_status pl_atomic_begin(pl_atomic *a, const char *path)
{
    parley_status st;
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    memset(a, 0, sizeof *a);
    a->fd = -1;
    a->path = pl_strdup(path);
    a->tmp_path = pl_malloc(strlen(path) + 16);
    if (!a->path || !a->tmp_path) {
        st = pl_nomem("%s", path);
        goto fail;
    }
    /* A hidden name beside the final one: same filesystem, so rename is atomic. */
    sprintf(a->tmp_path, "%.*s.%s.tmp-XXXXXX", (int)dir_len, path, path + dir_len);
    a->fd = mkstemp(a->tmp_path);
    if (a->fd < 0) {
        st = pl_fail(PARLEY_ERR_IO, "%s: cannot create a temporary file beside it: %s", path,
                     strerror(errno));
        goto fail;
    }
    if (fchmod(a->fd, 0644) != 0) {
        st = pl_fail(PARLEY_ERR_IO, "%s: cannot set permissions: %s", path, strerror(errno));
        goto fail;
    }
    return PARLEY_OK;
fail:
    if (a->fd >= 0) {
        close(a->fd);
        unlink(a->tmp_path);
    }
    pl_free(a->path);
    pl_free(a->tmp_path);
    memset(a, 0, sizeof *a);
    return st;
}

parley_status pl_atomic_write(pl_atomic *a, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t w = write(a->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return pl_fail(PARLEY_ERR_IO, "%s: write failed: %s", a->path,
                           strerror(w < 0 ? errno : ENOSPC));
        p += w;
        n -= (size_t)w;
    }
    return PARLEY_OK;
}

void pl_atomic_abort(pl_atomic *a)
{
    if (!a->tmp_path)
        return;
    close(a->fd);
    unlink(a->tmp_path);
    pl_free(a->path);
    pl_free(a->tmp_path);
    memset(a, 0, sizeof *a);
}

parley_status pl_atomic_commit(pl_atomic *a)
{
    parley_status st = PARLEY_OK;
    int fd = a->fd;
    a->fd = -1;
    if (fsync(fd) != 0) {
        st = pl_fail(PARLEY_ERR_IO, "%s: cannot flush to disk: %s", a->path, strerror(errno));
        close(fd);
    } else if (close(fd) != 0) {
        st = pl_fail(PARLEY_ERR_IO, "%s: cannot close: %s", a->path, strerror(errno));
    } else if (rename(a->tmp_path, a->path) != 0) {
        st = pl_fail(PARLEY_ERR_IO, "%s: cannot rename the temporary file over it: %s", a->path,
                     strerror(errno));
    }
    if (st != PARLEY_OK)
        unlink(a->tmp_path);
    pl_free(a->path);
    pl_free(a->tmp_path);
    memset(a, 0, sizeof *a);
    return st;
}

parley_status pl_make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s: path too long", dir);
    for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        parley_status st = pl_make_dir(path);
        *s = '/';
        if (st != PARLEY_OK) /* a parent failed: say what it was for */
            return pl_wrap(st, "%s", dir);
    }
    return pl_make_dir(path);
}

int pl_cache_dir(const char *name, char *dir, size_t size)
{
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = cache && *cache ? snprintf(dir, size, "%s/parley/%s", cache, name)
            : home && *home ? snprintf(dir, size, "%s/.cache/parley/%s", home, name)
                            : -1;
    return n > 0 && (size_t)n < size;
}

/* ---- directories replaced whole ------------------------------------------------------------ */

parley_status pl_dir_staging(const char *dir, char *buf, size_t cap)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (snprintf(buf, cap, "%.*s.parley-new", (int)n, dir) >= (int)cap)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s: path too long", dir);
    return PARLEY_OK;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

parley_status pl_remove_tree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return errno == ENOENT ? PARLEY_OK : pl_errno_fail(path, "read");
    if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        return pl_errno_fail(path, "remove");
    return PARLEY_OK;
}

/* Whether `name` is one of allowed, or pl_atomic's temporary file for one: ".NAME.tmp-*". */
static int allowed_entry(const char *name, const char *const *allowed)
{
    for (; *allowed; allowed++) {
        size_t n = strlen(*allowed);
        if (!strcmp(name, *allowed) || (name[0] == '.' && !strncmp(name + 1, *allowed, n) &&
                                        !strncmp(name + 1 + n, ".tmp-", 5)))
            return 1;
    }
    return 0;
}

parley_status pl_dir_only(const char *dir, const char *const *allowed)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    parley_status st = PARLEY_OK;
    if (!d)
        return errno == ENOENT ? PARLEY_OK : pl_errno_fail(dir, "read");
    while (st == PARLEY_OK && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
            !allowed_entry(de->d_name, allowed))
            st = pl_fail(PARLEY_ERR_INVALID_ARG,
                         "%s holds '%s', which is not a model's: a model folder is replaced "
                         "whole, so give one that holds nothing else",
                         dir, de->d_name);
    closedir(d);
    return st;
}

parley_status pl_dir_replace(const char *staged, const char *dir, const char *const *allowed)
{
    struct stat sb;
    parley_status st;
    if (lstat(dir, &sb) != 0) {
        if (errno != ENOENT)
            return pl_errno_fail(dir, "read");
        return rename(staged, dir) == 0 ? PARLEY_OK : pl_errno_fail(dir, "rename a folder to");
    }
    if ((st = pl_dir_only(dir, allowed)) != PARLEY_OK)
        return st;
    if (renameat2(AT_FDCWD, staged, AT_FDCWD, dir, RENAME_EXCHANGE) != 0)
        return pl_errno_fail(dir, "swap the new folder in as");
    /* staged now names the old directory. */
    if (pl_remove_tree(staged) != PARLEY_OK)
        pl_log(PARLEY_LOG_WARN, "%s", parley_errmsg());
    return PARLEY_OK;
}
