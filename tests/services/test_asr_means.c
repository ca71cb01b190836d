/* test_asr_means.c — asr.pocketsphinx carries each user's cepstral mean (their voice and
 * channel) from one utterance to the next: after a user's utterance heard through a quiet
 * channel (real speech, pocketsphinx-testdata's goforward.raw at -26 dB), a mean is kept for
 * that user, none for a user not heard or for a stream of no one; another user heard through
 * a loud channel (the same speech at full level) gets a mean of higher log energy; and the
 * quiet user's next utterance, starting from their own mean, is recognized. A new user heard
 * through a very quiet channel (-40 dB) is recognized from their first utterance on: its
 * mean is measured on its own first speech (from the model's initial mean it comes out
 * "go forward"). The engine runs with a class model built here from a three-line nlu.yaml.
 * Skips (77) without the recording.
 *
 * Usage: test_asr_means TMPDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "tests/check.h"
#include "tests/services/asr_move_bot.h"

int main(int argc, char **argv)
{
    FILE *f = fopen(GOFORWARD, "rb");
    if (!f || argc < 2) {
        printf("skip: needs %s and a folder\n", GOFORWARD);
        return 77;
    }
    static int16_t loud[16000 * 10], pcm[16000 * 10], faint[16000 * 10];
    size_t n = fread(loud, sizeof *loud, sizeof loud / sizeof *loud, f);
    fclose(f);
    for (size_t i = 0; i < n; i++) { /* quiet channels: -26 dB, -40 dB */
        pcm[i] = (int16_t)(loud[i] / 20);
        faint[i] = (int16_t)(loud[i] / 100);
    }

    svc_ps *ps = move_bot_open(argv[1], "means");
    if (!ps)
        return 1;

    float start = 0, kept = 0, none = 0, kept_loud = 0;
    char *text = hear(ps, "faint", faint, n); /* a first utterance: its own first mean */
    CHECK(text && !strcmp(text, "go forward ten meters"),
          "a new user's first utterance through a faint channel: '%s'", text ? text : "(none)");
    pl_free(text);
    text = hear(ps, NULL, pcm, n); /* no one's: never a kept mean */
    CHECK(text != NULL, "no one's utterance: %s", parley_errmsg());
    pl_free(text);
    CHECK(!svc_ps_kept_mean(ps, NULL, &start), "no mean is kept for no one");

    text = hear(ps, "quiet", pcm, n);
    CHECK(text != NULL, "quiet's first utterance");
    pl_free(text);
    CHECK(svc_ps_kept_mean(ps, "quiet", &kept), "a mean is kept for the user heard");
    CHECK(!svc_ps_kept_mean(ps, "other", &none), "none for a user not heard");
    text = hear(ps, "loud", loud, n);
    pl_free(text);
    CHECK(svc_ps_kept_mean(ps, "loud", &kept_loud) && kept_loud > kept + 1,
          "each user's own: the loud channel's log energy %.2f, the quiet one's %.2f", kept_loud,
          kept);

    text = hear(ps, "quiet", pcm, n);
    CHECK(text && !strcmp(text, "go forward ten meters"),
          "quiet's second utterance, from its own mean: '%s'", text ? text : "(none)");
    pl_free(text);
    float again = 0;
    CHECK(svc_ps_kept_mean(ps, "quiet", &again) && again < kept_loud - 1,
          "the quiet user's mean stays theirs: %.2f", again);
    printf("log energy of the mean kept for the quiet user: %.2f, then %.2f\n", kept, again);
    svc_ps_close(ps);
    printf("%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}
