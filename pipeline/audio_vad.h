/* audio_vad.h — the speech detector of the utterance segmenter (pipeline/audio.h): is this
 * 10 ms frame speech, in the noise this stream has?
 *
 * A fixed level cannot tell: in a kitchen the noise alone is louder than a quiet speaker in
 * a quiet room. So the detector compares each frame's level (dB, averaged over the last
 * PIPE_VAD_SMOOTH frames, so one clatter does not make speech and one stop consonant does
 * not make silence) with the stream's own: its noise floor (the 10th percentile of the last
 * 5 s) and its speech level (the 90th). A frame is speech when it stands above the floor by
 * half the distance between the two, at least PIPE_VAD_MIN_DB and at most PIPE_VAD_MAX_DB,
 * and reaches the absolute minimum the caller gives (digital silence has no floor to learn).
 * From the first frame on: a stream that opens on steady noise does not open an utterance
 * of it. Its first average covers few frames, so a clatter there can pass for speech for a
 * few frames; the segmenter drops utterances that short (pipeline/audio.h).
 *
 * A pipe_vad is a plain value inside its owner, used by one thread at a time.
 */
#ifndef PIPELINE_AUDIO_VAD_H
#define PIPELINE_AUDIO_VAD_H

#include <stddef.h>
#include <stdint.h>

enum {
    PIPE_VAD_SMOOTH = 30,   /* frames averaged (300 ms) */
    PIPE_VAD_WINDOW = 500,  /* frames whose levels give the floor and the speech level (5 s) */
    PIPE_VAD_BINS = 192,    /* half-dB bins of a 16-bit frame's level, 0 to 96 dB */
    PIPE_VAD_MIN_DB = 4,    /* speech stands at least this far above the noise floor */
    PIPE_VAD_MAX_DB = 15,   /* and never needs more (quiet words of a loud speaker) */
    PIPE_VAD_QUIET_DB = 10, /* levels this far under the minimum count as silence alike */
};

/* The average lags the sound by about half its width: the frames a trailing silence has
 * already lasted when the detector first calls a frame silence. */
#define PIPE_VAD_LAG_FRAMES (PIPE_VAD_SMOOTH / 2)

typedef struct pipe_vad {
    float min_db;                  /* the absolute minimum level of speech */
    float recent[PIPE_VAD_SMOOTH]; /* the last frames' levels (dB) */
    float sum;                     /* of recent */
    int recent_at, recent_n;
    uint8_t window[PIPE_VAD_WINDOW]; /* the last averaged levels, as bins */
    int window_at, window_n;
    uint32_t hist[PIPE_VAD_BINS]; /* of window */
    float level;                  /* the last frame's */
} pipe_vad;

/* A detector whose speech is at least `min_rms` (16-bit units; 1 to 32767). */
void pipe_vad_init(pipe_vad *v, int min_rms);
/* Whether the frame of n samples (10 ms at 16 kHz) is speech; updates the levels. */
int pipe_vad_frame(pipe_vad *v, const int16_t *frame, int n);
/* The last frame's level as the detector compares it (dB, averaged over PIPE_VAD_SMOOTH). */
float pipe_vad_level(const pipe_vad *v);
/* The half-dB bin (0 to PIPE_VAD_BINS - 1) a level (dB) is counted in. */
int pipe_vad_bin(float level);
/* The level under which a share p of the `total` frames counted in hist lie (PIPE_VAD_BINS
 * half-dB bins; a bin's lower edge, dB): of the detector's window, or of a whole recording. */
float pipe_vad_percentile(const uint32_t *hist, size_t total, double p);
/* Starts the running average again and keeps the window's levels: a detector that has heard
 * a whole recording hears it again from the start knowing its noise and speech levels. */
void pipe_vad_rewind(pipe_vad *v);

#endif
