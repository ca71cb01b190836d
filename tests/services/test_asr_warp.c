/* test_asr_warp.c — asr.pocketsphinx hears a deep voice through a longer vocal tract's
 * frequency scale (svc_ps_params.speaker_warp): real speech (pocketsphinx-testdata's
 * goforward.raw) played at 0.84 of its speed here, its formants 0.84 as high, through a
 * three-line robot bot's class model, for a new user with the speaker warps and without:
 * - with them the transcript is right and its confidence (the path's score per frame)
 *   higher than without (87.3 against 84.2 when written);
 * - the user's next utterance, heard through the warp their first one chose (no search),
 *   scores as high again;
 * - the recording as it is stays right, its confidence no lower than without.
 * Skips (77) without the recording.
 *
 * Usage: test_asr_warp TMPDIR
 */
#include <stdio.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "tests/check.h"
#include "tests/services/asr_move_bot.h"

static int16_t pcm[16000 * 10], deep[16000 * 12], noisy[16000 * 12];

/* The transcript of pcm for user, checked right; its confidence. */
static float heard(svc_ps *ps, const char *user, const int16_t *x, size_t n, const char *what)
{
    float c = 0;
    char *text = hear_scored(ps, user, x, n, &c);
    CHECK(text && !strcmp(text, "go forward ten meters"), "%s: '%s'", what, text ? text : "(none)");
    pl_free(text);
    return c;
}

int main(int argc, char **argv)
{
    size_t n = move_bot_recording(pcm, sizeof pcm / sizeof *pcm, argc);
    if (!n)
        return 77;
    size_t m = 0; /* played at 0.84 of its speed: linear interpolation */
    for (double at = 0; at + 1 < (double)n && m < sizeof deep / sizeof *deep; at += 0.84, m++) {
        size_t i = (size_t)at;
        double frac = at - (double)i;
        deep[m] = (int16_t)((1 - frac) * pcm[i] + frac * pcm[i + 1]);
    }

    svc_ps *on = move_bot_open_warped(argv[1], "warp-on", 1);
    svc_ps *off = move_bot_open_warped(argv[1], "warp-off", 0);
    if (on && off) {
        float plain = heard(off, "deep", deep, m, "a deep voice, no warps");
        float first = heard(on, "deep", deep, m, "a deep voice, warps");
        float next = heard(on, "deep", deep, m, "the deep voice's next utterance");
        CHECK(first > plain + 1, "the warp fits the deep voice better: %.1f against %.1f", first,
              plain);
        CHECK(next > plain + 1, "and is kept for the user's next utterance: %.1f", next);
        float as_is = heard(on, "plain", pcm, n, "the recording as it is, warps");
        float as_is_off = heard(off, "plain", pcm, n, "the recording as it is, no warps");
        CHECK(as_is >= as_is_off, "the recording as it is: %.1f against %.1f", as_is, as_is_off);
        static double noise[sizeof deep / sizeof *deep];
        move_bot_steady_noise(noise, m);
        move_bot_mix(deep, m, noise, 12, noisy);
        float steady_off = heard(off, "deep in noise", noisy, m, "steady noise, no warps");
        float steady_on = heard(on, "deep in noise", noisy, m, "steady noise, warps");
        CHECK(steady_on > steady_off + 1,
              "the warp is found through the noise suppressor: %.1f against %.1f", steady_on,
              steady_off);
        printf("confidence of the deep voice: %.1f without warps, %.1f and %.1f with; as it "
               "is: %.1f and %.1f; the deep voice in steady noise: %.1f and %.1f\n",
               plain, first, next, as_is_off, as_is, steady_off, steady_on);
    }
    svc_ps_close(on);
    svc_ps_close(off);
    return check_done();
}
