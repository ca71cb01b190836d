/* run_e2e.c — runs conversation files (tests/e2e/NAME.yaml) through a real pipeline.
 *
 * usage: run_e2e MODEL_DIR CONVERSATION.yaml...
 *
 * A conversation names a graph (relative to itself) with one `api` node and lists turns:
 *
 *   graph: graphs/nlu_api.yaml
 *   dialog: true             # the graph has a dialog.frames node: give it a fresh store
 *   turns:
 *     - user: alice          # default "default"
 *       text: a large pizza with mushrooms
 *       intent: order_pizza  # expected intent (optional)
 *       slots: { size: large }   # each must be there with this value (optional)
 *       no_slots: [address]      # each must be absent (optional)
 *       reply: "(?i)toppings?"   # POSIX extended regex the reply must match (optional)
 *     - restart: true        # close the pipeline and open it again on the same store
 *
 * The model is the trained test model (nlu.bert.model is overridden with MODEL_DIR).
 * Turns are submitted one at a time and each reply is awaited, so a conversation reads
 * like a transcript. Every mismatch is reported with the file:line of the turn.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parley/pipeline.h"
#include "sdk/base/yaml_doc.h"
#include "tests/check.h"

typedef struct conv {
    const char *file;
    char graph[2048];
    char store[64];
    char set_model[2100], set_store[128];
    const char *sets[3];
    parley_pipeline *p;
} conv;

static int open_pipeline(conv *c)
{
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.overrides = c->sets;
    parley_status st = parley_pipeline_open(c->graph, &pp, &c->p);
    CHECK(st == PARLEY_OK, "%s: open %s: %s", c->file, c->graph, parley_errmsg());
    return st == PARLEY_OK;
}

static const char *slot_value(const parley_reply *r, const char *name)
{
    for (size_t i = 0; i < r->n_slots; i++)
        if (!strcmp(r->slots[i].name, name))
            return r->slots[i].value;
    return NULL;
}

static void check_reply(const conv *c, const yd_node *turn, const parley_reply *r)
{
    const yd_node *v;
    const char *s;
    int line = turn->line;
    CHECK(r->status == PARLEY_OK, "%s:%d: turn failed: %s", c->file, line, r->error);
    if ((v = yd_get(turn, "intent")) && !yd_str(v, &s))
        CHECK(!strcmp(r->intent, s), "%s:%d: intent '%s' (%.2f), expected '%s'", c->file, line,
              r->intent, r->confidence, s);
    if ((v = yd_get(turn, "slots")) && v->kind == YD_MAP)
        for (size_t i = 0; i < v->n; i++) {
            const char *want = "", *got = slot_value(r, v->keys[i]->str);
            yd_str(v->items[i], &want);
            CHECK(got && !strcmp(got, want), "%s:%d: slot %s = '%s', expected '%s'", c->file, line,
                  v->keys[i]->str, got ? got : "(absent)", want);
        }
    if ((v = yd_get(turn, "no_slots")) && v->kind == YD_SEQ)
        for (size_t i = 0; i < v->n; i++) {
            const char *got = slot_value(r, v->items[i]->str);
            CHECK(!got, "%s:%d: slot %s = '%s', expected none", c->file, line, v->items[i]->str,
                  got ? got : "");
        }
    if ((v = yd_get(turn, "reply")) && !yd_str(v, &s)) {
        regex_t re;
        int icase = !strncmp(s, "(?i)", 4);
        int rc = regcomp(&re, s + 4 * icase, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
        CHECK(rc == 0, "%s:%d: bad regex '%s'", c->file, line, s);
        if (rc == 0) {
            CHECK(regexec(&re, r->reply, 0, NULL, 0) == 0, "%s:%d: reply '%s' does not match '%s'",
                  c->file, line, r->reply, s);
            regfree(&re);
        }
    }
}

static void run_turn(conv *c, const yd_node *turn)
{
    const yd_node *v = yd_get(turn, "restart");
    int restart = 0;
    if (v && !yd_bool(v, &restart) && restart) {
        parley_pipeline_close(c->p);
        c->p = NULL;
        open_pipeline(c);
        return;
    }
    const char *user = "default", *text = NULL;
    if ((v = yd_get(turn, "user")))
        yd_str(v, &user);
    if (!(v = yd_get(turn, "text")) || yd_str(v, &text)) {
        CHECK(0, "%s:%d: a turn needs text", c->file, turn->line);
        return;
    }
    uint64_t id = 0;
    parley_reply *r = NULL;
    CHECK(parley_pipeline_submit(c->p, user, text, &id) == PARLEY_OK, "%s:%d: submit: %s", c->file,
          turn->line, parley_errmsg());
    CHECK(parley_pipeline_poll(c->p, 60000, &r) == PARLEY_OK && r && r->id == id,
          "%s:%d: no reply: %s", c->file, turn->line, parley_errmsg());
    if (!r)
        return;
    printf("  %s> %s\n  parley> %s   [%s %.2f]\n", user, text, r->reply, r->intent, r->confidence);
    check_reply(c, turn, r);
    parley_reply_free(r);
}

static void run_file(const char *model, const char *file)
{
    conv c = { .file = file };
    yd_doc *doc = NULL;
    const yd_node *root, *g, *turns, *d;
    const char *gs;
    int dialog = 0;
    printf("%s\n", file);
    if (yd_parse_file(file, &doc) || !(root = yd_root(doc)) || yd_require(root, "graph", &g) ||
        yd_str(g, &gs) || yd_require(root, "turns", &turns) || yd_expect(turns, YD_SEQ, "turns")) {
        CHECK(0, "%s", parley_errmsg());
        yd_free(doc);
        return;
    }
    if ((d = yd_get(root, "dialog")))
        yd_bool(d, &dialog);
    const char *slash = strrchr(file, '/');
    snprintf(c.graph, sizeof c.graph, "%.*s%s", slash ? (int)(slash - file + 1) : 0, file, gs);
    snprintf(c.set_model, sizeof c.set_model, "nlu.bert.model=%s", model);
    c.sets[0] = c.set_model;
    int fd = -1;
    if (dialog) {
        snprintf(c.store, sizeof c.store, "/tmp/parley-e2e-XXXXXX");
        fd = mkstemp(c.store);
        CHECK(fd >= 0, "mkstemp");
        unlink(c.store); /* the dialog creates it */
        snprintf(c.set_store, sizeof c.set_store, "dialog.frames.store=%s", c.store);
        c.sets[1] = c.set_store;
    }
    if (open_pipeline(&c))
        for (size_t i = 0; i < turns->n && c.p; i++)
            run_turn(&c, turns->items[i]);
    parley_pipeline_close(c.p);
    if (fd >= 0) {
        close(fd);
        char side[96];
        unlink(c.store);
        snprintf(side, sizeof side, "%s-wal", c.store);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", c.store);
        unlink(side);
    }
    yd_free(doc);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: run_e2e MODEL_DIR CONVERSATION.yaml...\n");
        return 2;
    }
    for (int i = 2; i < argc; i++)
        run_file(argv[1], argv[i]);
    return check_done();
}
