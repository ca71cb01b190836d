/* test_store_io.c — `parley store import` checks every line as the entry points check what
 * users send, and imports all of its lines or none.
 *
 * A store holds alice; each case imports a good line for bob then a bad line: the import
 * must fail naming line 2 and the rule, and the store's export must stay what it was (bob
 * not in, alice untouched: a line for "alice\u0000evil" once replaced her). Lines that pass
 * (Unicode, the largest whole numbers, control characters where a text may hold them)
 * round-trip: import then export gives the same bytes, and again through a second store.
 * A purge's days out of range are named as given. Runs on SQLite, and on PostgreSQL under
 * tests/pg_server.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parley/dialog.h"
#include "tests/check.h"
#include "tests/dialog/tmp_store.h"

static char dir[4096], store_a[4200], store_b[4200];

/* An export line as parley writes one (members in its order, slots in name order). */
#define ALICE                                                                                      \
    "{\"user\":\"alice\",\"session_id\":\"s1\",\"session_no\":1,\"session_start_ms\":5,"           \
    "\"last_active_ms\":9,\"turns\":3,\"form\":\"pizza_form\",\"requested_slot\":null,"            \
    "\"confirming\":0,\"slots\":{\"size\":\"large\",\"topping\":\"ham\"},\"history\":["            \
    "{\"turn\":1,\"session_id\":\"s1\",\"text\":\"hi\",\"nlu_intent\":\"greet\",\"confidence\":0." \
    "5,"                                                                                           \
    "\"entities\":\"[]\",\"intent\":\"greet\",\"action\":null,\"reply\":\"hello\",\"form\":null,"  \
    "\"t_in_ms\":5,\"t_reply_ms\":6},"                                                             \
    "{\"turn\":3,\"session_id\":\"s1\",\"text\":\"a large one\",\"nlu_intent\":\"order\","         \
    "\"confidence\":0.25,\"entities\":\"[{\\\"name\\\":\\\"size\\\",\\\"value\\\":\\\"large\\\"}]" \
    "\","                                                                                          \
    "\"intent\":\"order\",\"action\":\"utter_ask\",\"reply\":\"how "                               \
    "many?\",\"form\":\"pizza_form\","                                                             \
    "\"t_in_ms\":8,\"t_reply_ms\":9}]}"

/* Text as JSON escapes and UTF-8 keep it, the largest whole numbers, a tab in a text. */
#define BOB                                                                                      \
    "{\"user\":\"b\xc3\xb6\x62 \xe2\x98\x83\",\"session_id\":\"00ff\",\"session_no\":"           \
    "999999999999999,\"session_start_ms\":999999999999999,\"last_active_ms\":0,\"turns\":"       \
    "999999999999999,\"form\":null,\"requested_slot\":null,\"confirming\":1,\"slots\":{},"       \
    "\"history\":[{\"turn\":999999999999999,\"session_id\":\"00ff\",\"text\":\"tab\\there "      \
    "\\\"q\\\" \xe2\x82\xac\",\"nlu_intent\":null,\"confidence\":-1.5e-07,\"entities\":null,"    \
    "\"intent\":null,\"action\":null,\"reply\":null,\"form\":null,\"t_in_ms\":0,\"t_reply_ms\":" \
    "1700000000000}]}"

/* s with its first `from` replaced by `to` (owned by the caller: free). */
static char *replace(const char *s, const char *from, const char *to)
{
    const char *at = strstr(s, from);
    if (!at) {
        fprintf(stderr, "test: '%s' is not in the line\n", from);
        exit(1);
    }
    size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
    return out;
}

/* What the store exports (owned by the caller: free); NULL on failure. */
static char *export_text(const char *where)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    parley_status st = parley_store_export(where, f, NULL);
    fclose(f);
    CHECK(st == PARLEY_OK, "export %s: %s", where, parley_errmsg());
    if (st != PARLEY_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

static parley_status import_text(const char *where, const char *text, long *n)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    parley_status st = parley_store_import(where, f, n);
    fclose(f);
    return st;
}

static void test_round_trip(void)
{
    const char *lines = ALICE "\n\n" BOB "\n";
    long n = 0;
    tmp_store_remove(store_a);
    tmp_store_remove(store_b);
    CHECK(import_text(store_a, lines, &n) == PARLEY_OK && n == 2, "import: %s (%ld users)",
          parley_errmsg(), n);
    char *a = export_text(store_a);
    CHECK(a && !strcmp(a, ALICE "\n" BOB "\n"), "import then export changed the lines:\n%s",
          a ? a : "(none)");
    CHECK(a && import_text(store_b, a, &n) == PARLEY_OK, "second import: %s", parley_errmsg());
    char *b = export_text(store_b);
    CHECK(a && b && !strcmp(a, b), "export -> import -> export differs:\n%s\n%s", a ? a : "",
          b ? b : "");
    free(a);
    free(b);
}

typedef struct bad_case {
    const char *from, *to; /* in the line for alice */
    const char *says;      /* in the error */
} bad_case;

static void test_refused(void)
{
    static const bad_case cases[] = {
        { "\"alice\"", "\"alice\\u0000evil\"", "NUL" },
        { "\"alice\"",
          "\"al\xff"
          "ice\"",
          "invalid UTF-8" },
        { "\"alice\"", "\"al\\u001bice\"", "control character U+001B" },
        { "\"alice\"", "\"al\\u0085ice\"", "control character U+0085" },
        { "\"alice\"", "\"\"", "user id is empty" },
        { "\"session_id\":\"s1\",\"session_no\"", "\"session_id\":\"s\\n1\",\"session_no\"",
          "session_id: control character" },
        { "\"turns\":3", "\"turns\":-5", "turns: expected a whole number" },
        { "\"turns\":3", "\"turns\":1e300", "turns: expected a whole number" },
        { "\"turns\":3", "\"turns\":\"3\"", "turns: expected a whole number" },
        { "\"session_no\":1", "\"session_no\":1.5", "session_no: expected a whole number" },
        { "\"confirming\":0", "\"confirming\":2", "confirming: expected a whole number in [0, 1]" },
        { "\"confidence\":0.5", "\"confidence\":1e999", "confidence: expected a finite number" },
        { "\"turn\":1,", "\"turn\":0,", "history[0].turn: expected a whole number in [1, 3]" },
        { "\"turn\":3,", "\"turn\":1,", "history[1].turn: expected a whole number in [2, 3]" },
        { "\"turn\":3,", "\"turn\":4,", "history[1].turn" },
        { "\"t_in_ms\":8", "\"t_in_ms\":-8", "history[1].t_in_ms" },
        { "\"size\":\"large\"", "\"size\":\"large\",\"size\":\"small\"", "given twice" },
        { "\"form\":\"pizza_form\",", "\"form\":\"pizza_form\",\"form\":\"x\",", "given twice" },
        { "\"requested_slot\":null,", "\"requested_slot\":null,\"extra\":1,", "unknown member" },
        { "\"requested_slot\":null,", "", "requested_slot is missing" },
        { "\"form\":\"pizza_form\",", "\"form\":\"\",", "form is empty" },
        { "\"form\":\"pizza_form\",", "\"form\":\"pizza\\tform\",", "form: control character" },
        { "\"text\":\"hi\"", "\"text\":\"h\\u0000i\"", "NUL" },
        { "\"text\":\"hi\"", "\"text\":\"h\xc0\xafi\"", "history[0].text: invalid UTF-8" },
        { "\"reply\":\"hello\"", "\"reply\":5", "history[0].reply: expected a string" },
        { "\"entities\":\"[]\"", "\"entities\":\"{\"", "history[0].entities" },
        { "\"entities\":\"[]\"", "\"entities\":\"{}\"", "expected the text of a JSON array" },
        { "\"slots\":{", "\"slots\":[", "not valid JSON" },
        { "\"slots\":{\"size\":\"large\",", "\"slots\":{\"size\":3,", "slot \"size\": expected" },
        { "\"history\":[", "\"history\":{\"x\":[", "not valid JSON" },
    };
    tmp_store_remove(store_a);
    CHECK(import_text(store_a, ALICE "\n", NULL) == PARLEY_OK, "%s", parley_errmsg());
    char *before = export_text(store_a);
    for (size_t i = 0; before && i < sizeof cases / sizeof *cases; i++) {
        char *bad = replace(ALICE, cases[i].from, cases[i].to);
        char *bob = replace(BOB, "\"session_no\":999999999999999", "\"session_no\":2");
        size_t n = strlen(bob) + strlen(bad) + 3;
        char *text = malloc(n);
        snprintf(text, n, "%s\n%s\n", bob, bad);
        parley_status st = import_text(store_a, text, NULL);
        CHECK(st != PARLEY_OK && strstr(parley_errmsg(), "line 2") &&
                      strstr(parley_errmsg(), cases[i].says),
              "case %zu (%s -> %s): %s", i, cases[i].from, cases[i].to,
              st == PARLEY_OK ? "imported" : parley_errmsg());
        char *after = export_text(store_a);
        CHECK(after && !strcmp(before, after), "case %zu changed the store:\n%s", i, after);
        free(after);
        free(text);
        free(bob);
        free(bad);
    }
    /* Sizes: a user id of 129 bytes, a slot value of 1025. */
    static const struct {
        const char *from, *fmt;
        int n;
        const char *says;
    } sized[] = {
        { "\"alice\"", "\"%s\"", 129, "user id is 129 bytes" },
        { "\"size\":\"large\"", "\"size\":\"%s\"", 1025, "slot \"size\" is 1025 bytes" },
    };
    for (size_t i = 0; i < sizeof sized / sizeof *sized; i++) {
        char xs[1100], to[1200];
        memset(xs, 'x', (size_t)sized[i].n);
        xs[sized[i].n] = 0;
        snprintf(to, sizeof to, sized[i].fmt, xs);
        char *bad = replace(ALICE, sized[i].from, to);
        char *text = malloc(strlen(bad) + 2);
        sprintf(text, "%s\n", bad);
        CHECK(import_text(store_a, text, NULL) != PARLEY_OK &&
                      strstr(parley_errmsg(), sized[i].says),
              "%s: %s", sized[i].says, parley_errmsg());
        free(text);
        free(bad);
    }
    char *after = export_text(store_a);
    CHECK(after && before && !strcmp(before, after), "the size cases changed the store");
    free(after);
    free(before);
}

/* Days out of range are refused naming the number as given, not rounded ("1e+06"). */
static void test_purge_range(void)
{
    static const double days[] = { 1000001, -1, 2500000.5 };
    static const char *const says[] = { "got 1000001", "got -1", "got 2500000.5" };
    for (int i = 0; i < 3; i++)
        CHECK(parley_store_purge(store_a, days[i], NULL) == PARLEY_ERR_INVALID_ARG &&
                      strstr(parley_errmsg(), says[i]),
              "purge %g: %s", days[i], parley_errmsg());
}

int main(void)
{
    if (!tmp_store_dir(dir, sizeof dir, "store-io"))
        return 1;
    tmp_store_name(store_a, sizeof store_a, dir, "a");
    tmp_store_name(store_b, sizeof store_b, dir, "b");
    test_round_trip();
    test_refused();
    test_purge_range();
    tmp_store_remove(store_a);
    tmp_store_remove(store_b);
    rmdir(dir);
    return check_done();
}
