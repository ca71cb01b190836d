/* test_conversation.c — runs conversation files (tests/dialog/conversations/) through
 * the dialog manager with NLU results given directly, so no trained model is needed.
 *
 *   domain: ../../../samples/pizza/domain.yaml   # relative to the conversation file
 *   turns:
 *     - user: alice            # default "u1"
 *       intent: order_pizza
 *       confidence: 0.9        # default 0.99
 *       entities: { size: large, topping: [ham, olives] }
 *       minutes: 5             # minutes since the previous turn (default 0.1)
 *       reopen: true           # close and reopen the manager (a restart) before the turn
 *       restart: true          # the turn starts a new session (dm_turn_in.restart)
 *       reply: "exact text"    # and/or reply_has: [parts the reply must contain]
 *       form: pizza_form       # the active form after the turn (~ = none)
 *       slots: { size: large } # exactly the user's slots after the turn
 *       new_session: true
 * Usage: test_conversation FILE...   (the store is a fresh file in $TMPDIR)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dialog/dialog.h"
#include "sdk/base/yaml_doc.h"
#include "tests/check.h"
#include "tests/dialog/tmp_store.h"

static char dir_buf[4096];

static const char *rel(const char *file, const char *path, char *buf, size_t cap)
{
    if (path[0] == '/')
        return path;
    const char *slash = strrchr(file, '/');
    snprintf(buf, cap, "%.*s/%s", slash ? (int)(slash - file) : 1, slash ? file : ".", path);
    return buf;
}

static void check_turn(const char *file, const yd_node *t, const dm_turn_out *o)
{
    const yd_node *v;
    int line = t->line;
    if ((v = yd_get(t, "reply")))
        CHECK(!strcmp(o->reply, v->str), "%s:%d: reply\n  got:  %s\n  want: %s", file, line,
              o->reply, v->str);
    if ((v = yd_get(t, "reply_has"))) {
        for (size_t i = 0; i < (v->kind == YD_SEQ ? v->n : 1); i++) {
            const char *part = v->kind == YD_SEQ ? v->items[i]->str : v->str;
            CHECK(strstr(o->reply, part) != NULL, "%s:%d: reply '%s' lacks '%s'", file, line,
                  o->reply, part);
        }
    }
    if ((v = yd_get(t, "form"))) {
        const char *want = yd_is_null(v) ? NULL : v->str;
        CHECK(want ? o->active_form && !strcmp(o->active_form, want) : !o->active_form,
              "%s:%d: form '%s', want '%s'", file, line, o->active_form ? o->active_form : "~",
              want ? want : "~");
    }
    if ((v = yd_get(t, "acted")))
        CHECK(!strcmp(o->intent, v->str), "%s:%d: acted on '%s', want '%s'", file, line, o->intent,
              v->str);
    if ((v = yd_get(t, "new_session"))) {
        int want = 0;
        yd_bool(v, &want);
        CHECK(o->new_session == want, "%s:%d: new_session %d, want %d", file, line, o->new_session,
              want);
    }
    if ((v = yd_get(t, "action")))
        CHECK(o->action && !strcmp(o->action, v->str), "%s:%d: action '%s', want '%s'", file, line,
              o->action ? o->action : "~", v->str);
    if ((v = yd_get(t, "slots"))) {
        CHECK(o->n_slots == v->n, "%s:%d: %zu slots, want %zu", file, line, o->n_slots, v->n);
        for (size_t i = 0; i < v->n; i++) {
            const char *got = NULL;
            for (size_t j = 0; j < o->n_slots; j++)
                if (!strcmp(o->slots[j].name, v->keys[i]->str))
                    got = o->slots[j].value;
            CHECK(got && !strcmp(got, v->items[i]->str), "%s:%d: slot %s = '%s', want '%s'", file,
                  line, v->keys[i]->str, got ? got : "(unset)", v->items[i]->str);
        }
    }
}

static void run_file(const char *file)
{
    yd_doc *doc;
    if (yd_parse_file(file, &doc)) {
        CHECK(0, "%s", parley_errmsg());
        return;
    }
    const yd_node *root = yd_root(doc), *turns = yd_get(root, "turns");
    char dom[4096], store[4200];
    tmp_store_name(store, sizeof store, dir_buf, "conv");
    dm_params p = { .domain_path = rel(file, yd_get(root, "domain")->str, dom, sizeof dom),
                    .store_path = store };
    dm_manager *dm = NULL;
    parley_status st = dm_open(&p, &dm);
    CHECK(st == PARLEY_OK, "%s: dm_open: %s", file, parley_errmsg());
    int64_t now = 1700000000000;
    for (size_t i = 0; dm && turns && i < turns->n; i++) {
        const yd_node *t = turns->items[i], *v;
        if ((v = yd_get(t, "reopen")) && !strcmp(v->str, "true")) {
            dm_close(dm);
            dm = NULL;
            CHECK(dm_open(&p, &dm) == PARLEY_OK, "%s:%d: reopen: %s", file, t->line,
                  parley_errmsg());
            if (!dm)
                break;
        }
        double minutes = 0.1, conf = 0.99;
        int restart = 0;
        if ((v = yd_get(t, "restart")))
            yd_bool(v, &restart);
        if ((v = yd_get(t, "minutes")))
            yd_double(v, 0, 1e9, &minutes);
        if ((v = yd_get(t, "confidence")))
            yd_double(v, 0, 1, &conf);
        now += (int64_t)(minutes * 60000);
        parley_slot ents[32];
        size_t n = 0;
        const yd_node *e = yd_get(t, "entities");
        for (size_t k = 0; e && k < e->n; k++) {
            const yd_node *val = e->items[k];
            for (size_t j = 0; j < (val->kind == YD_SEQ ? val->n : 1) && n < 32; j++)
                ents[n++] = (parley_slot){ e->keys[k]->str,
                                           val->kind == YD_SEQ ? val->items[j]->str : val->str };
        }
        const yd_node *user = yd_get(t, "user"), *intent = yd_get(t, "intent"),
                      *text = yd_get(t, "text");
        dm_turn_in in = { .user_id = user ? user->str : "u1",
                          .text = text ? text->str : NULL,
                          .intent = intent && !yd_is_null(intent) ? intent->str : NULL,
                          .confidence = (float)conf,
                          .n_entities = n,
                          .entities = ents,
                          .now_ms = now,
                          .restart = restart };
        dm_turn_out o;
        st = dm_turn(dm, &in, &o);
        const yd_node *err = yd_get(t, "error_has");
        if (err) {
            CHECK(st != PARLEY_OK && strstr(parley_errmsg(), err->str),
                  "%s:%d: want an error with '%s', got %s: %s", file, t->line, err->str,
                  parley_status_str(st), parley_errmsg());
            continue;
        }
        CHECK(st == PARLEY_OK, "%s:%d: dm_turn: %s", file, t->line, parley_errmsg());
        if (st == PARLEY_OK)
            check_turn(file, t, &o);
        dm_turn_out_free(&o);
    }
    dm_close(dm);
    yd_free(doc);
    tmp_store_remove(store);
}

int main(int argc, char **argv)
{
    if (!tmp_store_dir(dir_buf, sizeof dir_buf, "conv"))
        return 1;
    for (int i = 1; i < argc; i++)
        run_file(argv[i]);
    rmdir(dir_buf);
    return check_done();
}
