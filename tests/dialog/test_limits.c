/* test_limits.c — what one user types can neither stall nor change another user's turns.
 *
 * Uses tests/dialog/limits_domain.yaml, whose text slots have patterns that backtrack
 * without end on some values. Alice's conversation is run twice: alone, then while Mallory,
 * on another thread of the same manager, sends values that reach the pattern limits, values
 * over the slot value cap and a list that joins to more than the cap. Every one of
 * Mallory's turns must fail with the limit's error and store nothing; Alice's turns must be
 * exactly what they were alone. No time is measured: the limits are counts, and a matcher
 * without them would run past the test's timeout.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dialog/dialog.h"
#include "dialog/slot_value.h"
#include "tests/check.h"
#include "tests/dialog/tmp_store.h"

static char dir[4096], store_path[4200], domain_path[4200];

static dm_manager *open_fresh(void)
{
    tmp_store_remove(store_path);
    dm_params p = { .domain_path = domain_path, .store_path = store_path };
    dm_manager *dm = NULL;
    CHECK(dm_open(&p, &dm) == PARLEY_OK, "dm_open: %s", parley_errmsg());
    return dm;
}

static parley_status turn(dm_manager *dm, const char *user, const char *intent,
                          const parley_slot *ents, size_t n, int64_t now, dm_turn_out *o)
{
    dm_turn_in in = { .user_id = user,
                      .text = "words",
                      .intent = intent,
                      .confidence = 0.9f,
                      .n_entities = n,
                      .entities = ents,
                      .now_ms = now };
    return dm_turn(dm, &in, o);
}

/* `c` repeated n times, then `tail`; owned by the caller (free). */
static char *repeat(char c, size_t n, const char *tail)
{
    char *s = malloc(n + strlen(tail) + 1);
    if (!s)
        return NULL;
    memset(s, c, n);
    strcpy(s + n, tail);
    return s;
}

/* ---- Alice: a plain conversation, written down turn by turn ------------------------------ */

enum { ALICE_TURNS = 7 };

typedef struct transcript {
    char line[ALICE_TURNS][4096];
} transcript;

/* One line per turn: everything the turn answered. */
static void write_down(char *line, size_t cap, parley_status st, const dm_turn_out *o)
{
    int n = snprintf(line, cap, "%s|%s|%s|%llu|%s|%s|", parley_status_str(st),
                     o->reply ? o->reply : "-", o->session_id ? o->session_id : "-",
                     (unsigned long long)o->turn_id, o->active_form ? o->active_form : "-",
                     o->requested_slot ? o->requested_slot : "-");
    for (size_t i = 0; i < o->n_slots && n > 0 && (size_t)n < cap; i++)
        n += snprintf(line + n, cap - (size_t)n, "%s=%zu:%.20s;", o->slots[i].name,
                      strlen(o->slots[i].value), o->slots[i].value);
}

typedef struct alice_run {
    dm_manager *dm;
    transcript t;
} alice_run;

static void *alice(void *arg)
{
    alice_run *r = arg;
    char *long_note = repeat('n', DM_SLOT_VALUE_MAX, ""); /* the longest value kept whole */
    const parley_slot ents[] = {
        { "code", "AAA" },   { "note", long_note ? long_note : "n" },
        { "phrase", "aab" }, { "tags", "red" },
        { "tags", "green" }, { "echo", "aa" }, /* each pattern on a value it accepts */
    };
    static const struct {
        const char *intent;
        size_t first, n; /* entities ents[first .. first + n) */
    } turns[ALICE_TURNS] = { { "greet", 0, 0 },  { "order", 0, 0 },  { "inform", 0, 1 },
                             { "inform", 1, 1 }, { "inform", 2, 1 }, { "inform", 3, 2 },
                             { "inform", 5, 1 } };
    for (int i = 0; i < ALICE_TURNS; i++) {
        dm_turn_out o;
        parley_status st = turn(r->dm, "alice", turns[i].intent, ents + turns[i].first, turns[i].n,
                                1700000000000 + i * 1000, &o);
        write_down(r->t.line[i], sizeof r->t.line[i], st, &o);
        dm_turn_out_free(&o);
    }
    free(long_note);
    return NULL;
}

/* ---- Mallory: values that reach a limit, again and again --------------------------------- */

typedef struct mallory_run {
    dm_manager *dm;
    int rounds;
    int failed_right; /* turns that failed as they must */
    int other;        /* turns that did anything else */
    char first_wrong[512];
} mallory_run;

static void *mallory(void *arg)
{
    mallory_run *r = arg;
    char *code = repeat('a', 1000, "!"), *phrase = repeat('a', 1000, "cb"),
         *echo = repeat('a', 1000, "c"), *note = repeat('x', DM_SLOT_VALUE_MAX + 1, "");
    parley_slot tags[60];
    char tag[60][32];
    for (int i = 0; i < 60; i++) {
        snprintf(tag[i], sizeof tag[i], "tag-number-%09d", i); /* 60 x 20 bytes, joined 1318 */
        tags[i] = (parley_slot){ "tags", tag[i] };
    }
    if (!code || !phrase || !echo || !note) {
        r->other++;
        goto done;
    }
    const parley_slot bad[5] = {
        { "code", code }, { "phrase", phrase }, { "echo", echo }, { "note", note }, { "tags", NULL }
    };
    static const char *const says[5] = {
        "slot 'code': the pattern needs more than the 100000 steps",
        "slot 'phrase': the pattern needs more than the 100000 steps",
        "slot 'echo': the pattern needs more than the 100000 steps",
        "slot 'note': a value of 1025 bytes is longer than the 1024",
        "slot 'tags': its values joined make more than the 1024 bytes"
    };
    for (int round = 0; round < r->rounds; round++)
        for (int k = 0; k < 5; k++) {
            dm_turn_out o;
            parley_status st = k == 4 ? turn(r->dm, "mallory", "inform", tags, 60, 0, &o)
                                      : turn(r->dm, "mallory", "inform", &bad[k], 1, 0, &o);
            if (st == PARLEY_ERR_UNSUPPORTED && strstr(parley_errmsg(), says[k]) && !o.reply &&
                o.turn_id == 0) {
                r->failed_right++;
            } else {
                if (!r->other++)
                    snprintf(r->first_wrong, sizeof r->first_wrong, "%s: %s %s", says[k],
                             parley_status_str(st), parley_errmsg());
            }
            dm_turn_out_free(&o);
        }
done:
    free(code);
    free(phrase);
    free(echo);
    free(note);
    return NULL;
}

static void test_one_user_cannot_cross_another(void)
{
    /* Alice alone. */
    dm_manager *dm = open_fresh();
    if (!dm)
        return;
    alice_run alone = { dm, { { { 0 } } } };
    alice(&alone);
    dm_close(dm);
    CHECK(strstr(alone.t.line[2], "Code AAA noted.") && strstr(alone.t.line[3], "note=1024:") &&
                  strstr(alone.t.line[6], "code=3:AAA;phrase=3:aab;echo=2:aa;note=1024:") &&
                  strstr(alone.t.line[6], "tags=10:red, green;"),
          "alice's own turns:\n  %s\n  %s\n  %s", alone.t.line[2], alone.t.line[3],
          alone.t.line[6]);

    /* Alice while Mallory tries every limit on another thread of the same manager. */
    dm = open_fresh();
    if (!dm)
        return;
    dm_turn_out o;
    CHECK(turn(dm, "mallory", "order", NULL, 0, 0, &o) == PARLEY_OK, "%s", parley_errmsg());
    dm_turn_out_free(&o);
    alice_run beside = { dm, { { { 0 } } } };
    mallory_run m = { .dm = dm, .rounds = 4 };
    pthread_t ta, tm;
    pthread_create(&tm, NULL, mallory, &m);
    pthread_create(&ta, NULL, alice, &beside);
    pthread_join(ta, NULL);
    pthread_join(tm, NULL);
    for (int i = 0; i < ALICE_TURNS; i++)
        CHECK(!strcmp(alone.t.line[i], beside.t.line[i]),
              "alice's turn %d changed beside mallory:\n  alone:  %s\n  beside: %s", i + 1,
              alone.t.line[i], beside.t.line[i]);
    CHECK(m.failed_right == 4 * 5 && m.other == 0,
          "mallory: %d turns failed as they must, %d did not (first: %s)", m.failed_right, m.other,
          m.first_wrong);

    /* Mallory's failed turns stored nothing: her next turn is her second, in the same form,
     * with no slot set. */
    CHECK(turn(dm, "mallory", "greet", NULL, 0, 0, &o) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(o.turn_id == 2 && o.n_slots == 0 && o.active_form &&
                  !strcmp(o.active_form, "code_form") && o.requested_slot &&
                  !strcmp(o.requested_slot, "code"),
          "mallory after her failed turns: turn %llu, %zu slots, form %s",
          (unsigned long long)o.turn_id, o.n_slots, o.active_form ? o.active_form : "-");
    dm_turn_out_free(&o);
    dm_close(dm);
}

int main(void)
{
    if (!tmp_store_dir(dir, sizeof dir, "limits"))
        return 1;
    tmp_store_name(store_path, sizeof store_path, dir, "limits");
    snprintf(domain_path, sizeof domain_path, "%s/limits_domain.yaml", SRC_DIR);
    test_one_user_cannot_cross_another();
    tmp_store_remove(store_path);
    rmdir(dir);
    return check_done();
}
