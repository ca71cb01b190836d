/* fuzz_ws_rest_msg.c — libFuzzer target for the bodies of ws.server's Rasa-compatible HTTP API
 * (services/ws_rest_msg.c: what the server does with every POST /webhooks/rest/webhook and
 * POST /model/parse body a client sends).
 *
 * The input is one body's bytes, copied into a buffer of exactly that size with no NUL after
 * it, so a read past the end is a sanitizer report; it is read both as a webhook body and as a
 * parse body. A refusal must carry a message. A body that reads must keep ws_rest_msg.h's
 * promises: a sender passes pipe_check_user_id, a message or text passes pipe_check_text. The
 * same bytes are then turned into a webhook answer as if the server had queued them: NULL
 * only when out of memory, else JSON that cJSON reads back.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "pipeline/node.h"
#include "services/ws_rest_msg.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = malloc(size ? size : 1);
    if (!body)
        return 0;
    memcpy(body, data, size);
    cJSON *doc = NULL;
    const char *sender = NULL, *message = NULL, *text = NULL;
    parley_status st = ws_rest_read_webhook(body, size, &doc, &sender, &message);
    if (st != PARLEY_OK)
        fuzz_expect_refusal(st);
    else
        FUZZ_EXPECT(pipe_check_user_id(sender, strlen(sender)) == PARLEY_OK &&
                            pipe_check_text(message, strlen(message)) == PARLEY_OK,
                    "sender and message: %s", parley_errmsg());
    cJSON_Delete(doc);
    doc = NULL;
    st = ws_rest_read_parse(body, size, &doc, &text);
    if (st != PARLEY_OK)
        fuzz_expect_refusal(st);
    else
        FUZZ_EXPECT(pipe_check_text(text, strlen(text)) == PARLEY_OK, "text: %s", parley_errmsg());
    cJSON_Delete(doc);
    int status = 0;
    char *answer = ws_rest_webhook_answer(body, size, &status);
    if (answer) {
        cJSON *back = cJSON_Parse(answer);
        FUZZ_EXPECT(back && (status == 200 || status == 500), "an answer that is JSON: %s", answer);
        cJSON_Delete(back);
    }
    cJSON_free(answer);
    free(body);
    return 0;
}
