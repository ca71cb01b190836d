/* test_manager.c — the dialog manager through its C API: actions, history limit,
 * reproducible variations, many users on many threads, and allocation failures.
 * Uses tests/dialog/manager_domain.yaml; NLU results are given directly.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dialog/dialog.h"
#include "dialog/domain.h"
#include "dialog/store.h"
#include "sdk/base/alloc.h"
#include "tests/check.h"
#include "tests/dialog/tmp_store.h"
#include "tests/fault.h"

static char dir[4096], store_path[4200], domain_path[4200];

static dm_manager *open_dm(void)
{
    dm_params p = { .domain_path = domain_path, .store_path = store_path };
    dm_manager *dm = NULL;
    parley_status st = dm_open(&p, &dm);
    CHECK(st == PARLEY_OK, "dm_open: %s", parley_errmsg());
    return dm;
}

static void remove_store(void)
{
    tmp_store_remove(store_path);
}

static parley_status turn(dm_manager *dm, const char *user, const char *intent, const char *slot,
                          const char *value, dm_turn_out *o)
{
    parley_slot e = { slot, value };
    dm_turn_in in = { .user_id = user,
                      .text = "words",
                      .intent = intent,
                      .confidence = 0.9f,
                      .n_entities = slot ? 1 : 0,
                      .entities = &e };
    return dm_turn(dm, &in, o);
}

/* ---- actions ------------------------------------------------------------------------- */

typedef struct seen {
    int calls;
    char room[64];
    char form[64];
} seen;

static parley_status lights(const parley_action_ctx *ctx, parley_action_out *out, void *user)
{
    seen *s = user;
    s->calls++;
    for (size_t i = 0; i < ctx->n_slots; i++)
        if (!strcmp(ctx->slots[i].name, "room"))
            snprintf(s->room, sizeof s->room, "%s", ctx->slots[i].value);
    return parley_action_reply(out, "OK, the {room} is lit.");
}

static parley_status booking(const parley_action_ctx *ctx, parley_action_out *out, void *user)
{
    seen *s = user;
    s->calls++;
    snprintf(s->form, sizeof s->form, "%s", ctx->form ? ctx->form : "");
    parley_status st = parley_action_set_slot(out, "booking_ref", "BK-42");
    if (st == PARLEY_OK && parley_action_set_slot(out, "room", "garage") != PARLEY_ERR_INVALID_ARG)
        st = PARLEY_ERR_INTERNAL; /* a value outside the categories must be refused */
    if (st == PARLEY_OK &&
        parley_action_set_slot(out, "booking_ref", "42") != PARLEY_ERR_INVALID_ARG)
        st = PARLEY_ERR_INTERNAL; /* and one that does not match the slot's pattern */
    return st;                    /* no reply: the domain's utter_booked, with the slot just set */
}

static parley_status fails(const parley_action_ctx *ctx, parley_action_out *out, void *user)
{
    (void)ctx;
    (void)user;
    parley_action_reply(out, "never said");
    return PARLEY_ERR_IO;
}

static void test_actions(void)
{
    remove_store();
    dm_manager *dm = open_dm();
    if (!dm)
        return;
    dm_turn_out o;
    seen s = { 0 };
    /* Not registered: the domain's reply. */
    CHECK(turn(dm, "a", "lights", "room", "Kitchen", &o) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(o.reply && !strcmp(o.reply, "Lights in the kitchen switched."), "default reply: %s",
          o.reply);
    CHECK(o.action && !strcmp(o.action, "switch_lights"), "action %s", o.action);
    dm_turn_out_free(&o);
    /* Registered: the hook sees the slots and its templated reply is used. */
    CHECK(dm_register_action(dm, "switch_lights", lights, &s) == PARLEY_OK, "register");
    CHECK(dm_register_action(dm, "no_such_action", lights, &s) == PARLEY_ERR_NOT_FOUND,
          "undeclared action");
    CHECK(turn(dm, "a", "lights", "room", "bedroom", &o) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(s.calls == 1 && !strcmp(s.room, "bedroom"), "hook calls %d room %s", s.calls, s.room);
    CHECK(o.reply && !strcmp(o.reply, "OK, the bedroom is lit."), "hook reply: %s", o.reply);
    dm_turn_out_free(&o);
    /* A form completed by an action that sets a slot and leaves the reply to the domain. */
    seen b = { 0 };
    CHECK(dm_register_action(dm, "make_booking", booking, &b) == PARLEY_OK, "register");
    CHECK(turn(dm, "a", "book", NULL, NULL, &o) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(o.reply && !strcmp(o.reply, "For how many guests?"), "ask: %s", o.reply);
    dm_turn_out_free(&o);
    CHECK(turn(dm, "a", "inform", "guests", "four", &o) == PARLEY_OK, "%s", parley_errmsg());
    CHECK(b.calls == 1 && !strcmp(b.form, "booking"), "booking calls %d form %s", b.calls, b.form);
    CHECK(o.reply && !strcmp(o.reply, "Booked for 4: BK-42."), "booked: %s", o.reply);
    CHECK(!o.active_form, "form still active");
    dm_turn_out_free(&o);
    /* A failing action fails the turn and stores nothing. */
    CHECK(dm_register_action(dm, "always_fails", fails, NULL) == PARLEY_OK, "register");
    long before = 0, after = 0;
    CHECK(turn(dm, "a", "greet", NULL, NULL, &o) == PARLEY_OK, "%s", parley_errmsg());
    uint64_t last = o.turn_id;
    dm_turn_out_free(&o);
    parley_status st = turn(dm, "a", "fail", NULL, NULL, &o);
    CHECK(st == PARLEY_ERR_IO && strstr(parley_errmsg(), "always_fails"), "failing action: %s %s",
          parley_status_str(st), parley_errmsg());
    CHECK(!o.reply, "a failed turn has no reply");
    CHECK(turn(dm, "a", "greet", NULL, NULL, &o) == PARLEY_OK && o.turn_id == last + 1,
          "the failed turn was not counted: %llu after %llu", (unsigned long long)o.turn_id,
          (unsigned long long)last);
    dm_turn_out_free(&o);
    /* Not registered and no reply: a clear error. */
    st = turn(dm, "a", "nothing", NULL, NULL, &o);
    CHECK(st == PARLEY_ERR_NOT_FOUND && strstr(parley_errmsg(), "silent_action"), "%s",
          parley_errmsg());
    (void)before;
    (void)after;
    dm_close(dm);
}

/* A confidence that is not a number fails the turn (NaN would pass any threshold), and the
 * turn is not counted. */
static void test_confidence(void)
{
    remove_store();
    dm_manager *dm = open_dm();
    if (!dm)
        return;
    dm_turn_out o;
    CHECK(turn(dm, "c", "greet", NULL, NULL, &o) == PARLEY_OK, "%s", parley_errmsg());
    uint64_t last = o.turn_id;
    dm_turn_out_free(&o);
    const float bad[] = { NAN, INFINITY, -INFINITY };
    for (int i = 0; i < 3; i++) {
        dm_turn_in in = { .user_id = "c", .text = "hi", .intent = "greet", .confidence = bad[i] };
        parley_status st = dm_turn(dm, &in, &o);
        CHECK(st == PARLEY_ERR_INVALID_ARG && strstr(parley_errmsg(), "confidence") && !o.reply,
              "confidence %g: %s %s", bad[i], parley_status_str(st), parley_errmsg());
    }
    CHECK(turn(dm, "c", "greet", NULL, NULL, &o) == PARLEY_OK && o.turn_id == last + 1,
          "the refused turns were not counted: %llu after %llu", (unsigned long long)o.turn_id,
          (unsigned long long)last);
    dm_turn_out_free(&o);
    dm_close(dm);
}

/* ---- history limit and reproducible variations ----------------------------------------- */

static void test_history_and_variations(void)
{
    remove_store();
    dm_manager *dm = open_dm();
    if (!dm)
        return;
    char first[8][64];
    dm_turn_out o;
    for (int i = 0; i < 8; i++) {
        CHECK(turn(dm, "h", "greet", NULL, NULL, &o) == PARLEY_OK, "%s", parley_errmsg());
        snprintf(first[i], sizeof first[i], "%s", o.reply ? o.reply : "");
        dm_turn_out_free(&o);
    }
    int distinct = 0;
    for (int i = 1; i < 8; i++)
        distinct |= strcmp(first[i], first[0]) != 0;
    CHECK(distinct, "8 greetings all chose the same of 3 variations");
    dm_close(dm);

    /* The same user and turn numbers give the same variations in a fresh store. */
    remove_store();
    dm = open_dm();
    if (!dm)
        return;
    for (int i = 0; i < 8; i++) {
        CHECK(turn(dm, "h", "greet", NULL, NULL, &o) == PARLEY_OK, "%s", parley_errmsg());
        CHECK(o.reply && !strcmp(o.reply, first[i]), "turn %d: '%s' then '%s'", i + 1, first[i],
              o.reply);
        dm_turn_out_free(&o);
    }
    dm_close(dm);

    /* history_limit: 3 keeps turns 6..8 only. */
    dm_store *s;
    CHECK(dm_store_open(store_path, &(dm_store_params){ .busy_ms = 1000 }, &s) == PARLEY_OK, "%s",
          parley_errmsg());
    long count = 0;
    char *reply = NULL;
    CHECK(dm_store_history(s, "h", 5, &count, &reply) == PARLEY_OK && count == 3 && !reply,
          "history rows %ld, turn 5 %s", count, reply ? "kept" : "dropped");
    pl_free(reply);
    CHECK(dm_store_history(s, "h", 8, &count, &reply) == PARLEY_OK && reply &&
                  !strcmp(reply, first[7]),
          "turn 8: %s", reply);
    pl_free(reply);
    dm_store_close(s);
}

/* ---- many users on many threads -------------------------------------------------------- */

enum { THREADS = 8, USERS_PER_THREAD = 12 };
static const char *const rooms[] = { "kitchen", "bedroom", "living room" };

typedef struct worker {
    dm_manager *dm;
    int id;
    int bad;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (int u = 0; u < USERS_PER_THREAD; u++) {
        char user[32], guests[8];
        snprintf(user, sizeof user, "t%d-u%d", w->id, u);
        int g = 1 + (w->id * USERS_PER_THREAD + u) % 8;
        const char *room = rooms[(w->id + u) % 3];
        snprintf(guests, sizeof guests, "%d", g);
        dm_turn_out o;
        /* A room, then a booking form whose reply must show this user's own guests. */
        if (turn(w->dm, user, "lights", "room", room, &o) || !o.reply || !strstr(o.reply, room))
            w->bad++;
        dm_turn_out_free(&o);
        if (turn(w->dm, user, "book", NULL, NULL, &o) || !o.active_form)
            w->bad++;
        dm_turn_out_free(&o);
        char want[64];
        snprintf(want, sizeof want, "Booked for %d: .", g);
        if (turn(w->dm, user, "inform", "guests", guests, &o) || !o.reply || strcmp(o.reply, want))
            w->bad++;
        /* The user's slots are exactly their own room (guests are cleared after the form). */
        if (o.n_slots != 1 || strcmp(o.slots[0].value, room) || o.turn_id != 3)
            w->bad++;
        dm_turn_out_free(&o);
    }
    return NULL;
}

static void test_threads(void)
{
    remove_store();
    dm_manager *dm = open_dm();
    if (!dm)
        return;
    pthread_t t[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){ dm, i, 0 };
        pthread_create(&t[i], NULL, worker_main, &w[i]);
    }
    int bad = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        bad += w[i].bad;
    }
    CHECK(bad == 0, "%d wrong turns among %d users on %d threads", bad, THREADS * USERS_PER_THREAD,
          THREADS);
    dm_close(dm);
}

/* ---- allocation failures --------------------------------------------------------------- */

static parley_status open_and_turn(void *ctx)
{
    (void)ctx;
    remove_store();
    dm_params p = { .domain_path = domain_path, .store_path = store_path };
    dm_manager *dm;
    parley_status st = dm_open(&p, &dm);
    if (st != PARLEY_OK)
        return st;
    dm_turn_out o;
    for (int i = 0; i < 3 && st == PARLEY_OK; i++) {
        static const char *const intents[] = { "lights", "book", "inform" };
        static const char *const slots[] = { "room", NULL, "guests" };
        static const char *const values[] = { "kitchen", NULL, "2" };
        st = turn(dm, "f", intents[i], slots[i], values[i], &o);
        dm_turn_out_free(&o);
    }
    dm_close(dm);
    return st;
}

static parley_status load_domain(void *path)
{
    dm_domain *d;
    parley_status st = dm_domain_load(path, NULL, &d);
    dm_domain_free(d);
    return st;
}

int main(void)
{
    if (!tmp_store_dir(dir, sizeof dir, "dm"))
        return 1;
    tmp_store_name(store_path, sizeof store_path, dir, "dm");
    snprintf(domain_path, sizeof domain_path, "%s/manager_domain.yaml", SRC_DIR);
    test_actions();
    test_confidence();
    test_history_and_variations();
    test_threads();
    long points = fault_sweep("dm_open + 3 turns", open_and_turn, NULL);
    CHECK(points > 100, "only %ld allocation points", points);
    printf("allocation sweep: %ld failure points\n", points);
    static const char *const samples[] = { "pizza", "smarthome" };
    for (int i = 0; i < 2; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/../../samples/%s/domain.yaml", SRC_DIR, samples[i]);
        points = fault_sweep(path, load_domain, path);
        CHECK(points > 200, "%s: only %ld allocation points", path, points);
        printf("%s: %ld failure points\n", samples[i], points);
    }
    remove_store();
    rmdir(dir);
    return check_done();
}
