/* test_asr_denoise.c — the recognizer's noise suppressor where the noise is steady
 * (services/asr_denoise.h).
 *
 * - svc_noise_steady: real speech (pocketsphinx-testdata's goforward.raw) with a steady noise
 *   (white noise and a 120 Hz hum) 9 dB under it is steady; the same speech in its quiet
 *   room is not (it needs no help), nor a part of it in digital silence, nor the speech with
 *   another talker 9 dB under it (the same recording, delayed: noise that is itself speech),
 *   nor audio under 1 s.
 * - svc_denoise_run takes a steady noise down by at least 8 dB, gives the same samples
 *   whatever the sizes of the pieces it is fed, and flush hands back the part of a frame.
 * - The engine, with a class model built from a three-line nlu.yaml, recognizes "go forward
 *   ten meters" through the steady noise at 12 and 9 dB, for a new stream and for a user
 *   heard once before (their next utterance is denoised from its first sample). Without the
 *   suppressor it heard "go forward ten" at both.
 * Skips (77) without the recording.
 *
 * Usage: test_asr_denoise TMPDIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "services/asr_denoise.h"
#include "tests/check.h"
#include "tests/services/asr_move_bot.h"

#define MAX_N (16000 * 10)

static double power(const int16_t *x, size_t n)
{
    double e = 0;
    for (size_t i = 0; i < n; i++)
        e += (double)x[i] * x[i];
    return e / (double)n;
}

static void check_suppressor(void)
{
    static int16_t in[32000], whole[32000 + SVC_DENOISE_FRAME], pieces[32000 + SVC_DENOISE_FRAME];
    for (size_t i = 0; i < 32000; i++)
        in[i] = move_bot_clip(1000 * move_bot_normal());
    svc_denoise *a = NULL, *b = NULL;
    CHECK(svc_denoise_new(&a) == PARLEY_OK && svc_denoise_new(&b) == PARLEY_OK, "new: %s",
          parley_errmsg());
    if (!a || !b)
        return;
    size_t n = svc_denoise_run(a, in, 32000 - 37, whole);
    n += svc_denoise_flush(a, whole + n);
    size_t m = 0;
    for (size_t at = 0, step = 37; at < 32000 - 37; at += step, step = step * 7 % 401 + 1) {
        size_t k = at + step > 32000 - 37 ? 32000 - 37 - at : step;
        m += svc_denoise_run(b, in + at, k, pieces + m);
    }
    m += svc_denoise_flush(b, pieces + m);
    CHECK(n == 32000 - 37 && m == n, "every sample comes out: %zu and %zu of %d", n, m, 32000 - 37);
    CHECK(!memcmp(whole, pieces, n * sizeof *whole), "the same samples whatever the pieces");
    size_t rest = (32000 - 37) % SVC_DENOISE_FRAME;
    CHECK(!memcmp(whole + n - rest, in + n - rest, rest * sizeof *in),
          "flush hands back the last %zu samples, part of a frame, as they came", rest);
    double before = power(in + 16000, 15000), after = power(whole + 16000, 15000);
    CHECK(10 * log10(before / after) >= 8, "steady noise taken down by %.1f dB (at least 8)",
          10 * log10(before / after));
    svc_denoise_free(a);
    svc_denoise_free(b);
}

int main(int argc, char **argv)
{
    FILE *f = fopen(GOFORWARD, "rb");
    if (!f || argc < 2) {
        printf("skip: needs %s and a folder\n", GOFORWARD);
        return 77;
    }
    static int16_t speech[MAX_N], noisy[MAX_N];
    static double steady[MAX_N], talker[MAX_N];
    size_t n = fread(speech, sizeof *speech, MAX_N, f);
    fclose(f);
    double talker_power = power(speech, n);
    move_bot_steady_noise(steady, n);
    for (size_t i = 0; i < n; i++)
        talker[i] = speech[(i + 12000) % n] / sqrt(talker_power);

    move_bot_mix(speech, n, steady, 9, noisy);
    CHECK(svc_noise_steady(noisy, n), "steady noise 9 dB under real speech is steady");
    CHECK(!svc_noise_steady(speech, n), "speech in its quiet room needs no help");
    memset(noisy, 0, 4800 * sizeof *noisy); /* as an utterance of a stream with no noise */
    memcpy(noisy + 4800, speech + 8000, 16000 * sizeof *noisy);
    memset(noisy + 20800, 0, 4000 * sizeof *noisy);
    CHECK(!svc_noise_steady(noisy, 24800), "nor speech in digital silence");
    move_bot_mix(speech, n, talker, 9, noisy);
    CHECK(!svc_noise_steady(noisy, n), "another talker 9 dB under is not steady noise");
    move_bot_mix(speech, n, steady, 9, noisy);
    CHECK(!svc_noise_steady(noisy, 15000), "under 1 s tells nothing");
    check_suppressor();

    svc_ps *ps = move_bot_open(argv[1], "denoise");
    if (!ps)
        return 1;
    const double snrs[] = { 12, 9 };
    for (int k = 0; k < 2; k++) {
        move_bot_mix(speech, n, steady, snrs[k], noisy);
        const char *users[] = { NULL, "kiosk", "kiosk" }; /* no one, new, heard before */
        for (int u = 0; u < 3; u++) {
            char *text = hear(ps, users[u], noisy, n);
            CHECK(text && !strcmp(text, "go forward ten meters"),
                  "steady noise %.0f dB under the speech, %s: '%s'", snrs[k],
                  u == 0   ? "no one's stream"
                  : u == 1 ? "a new user"
                           : "a user heard before",
                  text ? text : "(none)");
            pl_free(text);
        }
    }
    svc_ps_close(ps);
    printf("%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}
