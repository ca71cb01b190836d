/* asr_levels.h — which words of a transcript were said at the speaker's level, and where in an
 * utterance's audio a decoder's frames come from.
 *
 * A kiosk's user speaks near the microphone; people talking behind them, the clatter of a
 * kitchen and the quiet between words reach it weaker, and the bot's model makes its own words
 * of them ("give me an espresso double shot" heard in a kitchen as "no give me an espresso
 * double shot" or "... double shot tea"). A word's level is the loudest
 * tenth of its 10 ms frames. A word at the transcript's start or end more than
 * SVC_LEVEL_EDGE_DB under the loudest word, and one anywhere more than SVC_LEVEL_GAP_DB under
 * it, is taken for the room's and left out when it is also within SVC_LEVEL_FLOOR_DB of the
 * noise (the quietest tenth of the audio's frames): in a quiet room a soft word is still the
 * speaker's. The loudest word always stays. People trail off by up to 9-10 dB on a last word
 * ("please"), which the edge limit keeps (bench/RESULTS.md#voice-levels).
 *
 * pocketsphinx leaves the silence its voice detector finds out of its frames, so its frame k
 * is not the audio's frame k: svc_frames notes, after each piece of audio fed, how many frames
 * the decoder holds; the frames a piece brings are the newest audio frames it can have
 * computed, each before the next (silence left out inside a piece counts as at its start, so
 * pieces of 100 ms place a word within 10 frames).
 *
 * Plain data and pure functions; a svc_frames belongs to one stream, used by one thread at a
 * time.
 */
#ifndef SERVICES_ASR_LEVELS_H
#define SERVICES_ASR_LEVELS_H

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/error.h"

#define SVC_LEVEL_EDGE_DB  10.0f
#define SVC_LEVEL_GAP_DB   20.0f
#define SVC_LEVEL_FLOOR_DB 15.0f

enum {
    SVC_LEVEL_FRAME = 160,  /* samples per frame: 10 ms at 16 kHz, the decoder's frame shift */
    SVC_LEVEL_WINDOW = 410, /* samples a frame spans, as the decoder's front end (25.6 ms) */
};

/* When each decoder frame so far came out. */
typedef struct svc_frames {
    int *due; /* (n) the newest audio frame the decoder could have computed then; owned */
    size_t n, cap;
} svc_frames;

/* Notes that the decoder holds `kept` frames once `fed` samples of the utterance reached it:
 * its new frames are at most the newest audio frame it can have computed
 * (SVC_LEVEL_LOOKAHEAD behind the audio while it runs; the last at the end, `ended`), and
 * each comes before the next. Fails only when out of memory. */
parley_status svc_frames_note(svc_frames *m, int kept, size_t fed, int ended);
void svc_frames_clear(svc_frames *m);

/* Frames the decoder's newest frame lags the audio by while it runs: its window, and the
 * three frames either side its delta features look at. */
#define SVC_LEVEL_LOOKAHEAD 5

/* One word of a transcript: its first and last decoder frames, and whether it stays. */
typedef struct svc_word {
    int first, last;
    int keep; /* out */
} svc_word;

/* Sets keep of each of words (n_words, in order) as the header says, from the utterance's
 * audio (pcm, n samples at 16 kHz) and m. Words of no frames in m keep. Fails only when out of
 * memory (then every word keeps). */
parley_status svc_words_at_level(const svc_frames *m, const int16_t *pcm, size_t n, svc_word *words,
                                 int n_words);

/* How far svc_frames may place a frame from where its audio is, in frames: pieces of 100 ms
 * place a word within 10 frames. */
#define SVC_LEVEL_PLACED 10

/* Whether any of words (n_words, decoder frames as svc_words_at_level takes them) lies more
 * than SVC_LEVEL_PLACED frames outside the audio frames [first, last], placed by m; 1 when
 * out of memory (the caller's safe answer). */
int svc_words_outside(const svc_frames *m, const svc_word *words, int n_words, long first,
                      long last);

#endif
