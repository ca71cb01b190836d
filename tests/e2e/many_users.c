/* many_users.c — 100 users at once through the real pizza pipeline (nlu.bert and
 * dialog.frames on a fresh SQLite store), submitted from 4 threads.
 *
 * Each user orders its own combination of size and topping (6 sizes x 18 toppings), then
 * gives a count and an address: every turn must come back exactly once, in the user's
 * order (the dialog's turn numbers 1, 2, 3), and the size and topping slots in a reply may
 * only ever hold that user's own values — no user sees another's slots.
 *
 * usage: many_users MODEL_DIR GRAPH.yaml
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parley/pipeline.h"
#include "tests/check.h"
#include "tests/users.h"

enum { USERS = 100, TURNS = 3, THREADS = 4 };

static const char *const sizes[] = { "personal", "small",       "medium",
                                     "large",    "extra large", "family size" };
static const char *const toppings[] = {
    "pepperoni",    "mushrooms", "olives",   "ham",           "pineapple", "onions",
    "extra cheese", "sausage",   "bacon",    "green peppers", "spinach",   "jalapenos",
    "anchovies",    "chicken",   "tomatoes", "basil",         "salami",    "artichokes",
};

static const char *size_of(int u)
{
    return sizes[u % 6];
}
static const char *topping_of(int u)
{
    return toppings[u / 6 % 18];
}

/* Turn k of user u. */
static void say(int u, int k, char *buf, size_t cap)
{
    if (k == 0)
        snprintf(buf, cap, "i want a %s pizza with %s", size_of(u), topping_of(u));
    else
        snprintf(buf, cap, "%s", k == 1 ? "2 pizzas" : "deliver to 5 main street");
}

typedef struct tally {
    pthread_mutex_t mu;
    int got[USERS];
    long failed, wrong_user, out_of_order, leaked, kept_own;
} tally;

static void on_reply(const parley_reply *r, void *ud)
{
    tally *t = ud;
    int u = -1;
    sscanf(r->user, "user%d", &u);
    pthread_mutex_lock(&t->mu);
    if (u < 0 || u >= USERS) {
        t->wrong_user++;
    } else if (r->status != PARLEY_OK) {
        t->failed++;
        fprintf(stderr, "%s: %s\n", r->user, r->error);
        t->got[u]++;
    } else {
        int k = t->got[u]++, own = 0;
        char want[128];
        say(u, k, want, sizeof want);
        if (r->turn != (uint64_t)k + 1 || strcmp(r->text, want))
            t->out_of_order++;
        for (size_t i = 0; i < r->n_slots; i++) {
            const char *mine = !strcmp(r->slots[i].name, "size")      ? size_of(u)
                               : !strcmp(r->slots[i].name, "topping") ? topping_of(u)
                                                                      : NULL;
            if (mine && strcmp(r->slots[i].value, mine))
                t->leaked++;
            own += mine && !strcmp(r->slots[i].value, mine);
        }
        t->kept_own += k == TURNS - 1 && own == 2;
    }
    pthread_mutex_unlock(&t->mu);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: many_users MODEL_DIR GRAPH.yaml\n");
        return 2;
    }
    char store[] = "/tmp/parley-many-XXXXXX", set_model[2100], set_store[128], side[64];
    int fd = mkstemp(store);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    unlink(store);
    snprintf(set_model, sizeof set_model, "nlu.bert.model=%s", argv[1]);
    snprintf(set_store, sizeof set_store, "dialog.frames.store=%s", store);
    const char *sets[] = { set_model, set_store, NULL };
    static tally t;
    pthread_mutex_init(&t.mu, NULL);
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.on_reply = on_reply;
    pp.user_data = &t;
    pp.overrides = sets;
    pp.queue_size = 8;
    parley_pipeline *p = NULL;
    CHECK(parley_pipeline_open(argv[2], &pp, &p) == PARLEY_OK, "open: %s", parley_errmsg());
    if (p) {
        long failed = users_submit(p, USERS, TURNS, THREADS, say);
        parley_pipeline_close(p);
        CHECK(failed == 0, "%ld submits failed", failed);
    }
    int short_users = 0;
    for (int u = 0; u < USERS; u++)
        short_users += t.got[u] != TURNS;
    CHECK(short_users == 0, "%d users did not get exactly %d replies", short_users, TURNS);
    CHECK(t.failed == 0 && t.wrong_user == 0, "failed %ld, unknown user %ld", t.failed,
          t.wrong_user);
    CHECK(t.out_of_order == 0, "%ld replies out of order", t.out_of_order);
    CHECK(t.leaked == 0, "%ld slot values not the user's own", t.leaked);
    /* The check above means something only if the slots were understood and kept. */
    CHECK(t.kept_own >= USERS * 9 / 10, "only %ld users kept their size and topping to turn 3",
          t.kept_own);
    printf("%d users x %d turns; %ld kept their own size and topping to the last turn\n", USERS,
           TURNS, t.kept_own);
    unlink(store);
    snprintf(side, sizeof side, "%s-wal", store);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", store);
    unlink(side);
    pthread_mutex_destroy(&t.mu);
    return check_done();
}
