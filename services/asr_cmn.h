/* asr_cmn.h — a first cepstral mean measured on a speaker's own first speech, for an
 * utterance that has none carried from their last one (asr_pocketsphinx.c).
 *
 * pocketsphinx decodes a stream with a cepstral mean fixed for the whole utterance and
 * updated only at its end: a new speaker's first utterance is decoded with the acoustic
 * model's initial mean, which fits neither their voice nor their room. A primer runs a
 * front end like the decoder's (same features, same voice detector) over the utterance's
 * first audio and averages the cepstra of its first PRIME_FRAMES speech frames; the decoder
 * starts from that mean, on the audio held meanwhile. On synthesized orders with noise at
 * 12 dB, 34 of 100 were understood from the initial mean and 56 primed (bench/RESULTS.md,
 * "Voice").
 *
 * Threading: a primer is used by one thread at a time (its stream's).
 */
#ifndef SERVICES_ASR_CMN_H
#define SERVICES_ASR_CMN_H

#include <stddef.h>
#include <stdint.h>

#include <pocketsphinx.h>
#include <sphinxbase/fe.h>

#include "sdk/base/error.h"

/* Speech frames (10 ms each) the first mean is measured on: 1.5 s of speech. */
enum { SVC_CMN_PRIME_FRAMES = 150 };

typedef struct svc_cmn_primer svc_cmn_primer;

/* A primer with dec's front-end settings (borrowed for the call only). *out owned by the
 * caller: svc_cmn_primer_free. */
parley_status svc_cmn_primer_new(ps_decoder_t *dec, svc_cmn_primer **out);
void svc_cmn_primer_free(svc_cmn_primer *p);
/* Measures n more samples; 1 once SVC_CMN_PRIME_FRAMES speech frames are in (the rest of
 * pcm is then not read), 0 while fewer, <0 on a front-end failure. */
int svc_cmn_primer_feed(svc_cmn_primer *p, const int16_t *pcm, size_t n);
/* The mean of the speech frames measured (veclen values into mean); 0 and nothing written
 * when too few were heard to say anything (under a fifth of a second). */
int svc_cmn_primer_mean(svc_cmn_primer *p, mfcc_t *mean, int veclen);

#endif
