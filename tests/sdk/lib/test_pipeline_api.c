/* test_pipeline_api.c — what parley/pipeline.h offers beyond the api node: events, graphs
 * that run on their own sources, wait and stop, and the node kinds' descriptions.
 *
 * Graphs are written by the test around a small random model (parley_nlu_model_create on
 * tests/nlu/vocab_small.txt): text.stdin reading a file -> nlu.bert -> text.stdout writing
 * one, where a good line ends as a turn, an invalid UTF-8 line fails in the NLU (and still
 * ends, answered) and a broken JSON line is a node error, each reported once through the
 * event callback; a source blocked on a FIFO ended by parley_pipeline_stop from another
 * thread; an api graph whose events carry the ids submit returned. A terminal graph
 * (text.stdin -> nlu.bert -> text.stdout) driven from the program with params.text_io, a
 * turn submitted with PARLEY_SUBMIT_NEW_SESSION, parley_pipeline_check, and graphs refused:
 * one without an output, one without text.stdin for text_io. Then parley_kind_* against
 * the kinds' tables.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "parley/parley.h"
#include "parley_config.h"
#include "tests/check.h"
#include "tests/fault.h"
#include "tests/tmpdir.h"

static void write_file(const char *name, const char *text, size_t len)
{
    FILE *f = fopen(tmpdir_path(name), "wb");
    if (!f || fwrite(text, 1, len, f) != len) {
        fprintf(stderr, "cannot write %s\n", tmpdir_path(name));
        exit(1);
    }
    fclose(f);
}

/* The events of one run, as the callback saw them (it may run on several threads). */
typedef struct seen {
    pthread_mutex_t mu;
    int done, failed, node_errors;
    char failed_node[32], failed_user[32], error_node[32], error_msg[256];
    parley_status failed_status;
    uint64_t done_ids[8];
} seen;

static void on_event(const parley_event *ev, void *user_data)
{
    seen *s = user_data;
    pthread_mutex_lock(&s->mu);
    if (ev->type == PARLEY_EVENT_TURN_DONE) {
        if (s->done < 8)
            s->done_ids[s->done] = ev->id;
        s->done++;
    } else if (ev->type == PARLEY_EVENT_TURN_FAILED) {
        s->failed++;
        if (ev->user) { /* the failure of a known user (a broken line has none) */
            s->failed_status = ev->status;
            snprintf(s->failed_node, sizeof s->failed_node, "%s", ev->node);
            snprintf(s->failed_user, sizeof s->failed_user, "%s", ev->user);
        }
    } else {
        s->node_errors++;
        snprintf(s->error_node, sizeof s->error_node, "%s", ev->node);
        snprintf(s->error_msg, sizeof s->error_msg, "%s", ev->message);
    }
    pthread_mutex_unlock(&s->mu);
}

static int count_lines(const char *name)
{
    FILE *f = fopen(tmpdir_path(name), "r");
    int n = 0, c;
    while (f && (c = fgetc(f)) != EOF)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

/* A graph of its own sources: runs to the end of its input file; events as promised. */
static void test_sources_and_events(void)
{
    static const char graph[] = "name: files\n"
                                "nodes:\n"
                                "  - name: in\n"
                                "    kind: text.stdin\n"
                                "    params: { path: in.txt }\n"
                                "  - name: nlu\n"
                                "    kind: nlu.bert\n"
                                "    inputs: { text: in.text }\n"
                                "    params: { model: model, max_queue_delay_us: 0 }\n"
                                "  - name: out\n"
                                "    kind: text.stdout\n"
                                "    inputs: { reply: nlu.result }\n"
                                "    params: { path: out.txt }\n";
    static const char input[] = "hello world\n"
                                "{\"user\": \"bob\", \"text\": \n"
                                "{\"user\": \"carol\", \"text\": \"\xff oops\"}\n";
    write_file("files.yaml", graph, sizeof graph - 1);
    write_file("in.txt", input, sizeof input - 1);
    seen s = { .mu = PTHREAD_MUTEX_INITIALIZER };
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.on_event = on_event;
    pp.user_data = &s;
    parley_pipeline *p = NULL;
    parley_status st = parley_pipeline_open(tmpdir_path("files.yaml"), &pp, &p);
    CHECK(st == PARLEY_OK, "open a graph without an api node: %s", parley_errmsg());
    if (!p)
        return;
    parley_reply *r = (parley_reply *)&r;
    uint64_t id;
    CHECK(parley_pipeline_submit(p, "x", "hi", &id) == PARLEY_ERR_UNSUPPORTED &&
                  strstr(parley_errmsg(), "no api node"),
          "submit without an api node: %s", parley_errmsg());
    CHECK(parley_pipeline_poll(p, 0, &r) == PARLEY_ERR_UNSUPPORTED && r == NULL,
          "poll without an api node");
    parley_pipeline_wait(p);
    parley_pipeline_close(p);
    /* Every line is a turn: the broken JSON line and the one with invalid UTF-8 fail at the
     * source (text.stdin answers them) and still end; no node error is posted. */
    CHECK(s.done == 3, "three turns ended: %d", s.done);
    CHECK(s.failed == 2 && !strcmp(s.failed_node, "in") && !strcmp(s.failed_user, "carol") &&
                  s.failed_status == PARLEY_ERR_UTF8,
          "two turns failed at the source, carol's for its UTF-8: %d, %s, %s, %s", s.failed,
          s.failed_node, s.failed_user, parley_status_str(s.failed_status));
    CHECK(s.node_errors == 0, "no node error: %d, %s, %s", s.node_errors, s.error_node,
          s.error_msg);
    CHECK(count_lines("out.txt") == 3, "every line answered in out.txt: %d lines",
          count_lines("out.txt"));
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *stop_later(void *arg)
{
    usleep(300 * 1000);
    parley_pipeline_stop(arg);
    return NULL;
}

/* A source with no end of input: stop, from another thread, ends the wait. */
static void test_stop(void)
{
    static const char graph[] = "name: fifo\n"
                                "nodes:\n"
                                "  - name: in\n"
                                "    kind: text.stdin\n"
                                "    params: { path: in.fifo }\n"
                                "  - name: out\n"
                                "    kind: text.stdout\n"
                                "    inputs: { reply: in.text }\n"
                                "    params: { path: fifo_out.txt }\n";
    write_file("fifo.yaml", graph, sizeof graph - 1);
    if (mkfifo(tmpdir_path("in.fifo"), 0600) != 0) {
        CHECK(0, "mkfifo: %s", strerror(errno));
        return;
    }
    int writer = open(tmpdir_path("in.fifo"), O_RDWR); /* keeps the FIFO open: no end of input */
    parley_pipeline *p = NULL;
    CHECK(parley_pipeline_open(tmpdir_path("fifo.yaml"), NULL, &p) == PARLEY_OK, "open: %s",
          parley_errmsg());
    if (p && writer >= 0) {
        CHECK(write(writer, "one line\n", 9) == 9, "write to the FIFO");
        pthread_t t;
        double t0 = now_s();
        CHECK(pthread_create(&t, NULL, stop_later, p) == 0, "thread");
        parley_pipeline_wait(p);
        double waited = now_s() - t0;
        pthread_join(t, NULL);
        CHECK(waited >= 0.25 && waited < 10, "wait lasted until the stop: %.3f s", waited);
    }
    parley_pipeline_close(p);
    if (writer >= 0)
        close(writer);
    CHECK(count_lines("fifo_out.txt") == 1, "the line before the stop was answered");
}

/* With an api node: wait returns at once; events carry the ids submit gave. */
static void test_api_events(void)
{
    static const char graph[] = "name: api\n"
                                "nodes:\n"
                                "  - name: api\n"
                                "    kind: api\n"
                                "    inputs: { reply: nlu.result }\n"
                                "  - name: nlu\n"
                                "    kind: nlu.bert\n"
                                "    inputs: { text: api.text }\n"
                                "    params: { model: model, max_queue_delay_us: 0 }\n";
    write_file("api.yaml", graph, sizeof graph - 1);
    seen s = { .mu = PTHREAD_MUTEX_INITIALIZER };
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.on_event = on_event;
    pp.user_data = &s;
    parley_pipeline *p = NULL;
    CHECK(parley_pipeline_open(tmpdir_path("api.yaml"), &pp, &p) == PARLEY_OK, "open: %s",
          parley_errmsg());
    if (!p)
        return;
    parley_pipeline_wait(p); /* no sources: returns at once */
    uint64_t id = 0;
    parley_reply *r = NULL;
    CHECK(parley_pipeline_submit(p, "alice", "hello", &id) == PARLEY_OK &&
                  parley_pipeline_poll(p, 10000, &r) == PARLEY_OK,
          "submit and poll: %s", parley_errmsg());
    CHECK(r && r->id == id, "the reply");
    parley_reply_free(r);
    parley_pipeline_close(p);
    CHECK(s.done == 1 && s.done_ids[0] == id && s.failed == 0 && s.node_errors == 0,
          "one turn done, with the id submit gave: %d", s.done);
}

/* A graph made for the terminal, driven from here; its text.stdout writes nothing. */
static void test_text_io(void)
{
    static const char graph[] =
            "nodes:\n"
            "  - { name: in, kind: text.stdin, params: { path: nowhere } }\n"
            "  - { name: nlu, kind: nlu.bert, inputs: { text: in.text },\n"
            "      params: { model: model, device: cpu } }\n"
            "  - { name: out, kind: text.stdout, inputs: { reply: nlu.result },\n"
            "      params: { path: written.txt } }\n";
    write_file("tty.yaml", graph, sizeof graph - 1);
    CHECK(parley_pipeline_check(tmpdir_path("tty.yaml")) == PARLEY_OK, "check: %s",
          parley_errmsg());
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.text_io = 1;
    parley_pipeline *p = NULL;
    parley_status st = parley_pipeline_open(tmpdir_path("tty.yaml"), &pp, &p);
    CHECK(st == PARLEY_OK, "text_io open: %s", parley_errmsg());
    uint64_t id = 0;
    parley_reply *r = NULL;
    if (p &&
        parley_pipeline_submit_flags(p, "ann", "hello there", PARLEY_SUBMIT_NEW_SESSION, &id) ==
                PARLEY_OK &&
        parley_pipeline_poll(p, 10000, &r) == PARLEY_OK) {
        CHECK(r->status == PARLEY_OK && r->id == id && !strcmp(r->user, "ann") &&
                      !strcmp(r->text, "hello there") && r->intent[0],
              "text_io reply: status %d user %s text %s intent %s", r->status, r->user, r->text,
              r->intent);
        parley_reply_free(r);
    } else {
        CHECK(0, "text_io submit/poll: %s", parley_errmsg());
    }
    parley_pipeline_close(p);
    struct stat sb;
    CHECK(stat(tmpdir_path("written.txt"), &sb) != 0, "text.stdout's stand-in wrote its file");

    /* Without text_io the same graph reads its path, which is not there. */
    CHECK(parley_pipeline_open(tmpdir_path("tty.yaml"), NULL, &p) != PARLEY_OK, "opened");

    static const char no_out[] = "nodes:\n"
                                 "  - { name: in, kind: text.stdin }\n"
                                 "  - { name: nlu, kind: nlu.bert, inputs: { text: in.text },\n"
                                 "      params: { model: model } }\n";
    write_file("no_out.yaml", no_out, sizeof no_out - 1);
    st = parley_pipeline_open(tmpdir_path("no_out.yaml"), NULL, &p);
    CHECK(st == PARLEY_ERR_CONFIG && strstr(parley_errmsg(), "no_out.yaml:2:3") &&
                  strstr(parley_errmsg(), "no output"),
          "a graph without output: %s", parley_errmsg());
    CHECK(parley_pipeline_check(tmpdir_path("no_out.yaml")) == PARLEY_ERR_CONFIG, "check it");

    static const char api[] = "nodes:\n"
                              "  - { name: app, kind: api, inputs: { reply: nlu.result } }\n"
                              "  - { name: nlu, kind: nlu.bert, inputs: { text: app.text },\n"
                              "      params: { model: model } }\n";
    write_file("api_io.yaml", api, sizeof api - 1);
    st = parley_pipeline_open(tmpdir_path("api_io.yaml"), &pp, &p);
    CHECK(st != PARLEY_OK && strstr(parley_errmsg(), "api"),
          "text_io on an api graph is refused: %s", parley_errmsg());
}

static const parley_port_info *port(const parley_kind_info *k, const char *name)
{
    for (int i = 0; i < k->n_ports; i++)
        if (!strcmp(k->ports[i].name, name))
            return &k->ports[i];
    return NULL;
}

static const parley_param_info *param(const parley_kind_info *k, const char *name)
{
    for (int i = 0; i < k->n_params; i++)
        if (!strcmp(k->params[i].name, name))
            return &k->params[i];
    return NULL;
}

static void test_kinds(void)
{
    int n = 0, has_api = 0, has_bert = 0;
    for (const char *name; (name = parley_kind_name((size_t)n)); n++) {
        has_api |= !strcmp(name, "api");
        has_bert |= !strcmp(name, "nlu.bert");
    }
    /* seven always; the voice kinds as the build has their libraries */
    int want = 7 + 2 * PARLEY_HAVE_GSTREAMER + PARLEY_HAVE_POCKETSPHINX + PARLEY_HAVE_ESPEAK +
               PARLEY_HAVE_FLITE;
    CHECK(n == want && has_api && has_bert, "%d kinds, api and nlu.bert among them: %d", want, n);

    parley_kind_info *k = NULL;
    CHECK(parley_kind_describe("nlu.bert", &k) == PARLEY_OK, "%s", parley_errmsg());
    if (k) {
        const parley_port_info *text = port(k, "text"), *result = port(k, "result");
        const parley_param_info *model = param(k, "model"), *batch = param(k, "max_batch");
        CHECK(!strcmp(k->name, "nlu.bert") && k->doc[0] && k->n_ports == 2, "nlu.bert");
        CHECK(text && text->input && text->required && !strcmp(text->types, "text"), "text in");
        CHECK(result && !result->input && !strcmp(result->types, "nlu"), "result out");
        CHECK(model && !strcmp(model->type, "path") && !model->default_value && !model->has_range,
              "model: a required path");
        CHECK(batch && !strcmp(batch->type, "int") && batch->has_range && batch->lo == 1 &&
                      batch->hi == 1024 && !strcmp(batch->default_value, "32"),
              "max_batch: an int in [1, 1024], default 32");
        parley_kind_info_free(k);
    }
    CHECK(parley_kind_describe("text.stdout", &k) == PARLEY_OK, "%s", parley_errmsg());
    if (k) {
        const parley_port_info *reply = port(k, "reply");
        const parley_param_info *prompt = param(k, "prompt"), *verbose = param(k, "verbose");
        CHECK(reply && reply->input && !strcmp(reply->types, "text|nlu|reply"),
              "reply takes three types: %s", reply ? reply->types : "?");
        CHECK(prompt && !strcmp(prompt->default_value, "") && !strcmp(prompt->type, "string"),
              "an empty default");
        CHECK(verbose && !strcmp(verbose->type, "bool"), "a bool");
        parley_kind_info_free(k);
    }
    CHECK(parley_kind_describe("api", &k) == PARLEY_OK && k && k->n_params == 0, "api: no params");
    parley_kind_info_free(k);
    k = (parley_kind_info *)&k;
    CHECK(parley_kind_describe("nope", &k) == PARLEY_ERR_NOT_FOUND && k == NULL &&
                  strstr(parley_errmsg(), "nope"),
          "unknown kind");
    CHECK(parley_kind_describe(NULL, &k) == PARLEY_ERR_INVALID_ARG, "NULL name");
    CHECK(parley_kind_name(1000) == NULL, "past the end");
    parley_kind_info_free(NULL);
}

static parley_status describe_fault(void *ctx)
{
    parley_kind_info *k;
    parley_status st = parley_kind_describe(ctx, &k);
    parley_kind_info_free(k);
    return st;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_pipeline_api tests/nlu/vocab_small.txt\n");
        return 2;
    }
    tmpdir_make("pipeapi");
    parley_nlu_model_params mp = parley_nlu_model_params_default();
    static const char *intents[] = { "greet", "order" }, *tags[] = { "B-x", "I-x" };
    mp.layers = 1, mp.hidden = 8, mp.heads = 2, mp.intermediate = 16, mp.max_positions = 32;
    mp.vocab = argv[1];
    mp.intents = intents, mp.n_intents = 2, mp.slot_tags = tags, mp.n_slot_tags = 2;
    if (parley_nlu_model_create(tmpdir_path("model"), &mp, NULL) != PARLEY_OK) {
        fprintf(stderr, "model: %s\n", parley_errmsg());
        return 1;
    }
    test_sources_and_events();
    test_stop();
    test_api_events();
    test_text_io();
    test_kinds();
    CHECK(fault_sweep("kind describe", describe_fault, "dialog.frames") >= 1, "sweep");

    tmpdir_remove();
    return check_done();
}
