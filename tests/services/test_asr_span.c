/* test_asr_span.c — an utterance heard again on its speaker's span (asr_pocketsphinx.c,
 * pipeline/audio.h's pipe_speech_span), over real speech.
 *
 * pocketsphinx-testdata's "go forward ten meters" (goforward.raw) as one utterance of a new
 * user, with seconds of other people talking before and after it (the same recording
 * reversed and shifted, five voices at once, 15 dB under the speaker, over all of it),
 * through the engine with a three-line bot's class model, fed in 100 ms pieces as a source
 * sends them. Decoded whole, it came out "go forward ten meters two" (a word of the talk
 * after the order, as loud as the order's own quiet words); decoded again from the
 * speaker's first words to their last, it comes out right. The recording alone (its own
 * quiet room around it) too. Two such utterances at once (two decoders of the pool, each
 * decoding its span again) give the same words and confidence as one alone (within 2: a
 * decoder used before scores an utterance a little differently, as pocketsphinx carries its
 * noise estimate from one utterance to the next, and which of the decoders of each speaker
 * warp a stream is lent, one that heard the utterances before or a new one, depends on
 * which thread asks first: 0.1-0.2 seen mostly, 1.1 once in CI).
 * Skips (77) without the recording.
 *
 * Usage: test_asr_span TMPDIR
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "tests/check.h"
#include "tests/services/asr_move_bot.h"

#define RATE  16000
#define MAX_N (RATE * 10)

static int16_t speech[MAX_N], heard_pcm[MAX_N];
static size_t n_heard;
static double talk[MAX_N];
static svc_ps *ps;

typedef struct heard {
    char *text;
    float confidence;
} heard;

static void *hear_talk(void *out)
{
    heard *h = out;
    h->text = hear_scored(ps, NULL, heard_pcm, n_heard, &h->confidence);
    return NULL;
}

static int16_t clip(double v)
{
    return (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
}

/* n samples of talk: five copies of x (n_x samples), every other one reversed, each starting
 * somewhere else, summed and scaled to unit power. */
static void people_talking(const int16_t *x, size_t n_x, size_t n)
{
    double e = 0;
    memset(talk, 0, n * sizeof *talk);
    for (int c = 0; c < 5; c++) {
        size_t shift = (size_t)c * n_x / 5 + (size_t)c * 3001;
        for (size_t i = 0; i < n; i++) {
            size_t k = (i + shift) % n_x;
            talk[i] += c % 2 ? x[n_x - 1 - k] : x[k];
        }
    }
    for (size_t i = 0; i < n; i++)
        e += talk[i] * talk[i];
    for (size_t i = 0; i < n; i++)
        talk[i] /= sqrt(e / (double)n);
}

int main(int argc, char **argv)
{
    FILE *f = fopen(GOFORWARD, "rb");
    if (!f || argc < 2) {
        printf("skip: needs %s and a temporary directory\n", GOFORWARD);
        if (f)
            fclose(f);
        return 77;
    }
    size_t n_x = fread(speech, sizeof *speech, MAX_N / 2, f);
    fclose(f);
    ps = move_bot_open(argv[1], "span");
    if (!ps)
        return check_done();

    char *text = hear(ps, NULL, speech, n_x);
    CHECK(text && !strcmp(text, "go forward ten meters"), "the recording alone: %s",
          text ? text : "(error)");
    pl_free(text);

    /* 2 s of talk before, 1.5 s after, 15 dB under the speaker over all of it */
    size_t before = 2 * RATE, n = before + n_x + 3 * RATE / 2;
    double gain = sqrt(speech_power(speech, n_x) / pow(10, 15 / 10.0));
    people_talking(speech, n_x, n);
    for (size_t i = 0; i < n; i++)
        heard_pcm[i] =
                clip((i >= before && i < before + n_x ? speech[i - before] : 0) + gain * talk[i]);
    n_heard = n;
    heard alone, both[2];
    hear_talk(&alone);
    CHECK(alone.text && !strcmp(alone.text, "go forward ten meters"),
          "with people talking before and after it: %s", alone.text ? alone.text : "(error)");
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, hear_talk, &both[i]) == 0, "thread %d", i);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        CHECK(both[i].text && alone.text && !strcmp(both[i].text, alone.text) &&
                      fabsf(both[i].confidence - alone.confidence) < 2.0f,
              "two at once, %d: '%s' %.2f against '%s' %.2f", i,
              both[i].text ? both[i].text : "(error)", both[i].confidence,
              alone.text ? alone.text : "(error)", alone.confidence);
        pl_free(both[i].text);
    }
    pl_free(alone.text);
    svc_ps_close(ps);
    return check_done();
}
