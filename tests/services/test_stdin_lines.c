/* test_stdin_lines.c — input lines, good and malformed, through a real text.stdin graph.
 *
 * Each case file (tests/services/lines/NAME.txt) lists input lines, each followed by the answer
 * expected for it:
 *
 *   # a comment (lines starting with '#', and empty lines, are skipped)
 *   in: {"user": "bob", "text": "hi"}        the input line, verbatim
 *   out: {"user": "bob", "text": "hi"}       a turn: its user, the text that reached the sink
 *   in% {"user": "b%FFb", "text": "x"}       escapes: %XX a byte, %{N:T} T N times, %% a '%'
 *                                            (out% too)
 *   out: {"user": null, "error": "user id: invalid UTF-8"}   refused: user, part of the error
 *   in:
 *   out: none                                no answer (a blank line)
 *   noeol                                    the input ends without its last newline
 *
 * The lines run through lines/echo.yaml (one worker per node: answers in input order) and
 * lines/echo_parallel.yaml (several: each user's answers in that user's order). Every
 * output line must be valid UTF-8 and valid JSON, and every input line must get the answer
 * expected, exactly once: an error names its input line ("line"), and a turn is matched to
 * its line through the graph's events (by seq, which is "turn" without a dialog). Then an
 * allocation-failure sweep runs malformed lines through text.stdin alone (no node after it,
 * so every turn ends on the source's thread and each run fails the same allocation).
 *
 * Usage: test_stdin_lines LINES_DIR CASE_FILE...
 */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/graph.h"
#include "sdk/base/alloc.h"
#include "sdk/base/files.h"
#include "sdk/base/json.h"
#include "sdk/lib/kinds.h"
#include "tests/check.h"
#include "tests/fault.h"

enum { MAX_LINES = 256, MAX_SEQ = 2 * MAX_LINES };

typedef struct expect {
    int answered; /* 0: "none" */
    cJSON *want;  /* {"user", "text"} or {"user", "error"} */
} expect;

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

typedef struct cases {
    buf in; /* the input stream */
    int n;  /* input lines */
    expect ex[MAX_LINES + 1];
} cases;

/* What the graph's events said, by seq. */
typedef struct seen {
    pthread_mutex_t mu;
    long line[MAX_SEQ + 1];
    char *text[MAX_SEQ + 1];
    int nomem; /* an event reported a failed allocation (the sweep) */
} seen;

static char dir[1024], tmp_in[256], tmp_out[256];

static void append(buf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = 0;
}

static int hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Appends an in% or out% line with its escapes decoded; 0 on a bad escape. */
static int append_escaped(buf *c, const char *s)
{
    while (*s) {
        if (s[0] != '%') {
            size_t n = strcspn(s, "%");
            append(c, s, n);
            s += n;
        } else if (s[1] == '%') {
            append(c, "%", 1);
            s += 2;
        } else if (s[1] == '{') {
            char *colon;
            unsigned long times = strtoul(s + 2, &colon, 10);
            const char *end = strchr(colon, '}');
            if (*colon != ':' || !end)
                return 0;
            for (unsigned long k = 0; k < times; k++)
                append(c, colon + 1, (size_t)(end - colon - 1));
            s = end + 1;
        } else {
            if (hex(s[1]) < 0 || hex(s[2]) < 0)
                return 0;
            char byte = (char)(hex(s[1]) * 16 + hex(s[2]));
            append(c, &byte, 1);
            s += 3;
        }
    }
    return 1;
}

/* Reads a case file; 0 (with a CHECK failure) when it is malformed. */
static int load_cases(const char *path, cases *c)
{
    FILE *f = fopen(path, "re");
    char row[8192];
    int pending = 0, noeol = 0, ok = f != NULL;
    CHECK(f, "cannot open %s", path);
    while (ok && fgets(row, sizeof row, f)) {
        row[strcspn(row, "\n")] = 0;
        if (!row[0] || row[0] == '#')
            continue;
        if (!strcmp(row, "noeol")) {
            noeol = 1;
        } else if (!strncmp(row, "in:", 3) || !strncmp(row, "in%", 3)) {
            const char *text = row[3] == ' ' ? row + 4 : row + 3;
            ok = !pending && c->n < MAX_LINES;
            if (ok && row[2] == '%')
                ok = append_escaped(&c->in, text);
            else if (ok)
                append(&c->in, text, strlen(text));
            append(&c->in, "\n", 1);
            pending = 1;
        } else if ((!strncmp(row, "out: ", 5) || !strncmp(row, "out% ", 5)) && pending) {
            expect *e = &c->ex[++c->n];
            buf want = { 0 };
            ok = row[3] == ':' ? (append(&want, row + 5, strlen(row + 5)), 1)
                               : append_escaped(&want, row + 5);
            e->answered = strcmp(want.p, "none") != 0;
            e->want = e->answered ? cJSON_Parse(want.p) : NULL;
            ok = ok && (!e->answered || cJSON_IsObject(e->want));
            free(want.p);
            pending = 0;
        } else {
            ok = 0;
        }
        CHECK(ok, "%s: cannot read '%s'", path, row);
    }
    if (f)
        fclose(f);
    if (noeol && c->in.len)
        c->in.len--;
    CHECK(!pending, "%s: the last in: has no out:", path);
    return ok && !pending && c->n > 0;
}

static void free_cases(cases *c)
{
    for (int i = 1; i <= c->n; i++)
        cJSON_Delete(c->ex[i].want);
    free(c->in.p);
}

static void on_event(const pipe_event *ev, void *user)
{
    seen *s = user;
    pthread_mutex_lock(&s->mu);
    if (ev->msg && ev->type == PIPE_EV_TURN_DONE && ev->msg->seq <= MAX_SEQ) {
        s->line[ev->msg->seq] = ev->msg->line;
        s->text[ev->msg->seq] = strdup(ev->msg->text);
    }
    if (ev->status == PARLEY_ERR_NOMEM || (ev->msg && ev->msg->status == PARLEY_ERR_NOMEM))
        s->nomem = 1;
    pthread_mutex_unlock(&s->mu);
}

/* Loads `graph` with text.stdin reading tmp_in and text.stdout (if any) writing tmp_out,
 * runs it to the end of the input and closes it. */
static parley_status run_graph(const char *graph, seen *s)
{
    char path[2048], set_in[300], set_out[300];
    snprintf(path, sizeof path, "%s/%s", dir, graph);
    snprintf(set_in, sizeof set_in, "text.stdin.path=%s", tmp_in);
    snprintf(set_out, sizeof set_out, "text.stdout.path=%s", tmp_out);
    const char *sets[] = { set_in, strstr(graph, "alone") ? NULL : set_out, NULL };
    pipe_graph_opts o = { .set = sets, .kinds = lib_kinds };
    pipe_graph *g = NULL;
    unlink(tmp_out);
    parley_status st = pipe_graph_load(path, &o, &g);
    if (st == PARLEY_OK && (st = pipe_graph_subscribe(g, on_event, s)) == PARLEY_OK &&
        (st = pipe_graph_start(g)) == PARLEY_OK)
        pipe_graph_wait_sources(g);
    pipe_graph_close(g);
    return st;
}

/* The input line an output line answers (0 when it cannot tell), after checking that the
 * output is valid JSON of the documented shape. */
static int answered_line(const char *name, const cJSON *o, seen *s)
{
    const cJSON *turn = cJSON_GetObjectItemCaseSensitive(o, "turn");
    const cJSON *line = cJSON_GetObjectItemCaseSensitive(o, "line");
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(o, "user");
    int err = cJSON_HasObjectItem(o, "error");
    CHECK(cJSON_IsString(user) || cJSON_IsNull(user), "%s: user is a string or null", name);
    CHECK(err ? cJSON_IsNull(turn)
              : cJSON_IsNumber(turn) && turn->valuedouble >= 1 && turn->valuedouble <= MAX_SEQ,
          "%s: turn (null for an error: the user was given no turn)", name);
    CHECK(!err || cJSON_IsNumber(line), "%s: an error names its input line", name);
    CHECK(err || cJSON_GetArraySize((cJSON *)o) == 6, "%s: a reply has 6 keys", name);
    if (err)
        return cJSON_IsNumber(line) ? line->valueint : 0;
    return cJSON_IsNumber(turn) && turn->valueint <= MAX_SEQ ? (int)s->line[turn->valueint] : 0;
}

/* Compares one answer with what the case file expects for its line. */
static void check_answer(const char *name, int ln, const cJSON *o, const expect *e, seen *s)
{
    const cJSON *want_user = cJSON_GetObjectItemCaseSensitive(e->want, "user");
    const cJSON *want_text = cJSON_GetObjectItemCaseSensitive(e->want, "text");
    const cJSON *want_err = cJSON_GetObjectItemCaseSensitive(e->want, "error");
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(o, "user");
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(o, "error");
    const cJSON *turn = cJSON_GetObjectItemCaseSensitive(o, "turn");
    CHECK(cJSON_Compare(user, want_user, 1), "%s line %d: user %s", name, ln,
          cJSON_IsString(user) ? user->valuestring : "null");
    if (want_err) {
        CHECK(cJSON_IsString(err) && strstr(err->valuestring, want_err->valuestring),
              "%s line %d: error '%s' lacks '%s'", name, ln,
              cJSON_IsString(err) ? err->valuestring : "(none)", want_err->valuestring);
        return;
    }
    const char *text = s->text[turn->valueint];
    CHECK(!err && text && cJSON_IsString(want_text) && !strcmp(text, want_text->valuestring),
          "%s line %d: a turn with text '%.60s', got %s '%.60s'", name, ln,
          cJSON_IsString(want_text) ? want_text->valuestring : "?", err ? "error" : "text",
          err    ? err->valuestring
          : text ? text
                 : "(none)");
}

/* Runs one case file through one graph and checks every answer. */
static void check_graph(const char *name, const cases *c, const char *graph, int total_order)
{
    static seen s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.mu, NULL);
    CHECK(run_graph(graph, &s) == PARLEY_OK, "%s: %s: %s", name, graph, parley_errmsg());
    char *out = NULL;
    size_t len = 0;
    CHECK(pl_read_file(tmp_out, 64 << 20, &out, &len) == PARLEY_OK, "%s: %s", name,
          parley_errmsg());
    int count[MAX_LINES + 1] = { 0 }, last = 0, n_users = 0, user_last[MAX_LINES];
    char users[MAX_LINES][PARLEY_MAX_USER_ID_BYTES + 1]; /* each user's last answered line */
    for (char *p = out, *nl; p && p < out + len; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(out + len - p));
        CHECK(nl != NULL, "%s: output ends without a newline", name);
        if (!nl)
            break;
        *nl = 0;
        cJSON *o = NULL;
        size_t n = (size_t)(nl - p);
        CHECK(pipe_utf8_valid_len(p, n) == n, "%s: output not UTF-8: %.80s", name, p);
        CHECK(pl_json_parse(p, n, "output", &o) == PARLEY_OK && cJSON_IsObject(o), "%s: %s", name,
              parley_errmsg());
        int ln = o ? answered_line(name, o, &s) : 0;
        CHECK(ln >= 1 && ln <= c->n, "%s: no input line for %.80s", name, p);
        if (ln >= 1 && ln <= c->n) {
            count[ln]++;
            if (c->ex[ln].answered)
                check_answer(name, ln, o, &c->ex[ln], &s);
            /* The order: of all lines (one worker), of each known user's lines (always). */
            CHECK(!total_order || ln > last, "%s: line %d answered after line %d", name, ln, last);
            last = ln;
            const cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "user");
            int k = 0;
            while (cJSON_IsString(u) && k < n_users && strcmp(users[k], u->valuestring))
                k++;
            if (cJSON_IsString(u) && k == n_users) {
                snprintf(users[n_users], sizeof users[0], "%s", u->valuestring);
                user_last[n_users++] = 0;
            }
            CHECK(!cJSON_IsString(u) || ln > user_last[k], "%s: user %s: line %d after line %d",
                  name, u->valuestring, ln, user_last[k]);
            if (cJSON_IsString(u))
                user_last[k] = ln;
        }
        cJSON_Delete(o);
    }
    for (int i = 1; i <= c->n; i++)
        CHECK(count[i] == c->ex[i].answered, "%s: line %d answered %d times, expected %d", name, i,
              count[i], c->ex[i].answered);
    pl_free(out);
    for (int i = 0; i <= MAX_SEQ; i++)
        free(s.text[i]);
    pthread_mutex_destroy(&s.mu);
}

/* The sweep's run: a failed allocation must be reported as out of memory (an error event
 * or answer), or else be absorbed with every line still answered. */
static parley_status run_alone(void *ctx)
{
    const cases *c = ctx;
    static seen s;
    for (int i = 0; i <= MAX_SEQ; i++)
        free(s.text[i]);
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.mu, NULL);
    parley_status st = run_graph("alone.yaml", &s);
    pthread_mutex_destroy(&s.mu);
    if (st != PARLEY_OK || s.nomem)
        return st != PARLEY_OK ? st : PARLEY_ERR_NOMEM;
    int want = 0, got = 0;
    for (int i = 1; i <= c->n; i++)
        want += c->ex[i].answered;
    for (int i = 0; i <= MAX_SEQ; i++)
        got += s.text[i] != NULL;
    CHECK(got == want, "allocation %ld failing: %d answers for %d lines, no out-of-memory said",
          fault_fail_at, got, want);
    return fault_calls >= fault_fail_at ? PARLEY_ERR_NOMEM : PARLEY_OK;
}

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : "tests/services/lines");
    const char *tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmp_in, sizeof tmp_in, "%s/stdin_lines_%d.in", tmpdir, (int)getpid());
    snprintf(tmp_out, sizeof tmp_out, "%s/stdin_lines_%d.out", tmpdir, (int)getpid());
    for (int a = 2; a < argc; a++) {
        static cases c;
        memset(&c, 0, sizeof c);
        const char *name = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
        if (load_cases(argv[a], &c)) {
            FILE *f = fopen(tmp_in, "we");
            CHECK(f && fwrite(c.in.p, 1, c.in.len, f) == c.in.len, "writing %s", tmp_in);
            if (f)
                fclose(f);
            check_graph(name, &c, "echo.yaml", 1);
            check_graph(name, &c, "echo_parallel.yaml", 0);
            if (a == 2) { /* the sweep: the first case file, through text.stdin alone */
                long points = fault_sweep(name, run_alone, &c);
                CHECK(points > 10 * c.n, "only %ld allocation points", points);
            }
        }
        free_cases(&c);
    }
    CHECK(argc > 2, "no case files");
    unlink(tmp_in);
    unlink(tmp_out);
    return check_done();
}
