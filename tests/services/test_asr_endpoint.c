/* test_asr_endpoint.c — a pause ends an utterance after the trailing silence the recognizer's
 * word on it asks for (pipeline/audio.h, pipe_seg_hint): complete_ms after words heard as a
 * whole request, incomplete_ms after words that stop half way, silence_ms where it cannot
 * tell. No recognizer: test.asr drives svc_asr (asr_node.c) with an engine whose word on a
 * pause is what the loudness of the last speech it heard stands for (a tone of 3000: complete,
 * 2000: half way, 1000: it cannot tell), and whose transcript counts the samples it heard.
 * The segmenter waits for the word (wait_hints), as audio.gst does, so the test does not
 * depend on timing. An engine without end_hint still answers every pause (unknown), so a
 * waiting source never waits for nothing. Graph, written here: api → test.asr → api.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/audio.h"
#include "pipeline/graph.h"
#include "sdk/base/alloc.h"
#include "services/asr.h"
#include "tests/check.h"
#include "tests/services/asr_test_kind.h"
#include "tests/tmpdir.h"

/* ---- the engine: the word on a pause from the loudness of the last speech ---------- */

typedef struct fake_stream {
    int loudest; /* of the last piece that held speech */
    size_t heard;
} fake_stream;

static parley_status fake_open(void *engine, const char *user, void **out)
{
    (void)engine, (void)user;
    return test_asr_stream_new(sizeof(fake_stream), out);
}

static parley_status fake_feed(void *stream, const int16_t *pcm, size_t n)
{
    fake_stream *s = stream;
    int loudest = 0;
    for (size_t i = 0; i < n; i++)
        loudest = abs(pcm[i]) > loudest ? abs(pcm[i]) : loudest;
    if (loudest > 500)
        s->loudest = loudest;
    s->heard += n;
    return PARLEY_OK;
}

static parley_status fake_end_hint(void *stream, pipe_end_hint *hint)
{
    int loudest = ((fake_stream *)stream)->loudest;
    *hint = loudest > 2500   ? PIPE_END_COMPLETE
            : loudest > 1500 ? PIPE_END_INCOMPLETE
                             : PIPE_END_UNKNOWN;
    return PARLEY_OK;
}

static parley_status fake_final(void *stream, char **text)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", ((fake_stream *)stream)->heard);
    return test_asr_words(buf, text);
}

static svc_asr_engine fake_engine = {
    .name = "test.asr",
    .open = fake_open,
    .feed = fake_feed,
    .end_hint = fake_end_hint,
    .end = test_asr_end,
    .final = fake_final,
    .close = pl_free,
};

static parley_status asr_create(pipe_node *node, void **state)
{
    (void)node;
    return svc_asr_new(&fake_engine, NULL, 0, 0, (svc_asr **)state);
}

static const pipe_kind asr_kind = TEST_ASR_KIND(
        asr_create, "svc_asr over an engine whose word on a pause is the speech's loudness");

/* ---- the turns ------------------------------------------------------------------------ */

enum { MAX_TURNS = 8 };
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static size_t turn_samples[MAX_TURNS];
static int n_turns;

static void on_event(const pipe_event *ev, void *user)
{
    (void)user;
    if (ev->type != PIPE_EV_TURN_DONE || !ev->msg->text)
        return;
    pthread_mutex_lock(&mu);
    if (n_turns < MAX_TURNS)
        turn_samples[n_turns++] = strtoul(ev->msg->text, NULL, 10);
    pthread_mutex_unlock(&mu);
}

/* Feeds `ms` of a 440 Hz tone of amplitude amp (0: silence). */
static void feed(pipe_seg *s, int ms, double amp)
{
    int16_t buf[160];
    static double phase;
    for (int at = 0; at < ms * 16; at += 160) {
        for (int i = 0; i < 160; i++) {
            buf[i] = (int16_t)(amp * sin(phase));
            phase += 2 * M_PI * 440 / 16000;
        }
        CHECK(pipe_seg_feed(s, buf, 160) == PARLEY_OK, "feed: %s", parley_errmsg());
    }
}

static const pipe_kind *kinds[64];
static char graph[1024];

/* Speech of loudness `amp` for 600 ms, a pause of pause_ms, 600 ms of speech again and 3 s
 * of silence, through a segmenter with params p: how many turns came of it. */
static int turns_after(const pipe_seg_params *p, double amp, int pause_ms)
{
    pipe_graph *g = NULL;
    pipe_seg *s = NULL;
    n_turns = 0;
    CHECK(pipe_graph_load(graph, &(pipe_graph_opts){ .kinds = kinds }, &g) == PARLEY_OK, "load: %s",
          parley_errmsg());
    if (!g)
        return -1;
    pipe_graph_subscribe(g, on_event, NULL);
    CHECK(pipe_graph_start(g) == PARLEY_OK, "start");
    CHECK(pipe_seg_open(p, pipe_graph_find_kind(g, "api"), 0, "mic", &s) == PARLEY_OK, "open: %s",
          parley_errmsg());
    if (s) {
        feed(s, 300, 0);
        feed(s, 600, amp);
        feed(s, pause_ms, 0);
        feed(s, 600, amp);
        feed(s, 3000, 0);
    }
    pipe_seg_close(s);
    pipe_graph_close(g);
    return n_turns;
}

int main(void)
{
    if (!test_kinds_with(kinds, 64, (const pipe_kind *const[]){ &asr_kind, NULL }))
        return 2;
    tmpdir_make("asr-endpoint");
    snprintf(graph, sizeof graph, "%s", tmpdir_path("graph.yaml"));
    FILE *f = fopen(graph, "w");
    CHECK(f != NULL, "write %s", graph);
    if (!f)
        return check_done();
    fprintf(f, "name: endpoint\n"
               "nodes:\n"
               "  - { name: api, kind: api, inputs: { reply: asr.text } }\n"
               "  - { name: asr, kind: test.asr, inputs: { in: api.text } }\n");
    fclose(f);

    pipe_seg_params p = {
        .silence_ms = 1000, .complete_ms = 500, .incomplete_ms = 2000, .wait_hints = 1
    };
    /* words heard whole: the endpoint is 500 ms, so a pause of 700 cuts */
    CHECK(turns_after(&p, 3000, 700) == 2, "complete, 700 ms pause: %d turns", n_turns);
    CHECK(turns_after(&p, 3000, 300) == 1, "complete, 300 ms pause: %d turns", n_turns);
    /* words that stop half way: a pause of 1.5 s goes on, one of 2.5 s cuts */
    CHECK(turns_after(&p, 2000, 1500) == 1, "half way, 1.5 s pause: %d turns", n_turns);
    size_t whole = n_turns == 1 ? turn_samples[0] : 0;
    CHECK(whole >= (600 + 1500 + 600) * 16 && whole <= (300 + 2700 + 400) * 16,
          "half way: the one turn holds both words and the pause: %zu samples", whole);
    CHECK(turns_after(&p, 2000, 2500) == 2, "half way, 2.5 s pause: %d turns", n_turns);
    /* the longest endpoint holds its whole pause back: what ends there is not sent */
    pipe_seg_params late = {
        .silence_ms = 1000, .complete_ms = 2500, .incomplete_ms = 2000, .wait_hints = 1
    };
    CHECK(turns_after(&late, 3000, 2800) == 2, "complete at 2.5 s, 2.8 s pause: %d turns", n_turns);
    CHECK(n_turns >= 1 && turn_samples[0] <= (300 + 600 + 500) * 16,
          "the first turn leaves its pause out: %zu samples", n_turns ? turn_samples[0] : 0);
    /* it cannot tell: silence_ms */
    CHECK(turns_after(&p, 1000, 700) == 1, "unknown, 700 ms pause: %d turns", n_turns);
    CHECK(turns_after(&p, 1000, 1300) == 2, "unknown, 1.3 s pause: %d turns", n_turns);
    /* an engine that says nothing of pauses: silence_ms, and the waiting source is answered
     * (3 s a pause otherwise: the test's timeout would tell) */
    fake_engine.end_hint = NULL;
    CHECK(turns_after(&p, 3000, 700) == 1, "no word, 700 ms pause: %d turns", n_turns);
    CHECK(turns_after(&p, 2000, 1300) == 2, "no word, 1.3 s pause: %d turns", n_turns);
    tmpdir_remove();
    return check_done();
}
