/* test_audio_seg.c — the utterance segmenter (pipeline/audio.h) through a real graph: tone
 * bursts between silences at 8, 16, 44.1 and 48 kHz, fed in odd-sized chunks, give one
 * utterance per burst ended by trailing silence, numbered in order; so do bursts 11 dB over
 * a noise louder than a fixed threshold would allow, a quiet speaker's bursts over a quiet
 * room, bursts at -55 dBFS, and bursts on a DC offset (pipeline/audio_vad.h); a pause inside
 * an utterance goes on whole, a trailing one is cut after its first 250 ms or so; silence
 * alone gives nothing; a burst longer than max_ms is cut at it; an explicit end closes the
 * utterance in progress; a dropped utterance makes no turn, and neither does a knock in
 * a stream's first frames over its noise, while a short word after it does; on_end sees
 * every utterance's last piece.
 * Graph: graphs/audio_seg.yaml (api → asr.stub without a script → api). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/audio.h"
#include "pipeline/graph.h"
#include "sdk/lib/kinds.h"
#include "tests/check.h"

enum { MAX_SEEN = 64 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint32_t utt;
    pipe_utt_end end;
} seen[MAX_SEEN];
static int n_seen, n_ends;

static void on_end(void *ctx, const pipe_msg *last)
{
    (void)ctx;
    n_ends += last->utt_end != PIPE_UTT_MORE && last->utt == (uint32_t)n_ends + 1;
}

static void on_event(const pipe_event *ev, void *user)
{
    (void)user;
    if (ev->type != PIPE_EV_TURN_DONE)
        return;
    pthread_mutex_lock(&mu);
    if (n_seen < MAX_SEEN) {
        seen[n_seen].utt = ev->msg->utt;
        seen[n_seen++].end = ev->msg->utt_end;
    }
    pthread_mutex_unlock(&mu);
}

static double offset; /* a DC offset in every sample fed, as some sound cards add */

/* Feeds `ms` of a 440 Hz tone (amp > 0) or silence at `rate`, with white noise of RMS
 * `noise` over it, in chunks of 37 samples. */
static void feed_noisy(pipe_seg *s, int rate, int ms, double amp, double noise)
{
    int16_t buf[37];
    static double phase;
    static uint32_t lcg = 1;
    long n = (long)rate * ms / 1000;
    for (long at = 0; at < n;) {
        int k = n - at < 37 ? (int)(n - at) : 37;
        for (int i = 0; i < k; i++) {
            lcg = lcg * 1664525u + 1013904223u;
            double white = ((double)(lcg >> 8) / (1u << 24) * 2 - 1) * sqrt(3.0); /* RMS 1 */
            buf[i] = (int16_t)(offset + amp * sin(phase) + noise * white);
            phase += 2 * M_PI * 440 / rate;
        }
        CHECK(pipe_seg_feed(s, buf, (size_t)k) == PARLEY_OK, "feed: %s", parley_errmsg());
        at += k;
    }
}

static void feed(pipe_seg *s, int rate, int ms, double amp)
{
    feed_noisy(s, rate, ms, amp, 0);
}

static pipe_graph *open_graph(const char *dir)
{
    char path[1024];
    pipe_graph *g = NULL;
    snprintf(path, sizeof path, "%s/audio_seg.yaml", dir);
    CHECK(pipe_graph_load(path, &(pipe_graph_opts){ .kinds = lib_kinds }, &g) == PARLEY_OK,
          "load: %s", parley_errmsg());
    if (g) {
        pipe_graph_subscribe(g, on_event, NULL);
        CHECK(pipe_graph_start(g) == PARLEY_OK, "start");
    }
    n_seen = 0;
    return g;
}

static pipe_seg *open_seg(pipe_graph *g, int rate, int max_ms)
{
    pipe_seg *s = NULL;
    pipe_seg_params p = { .in_rate = rate, .silence_ms = 500, .max_ms = max_ms, .on_end = on_end };
    n_ends = 0;
    CHECK(pipe_seg_open(&p, pipe_graph_find_kind(g, "api"), 0, "mic", &s) == PARLEY_OK,
          "open at %d Hz: %s", rate, parley_errmsg());
    return s;
}

/* Three bursts of `amp` between pauses of `pause_ms`, all over a noise of RMS `noise`. */
static void bursts_at(const char *dir, int rate, double amp, double noise, int pause_ms)
{
    pipe_graph *g = open_graph(dir);
    pipe_seg *s = g ? open_seg(g, rate, 0) : NULL;
    if (!s) {
        pipe_graph_close(g);
        return;
    }
    feed_noisy(s, rate, 300, 0, noise);
    for (int i = 0; i < 3; i++) {
        feed_noisy(s, rate, 700, amp, noise);
        feed_noisy(s, rate, pause_ms, 0, noise);
    }
    int sent = -1;
    CHECK(pipe_seg_end(s, &sent) == PARLEY_OK && sent == 0, "end after silence: nothing sent");
    CHECK(pipe_seg_utterances(s) == 3, "%d Hz: %u utterances", rate, pipe_seg_utterances(s));
    /* the last: its 700 ms, at most 300 before, and of its pause only the first 250 ms or so */
    size_t n = pipe_seg_samples(s);
    CHECK(n >= 700 * 16 && n <= 1300 * 16, "%d Hz: the last utterance is %zu samples", rate, n);
    pipe_seg_close(s);
    pipe_graph_close(g);
    CHECK(n_seen == 3, "%d Hz: %d utterances reached the sink", rate, n_seen);
    CHECK(n_ends == 3, "%d Hz: on_end called for utterances 1-3: %d", rate, n_ends);
    for (int i = 0; i < n_seen; i++)
        CHECK(seen[i].utt == (uint32_t)i + 1 && seen[i].end == PIPE_UTT_SILENCE,
              "%d Hz: utterance %d is #%u ended by %d", rate, i, seen[i].utt, seen[i].end);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/pipeline/graphs";
    const int rates[] = { 8000, 16000, 22050, 44100, 48000 };
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
        bursts_at(dir, rates[i], 3000, 0, 900);
    /* a kitchen: noise at RMS 600 (over 300, where a fixed threshold once stood), the
     * bursts (RMS 2,121) 11 dB above it; a quiet speaker (RMS 177) in a quiet room; one on
     * a microphone set low (RMS 57, about -55 dBFS, under the least level that once stood at
     * 100) over a near-silent room */
    bursts_at(dir, 16000, 3000, 600, 1500);
    bursts_at(dir, 44100, 3000, 600, 1500);
    bursts_at(dir, 16000, 250, 10, 1500);
    bursts_at(dir, 16000, 80, 3, 1500);
    /* bursts of RMS 707 on an offset of 3,000: with the offset, every frame's level stands
     * within 0.3 dB of the pauses' */
    offset = 3000;
    bursts_at(dir, 16000, 1000, 10, 1500);
    offset = 0;

    /* silence only: nothing; a long burst cut at max_ms; an explicit end mid-speech */
    pipe_graph *g = open_graph(dir);
    pipe_seg *s = g ? open_seg(g, 16000, 1000) : NULL;
    if (s) {
        feed(s, 16000, 2000, 0);
        feed(s, 16000, 2000, 20); /* under the threshold */
        CHECK(pipe_seg_utterances(s) == 0, "silence: %u utterances", pipe_seg_utterances(s));
        feed(s, 16000, 2500, 3000); /* 1000 + 1000 ms, then 500 ms ended by hand */
        int sent = 0;
        CHECK(pipe_seg_in_speech(s), "in speech after the burst");
        CHECK(pipe_seg_end(s, &sent) == PARLEY_OK && sent == 1, "explicit end sent");
    }
    pipe_seg_close(s);
    pipe_graph_close(g);
    CHECK(n_seen == 3, "long burst: %d utterances", n_seen);
    const pipe_utt_end want[3] = { PIPE_UTT_MAX, PIPE_UTT_MAX, PIPE_UTT_EXPLICIT };
    for (int i = 0; i < n_seen && i < 3; i++)
        CHECK(seen[i].utt == (uint32_t)i + 1 && seen[i].end == want[i],
              "long burst: utterance %d is #%u ended by %d", i, seen[i].utt, seen[i].end);

    /* a pause shorter than silence_ms goes on whole once speech resumes */
    g = open_graph(dir);
    s = g ? open_seg(g, 16000, 0) : NULL;
    if (s) {
        feed(s, 16000, 300, 0);
        feed(s, 16000, 400, 3000);
        feed(s, 16000, 350, 0);
        feed(s, 16000, 400, 3000);
        feed(s, 16000, 900, 0);
        size_t n = pipe_seg_samples(s);
        CHECK(pipe_seg_utterances(s) == 1 && n >= 1150 * 16 && n <= 1750 * 16,
              "a pause inside: %u utterances, %zu samples", pipe_seg_utterances(s), n);
    }
    pipe_seg_close(s);
    pipe_graph_close(g);

    /* a dropped utterance reaches the recognizer as such: no turn, no transcript */
    g = open_graph(dir);
    s = g ? open_seg(g, 16000, 0) : NULL;
    if (s) {
        feed(s, 16000, 300, 0); /* a stream opens on a silence or a noise, as microphones do */
        feed(s, 16000, 500, 3000);
        CHECK(pipe_seg_drop(s) == PARLEY_OK && !pipe_seg_in_speech(s), "dropped");
        feed(s, 16000, 500, 3000);
        int sent = 0;
        CHECK(pipe_seg_end(s, &sent) == PARLEY_OK && sent == 1, "the next one is ended");
    }
    pipe_seg_close(s);
    pipe_graph_close(g);
    CHECK(n_seen == 1 && seen[0].utt == 2 && seen[0].end == PIPE_UTT_EXPLICIT,
          "after a drop: %d turns, #%u", n_seen, n_seen ? seen[0].utt : 0);

    /* a knock 20 ms into a stream that opens on a noise: the detector's average is short
     * there, so it calls the knock speech for a few frames; the endpoint drops it, and a
     * word of 150 ms after it is the stream's one turn */
    g = open_graph(dir);
    s = g ? open_seg(g, 16000, 0) : NULL;
    if (s) {
        feed_noisy(s, 16000, 20, 0, 300);
        feed_noisy(s, 16000, 20, 3000, 300);
        feed_noisy(s, 16000, 1000, 0, 300);
        CHECK(pipe_seg_utterances(s) == 1 && !pipe_seg_in_speech(s), "the knock: %u utterances",
              pipe_seg_utterances(s));
        feed_noisy(s, 16000, 150, 3000, 300);
        feed_noisy(s, 16000, 1500, 0, 300);
        CHECK(pipe_seg_utterances(s) == 2 && !pipe_seg_in_speech(s), "the word: %u utterances",
              pipe_seg_utterances(s));
    }
    pipe_seg_close(s);
    pipe_graph_close(g);
    CHECK(n_seen == 1 && seen[0].utt == 2 && seen[0].end == PIPE_UTT_SILENCE,
          "after a knock: %d turns, #%u ended by %d", n_seen, n_seen ? seen[0].utt : 0,
          n_seen ? seen[0].end : 0);
    CHECK(n_ends == 0, "on_end saw the knock (utterance 1): %d", n_ends);

    /* a rate out of range is refused */
    pipe_seg_params p = { .in_rate = 96000 };
    CHECK(pipe_seg_open(&p, NULL, 0, "mic", &s) == PARLEY_ERR_INVALID_ARG && !s, "96 kHz refused");
    return check_done();
}
