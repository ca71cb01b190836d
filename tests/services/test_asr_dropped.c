/* test_asr_dropped.c — an utterance its source drops (pipeline/audio.h: a knock, or a
 * client gone mid-utterance) makes no turn; where partial hypotheses of it were already
 * shown, the partial port gets an empty final marked dropped, so a display can clear them;
 * where none were, it gets nothing. An utterance the recognizer hears no words in, cut by
 * its source at a pause, fails its turn unanswered (pipe_msg.no_answer): the sink ends it
 * and the application gets no reply, and its display is cleared the same way; ended by the
 * source's end (a client's eof), it is answered with the error. No recognizer: test.asr
 * drives svc_asr (asr_node.c) with an engine that hears a hypothesis, "hello", in any piece
 * not silent, and keeps it as the transcript only from a piece at the speaker's level (1000;
 * a quieter one, like the room's words, it leaves out). Graph, written here: api →
 * test.asr → api and text.stdout (a file: it writes no line for the unanswered), and its
 * partial port → test.display, which keeps what it is sent.
 * User a: utterance 1 (a piece, then dropped), utterance 2 (whole); user b: utterance 1
 * dropped at its first piece. User c: utterance 1 silent, cut at a pause; 2, two quiet
 * pieces cut at a pause; 3 silent, ended by the source; 4 spoken, cut at a pause.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/graph.h"
#include "sdk/base/alloc.h"
#include "services/api_node.h"
#include "services/asr.h"
#include "tests/check.h"
#include "tests/services/asr_test_kind.h"
#include "tests/tmpdir.h"

/* ---- the engine: "hello" in what is not silent; words at the speaker's level kept ----- */

typedef struct heard {
    int16_t loudest; /* the loudest first sample of the pieces fed */
} heard;

static parley_status fake_open(void *engine, const char *user, void **out)
{
    (void)engine, (void)user;
    return test_asr_stream_new(sizeof(heard), out);
}

static parley_status fake_feed(void *stream, const int16_t *pcm, size_t n)
{
    heard *h = stream;
    if (n && pcm[0] > h->loudest)
        h->loudest = pcm[0];
    return PARLEY_OK;
}

static parley_status fake_partial(void *stream, char **text)
{
    return test_asr_words(((heard *)stream)->loudest > 0 ? "hello" : "", text);
}

static parley_status fake_final(void *stream, char **text)
{
    return test_asr_words(((heard *)stream)->loudest >= 1000 ? "hello" : "", text);
}

static const svc_asr_engine fake_engine = {
    .name = "test.asr",
    .open = fake_open,
    .feed = fake_feed,
    .partial = fake_partial,
    .end = test_asr_end,
    .final = fake_final,
    .close = pl_free,
};

static parley_status asr_create(pipe_node *node, void **state)
{
    (void)node;
    return svc_asr_new(&fake_engine, NULL, 0, 0, (svc_asr **)state);
}

static const pipe_kind asr_kind = TEST_ASR_KIND(asr_create, "svc_asr over an engine of \"hello\"");

/* ---- test.display: what the partial port sends, in order --------------------------- */

enum { MAX_SHOWN = 16 };
typedef struct shown {
    char user[8], text[16];
    uint32_t utt;
    pipe_utt_end end;
} shown;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static shown display[MAX_SHOWN];
static int n_shown, n_turns;

static const pipe_port_spec display_ports[] = {
    { "in", PIPE_IN, PIPE_T_TEXT, 1, "hypotheses and finals" },
    { NULL, 0, 0, 0, NULL },
};

static parley_status display_create(pipe_node *node, void **state)
{
    (void)node;
    *state = NULL;
    return PARLEY_OK;
}

static parley_status display_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    (void)node, (void)state, (void)port;
    pthread_mutex_lock(&mu);
    if (n_shown < MAX_SHOWN) {
        shown *s = &display[n_shown++];
        snprintf(s->user, sizeof s->user, "%s", msg->user_id);
        snprintf(s->text, sizeof s->text, "%s", msg->text ? msg->text : "");
        s->utt = msg->utt;
        s->end = msg->utt_end;
    }
    pthread_mutex_unlock(&mu);
    pipe_msg_free(msg);
    return PARLEY_OK;
}

static const pipe_kind display_kind = {
    .name = "test.display",
    .doc = "keeps what the recognizer's partial port sends",
    .ports = display_ports,
    .create = display_create,
    .process = display_process,
};

static void on_event(const pipe_event *ev, void *user)
{
    (void)user;
    if (ev->type != PIPE_EV_TURN_DONE)
        return;
    pthread_mutex_lock(&mu);
    n_turns++;
    pthread_mutex_unlock(&mu);
}

/* Sends a piece of user's utterance utt (160 samples unless it is the drop), its first sample
 * `level`. */
static void piece_at(pipe_graph *g, pipe_node *api, const char *user, uint32_t utt,
                     pipe_utt_end end, int16_t level)
{
    int16_t pcm[160] = { level };
    pipe_msg *m = NULL;
    CHECK(pipe_msg_new(g, user, "", &m) == PARLEY_OK, "new");
    if (!m)
        return;
    m->type = PIPE_T_AUDIO, m->utt = utt, m->utt_end = end;
    if (end != PIPE_UTT_DROPPED)
        CHECK(pipe_msg_set_pcm(m, pcm, 160, PIPE_AUDIO_RATE) == PARLEY_OK, "pcm");
    pipe_node_emit(api, 0, m);
}

/* A piece at the speaker's level. */
static void piece(pipe_graph *g, pipe_node *api, const char *user, uint32_t utt, pipe_utt_end end)
{
    piece_at(g, api, user, utt, end, 1000);
}

/* The replies the application gets for user c, in order: the text, or the error. */
static char got[8][64];
static int n_got;

static void on_reply(const parley_reply *r, void *user)
{
    (void)user;
    pthread_mutex_lock(&mu);
    if (!strcmp(r->user, "c") && n_got < 8)
        snprintf(got[n_got++], sizeof got[0], "%s", r->status == PARLEY_OK ? r->text : r->error);
    pthread_mutex_unlock(&mu);
}

/* The i-th message shown to user, or NULL. */
static const shown *shown_to(const char *user, int i)
{
    for (int k = 0; k < n_shown; k++)
        if (!strcmp(display[k].user, user) && i-- == 0)
            return &display[k];
    return NULL;
}

static void expect(const char *user, int i, const char *text, uint32_t utt, pipe_utt_end end)
{
    const shown *s = shown_to(user, i);
    CHECK(s && !strcmp(s->text, text) && s->utt == utt && s->end == end,
          "user %s, message %d: '%s' #%u end %d, want '%s' #%u end %d", user, i,
          s ? s->text : "(none)", s ? s->utt : 0, s ? (int)s->end : -1, text, utt, (int)end);
}

int main(void)
{
    const pipe_kind *kinds[64];
    if (!test_kinds_with(kinds, 64, (const pipe_kind *const[]){ &asr_kind, &display_kind, NULL }))
        return 2;
    tmpdir_make("asr-dropped");
    char graph[1024];
    snprintf(graph, sizeof graph, "%s", tmpdir_path("graph.yaml"));
    FILE *f = fopen(graph, "w");
    CHECK(f != NULL, "write %s", graph);
    if (!f)
        return check_done();
    char lines[1024];
    snprintf(lines, sizeof lines, "%s", tmpdir_path("replies.jsonl"));
    fprintf(f,
            "name: dropped\n"
            "nodes:\n"
            "  - { name: api, kind: api, inputs: { reply: asr.text } }\n"
            "  - { name: asr, kind: test.asr, inputs: { in: api.text } }\n"
            "  - { name: display, kind: test.display, inputs: { in: asr.partial } }\n"
            "  - { name: out, kind: text.stdout, inputs: { reply: asr.text },\n"
            "      params: { path: %s } }\n",
            lines);
    fclose(f);
    pipe_graph *g = NULL;
    CHECK(pipe_graph_load(graph, &(pipe_graph_opts){ .kinds = kinds }, &g) == PARLEY_OK, "load: %s",
          parley_errmsg());
    if (!g) {
        tmpdir_remove();
        return check_done();
    }
    pipe_graph_subscribe(g, on_event, NULL);
    pipe_node *api = pipe_graph_find_kind(g, "api");
    svc_api_set_callback(api, on_reply, NULL);
    CHECK(pipe_graph_start(g) == PARLEY_OK, "start: %s", parley_errmsg());
    piece(g, api, "a", 1, PIPE_UTT_MORE);
    piece(g, api, "a", 1, PIPE_UTT_DROPPED);
    piece(g, api, "b", 1, PIPE_UTT_DROPPED);
    piece(g, api, "a", 2, PIPE_UTT_EXPLICIT);
    piece_at(g, api, "c", 1, PIPE_UTT_SILENCE, 0);
    piece_at(g, api, "c", 2, PIPE_UTT_MORE, 500);
    piece_at(g, api, "c", 2, PIPE_UTT_SILENCE, 500);
    piece_at(g, api, "c", 3, PIPE_UTT_EXPLICIT, 0);
    piece(g, api, "c", 4, PIPE_UTT_SILENCE);
    pipe_graph_close(g); /* drains */

    CHECK(n_got == 2, "user c's replies: the error of utterance 3 and hello: %d", n_got);
    CHECK(n_got >= 1 && strstr(got[0], "no words recognized in utterance 3"), "first: '%s'",
          n_got >= 1 ? got[0] : "(none)");
    CHECK(n_got >= 2 && !strcmp(got[1], "hello"), "second: '%s'", n_got >= 2 ? got[1] : "(none)");

    CHECK(n_turns == 10, "5 turns ended at both sinks: user a's second, user c's four: %d",
          n_turns);
    FILE *in = fopen(lines, "r");
    char line[512];
    int n_lines = 0, n_errors = 0;
    while (in && fgets(line, sizeof line, in))
        n_lines++, n_errors += strstr(line, "no words recognized in utterance 3") != NULL;
    if (in)
        fclose(in);
    CHECK(n_lines == 3 && n_errors == 1,
          "text.stdout wrote 3 lines (a's hello, c's error and hello), one the error: %d, %d",
          n_lines, n_errors);
    expect("a", 0, "hello", 1, PIPE_UTT_MORE);
    expect("a", 1, "", 1, PIPE_UTT_DROPPED);
    expect("a", 2, "hello", 2, PIPE_UTT_EXPLICIT);
    CHECK(!shown_to("a", 3), "nothing more for user a");
    CHECK(!shown_to("b", 0), "nothing for user b, who was shown no hypothesis");
    expect("c", 0, "hello", 2, PIPE_UTT_MORE);
    expect("c", 1, "", 2, PIPE_UTT_DROPPED);
    expect("c", 2, "hello", 4, PIPE_UTT_SILENCE);
    CHECK(!shown_to("c", 3), "nothing more for user c");
    tmpdir_remove();
    return check_done();
}
