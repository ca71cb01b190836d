/* strbuf.c — the growing printf string of strbuf.h: formats in place, and when the text
 * does not fit, doubles the buffer (from 1 KiB) and formats again.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "sdk/base/strbuf.h"

/* Makes room for `need` more bytes and a NUL; 0 (and failed set) when memory ran out. */
static int reserve(pl_strbuf *b, size_t need)
{
    if (b->s && b->len + need < b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + need + 1)
        cap *= 2;
    char *s = pl_realloc(b->s, cap);
    if (!s) {
        b->failed = 1;
        return 0;
    }
    b->s = s;
    b->cap = cap;
    return 1;
}

void pl_strbuf_append(pl_strbuf *b, const void *data, size_t n)
{
    if (b->failed || !reserve(b, n))
        return;
    memcpy(b->s + b->len, data, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void pl_strbuf_printf(pl_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (int pass = 0; pass < 2 && !b->failed; pass++) {
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
        } else if (b->s && (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        } else {
            reserve(b, (size_t)n);
        }
    }
}
