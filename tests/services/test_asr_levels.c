/* test_asr_levels.c — which words stand at the speaker's level (services/asr_levels.h), on
 * audio made here: tones of known levels as words on a noise bed 26 dB under the loudest.
 *
 * - Decoder frames that follow the audio one for one: a word at the start 15 dB under the
 *   loudest and one at the end 14 dB under go (both near the noise); a last word 9 dB under
 *   (a speaker trailing off) stays; a word inside 6 dB under stays, one inside at the noise's
 *   level goes; levels count against each other only (two quiet words alone both stay), and
 *   a lone word is never judged. In a quiet room (digital silence under them) the same soft
 *   words all stay.
 * - A decoder that left 0.5 s of leading silence out and then gave its held-back frames at
 *   once: the words' decoder frames still measure the audio they came from (read one for one,
 *   the room's word after the request would measure the request's last word, and stay).
 * - Words beyond the frames noted keep, and stop the edge.
 * - Words outside a span of the audio (svc_words_outside), placed the same way: a word made
 *   of the room before the span, or after it, is outside; words within it, or reaching past
 *   its edge by no more than the placing's 10 frames, are not; no words, none outside.
 */
#include <math.h>

#include "services/asr_levels.h"
#include "tests/check.h"

enum { SECONDS = 4, N = 16000 * SECONDS, F = SVC_LEVEL_FRAME };

static int16_t pcm[N];

/* A noise bed 26 dB under the loudest tone (uniform noise from a fixed generator), or
 * digital silence. */
static void bed(int noisy)
{
    unsigned x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 1103515245u + 12345u;
        pcm[i] = noisy ? (int16_t)((int)((x >> 16) % 983) - 491) : 0;
    }
}

/* A tone over audio frames [a, b], `db` under full level (8000), on what is there. */
static void tone(int a, int b, float db)
{
    float amp = 8000.0f * powf(10.0f, -db / 20.0f);
    for (int i = a * F; i < (b + 1) * F && i < N; i++)
        pcm[i] = (int16_t)((float)pcm[i] + amp * sinf(0.2f * (float)i));
}

/* Feeds frames as a decoder does that keeps every one: `kept` lags the audio. */
static void feed_all(svc_frames *m)
{
    for (size_t fed = F; fed <= N; fed += F) {
        long kept = (long)(fed / F) - SVC_LEVEL_LOOKAHEAD;
        CHECK(svc_frames_note(m, kept > 0 ? (int)kept : 0, fed, 0) == PARLEY_OK, "note");
    }
    CHECK(svc_frames_note(m, N / F, N, 1) == PARLEY_OK, "note the end");
}

/* Feeds frames as a decoder does that keeps nothing of the first 0.5 s, then hands 20 frames
 * it held back at once, then one a frame: its frame k is audio frame k + 26. */
static void feed_held_back(svc_frames *m)
{
    int kept = 0;
    for (size_t fed = F; fed <= N; fed += F) {
        long t = (long)(fed / F) - 1;
        kept = t < 50 ? 0 : t == 50 ? 20 : kept + 1;
        CHECK(svc_frames_note(m, kept, fed, 0) == PARLEY_OK, "note");
    }
}

static void expect(const svc_frames *m, svc_word *w, int n, const int *want, const char *what)
{
    CHECK(svc_words_at_level(m, pcm, N, w, n) == PARLEY_OK, "%s: levels", what);
    for (int i = 0; i < n; i++)
        CHECK(w[i].keep == want[i], "%s: word %d (frames %d-%d) keep %d, want %d", what, i,
              w[i].first, w[i].last, w[i].keep, want[i]);
}

/* The words of test_one_for_one on a noise bed, or in a quiet room. */
static void request(int noisy)
{
    bed(noisy);
    tone(10, 30, 15);   /* made of the room at the start */
    tone(35, 70, 0);    /* the loudest */
    tone(75, 100, 6);   /* a short word of the request */
    tone(105, 120, 30); /* the quiet between words */
    tone(125, 160, 2);
    tone(165, 190, 9);  /* a last word, trailing off */
    tone(200, 220, 14); /* the room again */
}

static void test_one_for_one(void)
{
    request(1);
    svc_frames m = { 0 };
    feed_all(&m);
    svc_word w[] = { { 10, 30, 0 },   { 35, 70, 0 },   { 75, 100, 0 }, { 105, 120, 0 },
                     { 125, 160, 0 }, { 165, 190, 0 }, { 200, 220, 0 } };
    expect(&m, w, 7, (const int[]){ 0, 1, 1, 0, 1, 1, 0 }, "one for one");
    svc_word quiet_last[] = { { 35, 70, 0 }, { 165, 190, 0 } };
    expect(&m, quiet_last, 2, (const int[]){ 1, 1 }, "trailing off 9 dB");
    svc_word room_only[] = { { 10, 30, 0 }, { 200, 220, 0 } }; /* 3 dB apart */
    expect(&m, room_only, 2, (const int[]){ 1, 1 }, "levels are relative");
    svc_word lone[] = { { 105, 120, 0 } };
    expect(&m, lone, 1, (const int[]){ 1 }, "a lone word");
    svc_word beyond[] = { { 10, 30, 0 }, { 35, 70, 0 }, { 500, 520, 0 } };
    expect(&m, beyond, 3, (const int[]){ 0, 1, 1 }, "frames not noted");
    request(0); /* in a quiet room a soft word is still the speaker's */
    svc_word quiet[] = { { 10, 30, 0 }, { 35, 70, 0 }, { 200, 220, 0 } };
    expect(&m, quiet, 3, (const int[]){ 1, 1, 1 }, "a quiet room");
    svc_frames_clear(&m);
    CHECK(!m.due && !m.n, "cleared");
}

static void test_silence_left_out(void)
{
    bed(1);
    tone(80, 120, 0);
    tone(125, 160, 3);
    tone(165, 180, 14); /* the room after the request */
    svc_frames m = { 0 };
    feed_held_back(&m);
    int shift = 50 - SVC_LEVEL_LOOKAHEAD - 19;
    svc_word w[] = { { 80 - shift, 120 - shift, 0 },
                     { 125 - shift, 160 - shift, 0 },
                     { 165 - shift, 180 - shift, 0 } };
    expect(&m, w, 3, (const int[]){ 1, 1, 0 }, "silence left out");
    svc_frames_clear(&m);
}

static void test_outside(void)
{
    bed(1);
    svc_frames m = { 0 };
    feed_all(&m);
    svc_word room_before[] = { { 10, 30, 0 }, { 60, 90, 0 } };
    CHECK(svc_words_outside(&m, room_before, 2, 50, 150), "a word before the span");
    svc_word room_after[] = { { 60, 90, 0 }, { 140, 175, 0 } };
    CHECK(svc_words_outside(&m, room_after, 2, 50, 150), "a word after the span");
    svc_word within[] = { { 42, 90, 0 }, { 100, 158, 0 } };
    CHECK(!svc_words_outside(&m, within, 2, 50, 150), "words within the span, or 8 frames past");
    CHECK(!svc_words_outside(&m, within, 0, 50, 150), "no words");
    svc_frames_clear(&m);
    feed_held_back(&m); /* its frame k is audio frame k + 26 */
    svc_word late[] = { { 80 - 26, 120 - 26, 0 } };
    CHECK(!svc_words_outside(&m, late, 1, 70, 130), "placed where its audio is");
    CHECK(svc_words_outside(&m, late, 1, 100, 130), "placed where its audio is, outside");
    svc_frames_clear(&m);
}

int main(void)
{
    test_one_for_one();
    test_silence_left_out();
    test_outside();
    return check_done();
}
