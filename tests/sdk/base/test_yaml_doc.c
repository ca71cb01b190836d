/* test_yaml_doc.c — the YAML document tree: building, lookups, typed getters, positions of
 * nodes and of characters inside scalars, libyaml's syntax errors as FILE:LINE:COL, and
 * clean failure of every allocation. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parley/parley.h"
#include "sdk/base/yaml_doc.h"
#include "sdk/base/alloc.h"
#include "tests/check.h"
#include "tests/fault.h"

static yd_doc *parse(const char *text)
{
    yd_doc *d = NULL;
    parley_status st = yd_parse_string("t.yaml", text, strlen(text), &d);
    CHECK(st == PARLEY_OK, "parse failed: %s", parley_errmsg());
    return d;
}

/* Parses text expecting failure with st and a detail that starts with `prefix`. */
static void expect_error(const char *text, parley_status want, const char *prefix)
{
    yd_doc *d = NULL;
    parley_status st = yd_parse_string("t.yaml", text, strlen(text), &d);
    CHECK(st == want && d == NULL, "status %d for %s", st, prefix);
    CHECK(strncmp(parley_errmsg(), prefix, strlen(prefix)) == 0, "want '%s...', got '%s'", prefix,
          parley_errmsg());
}

static void expect_msg(parley_status st, parley_status want, const char *msg)
{
    CHECK(st == want, "status %d, want %d (%s)", st, want, msg);
    CHECK(strcmp(parley_errmsg(), msg) == 0, "want '%s', got '%s'", msg, parley_errmsg());
}

static void test_tree(void)
{
    yd_doc *d = parse("name: pizza\n"
                      "nodes:\n"
                      "  - name: input\n"
                      "    params: { port: 8765, ratio: 0.5, on: true }\n"
                      "  - [a, 'b c', \"d\"]\n"
                      "empty:\n");
    if (!d)
        return;
    const yd_node *root = yd_root(d);
    CHECK(root && root->kind == YD_MAP && root->n == 3, "root map of 3");
    CHECK(root->line == 1 && root->col == 1, "root at 1:1");
    const yd_node *name = yd_get(root, "name");
    CHECK(name && name->kind == YD_SCALAR && !strcmp(name->str, "pizza") && name->line == 1 &&
                  name->col == 7,
          "name scalar at 1:7");
    const yd_node *nodes = yd_get(root, "nodes");
    CHECK(nodes && nodes->kind == YD_SEQ && nodes->n == 2 && nodes->line == 3 && nodes->col == 3,
          "nodes seq");
    const yd_node *params = yd_get(nodes->items[0], "params");
    CHECK(params && params->kind == YD_MAP && params->n == 3 && params->line == 4 &&
                  params->col == 13,
          "params flow map at 4:13");
    CHECK(!strcmp(params->keys[1]->str, "ratio"), "keys in file order");
    long long port = 0;
    double ratio = 0;
    int on = 0;
    CHECK(yd_int(yd_get(params, "port"), 1, 65535, &port) == PARLEY_OK && port == 8765, "int");
    CHECK(yd_double(yd_get(params, "ratio"), 0, 1, &ratio) == PARLEY_OK && ratio == 0.5, "double");
    CHECK(yd_bool(yd_get(params, "on"), &on) == PARLEY_OK && on == 1, "bool");
    const yd_node *list = nodes->items[1];
    CHECK(list->kind == YD_SEQ && list->n == 3 && !strcmp(list->items[1]->str, "b c") &&
                  list->items[1]->style == YD_SINGLE_QUOTED &&
                  list->items[2]->style == YD_DOUBLE_QUOTED,
          "flow sequence of strings");
    CHECK(yd_is_null(yd_get(root, "empty")), "empty value is null");
    CHECK(yd_get(root, "missing") == NULL && yd_get(name, "x") == NULL, "absent keys");
    CHECK(!strcmp(yd_file(d), "t.yaml") && name->file == yd_file(d), "file name");

    /* Typed getters fail at the node. */
    const char *s;
    expect_msg(yd_int(name, 0, 10, &port), PARLEY_ERR_CONFIG,
               "t.yaml:1:7: expected an integer, found 'pizza'");
    expect_msg(yd_int(yd_get(params, "port"), 1, 1024, &port), PARLEY_ERR_CONFIG,
               "t.yaml:4:21: 8765 is out of range [1, 1024]");
    expect_msg(yd_double(name, 0, 1, &ratio), PARLEY_ERR_CONFIG,
               "t.yaml:1:7: expected a finite number, found 'pizza'");
    expect_msg(yd_double(yd_get(params, "port"), 0, 1, &ratio), PARLEY_ERR_CONFIG,
               "t.yaml:4:21: 8765 is out of range [0, 1]");
    expect_msg(yd_bool(name, &on), PARLEY_ERR_CONFIG,
               "t.yaml:1:7: expected true or false, found 'pizza'");
    expect_msg(yd_str(nodes, &s), PARLEY_ERR_CONFIG,
               "t.yaml:3:3: expected a string, found a sequence");
    expect_msg(yd_expect(nodes, YD_MAP, "nodes"), PARLEY_ERR_CONFIG,
               "t.yaml:3:3: nodes must be a mapping, not a sequence");
    CHECK(yd_expect(params, YD_MAP, "params") == PARLEY_OK, "expect ok");
    const yd_node *got;
    expect_msg(yd_require(params, "host", &got), PARLEY_ERR_CONFIG,
               "t.yaml:4:13: missing key 'host'");
    CHECK(got == NULL, "require leaves NULL");
    CHECK(yd_require(params, "port", &got) == PARLEY_OK && got == yd_get(params, "port"),
          "require ok");
    static const char *const allowed[] = { "name", "nodes", NULL };
    expect_msg(yd_check_keys(root, allowed), PARLEY_ERR_CONFIG,
               "t.yaml:6:1: unknown key 'empty' (expected one of: name, nodes)");
    static const char *const all[] = { "name", "nodes", "empty", NULL };
    CHECK(yd_check_keys(root, all) == PARLEY_OK, "all keys allowed");
    expect_msg(yd_fail(name, PARLEY_ERR_FORMAT, "custom %d", 5), PARLEY_ERR_FORMAT,
               "t.yaml:1:7: custom 5");
    yd_free(d);

    d = parse("a: 010\nb: 0x10\nc: -7\n");
    if (d) {
        const yd_node *r = yd_root(d);
        CHECK(yd_int(yd_get(r, "a"), 0, 100, &port) == PARLEY_OK && port == 10,
              "decimal, not octal");
        CHECK(yd_int(yd_get(r, "b"), 0, 100, &port) == PARLEY_ERR_CONFIG, "no hex");
        CHECK(yd_int(yd_get(r, "c"), -10, 0, &port) == PARLEY_OK && port == -7, "negative");
        yd_free(d);
    }

    d = parse("");
    CHECK(d && yd_root(d) == NULL, "empty text has no root");
    yd_free(d);
    d = parse("# only a comment\n");
    CHECK(d && yd_root(d) == NULL, "comment-only text has no root");
    yd_free(d);
    yd_free(NULL);
}

static void check_pos(const yd_node *n, size_t off, int line, int col)
{
    int l, c;
    yd_scalar_pos(n, off, &l, &c);
    CHECK(l == line && c == col, "offset %zu of '%.20s': want %d:%d, got %d:%d", off, n->str, line,
          col, l, c);
}

static void test_scalar_positions(void)
{
    yd_doc *d = parse("items:\n"
                      "- intent: greet\n"
                      "  examples: |\n"
                      "    - hi [x](y)\n"
                      "      - deeper\n"
                      "\n"
                      "    - \xC3\xA9t\xC3\xA9 [b](c)\n"
                      "- plain: a plain value\n"
                      "  single: 'it''s'\n"
                      "  quoted: \"a b\"\n"
                      "  escaped: \"a\\tb\"\n"
                      "  folded: >\n"
                      "    one\n"
                      "    two\n"
                      "  indent: |2\n"
                      "      four\n"
                      "  tagged: !!str |\n"
                      "    tag\n");
    if (!d)
        return;
    const yd_node *items = yd_get(yd_root(d), "items");
    const yd_node *ex = yd_get(items->items[0], "examples");
    CHECK(ex->style == YD_LITERAL && ex->line == 3 && ex->col == 13,
          "literal at its indicator 3:13");
    CHECK(!strcmp(ex->str, "- hi [x](y)\n  - deeper\n\n- \xC3\xA9t\xC3\xA9 [b](c)\n"),
          "literal value");
    check_pos(ex, 0, 4, 5);  /* '-' */
    check_pos(ex, 5, 4, 10); /* '[' */
    check_pos(ex, 14, 5, 7); /* the deeper '-' keeps its extra indentation */
    const char *b = strstr(ex->str, "[b]");
    check_pos(ex, (size_t)(b - ex->str), 7, 11); /* columns count characters: 'é' is one */
    check_pos(ex, ex->len, 8, 1);                /* the end: after the last line */

    const yd_node *m = items->items[1];
    check_pos(yd_get(m, "plain"), 2, 8, 12);
    const yd_node *single = yd_get(m, "single");
    CHECK(!strcmp(single->str, "it's"), "single-quoted unescaping");
    check_pos(single, 3, 9, 11); /* '' escape: falls back to the start */
    check_pos(yd_get(m, "quoted"), 2, 10, 14);
    check_pos(yd_get(m, "escaped"), 2, 11, 12); /* escapes: the start */
    check_pos(yd_get(m, "folded"), 4, 12, 11);  /* folded: the start */
    const yd_node *indent = yd_get(m, "indent");
    CHECK(!strcmp(indent->str, "  four\n"), "explicit indentation indicator");
    check_pos(indent, 2, 16, 7);
    const yd_node *tagged = yd_get(m, "tagged");
    check_pos(tagged, 1, 18, 6); /* a tag before the indicator is skipped */

    expect_msg(yd_fail_at(ex, 5, PARLEY_ERR_FORMAT, "bad %s", "thing"), PARLEY_ERR_FORMAT,
               "t.yaml:4:10: bad thing");
    yd_free(d);

    /* CR LF line ends and a byte-order mark do not shift positions. */
    d = parse("\xEF\xBB\xBFk: |\r\n  ab [c\r\n  d\r\n");
    if (d) {
        const yd_node *k = yd_get(yd_root(d), "k");
        CHECK(k && !strcmp(k->str, "ab [c\nd\n"), "CRLF literal value");
        check_pos(k, 3, 2, 6);
        check_pos(k, 6, 3, 3);
        yd_free(d);
    }
}

static void test_syntax_errors(void)
{
    expect_error("a: [1, 2\nb: 3\n", PARLEY_ERR_FORMAT,
                 "t.yaml:2:2: did not find expected ',' or ']' (while parsing a flow sequence "
                 "started at line 1, column 4)");
    expect_error("a: 1\n\tb: 2\n", PARLEY_ERR_FORMAT,
                 "t.yaml:2:1: found a tab character that violates indentation");
    expect_error("a: 1\n b: 2\n", PARLEY_ERR_FORMAT,
                 "t.yaml:2:3: mapping values are not allowed in this context");
    expect_error("a: 'open\n", PARLEY_ERR_FORMAT, "t.yaml:2:1: found unexpected end of stream");
    expect_error("ok: 1\nb\xC3\xA9: \xFF\n", PARLEY_ERR_UTF8,
                 "t.yaml:2:5: invalid leading UTF-8 octet");
    expect_error("a: 1\nb: 2\na: 3\n", PARLEY_ERR_FORMAT,
                 "t.yaml:3:1: duplicate key 'a' (first at line 1, column 1)");
    expect_error("a: &x 1\nb: *x\n", PARLEY_ERR_UNSUPPORTED,
                 "t.yaml:2:4: aliases (*x) are not supported");
    expect_error("a: 1\n---\nb: 2\n", PARLEY_ERR_FORMAT, "t.yaml:2:1: a second YAML document");
    /* A NUL would cut a string short: a value, a key, in a test file's user (two users
     * merged into one before). */
    expect_error("user: \"bob\\0evil\"\n", PARLEY_ERR_FORMAT,
                 "t.yaml:1:7: a NUL character in a string");
    expect_error("ok: 1\n\"a\\0b\": 2\n", PARLEY_ERR_FORMAT,
                 "t.yaml:2:1: a NUL character in a string");
    expect_error("? [a]\n: 1\n", PARLEY_ERR_FORMAT,
                 "t.yaml:1:3: a mapping key must be a scalar, not a sequence");
    char deep[2000];
    size_t n = 0;
    for (int i = 0; i < 300; i++)
        deep[n++] = '[';
    deep[n] = '\0';
    expect_error(deep, PARLEY_ERR_FORMAT, "t.yaml:1:258: nesting deeper than 256 levels");
}

static void test_files(void)
{
    yd_doc *d = NULL;
    CHECK(yd_parse_file("/nonexistent/x.yaml", &d) == PARLEY_ERR_NOT_FOUND && !d, "missing file");
    CHECK(strstr(parley_errmsg(), "/nonexistent/x.yaml") != NULL, "names the file: %s",
          parley_errmsg());
    char path[] = "/tmp/test_yaml_doc_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    const char *text = "list:\n  - 1\n  - [2\n";
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write");
    close(fd);
    CHECK(yd_parse_file(path, &d) == PARLEY_ERR_FORMAT, "syntax error from a file");
    char want[128];
    snprintf(want, sizeof want, "%s:4:1: ", path);
    CHECK(strncmp(parley_errmsg(), want, strlen(want)) == 0, "file error names path:line:col: %s",
          parley_errmsg());
    unlink(path);
}

/* Text being built, with its column (in characters) on the current line. */
typedef struct text_buf {
    char *s;
    size_t len, col;
} text_buf;

static void put(text_buf *t, const char *s)
{
    for (; *s; s++) {
        t->s[t->len++] = *s;
        t->col += ((unsigned char)*s & 0xC0) != 0x80;
        t->col = *s == '\n' ? 0 : t->col;
    }
    t->s[t->len] = '\0';
}

/* A one-line flow collection of about `bytes` bytes: {k0: é, k1: é, ...} or [é0, é1, ...]
 * ('é' being two bytes and one column). The last scalar must sit at the column counted
 * while writing it. */
static void check_long_line(int map, size_t bytes)
{
    text_buf t = { malloc(bytes + 64), 0, 0 };
    size_t count = 0, last_col = 0;
    char item[32];
    if (!t.s)
        return;
    put(&t, map ? "{" : "[");
    while (t.len < bytes) {
        put(&t, count ? ", " : "");
        last_col = t.col + 1;
        snprintf(item, sizeof item, map ? "k%zu: \xC3\xA9" : "\xC3\xA9%zu", count++);
        put(&t, item);
    }
    put(&t, map ? "}\n" : "]\n");
    yd_doc *d = NULL;
    parley_status st = yd_parse_string("t.yaml", t.s, t.len, &d);
    CHECK(st == PARLEY_OK, "long %s line: %s", map ? "mapping" : "sequence", parley_errmsg());
    const yd_node *r = d ? yd_root(d) : NULL;
    CHECK(r && r->n == count, "%zu items", count);
    if (r && r->n == count) {
        const yd_node *last = map ? r->keys[count - 1] : r->items[count - 1];
        CHECK(last->line == 1 && last->col == (int)last_col, "last at 1:%zu, not %d:%d", last_col,
              last->line, last->col);
        const yd_node *v = r->items[count - 1];
        int vcol = map ? (int)(last_col + strlen(last->str) + 2) : (int)last_col; /* "kN: " */
        CHECK(v->line == 1 && v->col == vcol, "last value at 1:%d, not %d:%d", vcol, v->line,
              v->col);
        check_pos(v, 2, 1, vcol + 1); /* the byte after 'é': one column on */
    }
    yd_free(d);
    free(t.s);
}

static void test_scale(void)
{
    check_long_line(1, 1 << 20);
    check_long_line(0, 1 << 20);

    /* KEYS distinct keys, then the 124th again: found, and named with both positions. */
    enum { KEYS = 200000 };
    text_buf t = { malloc(16 * (size_t)KEYS), 0, 0 };
    char item[32];
    if (!t.s)
        return;
    for (int i = 0; i < KEYS; i++) {
        snprintf(item, sizeof item, "k%d: 1\n", i);
        put(&t, item);
    }
    put(&t, "k123: 2\n");
    char want[96];
    snprintf(want, sizeof want, "t.yaml:%d:1: duplicate key 'k123' (first at line 124, column 1)",
             KEYS + 1);
    expect_error(t.s, PARLEY_ERR_FORMAT, want);
    t.len -= strlen("k123: 2\n");
    t.s[t.len] = '\0';
    yd_doc *d = parse(t.s);
    const yd_node *r = d ? yd_root(d) : NULL;
    CHECK(r && r->n == KEYS && yd_get(r, "k199999") == r->items[KEYS - 1], "%d distinct keys",
          KEYS);
    yd_free(d);
    free(t.s);
}

/* Parse, look up and free under every allocation failure (tests/fault.h). */
static parley_status parse_free(void *ctx)
{
    (void)ctx;
    const char *text = "a: [1, 2, {b: c}]\nd: |\n  line one\n  line two\ne: 'q'\n";
    yd_doc *d = NULL;
    parley_status st = yd_parse_string("t.yaml", text, strlen(text), &d);
    if (st == PARLEY_OK)
        CHECK(yd_get(yd_root(d), "e") != NULL, "parse under the sweep: key e found");
    else
        CHECK(d == NULL, "parse, allocation %ld failing: document left", fault_fail_at);
    yd_free(d);
    return st;
}

int main(void)
{
    test_tree();
    test_scalar_positions();
    test_syntax_errors();
    test_files();
    test_scale();
    long points = fault_sweep("parse", parse_free, NULL);
    CHECK(points > 10, "%ld allocation failure points", points);
    return check_done();
}
