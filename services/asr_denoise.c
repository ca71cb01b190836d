/* asr_denoise.c — speexdsp's noise suppressor for the recognizer, and the test of a stretch
 * of audio for steady noise (asr_denoise.h).
 */
#include <math.h>
#include <speex/speex_preprocess.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "services/asr_denoise.h"

enum {
    RATE = 16000,
    MIN_FRAMES = 100,   /* under 1 s of audio tells nothing */
    SUPPRESS_DB = -15,  /* the most the suppressor takes off the noise */
    MAX_SPREAD_DB = 20, /* speech further above its noise needs no help */
};
#define MAX_QUIET_SD_DB 1.6 /* the quietest fifth of a steady noise varies less */

struct svc_denoise {
    SpeexPreprocessState *st;
    int16_t part[SVC_DENOISE_FRAME];
    size_t n_part;
};

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The q-th quantile (0..1) of n sorted values. */
static float quantile(const float *sorted, size_t n, double q)
{
    return sorted[(size_t)(q * (double)(n - 1))];
}

int svc_noise_steady(const int16_t *pcm, size_t n)
{
    size_t frames = n / SVC_DENOISE_FRAME;
    if (frames < MIN_FRAMES)
        return 0;
    float *db = pl_malloc(2 * frames * sizeof *db);
    if (!db)
        return 0; /* no memory: the audio goes on as it is */
    float *sorted = db + frames;
    for (size_t f = 0; f < frames; f++) {
        double e = 0;
        for (int i = 0; i < SVC_DENOISE_FRAME; i++) {
            double x = pcm[f * SVC_DENOISE_FRAME + i];
            e += x * x;
        }
        db[f] = (float)(10.0 * log10(e / SVC_DENOISE_FRAME + 1.0));
    }
    memcpy(sorted, db, frames * sizeof *db);
    qsort(sorted, frames, sizeof *sorted, cmp_float);
    float quiet = quantile(sorted, frames, 0.2), loud = quantile(sorted, frames, 0.9);
    double s1 = 0, s2 = 0;
    size_t k = 0;
    for (size_t f = 0; f < frames; f++)
        if (db[f] < quiet) {
            s1 += db[f];
            s2 += (double)db[f] * db[f];
            k++;
        }
    pl_free(db);
    if (k < 2)
        return 0; /* digital silence: no noise to take off */
    double mean = s1 / (double)k, sd = sqrt(fmax(0.0, s2 / (double)k - mean * mean));
    return loud - mean < MAX_SPREAD_DB && sd < MAX_QUIET_SD_DB;
}

parley_status svc_denoise_new(svc_denoise **out)
{
    svc_denoise *d = pl_calloc(1, sizeof *d);
    if (!d || !(d->st = speex_preprocess_state_init(SVC_DENOISE_FRAME, RATE))) {
        pl_free(d);
        return pl_nomem("a noise suppressor");
    }
    int on = 1, off = 0, suppress = SUPPRESS_DB;
    speex_preprocess_ctl(d->st, SPEEX_PREPROCESS_SET_DENOISE, &on);
    speex_preprocess_ctl(d->st, SPEEX_PREPROCESS_SET_AGC, &off);
    speex_preprocess_ctl(d->st, SPEEX_PREPROCESS_SET_DEREVERB, &off);
    speex_preprocess_ctl(d->st, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, &suppress);
    *out = d;
    return PARLEY_OK;
}

void svc_denoise_free(svc_denoise *d)
{
    if (!d)
        return;
    speex_preprocess_state_destroy(d->st);
    pl_free(d);
}

size_t svc_denoise_run(svc_denoise *d, const int16_t *in, size_t n, int16_t *out)
{
    size_t written = 0;
    while (n) {
        size_t take = SVC_DENOISE_FRAME - d->n_part;
        if (take > n)
            take = n;
        memcpy(d->part + d->n_part, in, take * sizeof *in);
        d->n_part += take;
        in += take;
        n -= take;
        if (d->n_part < SVC_DENOISE_FRAME)
            break;
        speex_preprocess_run(d->st, d->part);
        memcpy(out + written, d->part, sizeof d->part);
        written += SVC_DENOISE_FRAME;
        d->n_part = 0;
    }
    return written;
}

size_t svc_denoise_flush(svc_denoise *d, int16_t *out)
{
    size_t n = d->n_part;
    memcpy(out, d->part, n * sizeof *out);
    d->n_part = 0;
    return n;
}
