/* test_names.c — the name → index table (sdk/base/names.h): found as added, a repeated name
 * answers its first index, growing one name at a time keeps every name, lengths matter
 * (not NUL-terminated keys), and a failed growth leaves the table as it was.
 */
#include <stdio.h>
#include <string.h>

#include "parley/parley.h"
#include "sdk/base/names.h"
#include "tests/check.h"
#include "tests/fault.h"

enum { N = 20000 };
static char words[N][12];

static void test_grow_and_find(void)
{
    pl_names t = { 0 };
    CHECK(pl_names_find(&t, "x", 1) == -1, "a zeroed table is empty");
    int kept = 1;
    for (int i = 0; i < N; i++) {
        snprintf(words[i], sizeof words[i], "w%d", i);
        kept &= pl_names_reserve(&t, (size_t)i + 1) == PARLEY_OK &&
                pl_names_add(&t, words[i], strlen(words[i]), i) == -1;
    }
    CHECK(kept, "20,000 names added one at a time");
    int found = 1;
    for (int i = 0; i < N; i++)
        found &= pl_names_find(&t, words[i], strlen(words[i])) == i;
    CHECK(found, "every name found at its index after the table grew");
    CHECK(pl_names_add(&t, "w17", 3, 99) == 17, "a repeated name answers its first index");
    CHECK(pl_names_find(&t, "w1", 2) == 1 && pl_names_find(&t, "w17x", 3) == 17,
          "only the given length counts");
    CHECK(pl_names_find(&t, "nope", 4) == -1, "a missing name");
    size_t places = t.mask + 1;
    CHECK(pl_names_reserve(&t, 10) == PARLEY_OK && t.mask + 1 == places, "no shrinking");
    pl_names_free(&t);
    CHECK(t.entry == NULL && pl_names_find(&t, "w1", 2) == -1, "freed and zeroed");
}

static parley_status grow_op(void *ctx)
{
    pl_names *t = ctx;
    parley_status st = pl_names_reserve(t, 1000);
    if (st != PARLEY_OK) {
        int kept = 1;
        for (int i = 0; i < 5; i++)
            kept &= pl_names_find(t, words[i], strlen(words[i])) == i;
        CHECK(kept, "a failed growth keeps the names");
        return st;
    }
    return PARLEY_OK;
}

int main(void)
{
    test_grow_and_find();
    pl_names t = { 0 };
    CHECK(pl_names_reserve(&t, 5) == PARLEY_OK, "reserve");
    for (int i = 0; i < 5; i++)
        pl_names_add(&t, words[i], strlen(words[i]), i);
    /* Growing takes one allocation: when it fails, the small table stays whole. */
    fault_on(1);
    CHECK(grow_op(&t) == PARLEY_ERR_NOMEM, "growth fails cleanly");
    fault_off();
    CHECK(grow_op(&t) == PARLEY_OK && pl_names_find(&t, "w4", 2) == 4, "then grows");
    pl_names_free(&t);
    return check_done();
}
