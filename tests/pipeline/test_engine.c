/* test_engine.c — the running graph through the public pipeline API, without a model.
 *
 * 100 users submit 30 turns each from 8 threads into engine/echo.yaml (api → asr.stub →
 * api, several workers per node, queues of 2 so producers block often). Every reply must
 * come back exactly once, to the right user, in that user's order; close must drain.
 * Also: poll mode, register_action without a dialog node, bad arguments, the user id and
 * text rules at submit (refused turns get no reply; the limits themselves pass), and an
 * allocation-failure sweep over open + close (threads start and stop on every run).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parley/pipeline.h"
#include "tests/check.h"
#include "tests/fault.h"
#include "tests/users.h"

enum { USERS = 100, TURNS = 30, THREADS = 8 };

static char graph[1024];

typedef struct tally {
    pthread_mutex_t mu;
    int next[USERS]; /* the turn number each user's next reply must carry */
    long errors, wrong_user, out_of_order, replies;
} tally;

static void on_reply(const parley_reply *r, void *ud)
{
    tally *t = ud;
    int u = -1, n = -1;
    sscanf(r->text, "user %d says %d", &u, &n);
    char want[32];
    snprintf(want, sizeof want, "user%d", u);
    pthread_mutex_lock(&t->mu);
    t->replies++;
    if (r->status != PARLEY_OK)
        t->errors++;
    else if (u < 0 || u >= USERS || strcmp(r->user, want) || r->reply[0] || r->intent[0])
        t->wrong_user++; /* a transcript comes back: no reply text, no intent */
    else if (n != t->next[u]++)
        t->out_of_order++;
    pthread_mutex_unlock(&t->mu);
}

static void say(int u, int k, char *buf, size_t cap)
{
    snprintf(buf, cap, "user %d says %d", u, k);
}

static void test_many_users(void)
{
    static tally t;
    pthread_mutex_init(&t.mu, NULL);
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.on_reply = on_reply;
    pp.user_data = &t;
    pp.queue_size = 2;
    parley_pipeline *p = NULL;
    CHECK(parley_pipeline_open(graph, &pp, &p) == PARLEY_OK, "open: %s", parley_errmsg());
    if (!p)
        return;
    long failed = users_submit(p, USERS, TURNS, THREADS, say);
    parley_pipeline_close(p); /* drains: every reply is in after this */
    CHECK(failed == 0, "%ld submits failed", failed);
    CHECK(t.replies == USERS * TURNS, "%ld replies for %d turns", t.replies, USERS * TURNS);
    CHECK(t.errors == 0 && t.wrong_user == 0 && t.out_of_order == 0,
          "errors %ld, wrong user %ld, out of order %ld", t.errors, t.wrong_user, t.out_of_order);
    int short_users = 0;
    for (int u = 0; u < USERS; u++)
        short_users += t.next[u] != TURNS;
    CHECK(short_users == 0, "%d users did not get all %d replies", short_users, TURNS);
    pthread_mutex_destroy(&t.mu);
}

static void test_poll(void)
{
    parley_pipeline *p = NULL;
    CHECK(parley_pipeline_open(graph, NULL, &p) == PARLEY_OK, "open: %s", parley_errmsg());
    if (!p)
        return;
    parley_reply *r = NULL;
    CHECK(parley_pipeline_poll(p, 0, &r) == PARLEY_ERR_NOT_FOUND && !r, "empty poll");
    uint64_t ids[5];
    for (int i = 0; i < 5; i++) {
        char text[32];
        snprintf(text, sizeof text, "hello %d", i);
        CHECK(parley_pipeline_submit(p, "solo", text, &ids[i]) == PARLEY_OK, "submit");
    }
    for (int i = 0; i < 5; i++) {
        CHECK(parley_pipeline_poll(p, 5000, &r) == PARLEY_OK, "poll %d: %s", i, parley_errmsg());
        char text[32];
        snprintf(text, sizeof text, "hello %d", i);
        CHECK(r && r->id == ids[i] && !strcmp(r->text, text) && !strcmp(r->user, "solo") &&
                      r->latency_ms >= 0,
              "reply %d", i);
        parley_reply_free(r);
    }
    CHECK(parley_pipeline_register_action(p, "x", NULL, NULL) == PARLEY_ERR_NOT_FOUND,
          "no dialog: no action");
    CHECK(parley_pipeline_submit(p, NULL, "x", NULL) == PARLEY_ERR_INVALID_ARG, "NULL user");
    /* Unpolled replies are freed by close (ASan checks). */
    CHECK(parley_pipeline_submit(p, "solo", "left behind", NULL) == PARLEY_OK, "submit");
    parley_pipeline_close(p);
}

/* The user id and text rules of parley/pipeline.h at parley_pipeline_submit: what breaks
 * them is refused whole (status and a detail naming the rule and byte), gets no reply and
 * does not disturb the turns around it; what keeps them, up to the limits exactly, passes. */
static void test_submit_rules(void)
{
    static char long_id[PARLEY_MAX_USER_ID_BYTES + 2], big[PARLEY_MAX_TEXT_BYTES + 2];
    static const struct {
        const char *user, *text;
        parley_status st;
        const char *detail;
    } refused[] = {
        { "", "hi", PARLEY_ERR_INVALID_ARG, "user id is empty" },
        { "\xff", "hi", PARLEY_ERR_UTF8, "user id: invalid UTF-8 at byte 0 (0xFF)" },
        { "ab\xc3", "hi", PARLEY_ERR_UTF8, "user id: invalid UTF-8 at byte 2" },
        { "\xc0\x80", "hi", PARLEY_ERR_UTF8, "user id: invalid UTF-8 at byte 0" }, /* overlong */
        { "\xed\xa0\x80", "hi", PARLEY_ERR_UTF8, "invalid UTF-8 at byte 0" },      /* surrogate */
        { "\xf4\x90\x80\x80", "hi", PARLEY_ERR_UTF8, "invalid UTF-8" },            /* > U+10FFFF */
        { "a\tb", "hi", PARLEY_ERR_INVALID_ARG, "user id: control character U+0009 at byte 1" },
        { "bob\n", "hi", PARLEY_ERR_INVALID_ARG, "control character U+000A at byte 3" },
        { "x\x7f", "hi", PARLEY_ERR_INVALID_ARG, "control character U+007F at byte 1" },
        { "\xc2\x85", "hi", PARLEY_ERR_INVALID_ARG, "control character U+0085 at byte 0" },
        { "bob", "caf\xc3", PARLEY_ERR_UTF8, "text: invalid UTF-8 at byte 3 (0xC3)" },
        { "bob", "\xfe", PARLEY_ERR_UTF8, "text: invalid UTF-8 at byte 0" },
    };
    parley_pipeline *p = NULL;
    CHECK(parley_pipeline_open(graph, NULL, &p) == PARLEY_OK, "open: %s", parley_errmsg());
    if (!p)
        return;
    uint64_t id = 77;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        parley_status st = parley_pipeline_submit(p, refused[i].user, refused[i].text, &id);
        const char *msg = parley_errmsg();
        CHECK(st == refused[i].st && strstr(msg, "parley_pipeline_submit: ") == msg &&
                      strstr(msg, refused[i].detail),
              "refused %zu: %s: %s", i, parley_status_str(st), msg);
    }
    memset(long_id, 'u', PARLEY_MAX_USER_ID_BYTES + 1);
    CHECK(parley_pipeline_submit(p, long_id, "hi", &id) == PARLEY_ERR_INVALID_ARG &&
                  strstr(parley_errmsg(), "user id is 129 bytes, more than the 128 allowed"),
          "long id: %s", parley_errmsg());
    memset(big, 'a', PARLEY_MAX_TEXT_BYTES + 1);
    CHECK(parley_pipeline_submit(p, "bob", big, &id) == PARLEY_ERR_INVALID_ARG &&
                  strstr(parley_errmsg(), "text is 65537 bytes, more than the 65536"),
          "big text: %s", parley_errmsg());
    CHECK(id == 77, "a refused turn gives no id");

    /* At the limits exactly, and ids that are unusual but valid. */
    long_id[PARLEY_MAX_USER_ID_BYTES] = 0;
    big[PARLEY_MAX_TEXT_BYTES] = 0;
    const char *users[] = { long_id, "bob", "\xc3\xbcser \xf0\x9f\x98\x80", "bob ", "7" };
    const char *texts[] = { "hi", big, "\xe2\x82\xac 5", "", "tab\there" };
    uint64_t ids[5];
    for (int i = 0; i < 5; i++)
        CHECK(parley_pipeline_submit(p, users[i], texts[i], &ids[i]) == PARLEY_OK, "valid %d: %s",
              i, parley_errmsg());
    for (int i = 0; i < 5; i++) {
        parley_reply *r = NULL;
        CHECK(parley_pipeline_poll(p, 5000, &r) == PARLEY_OK, "poll %d: %s", i, parley_errmsg());
        int k = 0; /* replies of different users may come in any order: find this one's */
        while (r && k < 5 && ids[k] != r->id)
            k++;
        CHECK(r && k < 5 && r->status == PARLEY_OK && !strcmp(r->user, users[k]) &&
                      !strcmp(r->text, texts[k]),
              "reply %d", i);
        parley_reply_free(r);
    }
    parley_reply *r = NULL;
    CHECK(parley_pipeline_poll(p, 0, &r) == PARLEY_ERR_NOT_FOUND && !r, "no reply for refused");
    parley_pipeline_close(p);
}

static void test_open_errors(void)
{
    parley_pipeline *p = (parley_pipeline *)1;
    parley_status st = parley_pipeline_open("/nonexistent/graph.yaml", NULL, &p);
    CHECK(st == PARLEY_ERR_NOT_FOUND && !p, "missing file: %s", parley_errmsg());
}

static parley_status open_close(void *ctx)
{
    parley_pipeline *p = NULL;
    parley_status st = parley_pipeline_open(ctx, NULL, &p);
    parley_pipeline_close(p);
    return st;
}

int main(int argc, char **argv)
{
    snprintf(graph, sizeof graph, "%s/echo.yaml", argc > 1 ? argv[1] : "tests/pipeline/engine");
    test_many_users();
    test_poll();
    test_submit_rules();
    test_open_errors();
    long points = fault_sweep("open + close echo.yaml", open_close, graph);
    CHECK(points > 20, "only %ld allocation points", points);
    return check_done();
}
