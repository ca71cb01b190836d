/* parley/status.h — status codes, per-thread error detail, logging and the allocator hook.
 *
 * Every fallible parley call returns a parley_status. PARLEY_OK is 0; the codes are
 * append-only, so a number keeps its meaning across releases. When a call fails it also
 * leaves a human-readable detail message for the calling thread (parley_errmsg()), which
 * names what went wrong and where (file, tensor, byte offset, file:line:col for YAML).
 *
 * The library never prints, exits or aborts. It reports through the log callback the
 * application installs with parley_log_set(); with none installed, log lines are dropped.
 */
#ifndef PARLEY_STATUS_H
#define PARLEY_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define PARLEY_API __declspec(dllexport)
#else
#define PARLEY_API __attribute__((visibility("default")))
#endif

typedef enum parley_status {
    PARLEY_OK = 0,
    PARLEY_ERR_INVALID_ARG = 1, /* a NULL or out-of-range argument from the caller */
    PARLEY_ERR_NOMEM = 2,       /* an allocation failed */
    PARLEY_ERR_IO = 3,          /* a file could not be opened, read, written or mapped */
    PARLEY_ERR_FORMAT = 4,      /* a file or message is malformed (JSON, safetensors, vocab) */
    PARLEY_ERR_CONFIG = 5,      /* a configuration value is missing, ill-typed or inconsistent */
    PARLEY_ERR_NOT_FOUND = 6,   /* a named thing (file, label, node kind) does not exist */
    PARLEY_ERR_NOT_BUILT = 7,   /* the feature was compiled out of this build */
    PARLEY_ERR_UNSUPPORTED = 8, /* valid, but not something this version can do */
    PARLEY_ERR_UTF8 = 9,        /* text is not valid UTF-8 */
    PARLEY_ERR_DEVICE = 10,     /* the accelerator or its driver failed */
    PARLEY_ERR_INTERNAL = 11,   /* a bug in parley; please report it */
} parley_status;

/* A static English name for a status ("PARLEY_ERR_IO: input/output error"). Never NULL. */
PARLEY_API const char *parley_status_str(parley_status st);

/* The detail message of the last failed call on this thread, or "" when there is none.
 * Borrowed: valid until the next parley call on the same thread. */
PARLEY_API const char *parley_errmsg(void);

typedef enum parley_log_level {
    PARLEY_LOG_DEBUG = 0,
    PARLEY_LOG_INFO = 1,
    PARLEY_LOG_WARN = 2,
    PARLEY_LOG_ERROR = 3,
} parley_log_level;

/* Receives one log line without a trailing newline. It may be called from any thread that
 * runs parley code, concurrently: it must be thread-safe. `msg` is borrowed for the call. */
typedef void (*parley_log_fn)(parley_log_level level, const char *msg, void *user_data);

/* Installs the log callback and the lowest level passed to it. NULL drops all lines.
 * Set it before starting other parley work; it is not synchronized with running calls. */
PARLEY_API void parley_log_set(parley_log_fn fn, void *user_data, parley_log_level min_level);

/* Replaceable allocator. All three functions must be set; user_data is passed back. */
typedef struct parley_allocator {
    void *(*malloc_fn)(size_t size, void *user_data);
    void *(*realloc_fn)(void *ptr, size_t size, void *user_data);
    void (*free_fn)(void *ptr, void *user_data);
    void *user_data;
} parley_allocator;

/* Routes parley's heap allocations (and cJSON's, whose hooks are process-wide) through
 * `a`; NULL restores the C library's. Call it only while no parley object is open: memory
 * must be freed by the allocator that gave it. */
PARLEY_API parley_status parley_set_allocator(const parley_allocator *a);

/* The library's version, "MAJOR.MINOR.PATCH". */
PARLEY_API const char *parley_version(void);

#ifdef __cplusplus
}
#endif
#endif
