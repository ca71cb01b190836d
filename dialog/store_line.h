/* store_line.h — one line of `parley store export`: one user as a JSON object, read with
 * the checks every entry point applies, and written back.
 *
 * store_io.c exports and imports through it; the fuzzer reads lines through it. It neither
 * reads nor writes a store. What a line may hold is docs/limits.md, "The context store"
 * (a `parley store import` line): a line dm_line_read accepts, written again by
 * dm_line_user_json and dm_line_add_row, is what `parley store export` prints for that
 * user once imported.
 */
#ifndef DIALOG_STORE_LINE_H
#define DIALOG_STORE_LINE_H

#include <stddef.h>

#include "dialog/store.h"

struct cJSON;

/* The largest whole number a line may hold: cJSON prints numbers with 15 significant
 * digits, so larger ones would not come back the same (in ms, 10^15 is 31,000 years). */
#define DM_LINE_MAX_INT 999999999999999.0
/* The most bytes of a name (a slot, form, intent or action) and of a reply or entities. */
#define DM_LINE_MAX_NAME 1024
#define DM_LINE_MAX_LONG (1024 * 1024)

/* One user read from a line. */
typedef struct dm_line_user {
    struct cJSON *json;  /* owned: holds every string below */
    const char *user_id; /* borrowed from json */
    dm_user u;           /* strings borrowed from json; the slots array owned */
    dm_turn_row *rows;   /* (n_rows) owned; strings borrowed from json */
    size_t n_rows;
} dm_line_user;

/* Reads line[0, len) into *out (zeroed first). Refuses, with PARLEY_ERR_FORMAT (or the
 * check's own status) and a detail naming the field, anything `parley store export` would
 * not write or an entry point would not accept: not a JSON object, a NUL, a member missing,
 * unknown or given twice, a string of the wrong form or size, a number that is not a whole
 * number in range (a confidence that is not finite), history rows out of turn order. Call
 * dm_line_clear(out) afterwards in every case. */
parley_status dm_line_read(const char *line, size_t len, dm_line_user *out);
void dm_line_clear(dm_line_user *x);

/* A user's line without its history rows (owned by the caller: cJSON_Delete), and in
 * *history the array to add them to (borrowed from it); NULL when out of memory. */
struct cJSON *dm_line_user_json(const char *user_id, const dm_user *u, struct cJSON **history);
/* Adds one history row to that array. */
parley_status dm_line_add_row(struct cJSON *history, const dm_turn_row *r);

#endif
