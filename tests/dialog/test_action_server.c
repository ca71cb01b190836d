/* test_action_server.c — actions answered by an action server, through a running graph.
 *
 * Run by action_server/server.py, which serves Rasa's protocol on a free port and gives this
 * program a folder with the bot (domain.yaml, graph.yaml) pointing at it. The graph is
 * api → test.nlu (words_nlu.h: a turn's text "INTENT [ENTITY=VALUE ...]" read as its NLU
 * result, so no model is needed) → dialog.frames with ONE worker → api. Checked: a normal
 * action (slots set, a text, responses by name with and without variables, what the request
 * held, echoed back by the server); a followup that sees the first action's slot; reset_slots
 * and an event kind left out; an action with a reply of its own makes no call; an action that
 * hangs gets the fallback reply after the timeout while another user's turns on the same
 * single worker are answered at once, and the hanging user's next turn waits for it; garbage,
 * an HTTP 500, an answer over action_max_bytes and a server that is down get the fallback
 * reply, and each is logged with its action, URL and reason; parley_action_calls_total
 * and parley_action_errors_total by reason; with action_connections 1, a call waits for the
 * connection a slow call holds.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/graph.h"
#include "pipeline/metrics.h"
#include "pipeline/node.h"
#include "sdk/base/alloc.h"
#include "services/api_node.h"
#include "tests/check.h"
#include "tests/dialog/words_nlu.h"

extern const pipe_kind dm_kind_frames;

/* ---- the log: every line kept, to check what failures say ---- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char log_text[1 << 16];

static void on_log(parley_log_level level, const char *msg, void *user)
{
    (void)level, (void)user;
    pthread_mutex_lock(&log_mu);
    size_t len = strlen(log_text);
    snprintf(log_text + len, sizeof log_text - len, "%s\n", msg);
    pthread_mutex_unlock(&log_mu);
}

/* Whether a line of the log holds every one of the (up to 3) parts. */
static int logged(const char *a, const char *b, const char *c)
{
    pthread_mutex_lock(&log_mu);
    int found = 0;
    for (const char *line = log_text; *line && !found;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)n, line);
        found = strstr(buf, a) && strstr(buf, b) && (!c || strstr(buf, c));
        line += n + (end != NULL);
    }
    pthread_mutex_unlock(&log_mu);
    return found;
}

/* ---- the graph ---- */

static pipe_graph *g;
static pipe_node *api;

static void submit(const char *user, const char *text)
{
    pipe_msg *m = NULL;
    parley_status st = pipe_msg_new(g, user, text, &m);
    CHECK(st == PARLEY_OK, "submit %s: %s", text, parley_errmsg());
    if (st == PARLEY_OK)
        pipe_node_emit(api, 0, m);
}

/* The next reply (owned: parley_reply_free), waiting up to 10 s. */
static parley_reply *next_reply(void)
{
    parley_reply *r = NULL;
    parley_status st = svc_api_poll(api, 10000, &r);
    CHECK(st == PARLEY_OK && r, "no reply within 10 s: %s", parley_errmsg());
    return st == PARLEY_OK ? r : NULL;
}

static const char *slot_of(const parley_reply *r, const char *name)
{
    for (size_t i = 0; i < r->n_slots; i++)
        if (!strcmp(r->slots[i].name, name))
            return r->slots[i].value;
    return NULL;
}

/* One turn of one user, nobody else talking: its reply must be `want`. */
static parley_reply *turn(const char *user, const char *text, const char *want)
{
    submit(user, text);
    parley_reply *r = next_reply();
    if (!r)
        return NULL;
    CHECK(r->status == PARLEY_OK && !strcmp(r->user, user), "%s: status %d user %s: %s", text,
          r->status, r->user, r->error);
    CHECK(!strcmp(r->reply, want), "%s: reply\n  '%s', want\n  '%s'", text, r->reply, want);
    return r;
}

static void expect_slot(const parley_reply *r, const char *name, const char *want)
{
    const char *v = r ? slot_of(r, name) : NULL;
    CHECK(want ? v && !strcmp(v, want) : v == NULL, "slot %s = %s, want %s", name,
          v ? v : "(unset)", want ? want : "(unset)");
}

static void normal_followup_reset(void)
{
    parley_reply *r = turn("u1", "weather city=Lyon",
                           "weather for u1 (intent weather, next action_weather, domain ok, "
                           "version ok). It is 21 C in Lyon. It is hot in Lyon.");
    expect_slot(r, "city", "Lyon");
    expect_slot(r, "temp", "21 C");
    expect_slot(r, "visits", "1");
    parley_reply_free(r);
    /* The slots went back to the server in the tracker: it counts on from them. */
    r = turn("u1", "weather",
             "weather for u1 (intent weather, next action_weather, domain ok, version ok). It "
             "is 21 C in Lyon. It is hot in Lyon.");
    expect_slot(r, "visits", "2");
    parley_reply_free(r);
    r = turn("u1", "chain", "first. followed, city is Oslo.");
    expect_slot(r, "city", "Oslo");
    expect_slot(r, "visits", "2");
    parley_reply_free(r);
    r = turn("u1", "reset", "all forgotten.");
    CHECK(r && r->n_slots == 0, "reset_slots: %zu slots left", r ? r->n_slots : 0);
    parley_reply_free(r);
    parley_reply_free(turn("u1", "builtin", "Hi!"));
}

/* The slow action's user waits for the timeout; another user on the same (single) worker is
 * answered meanwhile, and the slow user's next turn comes after its slow one. */
static void slow_does_not_block(void)
{
    static const char *const others[] = { "greet", "weather city=Rome", "greet" };
    int64_t t0 = pipe_now_ns();
    submit("slow", "slow");
    submit("slow", "greet");
    for (int i = 0; i < 3; i++)
        submit("other", others[i]);
    int n_other = 0, n_slow = 0;
    for (int i = 0; i < 5; i++) {
        parley_reply *r = next_reply();
        if (!r)
            return;
        double ms = (double)(pipe_now_ns() - t0) / 1e6;
        if (!strcmp(r->user, "other")) {
            CHECK(ms < 1000,
                  "other user's reply %d came after %.0f ms, while the slow action "
                  "was out (timeout 1500 ms)",
                  n_other, ms);
            CHECK(n_slow == 0, "other user's reply %d came after the slow one", n_other);
            const char *want = n_other == 1 ? "It is 21 C in Rome." : "Hello.";
            CHECK(strstr(r->reply, want) != NULL, "other %d: '%s'", n_other, r->reply);
            n_other++;
        } else {
            const char *want = n_slow == 0 ? "The weather service is not answering." : "Hello.";
            CHECK(!strcmp(r->reply, want), "slow user's reply %d: '%s', want '%s'", n_slow,
                  r->reply, want);
            CHECK(ms >= 1400 && ms < 4000, "slow user's reply %d after %.0f ms (timeout 1500)",
                  n_slow, ms);
            n_slow++;
        }
        parley_reply_free(r);
    }
    CHECK(n_other == 3 && n_slow == 2, "%d other, %d slow replies", n_other, n_slow);
}

static void failures(void)
{
    const char *no = "The weather service is not answering.";
    parley_reply *r = turn("u4", "weather city=Nice",
                           "weather for u4 (intent weather, next "
                           "action_weather, domain ok, version ok). "
                           "It is 21 C in Nice. It is hot in Nice.");
    parley_reply_free(r);
    /* A failed call changes no slot. */
    r = turn("u4", "garbage", no);
    expect_slot(r, "city", "Nice");
    parley_reply_free(r);
    parley_reply_free(turn("u4", "error500", no));
    parley_reply_free(turn("u4", "big", no));
    parley_reply_free(turn("u4", "down", no));
    /* Each failure is logged with its action, its URL and why. */
    static const char *const why[][3] = {
        { "action 'action_slow' at http://127.0.0.1:", "(timeout: no answer within 1500 ms)" },
        { "action 'action_garbage' at http://127.0.0.1:", "(json: " },
        { "action 'action_error500' at http://127.0.0.1:", "(http: HTTP status 500)" },
        { "action 'action_big' at http://127.0.0.1:", "(size: the answer is longer than 65536" },
        { "action 'action_down' at http://127.0.0.1:", "(connect: " },
    };
    for (size_t i = 0; i < sizeof why / sizeof *why; i++)
        CHECK(logged(why[i][0], why[i][1], "fallback reply"), "not logged: %s ... %s\n%s",
              why[i][0], why[i][1], log_text);
    CHECK(logged("event 'bot'", "left out", NULL), "an unknown event kind is noted");
}

static double metric(const char *text, const char *series)
{
    const char *p = strstr(text, series);
    return p ? atof(p + strlen(series)) : -1;
}

static void metrics(void)
{
    char *text = NULL;
    size_t len = 0;
    CHECK(pipe_metrics_render(g, &text, &len) == PARLEY_OK, "render: %s", parley_errmsg());
    if (!text)
        return;
    /* weather 2 + chain 2 (its followup) + reset + slow + weather + weather + garbage +
     * error500 + big + down; builtin made none */
    CHECK(metric(text, "parley_action_calls_total{node=\"dialog\"} ") == 12, "calls:\n%s", text);
    static const struct {
        const char *reason;
        double n;
    } want[] = { { "timeout", 1 }, { "json", 1 }, { "http", 1 },
                 { "connect", 1 }, { "size", 1 }, { "other", 0 } };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char series[128];
        snprintf(series, sizeof series,
                 "parley_action_errors_total{node=\"dialog\",reason=\"%s\"} ", want[i].reason);
        CHECK(metric(text, series) == want[i].n, "%s = %g, want %g", series, metric(text, series),
              want[i].n);
    }
    pl_free(text);
}

/* With action_connections 1, a call to the server waits while the slow one holds the
 * connection: its answer comes after the slow call's timeout, not at once. */
static void connection_limit(void)
{
    int64_t t0 = pipe_now_ns();
    submit("s2", "slow");
    submit("o2", "weather city=Rome");
    for (int i = 0; i < 2; i++) {
        parley_reply *r = next_reply();
        if (!r)
            return;
        double ms = (double)(pipe_now_ns() - t0) / 1e6;
        CHECK(ms >= 1400, "%s's reply after %.0f ms: the one connection was the slow call's",
              r->user, ms);
        parley_reply_free(r);
    }
}

/* Loads and starts FOLDER/graph.yaml with a fresh store and `extra` (a --set, or NULL). */
static int open_graph(const char *folder, const char *store_name, const char *extra)
{
    static char graph[1024], store[1024];
    snprintf(graph, sizeof graph, "%s/graph.yaml", folder);
    snprintf(store, sizeof store, "dialog.store=%s/%s", folder, store_name);
    const pipe_kind *const kinds[] = { &svc_kind_api, &words_nlu, &dm_kind_frames, NULL };
    const char *const set[] = { store, extra, NULL };
    pipe_graph_opts opts = { .kinds = kinds, .set = set, .need_output = 1 };
    parley_status st = pipe_graph_load(graph, &opts, &g);
    CHECK(st == PARLEY_OK, "load %s: %s", graph, parley_errmsg());
    if (st != PARLEY_OK)
        return 0;
    api = pipe_graph_find_kind(g, "api");
    CHECK((st = pipe_graph_start(g)) == PARLEY_OK, "start: %s", parley_errmsg());
    return st == PARLEY_OK;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: run by action_server/server.py: test_action_server FOLDER\n");
        return 2;
    }
    parley_log_set(on_log, NULL, PARLEY_LOG_INFO);
    if (open_graph(argv[1], "actions.db", NULL)) {
        normal_followup_reset();
        slow_does_not_block();
        failures();
        metrics();
    }
    pipe_graph_close(g);
    if (open_graph(argv[1], "limit.db", "dialog.action_connections=1"))
        connection_limit();
    pipe_graph_close(g);
    return check_done();
}
