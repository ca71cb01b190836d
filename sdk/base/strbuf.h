/* strbuf.h — a growing string written with printf formats or appended bytes, for text made
 * piece by piece (reports, the metrics exposition, an HTTP answer as it arrives).
 *
 *   pl_strbuf b = { 0 };
 *   pl_strbuf_printf(&b, "%d turns\n", n);   ... more ...
 *   if (b.failed || !b.s) { pl_free(b.s); return pl_nomem("..."); }
 *   take b.s (NUL-terminated, b.len bytes; the caller frees it with pl_free)
 *
 * An allocation failure sticks in `failed` and later calls do nothing, so a writer checks
 * once at the end. Not thread-safe: one buffer, one thread.
 */
#ifndef SDK_BASE_STRBUF_H
#define SDK_BASE_STRBUF_H

#include <stddef.h>

#include "sdk/base/error.h"

typedef struct pl_strbuf {
    char *s; /* NULL until the first write */
    size_t len, cap;
    int failed; /* an allocation (or a format) failed: s holds what came before */
} pl_strbuf;

/* Appends the formatted text. */
void pl_strbuf_printf(pl_strbuf *b, const char *fmt, ...) PL_PRINTF(2, 3);
/* Appends n bytes of data as they are (NULs included), then a NUL after them. */
void pl_strbuf_append(pl_strbuf *b, const void *data, size_t n);

#endif
