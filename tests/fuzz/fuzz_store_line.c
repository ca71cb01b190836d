/* fuzz_store_line.c — libFuzzer target for a `parley store import` line
 * (dialog/store_line.c: dm_line_read, the parser every import line goes through).
 *
 * The input is one line's bytes, copied into a buffer of exactly that size and its
 * terminating NUL, so a read past the end is a sanitizer report. A refusal must carry a
 * message. A line that reads must keep store_line.h's promises: its user id passes the
 * entry points' check, and written back as `parley store export` writes it, then read and
 * written again, it gives the same bytes (what import accepts round-trips).
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "dialog/store_line.h"
#include "pipeline/node.h"
#include "tests/fuzz/fuzz_input.h"

/* The export line of what x holds (cJSON_free), or NULL when out of memory. */
static char *write_line(const dm_line_user *x)
{
    cJSON *history = NULL;
    cJSON *o = dm_line_user_json(x->user_id, &x->u, &history);
    for (size_t i = 0; o && i < x->n_rows; i++)
        FUZZ_EXPECT(dm_line_add_row(history, &x->rows[i]) == PARLEY_OK, "a row: %s",
                    parley_errmsg());
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1);
    if (!line)
        return 0;
    memcpy(line, data, size);
    line[size] = '\0';
    dm_line_user x, y;
    parley_status st = dm_line_read(line, size, &x);
    if (st != PARLEY_OK) {
        fuzz_expect_refusal(st);
    } else {
        FUZZ_EXPECT(pipe_check_user_id(x.user_id, strlen(x.user_id)) == PARLEY_OK, "user id: %s",
                    parley_errmsg());
        char *once = write_line(&x);
        FUZZ_EXPECT(once, "writing the line back");
        FUZZ_EXPECT(dm_line_read(once, strlen(once), &y) == PARLEY_OK,
                    "the written line reads again: %s", parley_errmsg());
        char *twice = write_line(&y);
        FUZZ_EXPECT(twice && !strcmp(once, twice), "the same bytes:\n%s\n%s", once,
                    twice ? twice : "");
        cJSON_free(once);
        cJSON_free(twice);
        dm_line_clear(&y);
    }
    dm_line_clear(&x);
    free(line);
    return 0;
}
