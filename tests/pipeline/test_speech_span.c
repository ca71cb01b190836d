/* test_speech_span.c — where a whole recording's speech lies (pipe_speech_span,
 * pipeline/audio.h), on audio made here:
 * - two tone bursts with a pause between them, 2 s of noise before and 2.5 s after: the span
 *   starts at most 500 ms before the first burst and ends within 600 ms after the second,
 *   the pause kept; the same with the noise 10 dB louder (its detector knows the
 *   recording's noise from the first frame: the noise before is not taken for speech);
 * - the same with another talker 8 dB under the speaker in the noise before and after (their
 *   words: bursts of 300 ms): the span is the speaker's (the detector's own threshold, half
 *   way from the noise to the speech, takes the talker's words for speech);
 * - a burst in digital silence; a quiet speaker over a quiet room;
 * - noise alone, and digital silence alone, hold no speech.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pipeline/audio.h"
#include "tests/check.h"

#define RATE  16000
#define MS(x) ((size_t)(x) * (RATE / 1000))
#define MAX_N (RATE * 8)

static int16_t pcm[MAX_N];
static size_t n;
static uint32_t lcg = 7;

/* Appends `ms` of a 440 Hz tone of amplitude amp (0: none) over white noise of RMS `noise`. */
static void put(int ms, double amp, double noise)
{
    for (size_t i = 0; i < MS(ms) && n < MAX_N; i++, n++) {
        lcg = lcg * 1664525u + 1013904223u;
        double white = ((double)(lcg >> 8) / (1u << 24) * 2 - 1) * sqrt(3.0);
        pcm[n] = (int16_t)lrint(amp * sin(2 * M_PI * 440 * (double)n / RATE) + noise * white);
    }
}

/* `ms` of noise of RMS `noise`, with 300 ms words of another talker at `talker` (0: none)
 * every 500 ms. */
static void background(int ms, double noise, double talker)
{
    for (int at = 0; at < ms; at += 500) {
        put(300 < ms - at ? 300 : ms - at, talker, noise);
        if (ms - at > 300)
            put(200 < ms - at - 300 ? 200 : ms - at - 300, 0, noise);
    }
}

/* Two bursts of amp, 700 ms each with 500 ms between, `before` ms and 2.5 s of noise (and of
 * a talker at `talker`) around: the span's edges against the first burst's start and the
 * second's end. */
static void two_bursts(double amp, double noise, double talker, int before)
{
    size_t from = 0, to = 0;
    n = 0;
    background(before, noise, talker);
    put(700, amp, noise);
    put(500, 0, noise);
    put(700, amp, noise);
    background(2500, noise, talker);
    size_t start = MS(before), end = MS(before + 1900);
    CHECK(pipe_speech_span(pcm, n, 0, &from, &to) == 1, "amp %g, noise %g: speech found", amp,
          noise);
    CHECK(from <= start && from + MS(500) >= start,
          "amp %g, noise %g, talker %g: from %zu ms, the burst starts at %zu ms", amp, noise,
          talker, from / 16, start / 16);
    CHECK(to >= end && to <= end + MS(600),
          "amp %g, noise %g, talker %g: to %zu ms, the speech ends at %zu ms", amp, noise, talker,
          to / 16, end / 16);
}

int main(void)
{
    size_t from = 0, to = 0;
    two_bursts(3000, 300, 0, 2000);
    two_bursts(3000, 950, 0, 2000);    /* 10 dB louder noise: the bursts 7 dB over it */
    two_bursts(3000, 300, 1200, 2000); /* a talker 8 dB under the speaker */
    two_bursts(300, 10, 0, 2000);      /* a quiet speaker in a quiet room */
    two_bursts(3000, 0, 0, 300);       /* digital silence around */

    n = 0;
    put(5000, 0, 300);
    CHECK(pipe_speech_span(pcm, n, 0, &from, &to) == 0, "noise alone: no speech (%zu-%zu ms)",
          from / 16, to / 16);
    n = 0;
    put(3000, 0, 0);
    CHECK(pipe_speech_span(pcm, n, 0, &from, &to) == 0, "digital silence: no speech");
    CHECK(pipe_speech_span(pcm, 0, 0, &from, &to) == 0, "no samples: no speech");
    return check_done();
}
