/* espeak.h — the process's one espeak-ng: its users (the tts.espeak node's synthesis, the
 * recognizer's letter-to-sound guesses in asr_lts.c) take turns under one lock.
 *
 * espeak-ng keeps global state (one voice, one rate, one synthesis callback per process) and
 * is not thread-safe, so every call into it runs between svc_espeak_lock() and
 * svc_espeak_unlock(), and each user sets the voice (and whatever else it relies on) after
 * taking the lock. The first lock initializes espeak-ng (synchronous output, never exiting
 * the process on missing data). Internal to services/.
 */
#ifndef SERVICES_ESPEAK_H
#define SERVICES_ESPEAK_H

#include "parley/status.h"

/* Takes the lock and makes sure espeak-ng is initialized: PARLEY_OK with the lock held, or
 * PARLEY_ERR_NOT_FOUND (pl_fail detail) without it when espeak-ng cannot start (its data is
 * missing). */
parley_status svc_espeak_lock(void);
void svc_espeak_unlock(void);

/* espeak-ng's output sample rate; only under the lock. */
int svc_espeak_rate(void);

#endif
