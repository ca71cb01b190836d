/* test_tts_flite.c — the tts.flite node in a graph (tests/services/tts/flite.yaml: api →
 * test.say, this test's kind that makes each text its reply → tts.flite → api).
 *
 * A pizza order spoken by each of the five voices comes back with speech at the voice's
 * own rate (8 kHz for kal, 16 kHz for the others), not silent, 0.2 to 0.8 s a word; and
 * pocketsphinx, with the pizza bot's language model, recognizes every word of it back from
 * the WAV file this test writes. stretch 2 speaks the same words 1.6 to 2.4 times longer. An
 * empty reply goes on without speech; a turn failed before tts.flite reaches the sink failed,
 * without speech. An unknown voice is a config error at its FILE:LINE:COL.
 *
 * Usage: test_tts_flite GRAPHS_DIR PIZZA_NLU_YAML   (skips, exit 77, without flite)
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "parley/asr.h"
#include "parley_config.h"
#include "pipeline/graph.h"
#include "sdk/base/alloc.h"
#include "sdk/lib/kinds.h"
#include "tests/check.h"
#include "tests/tmpdir.h"

#define ORDER       "i want a large pizza with mushrooms"
#define ORDER_WORDS 7

/* test.say: the text of each turn becomes its reply; the text "!fail" fails the turn. */
static const pipe_port_spec say_ports[] = {
    { "text", PIPE_IN, PIPE_T_TEXT, 1, "texts" },
    { "reply", PIPE_OUT, PIPE_T_REPLY, 0, "the same texts as replies" },
    { NULL, 0, 0, 0, NULL },
};

static parley_status say_create(pipe_node *node, void **state)
{
    (void)node;
    *state = NULL;
    return PARLEY_OK;
}

static parley_status say_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    (void)state;
    (void)port;
    if (!strcmp(msg->text, "!fail")) {
        pipe_node_fail_turn(node, msg, pl_fail(PARLEY_ERR_INTERNAL, "test.say: refused"));
        return PARLEY_OK;
    }
    char *reply = pl_strdup(msg->text);
    if (!reply) {
        pipe_node_fail_turn(node, msg, pl_nomem("reply"));
        return PARLEY_OK;
    }
    pipe_msg_set_payload(msg, PIPE_T_REPLY, reply, pl_free);
    msg->reply = reply;
    return pipe_node_emit(node, 1, msg);
}

static const pipe_kind say_kind = {
    .name = "test.say",
    .doc = "each text as its reply",
    .ports = say_ports,
    .create = say_create,
    .process = say_process,
};

/* What the sink saw of each of the three texts a run submits. */
typedef struct turn_seen {
    int done;
    parley_status status;
    int16_t *pcm;
    size_t n;
    int rate;
} turn_seen;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static turn_seen seen[3]; /* ORDER, "", "!fail" */

static void on_event(const pipe_event *ev, void *user)
{
    (void)user;
    if (ev->type != PIPE_EV_TURN_DONE)
        return;
    const pipe_msg *m = ev->msg;
    int i = !strcmp(m->text, ORDER) ? 0 : !strcmp(m->text, "") ? 1 : 2;
    pthread_mutex_lock(&mu);
    turn_seen *t = &seen[i];
    t->done++;
    t->status = m->status;
    t->n = m->n_pcm;
    t->rate = m->rate;
    pl_free(t->pcm);
    t->pcm = m->n_pcm ? pl_malloc(m->n_pcm * sizeof *m->pcm) : NULL;
    if (t->pcm)
        memcpy(t->pcm, m->pcm, m->n_pcm * sizeof *m->pcm);
    pthread_mutex_unlock(&mu);
}

static void put_u32(FILE *f, uint32_t v)
{
    unsigned char b[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };
    fwrite(b, 1, 4, f);
}

static void put_u16(FILE *f, uint16_t v)
{
    unsigned char b[2] = { v & 0xff, v >> 8 };
    fwrite(b, 1, 2, f);
}

/* A 16-bit mono RIFF WAV file of n samples at rate; 0 on failure. */
static int write_wav(const char *path, const int16_t *pcm, size_t n, int rate)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite("RIFF", 1, 4, f);
    put_u32(f, (uint32_t)(36 + 2 * n));
    fwrite("WAVEfmt ", 1, 8, f);
    put_u32(f, 16);
    put_u16(f, 1); /* PCM */
    put_u16(f, 1); /* mono */
    put_u32(f, (uint32_t)rate);
    put_u32(f, (uint32_t)rate * 2);
    put_u16(f, 2);
    put_u16(f, 16);
    fwrite("data", 1, 4, f);
    put_u32(f, (uint32_t)(2 * n));
    for (size_t i = 0; i < n; i++)
        put_u16(f, (uint16_t)pcm[i]);
    return fclose(f) == 0;
}

/* Runs the three texts through flite.yaml with voice and stretch; fills seen[]. */
static void run_graph(const char *graphs, const pipe_kind *const *kinds, const char *voice,
                      const char *stretch)
{
    char path[1024], set_voice[64], set_stretch[64];
    snprintf(path, sizeof path, "%s/flite.yaml", graphs);
    snprintf(set_voice, sizeof set_voice, "tts.voice=%s", voice);
    snprintf(set_stretch, sizeof set_stretch, "tts.stretch=%s", stretch);
    const char *set[] = { set_voice, set_stretch, NULL };
    for (int i = 0; i < 3; i++) {
        pl_free(seen[i].pcm);
        memset(&seen[i], 0, sizeof seen[i]);
    }
    pipe_graph *g = NULL;
    parley_status st = pipe_graph_load(path, &(pipe_graph_opts){ .kinds = kinds, .set = set }, &g);
    CHECK(st == PARLEY_OK, "load with voice %s: %s", voice, parley_errmsg());
    if (!g)
        return;
    pipe_graph_subscribe(g, on_event, NULL);
    CHECK(pipe_graph_start(g) == PARLEY_OK, "start: %s", parley_errmsg());
    pipe_node *api = pipe_graph_find_kind(g, "api");
    const char *texts[] = { ORDER, "", "!fail" };
    for (int i = 0; i < 3; i++) {
        pipe_msg *m = NULL;
        CHECK(pipe_msg_new(g, "u-1", texts[i], &m) == PARLEY_OK, "new turn: %s", parley_errmsg());
        if (m)
            CHECK(pipe_node_emit(api, 0, m) == PARLEY_OK, "submit: %s", parley_errmsg());
    }
    pipe_graph_drain(g);
    pipe_graph_close(g);
}

static int peak(const int16_t *pcm, size_t n)
{
    int p = 0;
    for (size_t i = 0; i < n; i++)
        p = pcm[i] > p ? pcm[i] : -pcm[i] > p ? -pcm[i] : p;
    return p;
}

int main(int argc, char **argv)
{
    if (!PARLEY_HAVE_FLITE) {
        printf("skip: built without flite\n");
        return 77;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: test_tts_flite GRAPHS_DIR PIZZA_NLU_YAML\n");
        return 2;
    }
    const char *graphs = argv[1], *nlu_yaml = argv[2];
    size_t nk = 0;
    while (lib_kinds[nk])
        nk++;
    const pipe_kind *kinds[64];
    if (nk + 2 > sizeof kinds / sizeof *kinds)
        return 2;
    memcpy(kinds, lib_kinds, nk * sizeof *kinds);
    kinds[nk] = &say_kind;
    kinds[nk + 1] = NULL;
    tmpdir_make("tts-flite");

    static const struct {
        const char *name;
        int rate;
    } voices[] = {
        { "slt", 16000 }, { "rms", 16000 }, { "awb", 16000 }, { "kal", 8000 }, { "kal16", 16000 }
    };
    enum { N_VOICES = sizeof voices / sizeof *voices };
    char wav[N_VOICES][512];
    size_t slt_samples = 0;
    for (int v = 0; v < N_VOICES; v++) {
        run_graph(graphs, kinds, voices[v].name, "1");
        turn_seen *t = &seen[0];
        double secs = t->rate ? (double)t->n / t->rate : 0;
        CHECK(t->done == 1 && t->status == PARLEY_OK, "%s: the order's turn: done %d, status %d",
              voices[v].name, t->done, t->status);
        CHECK(t->rate == voices[v].rate, "%s: rate %d, want %d", voices[v].name, t->rate,
              voices[v].rate);
        CHECK(secs >= 0.2 * ORDER_WORDS && secs <= 0.8 * ORDER_WORDS, "%s: %.2f s for %d words",
              voices[v].name, secs, ORDER_WORDS);
        CHECK(t->pcm && peak(t->pcm, t->n) > 3000, "%s: speech, not silence (peak %d)",
              voices[v].name, t->pcm ? peak(t->pcm, t->n) : 0);
        snprintf(wav[v], sizeof wav[v], "%s", tmpdir_path(voices[v].name));
        CHECK(t->pcm && write_wav(wav[v], t->pcm, t->n, t->rate), "%s: wrote %s", voices[v].name,
              wav[v]);
        if (!strcmp(voices[v].name, "slt"))
            slt_samples = t->n;
        CHECK(seen[1].done == 1 && seen[1].status == PARLEY_OK && seen[1].n == 0,
              "%s: an empty reply goes on without speech (done %d, status %d, %zu samples)",
              voices[v].name, seen[1].done, seen[1].status, seen[1].n);
        CHECK(seen[2].done == 1 && seen[2].status == PARLEY_ERR_INTERNAL && seen[2].n == 0,
              "%s: a failed turn passes through (done %d, status %d, %zu samples)", voices[v].name,
              seen[2].done, seen[2].status, seen[2].n);
    }

    run_graph(graphs, kinds, "slt", "2");
    double ratio = slt_samples ? (double)seen[0].n / (double)slt_samples : 0;
    CHECK(ratio >= 1.6 && ratio <= 2.4, "stretch 2: %.2f times as long as stretch 1", ratio);

    parley_asr *asr = NULL;
    parley_asr_params ap = { .nlu_yaml = nlu_yaml, .cache_dir = tmpdir_path("asr") };
    if (PARLEY_HAVE_POCKETSPHINX && PARLEY_HAVE_GSTREAMER)
        CHECK(parley_asr_open(&ap, &asr) == PARLEY_OK, "asr open: %s", parley_errmsg());
    else
        printf("recognition not checked: built without pocketsphinx or GStreamer\n");
    for (int v = 0; asr && v < N_VOICES; v++) {
        char *text = NULL;
        CHECK(parley_asr_transcribe_file(asr, wav[v], &text) == PARLEY_OK, "%s: transcribe: %s",
              voices[v].name, parley_errmsg());
        CHECK(text && !strcmp(text, ORDER), "%s: recognized \"%s\", said \"%s\"", voices[v].name,
              text ? text : "(none)", ORDER);
        parley_asr_text_free(text);
    }
    parley_asr_close(asr);

    char bad[1024];
    snprintf(bad, sizeof bad, "%s/flite_bad_voice.yaml", graphs);
    pipe_graph *g = NULL;
    parley_status st = pipe_graph_load(bad, &(pipe_graph_opts){ .kinds = kinds }, &g);
    const char *msg = parley_errmsg();
    CHECK(st == PARLEY_ERR_CONFIG && strstr(msg, "flite_bad_voice.yaml:13:") &&
                  strstr(msg, "kevin"),
          "unknown voice: status %d, \"%s\"", st, msg);
    pipe_graph_close(g);

    for (int i = 0; i < 3; i++)
        pl_free(seen[i].pcm);
    tmpdir_remove();
    return check_done();
}
