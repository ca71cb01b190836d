/* test_reply_json.c — the JSON line of text.stdout (services/reply_json.c) for messages
 * made by hand: a reply, an error with its input line, a refused turn with no user, and
 * strings that are not valid UTF-8 (each bad byte becomes U+FFFD, so the line stays valid
 * UTF-8 and valid JSON). Also an allocation-failure sweep: a failure gives NULL, never a
 * line missing a field.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "pipeline/node.h"
#include "services/reply_json.h"
#include "tests/check.h"
#include "tests/fault.h"

/* The line for m and error, checked to be valid UTF-8 and JSON; its text in want. */
static void check_line(const pipe_msg *m, const char *error, const char *want)
{
    char *s = svc_reply_json(m, error);
    CHECK(s && pipe_utf8_valid_len(s, strlen(s)) == strlen(s), "valid UTF-8: %s", s ? s : "-");
    cJSON *o = s ? cJSON_Parse(s) : NULL;
    CHECK(cJSON_IsObject(o), "valid JSON: %s", s ? s : "-");
    CHECK(s && !strcmp(s, want), "\n got  %s\n want %s", s ? s : "-", want);
    cJSON_Delete(o);
    cJSON_free(s);
}

static parley_status format_line(void *ctx)
{
    char *s = svc_reply_json(ctx, "bad \xff");
    cJSON_free(s);
    return s ? PARLEY_OK : PARLEY_ERR_NOMEM;
}

int main(void)
{
    parley_slot slots[] = { { "size", "large" }, { "where", "caf\xc3\xa9 \xc3" } };
    pipe_msg m = { .type = PIPE_T_REPLY,
                   .user_id = "bob",
                   .turn_id = 3,
                   .reply = "Ok!",
                   .intent = "order",
                   .confidence = 0.91234f,
                   .n_slots = 2,
                   .slots = slots };
    check_line(&m, NULL,
               "{\"user\":\"bob\",\"turn\":3,\"reply\":\"Ok!\",\"intent\":\"order\","
               "\"confidence\":0.9123,\"slots\":{\"size\":\"large\",\"where\":\"caf\xc3\xa9 "
               "\xef\xbf\xbd\"}}");
    m.line = 12;
    check_line(&m, "input line 12: text: bad",
               "{\"user\":\"bob\",\"turn\":3,\"line\":12,\"error\":"
               "\"input line 12: text: bad\"}");
    pipe_msg refused = { .type = PIPE_T_TEXT, .user_id = "", .seq = 40, .line = 7, .text = "" };
    check_line(
            &refused, "a path \xff\xfe, cut \xe2\x82",
            "{\"user\":null,\"turn\":null,\"line\":7,\"error\":\"a path \xef\xbf\xbd\xef\xbf\xbd, "
            "cut \xef\xbf\xbd\xef\xbf\xbd\"}");
    pipe_msg api = { .type = PIPE_T_TEXT, .user_id = "carol", .seq = 5, .text = "hi" };
    /* A turn that failed was given no turn of its user: "turn" is null, never the graph's
     * sequence number (5 here), which looked like the user's turn. */
    check_line(&api, "failed", "{\"user\":\"carol\",\"turn\":null,\"error\":\"failed\"}");
    long points = fault_sweep("svc_reply_json", format_line, &refused);
    CHECK(points >= 5, "only %ld allocation points", points);
    return check_done();
}
