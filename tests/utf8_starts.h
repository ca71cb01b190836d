/* utf8_starts.h — where the code points of a UTF-8 string begin, for tests that cut
 * strings at code points (typing slips, their variants). Header-only. */
#ifndef TESTS_UTF8_STARTS_H
#define TESTS_UTF8_STARTS_H

#include <string.h>

/* The byte offsets where s's code points begin into at[], then its length at at[n]: n, the
 * count of code points. at must hold strlen(s) + 1 entries. */
static inline int utf8_starts(const char *s, size_t *at)
{
    int n = 0;
    size_t len = strlen(s);
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            at[n++] = i;
    at[n] = len;
    return n;
}

#endif
