/* files.h — file and directory helpers shared by every module: errors that name the path,
 * whole-file reads, directories, and crash-safe replacement of a file.
 *
 * Every function reports failures through pl_fail (the detail names the path) and is safe to
 * call from any thread on different paths.
 */
#ifndef SDK_BASE_FILES_H
#define SDK_BASE_FILES_H

#include <stddef.h>

#include "parley/status.h"

/* Reports the failed system call `what` ("open", "read", ...) on `path` from errno:
 * PARLEY_ERR_NOT_FOUND for a missing file, PARLEY_ERR_IO otherwise. */
parley_status pl_errno_fail(const char *path, const char *what);

/* Reads a whole (small) file into a NUL-terminated buffer owned by the caller (pl_free).
 * A file over max_size bytes is PARLEY_ERR_FORMAT; `len` may be NULL. */
parley_status pl_read_file(const char *path, size_t max_size, char **out, size_t *len);

/* Creates dir unless it exists as a directory; the error names it. */
parley_status pl_make_dir(const char *dir);
/* Creates dir and any missing parents (mkdir -p); a failure on a parent names dir too. */
parley_status pl_make_dirs(const char *dir);

/* parley's cache folder for `name` ("asr", "encoder"): $XDG_CACHE_HOME/parley/NAME, else
 * $HOME/.cache/parley/NAME, written into dir (size bytes). 0 when neither variable is set
 * or the path does not fit; nothing is created. */
int pl_cache_dir(const char *name, char *dir, size_t size);

/* A file written under a temporary name in the final directory and renamed over `path` by
 * pl_atomic_commit, so readers see the old file or the whole new one, never a part. */
typedef struct pl_atomic {
    char *path;     /* owned copy of the final path */
    char *tmp_path; /* owned; another writer may fill it by name (wp_vocab_save) */
    int fd;
} pl_atomic;

/* Creates the temporary file. On failure nothing is left behind and `a` needs no abort. */
parley_status pl_atomic_begin(pl_atomic *a, const char *path);
/* Appends n bytes; an error (disk full...) names the final path. */
parley_status pl_atomic_write(pl_atomic *a, const void *buf, size_t n);
/* Flushes the temporary file to disk and renames it to the final path. Whether it succeeds
 * or not, `a` is finished afterwards (a failed commit removes the temporary file). */
parley_status pl_atomic_commit(pl_atomic *a);
/* Removes the temporary file and frees `a`. Safe on a zeroed or finished pl_atomic. */
void pl_atomic_abort(pl_atomic *a);

/* The sibling folder in which a replacement of directory `dir` is built: "DIR.parley-new"
 * into buf (cap bytes). */
parley_status pl_dir_staging(const char *dir, char *buf, size_t cap);
/* Checks that directory dir, when it is there, holds only entries named in `allowed`
 * (NULL-terminated; the temporary files of pl_atomic for them too), so that replacing it
 * whole loses nothing else. PARLEY_ERR_INVALID_ARG names the first other entry. */
parley_status pl_dir_only(const char *dir, const char *const *allowed);
/* Puts directory `staged` in the place of `dir` in one step: renamed there when dir is not
 * there, else, after pl_dir_only(dir, allowed), exchanged with it atomically (renameat2
 * RENAME_EXCHANGE) and the old one removed; so readers see the old directory whole or the
 * new one whole, never a mix. On failure dir is as it was (a failure to remove the old one
 * is only logged). */
parley_status pl_dir_replace(const char *staged, const char *dir, const char *const *allowed);
/* Removes path and everything under it; symbolic links are removed, never followed. A
 * missing path is no error. */
parley_status pl_remove_tree(const char *path);

#endif
