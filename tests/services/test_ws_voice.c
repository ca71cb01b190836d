/* test_ws_voice.c — the voice side of ws.server without a network: a tone burst sent as
 * little-endian bytes in 7-byte fragments at 44.1 kHz becomes one utterance (the odd bytes
 * carried across fragments: the burst's samples come out whole), a binary message of an
 * odd length is reported, an explicit end closes the next utterance, closing mid-utterance
 * makes no turn; the partial, final (a dropped utterance's marked so) and audio messages'
 * JSON.
 * Graph: tests/pipeline/graphs/audio_seg.yaml (api → asr.stub without a script → api).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/graph.h"
#include "sdk/base/alloc.h"
#include "sdk/lib/kinds.h"
#include "services/ws_voice.h"
#include "tests/check.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int n_turns;
static uint32_t last_utt;

static void on_event(const pipe_event *ev, void *user)
{
    (void)user;
    if (ev->type != PIPE_EV_TURN_DONE)
        return;
    pthread_mutex_lock(&mu);
    n_turns++;
    last_utt = ev->msg->utt;
    pthread_mutex_unlock(&mu);
}

/* ms of a tone (amp) or silence at 44.1 kHz as bytes, in 7-byte fragments. */
static void send(ws_voice *v, int ms, double amp)
{
    static double phase;
    long n = 44100L * ms / 1000;
    unsigned char bytes[2 * 4410];
    for (long at = 0; at < n;) {
        long k = n - at < 4410 ? n - at : 4410;
        for (long i = 0; i < k; i++) {
            int16_t x = (int16_t)(amp * sin(phase));
            phase += 2 * M_PI * 300 / 44100;
            bytes[2 * i] = (unsigned char)(x & 0xff);
            bytes[2 * i + 1] = (unsigned char)((uint16_t)x >> 8);
        }
        for (long off = 0; off < 2 * k; off += 7)
            CHECK(ws_voice_feed(v, bytes + off, 2 * k - off < 7 ? (size_t)(2 * k - off) : 7) ==
                          PARLEY_OK,
                  "feed: %s", parley_errmsg());
        at += k;
    }
}

static int json_is(char *text, const char *type, const char *field, double num)
{
    cJSON *o = text ? cJSON_Parse(text) : NULL;
    const cJSON *t = cJSON_GetObjectItem(o, "type"), *f = cJSON_GetObjectItem(o, field);
    int ok = cJSON_IsString(t) && !strcmp(t->valuestring, type) && cJSON_IsNumber(f) &&
             f->valuedouble == num;
    cJSON_Delete(o);
    pl_free(text);
    return ok;
}

int main(int argc, char **argv)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/audio_seg.yaml", argc > 1 ? argv[1] : "tests/pipeline/graphs");
    pipe_graph *g = NULL;
    CHECK(pipe_graph_load(path, &(pipe_graph_opts){ .kinds = lib_kinds }, &g) == PARLEY_OK,
          "load: %s", parley_errmsg());
    if (!g)
        return check_done();
    pipe_graph_subscribe(g, on_event, NULL);
    CHECK(pipe_graph_start(g) == PARLEY_OK, "start");
    ws_voice *v = NULL;
    pipe_seg_params p = { .silence_ms = 500 };
    CHECK(ws_voice_open(pipe_graph_find_kind(g, "api"), 0, "u-1", 44100, &p, &v) == PARLEY_OK,
          "open: %s", parley_errmsg());
    if (v) {
        send(v, 200, 0);
        send(v, 800, 4000);
        send(v, 700, 0); /* the endpoint */
        CHECK(ws_voice_message_end(v) == 0, "an even message");
        unsigned char one = 1;
        ws_voice_feed(v, &one, 1);
        CHECK(ws_voice_message_end(v) == 1, "an odd message is reported");
        send(v, 600, 4000);
        int sent = 0;
        CHECK(ws_voice_end(v, &sent) == PARLEY_OK && sent == 1, "explicit end");
        send(v, 600, 4000); /* then the client goes away mid-utterance */
    }
    ws_voice_close(v);
    pipe_graph_close(g);
    CHECK(n_turns == 2 && last_utt == 2, "2 utterances became turns: %d (last #%u)", n_turns,
          last_utt);

    pipe_msg m = { .text = "a large pizza", .utt = 3 };
    CHECK(json_is(ws_voice_text_json(&m), "partial", "utterance", 3), "partial json");
    m.utt_end = PIPE_UTT_SILENCE;
    char *final = ws_voice_text_json(&m);
    CHECK(final && !strstr(final, "dropped"), "a final turn is not dropped: %s", final);
    CHECK(json_is(final, "final", "utterance", 3), "final json");
    m.utt_end = PIPE_UTT_DROPPED;
    m.text = "";
    char *dropped = ws_voice_text_json(&m);
    CHECK(dropped && strstr(dropped, "\"dropped\":true"), "dropped json: %s", dropped);
    CHECK(json_is(dropped, "final", "utterance", 3), "dropped json is a final");
    m.rate = 22050;
    m.n_pcm = 1234;
    CHECK(json_is(ws_voice_audio_json(&m), "audio", "samples", 1234), "audio json");
    return check_done();
}
