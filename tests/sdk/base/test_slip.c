/* test_slip.c — typing slips (sdk/base/slip.h) against an independent reference: for every
 * pair of a value and a typed string drawn from a small alphabet, pl_one_slip agrees with
 * an edit distance (insertions, deletions, substitutions and swaps of neighbours) of exactly
 * one, computed by dynamic programming over code points; plus the length bounds, multi-byte
 * code points, and the examples the NLU and the dialog rely on.
 */
#include <stdio.h>
#include <string.h>

#include "sdk/base/slip.h"
#include "tests/check.h"
#include "tests/utf8_starts.h"

static int cp_eq(const char *a, const size_t *pa, int i, const char *b, const size_t *pb, int j)
{
    return pa[i + 1] - pa[i] == pb[j + 1] - pb[j] &&
           !memcmp(a + pa[i], b + pb[j], pa[i + 1] - pa[i]);
}

/* The optimal-string-alignment distance of a and b by code points. */
static int distance(const char *a, const char *b)
{
    size_t pa[80], pb[80];
    int na = utf8_starts(a, pa), nb = utf8_starts(b, pb), d[80][80];
    for (int i = 0; i <= na; i++)
        for (int j = 0; j <= nb; j++) {
            if (!i || !j) {
                d[i][j] = i + j;
                continue;
            }
            int best = d[i - 1][j] + 1;
            best = d[i][j - 1] + 1 < best ? d[i][j - 1] + 1 : best;
            int sub = d[i - 1][j - 1] + !cp_eq(a, pa, i - 1, b, pb, j - 1);
            best = sub < best ? sub : best;
            if (i > 1 && j > 1 && cp_eq(a, pa, i - 1, b, pb, j - 2) &&
                cp_eq(a, pa, i - 2, b, pb, j - 1) && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[na][nb];
}

static int slip(const char *typed, const char *value)
{
    return pl_one_slip(typed, strlen(typed), value, strlen(value));
}

/* Every string of length 4 to 6 over "abé" (é two bytes) as typed against every value of
 * length 5 over it: 1 exactly when the distance is 1. */
static void test_against_distance(void)
{
    static const char *const alphabet[] = { "a", "b", "\xc3\xa9" };
    char values[243][16], typed[1200][16];
    int nv = 0, nt = 0;
    for (int len = 4; len <= 6; len++) {
        int total = 1;
        for (int i = 0; i < len; i++)
            total *= 3;
        for (int code = 0; code < total; code++) {
            char s[16] = "";
            for (int i = 0, c = code; i < len; i++, c /= 3)
                strcat(s, alphabet[c % 3]);
            if (len == 5)
                strcpy(values[nv++], s);
            strcpy(typed[nt++], s);
        }
    }
    int agree = 0, pairs = 0, ones = 0;
    for (int v = 0; v < nv; v++)
        for (int t = 0; t < nt; t++, pairs++) {
            int want = distance(typed[t], values[v]) == 1;
            ones += want;
            agree += slip(typed[t], values[v]) == want;
        }
    CHECK(agree == pairs && ones > 0, "%d of %d pairs agree with the distance (%d at 1)", agree,
          pairs, ones);
}

static void test_examples(void)
{
    CHECK(slip("mushroos", "mushrooms") && slip("mushroomss", "mushrooms") &&
                  slip("mushrqoms", "mushrooms") && slip("muhsrooms", "mushrooms"),
          "left out, added, changed, swapped");
    CHECK(!slip("mushrooms", "mushrooms"), "no slip: equal");
    CHECK(!slip("muzhroomz", "mushrooms") && !slip("mushros", "mushrooms"), "two slips");
    CHECK(slip("larg", "large") && !slip("hm", "ham") && !slip("jam", "ham"),
          "values of 5 code points or more only");
    CHECK(slip("jalape\xc3\xb1s", "jalape\xc3\xb1os") && slip("jalapeos", "jalape\xc3\xb1os") &&
                  slip("jalapenos", "jalape\xc3\xb1os"),
          "a two-byte code point is one code point");
    char longest[PL_SLIP_MAX + 2];
    memset(longest, 'a', sizeof longest - 1);
    longest[PL_SLIP_MAX + 1] = '\0';
    CHECK(slip(longest + 2, longest + 1), "a value of PL_SLIP_MAX code points: a slip");
    CHECK(!slip(longest + 1, longest), "a value of PL_SLIP_MAX + 1 code points: none");
}

int main(void)
{
    test_against_distance();
    test_examples();
    return check_done();
}
