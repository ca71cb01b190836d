/* fuzz_ws_msg.c — libFuzzer target for a websocket client's text message read into a command
 * (services/ws_msg.c: what ws.server does with every text frame a client sends).
 *
 * The input is one message's bytes, copied into a buffer of exactly that size with no NUL
 * after it, so a read past the end is a sanitizer report. A refusal must carry a message. A
 * command that reads must keep ws_msg.h's promises: a text passes pipe_check_text, a config's user
 * passes pipe_check_user_id and its rate is in range, an id is a string or a finite number.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "pipeline/node.h"
#include "services/ws_msg.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *msg = malloc(size ? size : 1);
    if (!msg)
        return 0;
    memcpy(msg, data, size);
    ws_cmd cmd;
    parley_status st = ws_msg_parse(msg, size, &cmd);
    if (st != PARLEY_OK) {
        fuzz_expect_refusal(st);
    } else if (cmd.type == WS_CMD_TEXT) {
        FUZZ_EXPECT(cmd.text && pipe_check_text(cmd.text, strlen(cmd.text)) == PARLEY_OK,
                    "text: %s", parley_errmsg());
        FUZZ_EXPECT(!cmd.id || cJSON_IsString(cmd.id) ||
                            (cJSON_IsNumber(cmd.id) && isfinite(cmd.id->valuedouble)),
                    "id: a string or a finite number");
    } else if (cmd.type == WS_CMD_CONFIG) {
        FUZZ_EXPECT(!cmd.user || pipe_check_user_id(cmd.user, strlen(cmd.user)) == PARLEY_OK,
                    "user: %s", parley_errmsg());
        FUZZ_EXPECT(cmd.sample_rate == 0 ||
                            (cmd.sample_rate >= WS_RATE_MIN && cmd.sample_rate <= WS_RATE_MAX),
                    "sample rate %d", cmd.sample_rate);
    } else {
        FUZZ_EXPECT(cmd.type == WS_CMD_EOF || cmd.type == WS_CMD_END, "a command type: %d",
                    (int)cmd.type);
    }
    ws_cmd_clear(&cmd);
    free(msg);
    return 0;
}
