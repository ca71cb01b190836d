/* test_ws_rest_msg.c — the JSON of ws.server's Rasa-compatible HTTP API (services/ws_rest_msg.c),
 * without a server: webhook and /model/parse bodies read into their fields or refused with a
 * reason naming the field (not JSON, not an object, a field missing, given twice or of the
 * wrong type, a \u0000 escape, a sender or text against parley/pipeline.h's rules, an empty
 * body; bytes need not end in a NUL); the websocket reply the server queues turned into the
 * REST channel's answer (a reply, an empty reply, a failed turn); a parse result into
 * /model/parse's answer (canonical values, offsets in characters of a text with multi-byte
 * characters, the ranking, 4-digit confidences). Allocation-failure sweeps over all three:
 * a failure is an error or NULL, never half an answer, and frees what it made.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "services/ws_rest_msg.h"
#include "tests/check.h"
#include "tests/fault.h"

/* Reads s (copied into an exact-size buffer without a NUL after it) as a webhook body. */
static parley_status webhook(const char *s, const char **sender, const char **message, cJSON **doc)
{
    size_t n = strlen(s);
    char *buf = malloc(n ? n : 1); /* not the library's: the sweeps fail only its allocations */
    memcpy(buf, s, n);
    parley_status st = ws_rest_read_webhook(buf, n, doc, sender, message);
    free(buf);
    return st;
}

static void expect_refused(const char *s, const char *what)
{
    const char *sender = NULL, *message = NULL;
    cJSON *doc = NULL;
    parley_status st = webhook(s, &sender, &message, &doc);
    CHECK(st != PARLEY_OK && st != PARLEY_ERR_NOMEM && strstr(parley_errmsg(), what),
          "%s: refused naming '%s', got %d '%s'", s, what, st, parley_errmsg());
    cJSON_Delete(doc);
}

static void bodies(void)
{
    const char *sender = NULL, *message = NULL, *text = NULL;
    cJSON *doc = NULL;
    CHECK(webhook("{\"sender\": \"u-1\", \"message\": \"a large pizza\", \"metadata\": {}}",
                  &sender, &message, &doc) == PARLEY_OK &&
                  !strcmp(sender, "u-1") && !strcmp(message, "a large pizza"),
          "a webhook body: %s", parley_errmsg());
    cJSON_Delete(doc);
    expect_refused("", "body: empty");
    expect_refused("{\"sender\": \"a\", \"messa", "body:1:18: not valid JSON");
    expect_refused("[1]", "expected a JSON object, not an array");
    expect_refused("\"hi\"", "expected a JSON object, not a string");
    expect_refused("{\"message\": \"hi\"}", "\"sender\": missing");
    expect_refused("{\"sender\": \"a\"}", "\"message\": missing");
    expect_refused("{\"sender\": 7, \"message\": \"hi\"}",
                   "\"sender\": expected a string, not a number");
    expect_refused("{\"sender\": \"a\", \"message\": null}",
                   "\"message\": expected a string, not null");
    expect_refused("{\"sender\": \"a\", \"sender\": \"b\", \"message\": \"hi\"}",
                   "\"sender\": given twice");
    expect_refused("{\"sender\": \"a\", \"message\": \"x\\u0000y\"}", "\\u0000");
    expect_refused("{\"sender\": \"\", \"message\": \"hi\"}", "\"sender\"");
    expect_refused("{\"sender\": \"a\\nb\", \"message\": \"hi\"}", "\"sender\"");
    expect_refused("{\"sender\": \"a\", \"message\": \"\xff\"}", "\"message\"");
    char big[300];
    memset(big, 'u', sizeof big);
    snprintf(big, sizeof big, "{\"sender\": \"%0200d\", \"message\": \"hi\"}", 1);
    expect_refused(big, "\"sender\"");
    const char *p = "{\"text\": \"hi there\"}";
    CHECK(ws_rest_read_parse(p, strlen(p), &doc, &text) == PARLEY_OK && !strcmp(text, "hi there"),
          "a parse body: %s", parley_errmsg());
    cJSON_Delete(doc);
    p = "{\"txt\": \"hi\"}";
    CHECK(ws_rest_read_parse(p, strlen(p), &doc, &text) == PARLEY_ERR_FORMAT &&
                  strstr(parley_errmsg(), "\"text\": missing"),
          "a parse body without text: %s", parley_errmsg());
    cJSON_Delete(doc);
}

static void expect_answer(const char *queued, int status, const char *want)
{
    int got_status = 0;
    char *got = ws_rest_webhook_answer(queued, strlen(queued), &got_status);
    CHECK(got && !strcmp(got, want) && got_status == status, "%s: want %d %s, got %d %s", queued,
          status, want, got_status, got ? got : "NULL");
    cJSON_free(got);
}

static void answers(void)
{
    expect_answer("{\"type\":\"reply\",\"user\":\"u-1\",\"turn\":2,\"reply\":\"How many?\","
                  "\"intent\":\"order_pizza\",\"slots\":{}}",
                  200, "[{\"recipient_id\":\"u-1\",\"text\":\"How many?\"}]");
    expect_answer("{\"type\":\"reply\",\"user\":\"u-1\",\"reply\":\"\"}", 200, "[]");
    expect_answer("{\"type\":\"error\",\"user\":\"u-1\",\"error\":\"dialog: the store is locked\"}",
                  500, "{\"error\":\"dialog: the store is locked\"}");
    expect_answer("{\"type\":\"reply\"}", 500, "{\"error\":\"the turn failed\"}");
    CHECK(ws_rest_chars("\xc3\xb1\xc3\xa9 a big", 7) == 5,
          "2 two-byte characters and 3 one-byte ones");
    CHECK(ws_rest_chars("\xf0\x9f\x8d\x95x", 5) == 2, "a four-byte character");
}

/* "ñé a big pizza": size "big" -> large at bytes 7-10 (characters 5-8). */
static const char TEXT[] = "\xc3\xb1\xc3\xa9 a big pizza with ham";
static const parley_nlu_slot SLOTS[] = {
    { "size", "big", 7, 10, 2, 3, "large" },
    { "topping", "ham", 22, 25, 5, 6, "ham" },
};
static const parley_nlu_intent TOP[] = { { "order_pizza", 0.99912f }, { "greet", 0.00041f } };
static const parley_nlu_result RESULT = {
    .text = TEXT,
    .intent = "order_pizza",
    .confidence = 0.99912f,
    .n_top = 2,
    .top = TOP,
    .n_slots = 2,
    .slots = SLOTS,
};

static void parse_answer(void)
{
    char *got = ws_rest_parse_answer(&RESULT);
    const char *want =
            "{\"text\":\"\xc3\xb1\xc3\xa9 a big pizza with ham\",\"intent\":{\"name\":"
            "\"order_pizza\",\"confidence\":0.9991},\"entities\":[{\"entity\":\"size\",\"value\":"
            "\"large\",\"start\":5,\"end\":8,\"extractor\":\"parley\"},{\"entity\":\"topping\","
            "\"value\":\"ham\",\"start\":20,\"end\":23,\"extractor\":\"parley\"}],"
            "\"intent_ranking\":[{\"name\":\"order_pizza\",\"confidence\":0.9991},{\"name\":"
            "\"greet\",\"confidence\":0.0004}]}";
    CHECK(got && !strcmp(got, want), "parse answer:\n want %s\n got  %s", want, got ? got : "NULL");
    cJSON_free(got);
}

static parley_status read_one(void *ctx)
{
    const char *sender, *message;
    cJSON *doc = NULL;
    parley_status st = webhook(ctx, &sender, &message, &doc);
    cJSON_Delete(doc);
    return st;
}

static parley_status answer_one(void *ctx)
{
    int status;
    char *s = ws_rest_webhook_answer(ctx, strlen(ctx), &status);
    cJSON_free(s);
    return s ? PARLEY_OK : PARLEY_ERR_NOMEM;
}

static parley_status parse_one(void *ctx)
{
    (void)ctx;
    char *s = ws_rest_parse_answer(&RESULT);
    cJSON_free(s);
    return s ? PARLEY_OK : PARLEY_ERR_NOMEM;
}

int main(void)
{
    bodies();
    answers();
    parse_answer();
    long points = fault_sweep("ws_rest_read_webhook", read_one,
                              "{\"sender\": \"u-1\", \"message\": \"a large pizza\"}");
    CHECK(points >= 3, "only %ld allocation points", points);
    points = fault_sweep("ws_rest_webhook_answer", answer_one,
                         "{\"type\":\"reply\",\"user\":\"u-1\",\"reply\":\"How many?\"}");
    CHECK(points >= 4, "only %ld allocation points", points);
    points = fault_sweep("ws_rest_webhook_answer (error)", answer_one,
                         "{\"type\":\"error\",\"user\":\"u-1\",\"error\":\"x\"}");
    CHECK(points >= 3, "only %ld allocation points", points);
    points = fault_sweep("ws_rest_parse_answer", parse_one, NULL);
    CHECK(points >= 10, "only %ld allocation points", points);
    return check_done();
}
