/* slip.c — typing slips between what was typed and a value (slip.h), by code points. */
#include <string.h>

#include "sdk/base/slip.h"

int pl_code_points(const char *s, size_t len)
{
    int n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* The byte offsets of the code points of s[0..len), then len: at most max + 1 of them
 * (the caller checked the count). */
static void starts(const char *s, size_t len, size_t *at)
{
    int n = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            at[n++] = i;
    at[n] = len;
}

/* Whether code point i of a (offsets pa) is code point j of b (offsets pb). */
static int same(const char *a, const size_t *pa, int i, const char *b, const size_t *pb, int j)
{
    size_t la = pa[i + 1] - pa[i], lb = pb[j + 1] - pb[j];
    return la == lb && !memcmp(a + pa[i], b + pb[j], la);
}

/* Whether a's code points from i and b's from j are the same to the end. */
static int same_rest(const char *a, const size_t *pa, int na, int i, const char *b,
                     const size_t *pb, int nb, int j)
{
    return na - i == nb - j && pa[na] - pa[i] == pb[nb] - pb[j] &&
           !memcmp(a + pa[i], b + pb[j], pa[na] - pa[i]);
}

int pl_one_slip(const char *typed, size_t typed_len, const char *value, size_t value_len)
{
    const int na = pl_code_points(typed, typed_len), nb = pl_code_points(value, value_len);
    if (nb < PL_SLIP_MIN || nb > PL_SLIP_MAX || na < nb - 1 || na > nb + 1)
        return 0;
    size_t pa[PL_SLIP_MAX + 2], pb[PL_SLIP_MAX + 1];
    starts(typed, typed_len, pa);
    starts(value, value_len, pb);
    int i = 0;
    while (i < na && i < nb && same(typed, pa, i, value, pb, i))
        i++;
    if (na == nb)
        return i < na && (same_rest(typed, pa, na, i + 1, value, pb, nb, i + 1) ||
                          (i + 1 < na && same(typed, pa, i, value, pb, i + 1) &&
                           same(typed, pa, i + 1, value, pb, i) &&
                           same_rest(typed, pa, na, i + 2, value, pb, nb, i + 2)));
    return na > nb ? same_rest(typed, pa, na, i + 1, value, pb, nb, i)
                   : same_rest(typed, pa, na, i, value, pb, nb, i + 1);
}
