/* test_ws_msg.c — the websocket server's pure parts: a client message read into a command
 * (services/ws_msg.c) and the per-connection bookkeeping (services/ws_conn.c).
 *
 * Messages: every command with its fields; ids (string, number) kept for the answer, also
 * when the message is refused; every refusal with the reason a client reads (not JSON, not
 * an object, unknown type, two types, duplicated keys, wrong types, a \u0000 escape, a raw
 * NUL, an id or text that breaks parley/pipeline.h's rules, a rate out of range). The
 * bytes need not end in a NUL. Connections: messages reassembled up to a limit and refused
 * beyond it; the outgoing queue in order with its byte count and headroom; the table of turns
 * in flight (take once, detached from a closed connection). Allocation-failure sweeps over the
 * parser and the queue: a failure is an error, never a half-made command.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "pipeline/node.h"
#include "sdk/base/alloc.h"
#include "services/ws_conn.h"
#include "services/ws_msg.h"
#include "tests/check.h"
#include "tests/fault.h"

/* Parses s (copied into an exact-size buffer without a NUL after it). */
static parley_status parse(const char *s, ws_cmd *cmd)
{
    size_t n = strlen(s);
    char *buf = pl_malloc(n ? n : 1);
    memcpy(buf, s, n);
    parley_status st = ws_msg_parse(buf, n, cmd);
    pl_free(buf);
    return st;
}

static void expect_ok(const char *s, ws_cmd_type type)
{
    ws_cmd cmd;
    parley_status st = parse(s, &cmd);
    CHECK(st == PARLEY_OK && cmd.type == type, "%s: %s", s, parley_errmsg());
    ws_cmd_clear(&cmd);
}

/* A refusal whose reason contains `what`, with id `id` (a JSON text, or NULL for none). */
static void expect_refused(const char *s, const char *what, const char *id)
{
    ws_cmd cmd;
    parley_status st = parse(s, &cmd);
    CHECK(st != PARLEY_OK && strstr(parley_errmsg(), what), "%s: refused with '%s', got %d '%s'", s,
          what, st, parley_errmsg());
    char *got = cmd.id ? cJSON_PrintUnformatted(cmd.id) : NULL;
    CHECK(id ? got && !strcmp(got, id) : !got, "%s: id %s, got %s", s, id ? id : "none",
          got ? got : "none");
    cJSON_free(got);
    ws_cmd_clear(&cmd);
}

static void messages(void)
{
    ws_cmd cmd;
    CHECK(parse("{\"text\": \"a large pizza\", \"id\": \"t-1\"}", &cmd) == PARLEY_OK &&
                  cmd.type == WS_CMD_TEXT && !strcmp(cmd.text, "a large pizza") &&
                  cJSON_IsString(cmd.id) && !strcmp(cmd.id->valuestring, "t-1"),
          "a text with a string id: %s", parley_errmsg());
    ws_cmd_clear(&cmd);
    CHECK(parse("{\"id\": 12.5, \"text\": \"\"}", &cmd) == PARLEY_OK && cmd.text[0] == 0 &&
                  cJSON_IsNumber(cmd.id) && cmd.id->valuedouble == 12.5,
          "an empty text with a number id: %s", parley_errmsg());
    ws_cmd_clear(&cmd);
    CHECK(parse(" {\"config\": {\"user\": \"u-1\", \"sample_rate\": 8000}} ", &cmd) == PARLEY_OK &&
                  cmd.type == WS_CMD_CONFIG && !strcmp(cmd.user, "u-1") && cmd.sample_rate == 8000,
          "a config: %s", parley_errmsg());
    ws_cmd_clear(&cmd);
    CHECK(parse("{\"config\": {}}", &cmd) == PARLEY_OK && !cmd.user && !cmd.sample_rate,
          "an empty config: %s", parley_errmsg());
    ws_cmd_clear(&cmd);
    expect_ok("{\"eof\": 1}", WS_CMD_EOF);
    expect_ok("{\"eof\": true}", WS_CMD_EOF);
    expect_ok("{\"end\": 1}", WS_CMD_END);
    expect_ok("{\"text\": \"caf\xc3\xa9 \\u00e9\", \"other\": [1]}", WS_CMD_TEXT);
    expect_ok("{\"config\": {\"sample_rate\": 48000}}", WS_CMD_CONFIG);
    expect_ok("{\"text\": \"\\\\u0000 is a backslash and u0000\"}", WS_CMD_TEXT);

    /* message, what the reason mentions, the id kept for the answer (JSON) or NULL */
    static const char *const refused[][3] = {
        { "", "not valid JSON", NULL },
        { "hello", "not valid JSON", NULL },
        { "{\"text\": \"a\"} x", "after the JSON value", NULL },
        { "[1]", "not an array", NULL },
        { "\"text\"", "not a string", NULL },
        { "{}", "unknown message type", NULL },
        { "{\"hello\": 1, \"id\": 4}", "unknown message type", "4" },
        { "{\"text\": \"a\", \"eof\": 1}", "one of", NULL },
        { "{\"text\": \"a\", \"text\": \"b\"}", "one of", NULL },
        { "{\"text\": 1, \"id\": \"x\"}", "\"text\": expected a string, not a number", "\"x\"" },
        { "{\"text\": null}", "not null", NULL },
        { "{\"text\": \"a\", \"id\": true}", "\"id\"", NULL },
        { "{\"text\": \"a\", \"id\": 1, \"id\": 2}", "\"id\" given twice", NULL },
        { "{\"text\": \"a\\u0000b\", \"id\": 9}", "NUL", "9" },
        { "{\"eof\": 0}", "\"eof\"", NULL },
        { "{\"end\": 2}", "\"end\"", NULL },
        { "{\"end\": 1, \"eof\": 1}", "one of", NULL },
        { "{\"config\": []}", "expected an object", NULL },
        { "{\"config\": {\"user\": 5}}", "config.user", NULL },
        { "{\"config\": {\"user\": \"\"}}", "config.user", NULL },
        { "{\"config\": {\"user\": \"a\\u0007b\"}}", "config.user", NULL },
        { "{\"config\": {\"user\": \"a\", \"user\": \"b\"}}", "twice", NULL },
        { "{\"config\": {\"sample_rate\": 7999}}", "sample_rate", NULL },
        { "{\"config\": {\"sample_rate\": 48001}}", "sample_rate", NULL },
        { "{\"config\": {\"sample_rate\": 16000.5}}", "sample_rate", NULL },
        { "{\"config\": {\"sample_rate\": \"16000\"}}", "sample_rate", NULL },
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        expect_refused(refused[i][0], refused[i][1], refused[i][2]);

    /* A raw NUL inside the bytes, and a text over PARLEY_MAX_TEXT_BYTES. */
    static const char nul[] = "{\"text\": \"a\0b\"}";
    CHECK(ws_msg_parse(nul, sizeof nul - 1, &cmd) != PARLEY_OK && strstr(parley_errmsg(), "NUL"),
          "a raw NUL: %s", parley_errmsg());
    ws_cmd_clear(&cmd);
    /* A string id of WS_ID_MAX_BYTES is kept; one byte more is refused (each turn in flight
     * keeps its id and its answer echoes it: 1 MB ids pinned megabytes per connection). */
    char idmsg[WS_ID_MAX_BYTES + 64];
    for (int extra = 0; extra < 2; extra++) {
        int n = snprintf(idmsg, sizeof idmsg, "{\"text\": \"a\", \"id\": \"%0*d\"}",
                         WS_ID_MAX_BYTES + extra, 7);
        parley_status got = ws_msg_parse(idmsg, (size_t)n, &cmd);
        CHECK(extra ? got == PARLEY_ERR_FORMAT && strstr(parley_errmsg(), "\"id\": 257 bytes")
                    : got == PARLEY_OK,
              "an id of %d bytes: %s", WS_ID_MAX_BYTES + extra, parley_errmsg());
        ws_cmd_clear(&cmd);
    }
    size_t big = PARLEY_MAX_TEXT_BYTES + 1;
    char *text = pl_malloc(big + 16);
    memcpy(text, "{\"text\": \"", 10);
    memset(text + 10, 'a', big);
    memcpy(text + 10 + big, "\"}", 2);
    CHECK(ws_msg_parse(text, big + 12, &cmd) != PARLEY_OK && strstr(parley_errmsg(), "text"),
          "a text over the limit: %s", parley_errmsg());
    ws_cmd_clear(&cmd);
    pl_free(text);
}

static void connection(void)
{
    ws_conn *c = ws_conn_new(NULL, 16);
    CHECK(c != NULL, "a connection");
    /* An empty frame (or empty first fragment) before any buffer exists: nothing is copied
     * (a copy from or to NULL is undefined, and UBSan stops there). */
    CHECK(c && ws_conn_rx_add(c, NULL, 0, 10) == PARLEY_OK && c->rx_len == 0 && !c->rx,
          "an empty piece first");
    CHECK(ws_conn_rx_add(c, "hello ", 6, 10) == PARLEY_OK, "a first piece");
    CHECK(ws_conn_rx_add(c, "you", 3, 10) == PARLEY_OK, "a second piece");
    CHECK(c->rx_len == 9 && !memcmp(c->rx, "hello you", 9), "reassembled");
    CHECK(ws_conn_rx_add(c, "!!", 2, 10) == PARLEY_ERR_INVALID_ARG &&
                  strstr(parley_errmsg(), "more than 10 bytes"),
          "over the limit: %s", parley_errmsg());
    CHECK(ws_conn_rx_add(c, "!", 1, 10) == PARLEY_OK && c->rx_len == 10, "up to the limit");
    ws_conn_rx_reset(c);
    CHECK(c->rx_len == 0 && c->rx && ws_conn_rx_add(c, "x", 1, 10) == PARLEY_OK,
          "reset: a small buffer is kept");
    static char big[100000];
    CHECK(ws_conn_rx_add(c, big, sizeof big, 1 << 20) == PARLEY_OK && c->rx_cap >= sizeof big,
          "a big message");
    ws_conn_rx_reset(c);
    CHECK(c->rx_len == 0 && !c->rx && !c->rx_cap, "a big buffer is not kept");

    CHECK(ws_conn_push(c, "{\"a\":1}", 7) == PARLEY_OK && ws_conn_push(c, "{}", 2) == PARLEY_OK,
          "two queued");
    CHECK(c->out_bytes == 9, "bytes queued: %zu", c->out_bytes);
    ws_out *o = ws_conn_pop(c);
    CHECK(o && o->len == 7 && !memcmp(o->data + 16, "{\"a\":1}", 7), "first in, first out");
    pl_free(o);
    CHECK(c->out_bytes == 2, "bytes left: %zu", c->out_bytes);

    ws_turns *t = ws_turns_new();
    ws_conn *d = ws_conn_new(NULL, 0);
    cJSON *id = cJSON_CreateString("x"), *got = NULL;
    ws_conn *who = NULL;
    CHECK(ws_turns_add(t, 7, c, id, 100) == PARLEY_OK &&
                  ws_turns_add(t, 7 + 4096, d, NULL, 0) == 0 &&
                  ws_turns_add(t, 8, c, NULL, 50) == PARLEY_OK,
          "three turns (two in one bucket)");
    CHECK(c->answer_bytes == 150 && ws_conn_held(c) == 152 + c->rx_cap,
          "room kept for c's answers: %zu, held %zu", c->answer_bytes, ws_conn_held(c));
    CHECK(ws_turns_take(t, 7, &who, &got) && who == c && cJSON_IsString(got) &&
                  !strcmp(got->valuestring, "x"),
          "turn 7 is c's, with its id");
    CHECK(c->answer_bytes == 50, "room given back with turn 7: %zu left", c->answer_bytes);
    CHECK(ws_answer_room(10, 3) >= 6 * 13, "an answer's room covers its escaped text and id");
    cJSON_Delete(got);
    CHECK(!ws_turns_take(t, 7, &who, &got) && !who && !got, "taken once");
    ws_turns_drop_conn(t, c);
    CHECK(ws_turns_take(t, 8, &who, &got) && who == NULL, "a closed connection's turn: no one");
    CHECK(ws_turns_take(t, 7 + 4096, &who, &got) && who == d, "the other connection's turn");
    CHECK(!ws_turns_take(t, 99, &who, &got), "an unknown turn");
    CHECK(ws_turns_add(t, 100, c, id, 0) == PARLEY_OK, "one left in the table when it is freed");
    cJSON_Delete(id);
    ws_turns_free(t);
    ws_conn_free(d);
    ws_conn_free(c); /* frees what is still queued */
}

static parley_status parse_one(void *ctx)
{
    ws_cmd cmd;
    parley_status st = ws_msg_parse(ctx, strlen(ctx), &cmd);
    if (st == PARLEY_OK)
        CHECK(cmd.type == WS_CMD_TEXT && cmd.id && !strcmp(cmd.text, "hi"), "whole when it parses");
    ws_cmd_clear(&cmd);
    return st;
}

static parley_status queue_one(void *ctx)
{
    (void)ctx;
    ws_conn *c = ws_conn_new(NULL, 8);
    ws_turns *t = ws_turns_new();
    cJSON *id = cJSON_CreateNumber(1);
    parley_status st = !c || !t || !id ? PARLEY_ERR_NOMEM : ws_conn_push(c, "{}", 2);
    if (st == PARLEY_OK)
        st = ws_conn_rx_add(c, "abc", 3, 100);
    if (st == PARLEY_OK)
        st = ws_turns_add(t, 1, c, id, 1);
    cJSON_Delete(id);
    ws_turns_free(t);
    ws_conn_free(c);
    return st;
}

int main(void)
{
    messages();
    connection();
    long points = fault_sweep("ws_msg_parse", parse_one, "{\"id\": \"x\", \"text\": \"hi\"}");
    CHECK(points >= 2, "only %ld allocation points", points);
    points = fault_sweep("ws_conn", queue_one, NULL);
    CHECK(points >= 4, "only %ld allocation points", points);
    return check_done();
}
