/* test_numwords.c — numbers as words (sdk/base/numwords.h): spelled out ("1600" → "one
 * thousand six hundred") and read in pairs of digits as people say house numbers and years
 * ("sixteen hundred", "two twenty one", "nineteen oh five"), or no pair reading where there
 * is none; and every spelled number from 0 to 9999 read back as its digits.
 */
#include <stdio.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "sdk/base/numwords.h"
#include "tests/check.h"

/* n as words (the leading space dropped), into buf; pairs: read in pairs, "-" when none. */
static const char *say(char *buf, size_t size, int n, int pairs)
{
    pl_strbuf o = { 0 };
    int said = 1;
    if (pairs)
        said = pl_number_pairs(&o, n);
    else
        pl_number_spell(&o, n);
    snprintf(buf, size, "%s", !said ? "-" : o.s ? o.s + 1 : "(nothing)");
    pl_free(o.s);
    return buf;
}

int main(void)
{
    static const struct {
        int n;
        const char *spelled, *pairs;
    } cases[] = {
        { 7, "seven", "-" },
        { 42, "forty two", "-" },
        { 100, "one hundred", "-" },
        { 205, "two hundred five", "two oh five" },
        { 221, "two hundred twenty one", "two twenty one" },
        { 1000, "one thousand", "-" },
        { 1600, "one thousand six hundred", "sixteen hundred" },
        { 1905, "one thousand nine hundred five", "nineteen oh five" },
        { 1984, "one thousand nine hundred eighty four", "nineteen eighty four" },
        { 2000, "two thousand", "-" },
        { 2005, "two thousand five", "twenty oh five" },
        { 2024, "two thousand twenty four", "twenty twenty four" },
        { 9999, "nine thousand nine hundred ninety nine", "ninety nine ninety nine" },
        { 12000, "twelve thousand", "-" },
    };
    char buf[128];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CHECK(!strcmp(say(buf, sizeof buf, cases[i].n, 0), cases[i].spelled), "%d spelled: %s",
              cases[i].n, buf);
        CHECK(!strcmp(say(buf, sizeof buf, cases[i].n, 1), cases[i].pairs), "%d in pairs: %s",
              cases[i].n, buf);
    }
    int back = 0;
    for (int n = 0; n <= 9999; n++) {
        char digits[16];
        say(buf, sizeof buf, n, 0);
        char *d = pl_number_digits(buf, strlen(buf), NULL);
        snprintf(digits, sizeof digits, "%d", n);
        back += d && !strcmp(d, digits);
        pl_free(d);
    }
    CHECK(back == 10000, "%d of 10000 spelled numbers read back as their digits", back);
    return check_done();
}
