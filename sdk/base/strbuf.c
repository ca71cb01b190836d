/* strbuf.c — the growing printf string of strbuf.h: formats in place, and when the text
 * does not fit, doubles the buffer (from 1 KiB) and formats again.
 */
#include <stdarg.h>
#include <stdio.h>

#include "sdk/base/alloc.h"
#include "sdk/base/strbuf.h"

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
            size_t cap = b->cap ? b->cap : 1024;
            while (cap < b->len + (size_t)n + 1)
                cap *= 2;
            char *s = pl_realloc(b->s, cap);
            if (!s) {
                b->failed = 1;
            } else {
                b->s = s;
                b->cap = cap;
            }
        }
    }
}
