/* asr_denoise.h — noise suppression before the recognizer, where the noise is steady.
 *
 * A fan, a hum, traffic or running water keep one level; the recognizer's own noise removal
 * leaves most of it, and at 6-12 dB under the speech it loses half the commands. speexdsp's
 * suppressor (a spectral estimate of the noise, updated as it goes) takes it out. Where the
 * noise is itself speech (people talking in a kitchen) or comes in bursts, the suppressor
 * takes part of the speech with it and costs commands, and in a quiet room it only costs:
 * so it runs where the noise is steady and near the speech (bench/RESULTS.md, #voice-noise).
 *
 * svc_noise_steady() decides that from a stretch of audio; a svc_denoise is one stream's
 * suppressor, used by one thread at a time.
 */
#ifndef SERVICES_ASR_DENOISE_H
#define SERVICES_ASR_DENOISE_H

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/error.h"

enum {
    SVC_DENOISE_FRAME = 160, /* samples the suppressor takes at once (10 ms at 16 kHz) */
};

/* Whether 16 kHz audio has steady noise near its speech. Of its 10 ms levels, the quietest
 * fifth (the noise between and around the words) varies by less than 1.6 dB (standard
 * deviation; people talking, 1.8 dB and more), and the 90th percentile (the speech) stands
 * less than 20 dB above that fifth's mean. Too little audio to tell (under 1 s), or digital
 * silence: no. */
int svc_noise_steady(const int16_t *pcm, size_t n);

typedef struct svc_denoise svc_denoise;

/* A suppressor for 16 kHz audio. */
parley_status svc_denoise_new(svc_denoise **out);
void svc_denoise_free(svc_denoise *d);
/* Suppresses the noise of n samples into out, which holds n + SVC_DENOISE_FRAME; answers the
 * samples written: whole frames, the rest kept for the next call. in and out may not overlap. */
size_t svc_denoise_run(svc_denoise *d, const int16_t *in, size_t n, int16_t *out);
/* The samples kept (fewer than a frame), as they came, into out; answers how many. */
size_t svc_denoise_flush(svc_denoise *d, int16_t *out);

#endif
