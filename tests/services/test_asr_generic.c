/* test_asr_generic.c — asr.pocketsphinx's generic-model decoders: an engine without a bot's
 * model decodes every utterance with the generic English model, from a pool that grows to
 * the utterances decoded at once. Real speech (pocketsphinx-testdata's goforward.raw): heard
 * alone, then by two threads at once (each takes a decoder of its own and hears the same
 * words), then an utterance with no audio, which gets no words (not the transcript another
 * utterance left in a decoder). Skips (77) without the recording.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "tests/check.h"
#include "tests/services/asr_move_bot.h"

static int16_t pcm[16000 * 10];
static size_t n_pcm;
static svc_ps *ps;

static void *hear_one(void *out)
{
    *(char **)out = hear(ps, NULL, pcm, n_pcm);
    return NULL;
}

int main(void)
{
    FILE *f = fopen(GOFORWARD, "rb");
    if (!f) {
        printf("skip: needs %s\n", GOFORWARD);
        return 77;
    }
    n_pcm = fread(pcm, sizeof *pcm, sizeof pcm / sizeof *pcm, f);
    fclose(f);
    svc_ps_params p = svc_ps_params_default();
    CHECK(svc_ps_open(&p, &ps) == PARLEY_OK, "open: %s", parley_errmsg());
    if (!ps)
        return check_done();

    char *alone = hear(ps, NULL, pcm, n_pcm);
    CHECK(alone && strstr(alone, "forward"), "alone: '%s'", alone ? alone : "(null)");

    char *text[2] = { NULL, NULL };
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, hear_one, &text[i]) == 0, "thread %d", i);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        CHECK(text[i] && alone && !strcmp(text[i], alone), "at once %d: '%s' against '%s'", i,
              text[i] ? text[i] : "(null)", alone ? alone : "(null)");
        pl_free(text[i]);
    }

    char *none = hear(ps, NULL, pcm, 0);
    CHECK(none && !none[0], "no audio: '%s'", none ? none : "(null)");
    pl_free(none);
    pl_free(alone);
    svc_ps_close(ps);
    return check_done();
}
