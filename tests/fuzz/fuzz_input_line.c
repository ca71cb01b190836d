/* fuzz_input_line.c — libFuzzer target for an input line read as a turn
 * (services/input_line.c: text.stdin's lines, and every source that takes turns as text).
 *
 * The input is one line's bytes (without a newline), copied into a buffer of exactly that
 * size and its terminating NUL, so a read past the end is a sanitizer report. A refusal must carry
 * a message. A line that reads must keep input_line.h's promises: a blank line is spaces and tabs
 * only, and a turn's user and text pass the checks every entry point applies (pipe_check_user_id,
 * pipe_check_text), whole: no NUL cut them short, and a plain-text line is its own text.
 */
#include <string.h>

#include "pipeline/node.h"
#include "services/input_line.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1);
    if (!line)
        return 0;
    memcpy(line, data, size);
    line[size] = '\0';
    svc_line in;
    parley_status st = svc_line_read(line, size, "default", &in);
    size_t len = size && data[size - 1] == '\r' ? size - 1 : size;
    if (st != PARLEY_OK) {
        fuzz_expect_refusal(st);
    } else if (in.blank) {
        for (size_t i = 0; i < len; i++)
            FUZZ_EXPECT(data[i] == ' ' || data[i] == '\t', "byte %zu of a blank line", i);
    } else {
        FUZZ_EXPECT(in.user && in.text, "a turn has a user and a text");
        FUZZ_EXPECT(pipe_check_user_id(in.user, strlen(in.user)) == PARLEY_OK, "user id: %s",
                    parley_errmsg());
        FUZZ_EXPECT(pipe_check_text(in.text, strlen(in.text)) == PARLEY_OK, "text: %s",
                    parley_errmsg());
        if (!in.json) /* plain text: the whole line, nothing cut */
            FUZZ_EXPECT(in.text == line && strlen(in.text) == len, "plain text kept whole");
    }
    svc_line_clear(&in);
    free(line);
    return 0;
}
