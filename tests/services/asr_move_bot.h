/* asr_move_bot.h — the pocketsphinx engine with a class model of a three-line robot bot
 * ("go forward ten meters", pocketsphinx-testdata's goforward.raw), one utterance heard
 * through it, and a steady noise mixed under the speech at an SNR: what the engine tests over
 * real speech share.
 */
#ifndef TESTS_SERVICES_ASR_MOVE_BOT_H
#define TESTS_SERVICES_ASR_MOVE_BOT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "services/asr.h"
#include "tests/check.h"

#define GOFORWARD "/usr/share/pocketsphinx/test/data/goforward.raw"

/* The recording into pcm (room for cap samples): how many samples it holds; 0, said on
 * stdout, when it or the test's folder argument (argc < 2) is missing: the test skips. */
static inline size_t move_bot_recording(int16_t *pcm, size_t cap, int argc)
{
    FILE *f = fopen(GOFORWARD, "rb");
    size_t n = f && argc >= 2 ? fread(pcm, sizeof *pcm, cap, f) : 0;
    if (f)
        fclose(f);
    if (!n)
        printf("skip: needs %s and a folder\n", GOFORWARD);
    return n;
}

/* The engine over the bot's model, its nlu.yaml and cache written under dir with names
 * starting with tag, a user's voice heard through the speaker warps or not (svc_ps_params'
 * speaker_warp); NULL (and a failed check) if it cannot be made. */
static inline svc_ps *move_bot_open_warped(const char *dir, const char *tag, int speaker_warp)
{
    char nlu[1024], cache[1024];
    snprintf(nlu, sizeof nlu, "%s/%s-nlu.yaml", dir, tag);
    snprintf(cache, sizeof cache, "%s/%s-cache", dir, tag);
    FILE *y = fopen(nlu, "w");
    CHECK(y != NULL, "cannot write %s", nlu);
    if (!y)
        return NULL;
    fputs("version: \"3.1\"\nnlu:\n  - intent: move\n    examples: |\n"
          "      - go [forward](direction) [ten](distance) meters\n"
          "      - turn [left](direction)\n      - go [back](direction) [two](distance) meters\n",
          y);
    fclose(y);
    svc_ps_params p = svc_ps_params_default();
    p.speaker_warp = speaker_warp;
    svc_lang_info info;
    svc_ps *ps = NULL;
    svc_lang_params lp = { .kind = SVC_LANG_NGRAM, .dict = p.dict, .cache_dir = cache };
    CHECK(svc_lang_build(nlu, &lp, &info) == PARLEY_OK, "build: %s", parley_errmsg());
    p.bot = &info;
    CHECK(svc_ps_open(&p, &ps) == PARLEY_OK, "open: %s", parley_errmsg());
    return ps;
}

/* The same with the defaults: speaker warps on. */
static inline svc_ps *move_bot_open(const char *dir, const char *tag)
{
    return move_bot_open_warped(dir, tag, 1);
}

/* The mean power of speech x's 10 ms frames within 10 dB of its loudest (0: none), as the
 * voice benchmarks mix noise at an SNR. */
static inline double speech_power(const int16_t *x, size_t n)
{
    double peak = 0, sum = 0;
    size_t frames = n / 160, k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t f = 0; f < frames; f++) {
            double e = 0;
            for (int i = 0; i < 160; i++)
                e += (double)x[f * 160 + i] * x[f * 160 + i] / 160;
            if (!pass)
                peak = e > peak ? e : peak;
            else if (e > 0.1 * peak)
                sum += e, k++;
        }
    return k ? sum / (double)k : 0;
}

/* A standard normal draw (xorshift64, Box-Muller): the same sequence in every run. */
static inline double move_bot_normal(void)
{
    static uint64_t rng = 88172645463325252ull;
    double u[2];
    for (int i = 0; i < 2; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        u[i] = ((double)(rng >> 11) + 1.0) / 9007199254740993.0;
    }
    return sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

static inline int16_t move_bot_clip(double v)
{
    return (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
}

/* n samples of a steady noise of unit power: white noise and a 120 Hz hum. */
static inline void move_bot_steady_noise(double *noise, size_t n)
{
    for (size_t i = 0; i < n; i++)
        noise[i] = (move_bot_normal() + 0.5 * sin(6.283185307179586 * 120 * (double)i / 16000)) /
                   sqrt(1.125);
}

/* x with unit-power noise mixed in snr dB under its speech (speech_power), into y. */
static inline void move_bot_mix(const int16_t *x, size_t n, const double *noise, double snr,
                                int16_t *y)
{
    double gain = sqrt(speech_power(x, n) / pow(10, snr / 10));
    for (size_t i = 0; i < n; i++)
        y[i] = move_bot_clip(x[i] + gain * noise[i]);
}

/* One utterance of user through the engine, fed in 100 ms pieces; its transcript (owned),
 * or NULL; *confidence (when not NULL): the engine's confidence in it. */
static inline char *hear_scored(svc_ps *ps, const char *user, const int16_t *pcm, size_t n,
                                float *confidence)
{
    void *s;
    char *text = NULL;
    if (svc_ps_engine.open(ps, user, &s) != PARLEY_OK)
        return NULL;
    for (size_t at = 0; at < n; at += 1600)
        svc_ps_engine.feed(s, pcm + at, n - at < 1600 ? n - at : 1600);
    if (svc_ps_engine.end(s) != PARLEY_OK || svc_ps_engine.final(s, &text) != PARLEY_OK)
        text = NULL;
    if (confidence)
        *confidence = svc_ps_engine.confidence(s);
    svc_ps_engine.close(s);
    return text;
}

static inline char *hear(svc_ps *ps, const char *user, const int16_t *pcm, size_t n)
{
    return hear_scored(ps, user, pcm, n, NULL);
}

#endif
