/* test_asr_reject.c — an utterance whose engine confidence is under the ASR node's
 * reject_below reaches the dialog as a rejected turn, which its fallback answers; one above
 * is served as the NLU read it. No recognizer: test.asr drives svc_asr (asr_node.c) with an
 * engine that hears "hello there" in every utterance, at the confidence its first sample
 * says; test.nlu reads every text as greet (confidence 1, a slot size=large). Graph, written
 * here: api → test.asr (reject_below 50) → test.nlu → dialog.frames (the pizza domain) → api.
 * Utterances at confidence 20, 80, 49.9 and 50: fallback, greet, fallback, greet; every
 * turn keeps the heard text, and the first, rejected, sets no slot where the second does.
 *
 * Usage: test_asr_reject PIZZA_DOMAIN_YAML
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/graph.h"
#include "sdk/base/alloc.h"
#include "services/asr.h"
#include "tests/check.h"
#include "tests/services/asr_test_kind.h"
#include "tests/tmpdir.h"

/* ---- the engine: "hello there" at the confidence of the first sample fed (tenths) ---- */

typedef struct fake_stream {
    float confidence;
    int fed;
} fake_stream;

static parley_status fake_open(void *engine, const char *user, void **out)
{
    (void)engine, (void)user;
    return test_asr_stream_new(sizeof(fake_stream), out);
}

static parley_status fake_feed(void *stream, const int16_t *pcm, size_t n)
{
    fake_stream *s = stream;
    if (n && !s->fed++)
        s->confidence = (float)pcm[0] / 10.0f;
    return PARLEY_OK;
}

static parley_status fake_final(void *stream, char **text)
{
    (void)stream;
    return test_asr_words("hello there", text);
}

static float fake_confidence(void *stream)
{
    return ((fake_stream *)stream)->confidence;
}

static const svc_asr_engine fake_engine = {
    .name = "test.asr",
    .open = fake_open,
    .feed = fake_feed,
    .end = test_asr_end,
    .final = fake_final,
    .confidence = fake_confidence,
    .close = pl_free,
};

static parley_status asr_create(pipe_node *node, void **state)
{
    (void)node;
    return svc_asr_new(&fake_engine, NULL, 0, 50.0f, (svc_asr **)state);
}

static const pipe_kind asr_kind =
        TEST_ASR_KIND(asr_create, "svc_asr over an engine of scripted confidences");

/* ---- test.nlu: every text is greet, with size=large ---------------------------------- */

static const pipe_port_spec nlu_ports[] = {
    { "text", PIPE_IN, PIPE_T_TEXT, 1, "texts" },
    { "result", PIPE_OUT, PIPE_T_NLU, 0, "each read as greet" },
    { NULL, 0, 0, 0, NULL },
};

static const parley_slot large = { .name = "size", .value = "large" };

static parley_status nlu_create(pipe_node *node, void **state)
{
    (void)node;
    *state = NULL;
    return PARLEY_OK;
}

static parley_status nlu_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    (void)state, (void)port;
    pipe_msg_set_payload(msg, PIPE_T_NLU, NULL, NULL);
    msg->intent = "greet";
    msg->confidence = 1.0f;
    msg->n_slots = 1;
    msg->slots = &large;
    return pipe_node_emit(node, 1, msg);
}

static const pipe_kind nlu_kind = {
    .name = "test.nlu",
    .doc = "every text read as greet",
    .ports = nlu_ports,
    .create = nlu_create,
    .process = nlu_process,
};

/* ---- the sink ------------------------------------------------------------------------ */

enum { TURNS = 4 };
static const int16_t conf10[TURNS] = { 200, 800, 499, 500 }; /* tenths */
static const int rejected[TURNS] = { 1, 0, 1, 0 };

typedef struct turn_seen {
    int done, asr_rejected;
    parley_status status;
    char intent[32], text[32], size[32];
} turn_seen;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static turn_seen seen[TURNS];

static void on_event(const pipe_event *ev, void *user)
{
    (void)user;
    const pipe_msg *m = ev->msg;
    if (ev->type != PIPE_EV_TURN_DONE || m->utt < 1 || m->utt > TURNS)
        return;
    pthread_mutex_lock(&mu);
    turn_seen *t = &seen[m->utt - 1];
    t->done = 1;
    t->status = m->status;
    t->asr_rejected = m->asr_rejected;
    snprintf(t->intent, sizeof t->intent, "%s", m->intent ? m->intent : "");
    snprintf(t->text, sizeof t->text, "%s", m->text ? m->text : "");
    for (size_t i = 0; i < m->n_slots; i++)
        if (!strcmp(m->slots[i].name, "size"))
            snprintf(t->size, sizeof t->size, "%s", m->slots[i].value);
    pthread_mutex_unlock(&mu);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_asr_reject PIZZA_DOMAIN_YAML\n");
        return 2;
    }
    const pipe_kind *kinds[64];
    if (!test_kinds_with(kinds, 64, (const pipe_kind *const[]){ &asr_kind, &nlu_kind, NULL }))
        return 2;
    tmpdir_make("asr-reject");
    char graph[1024], store[1024];
    snprintf(graph, sizeof graph, "%s", tmpdir_path("graph.yaml"));
    snprintf(store, sizeof store, "%s", tmpdir_path("turns.db"));
    FILE *f = fopen(graph, "w");
    CHECK(f != NULL, "write %s", graph);
    if (!f)
        return check_done();
    fprintf(f,
            "name: reject\n"
            "nodes:\n"
            "  - { name: api, kind: api, inputs: { reply: dialog.reply } }\n"
            "  - { name: asr, kind: test.asr, inputs: { in: api.text } }\n"
            "  - { name: nlu, kind: test.nlu, inputs: { text: asr.text } }\n"
            "  - name: dialog\n"
            "    kind: dialog.frames\n"
            "    inputs: { nlu: nlu.result }\n"
            "    params: { domain: \"%s\", store: \"%s\" }\n",
            argv[1], store);
    fclose(f);
    pipe_graph *g = NULL;
    CHECK(pipe_graph_load(graph, &(pipe_graph_opts){ .kinds = kinds }, &g) == PARLEY_OK, "load: %s",
          parley_errmsg());
    if (!g) {
        tmpdir_remove();
        return check_done();
    }
    pipe_graph_subscribe(g, on_event, NULL);
    CHECK(pipe_graph_start(g) == PARLEY_OK, "start: %s", parley_errmsg());
    pipe_node *api = pipe_graph_find_kind(g, "api");
    for (int i = 0; i < TURNS; i++) {
        int16_t pcm[160] = { conf10[i] };
        pipe_msg *m = NULL;
        CHECK(pipe_msg_new(g, "mic", "", &m) == PARLEY_OK, "new");
        if (!m)
            continue;
        m->type = PIPE_T_AUDIO, m->utt = (uint32_t)i + 1, m->utt_end = PIPE_UTT_EXPLICIT;
        CHECK(pipe_msg_set_pcm(m, pcm, 160, PIPE_AUDIO_RATE) == PARLEY_OK, "pcm");
        pipe_node_emit(api, 0, m);
    }
    pipe_graph_close(g); /* drains */
    for (int i = 0; i < TURNS; i++) {
        const turn_seen *t = &seen[i];
        CHECK(t->done && t->status == PARLEY_OK, "turn %d done: %s", i + 1,
              parley_status_str(t->status));
        CHECK(t->asr_rejected == rejected[i], "turn %d (confidence %.1f): rejected %d", i + 1,
              conf10[i] / 10.0, t->asr_rejected);
        CHECK(!strcmp(t->intent, rejected[i] ? "fallback" : "greet"), "turn %d: intent '%s'", i + 1,
              t->intent);
        CHECK(!strcmp(t->text, "hello there"), "turn %d: text '%s'", i + 1, t->text);
    }
    /* the slot a rejected turn's NLU tagged is not set; an accepted one's is */
    CHECK(!seen[0].size[0] && !strcmp(seen[1].size, "large"), "size after turns 1, 2: '%s', '%s'",
          seen[0].size, seen[1].size);
    tmpdir_remove();
    return check_done();
}
