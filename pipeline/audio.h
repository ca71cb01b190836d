/* audio.h — cutting a user's stream of audio into utterances, for every audio source.
 *
 * A source (audio.gst, ws.server) feeds the samples it reads, at the rate it reads them, into
 * one pipe_seg per user stream. The segmenter converts them to PIPE_AUDIO_RATE (and takes out
 * a DC offset), finds where speech starts (a level detector over 10 ms frames that learns the
 * stream's noise, pipeline/audio_vad.h; some audio is kept from before the start), and sends
 * the utterance on as PIPE_T_AUDIO pieces of about `piece_ms` through pipe_node_emit (so a
 * full queue slows the source: backpressure). An utterance ends after a trailing silence, at
 * `max_ms` of audio, or when the source calls pipe_seg_end (end of file, the client's eof);
 * one that a trailing silence ends with under 80 ms of speech (a knock) is dropped: its last
 * piece says PIPE_UTT_DROPPED and no turn comes of it.
 * Audio outside any utterance (silence) sends nothing, and neither does a trailing silence
 * past its first 250 ms: a pause is held back until speech resumes, so the recognizer does not
 * hear the noise after the speech. It does not recognize anything: that is the ASR node's job.
 * But the recognizer may say how the words before a pause read (pipe_seg_hint): the piece sent
 * as a pause begins is marked (pipe_msg.pause), and a recognizer that hears the request
 * complete ("a large latte please") lets the utterance end after `complete_ms` of silence, one
 * that hears it stop half way ("a large ... um") after `incomplete_ms`; without its word,
 * after `silence_ms`.
 *
 * A pipe_seg belongs to one source thread at a time; it holds no lock of its own. It is on
 * its graph's board from open to close, where pipe_seg_hint finds it by its user: close it
 * before its graph.
 */
#ifndef PIPELINE_AUDIO_H
#define PIPELINE_AUDIO_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/node.h"

typedef struct pipe_seg_params {
    int in_rate;       /* samples per second fed in, 8000-48000 (0: PIPE_AUDIO_RATE) */
    int silence_ms;    /* trailing silence that ends an utterance (0: 1000; -1: never) */
    int complete_ms;   /* the same after words the recognizer hears as a whole request (0: 600) */
    int incomplete_ms; /* the same after words that stop half way (0: 2000) */
    /* 1: a pause waits (up to 3 s) for the recognizer's word before its endpoint, as a source
     * that reads faster than real time (a file) needs to get what a live one has by then; the
     * source's thread blocks meanwhile. 0: the endpoint is silence_ms where the word is late. */
    int wait_hints;
    int max_ms;    /* an utterance's maximum length (0: 15000) */
    int piece_ms;  /* audio per message (0: 100) */
    int threshold; /* the least RMS of speech, 16-bit units (0: PIPE_SEG_THRESHOLD); above
                    * it, speech is told from the stream's own noise (audio_vad.h) */
    /* Optional: called with an utterance's last piece just before it is sent (a source that
     * tracks its turns records last->seq here, as the reply will carry it); not for a
     * dropped utterance. On the feeding thread. */
    void (*on_end)(void *ctx, const pipe_msg *last);
    void *ctx;
} pipe_seg_params;

typedef struct pipe_seg pipe_seg;

/* How the words before a pause read, as the recognizer hears them (pipe_seg_hint). */
typedef enum pipe_end_hint {
    PIPE_END_UNKNOWN = 0,    /* it cannot tell (no words yet): the endpoint is silence_ms */
    PIPE_END_COMPLETE = 1,   /* a request could end there: complete_ms */
    PIPE_END_INCOMPLETE = 2, /* they stop half way ("a large", "with", "um"): incomplete_ms */
} pipe_end_hint;

/* The ranges of the fields above, for the node params that set them. */
#define PIPE_SEG_MIN_RATE 8000
#define PIPE_SEG_MAX_RATE 48000
/* The default least RMS of speech: 30, about -60 dBFS, where a microphone's own noise lies
 * and under a quiet speaker's softest words on a microphone set low
 * (bench/RESULTS.md#voice-quiet). It only keeps digital silence and a near-silent room from
 * counting as speech; the stream's own noise sets the threshold above it. */
#define PIPE_SEG_THRESHOLD 30

/* The params of every source that cuts a user's audio (audio.gst, ws.server), for its kind's
 * param table; pipe_seg_params_of reads them. An endpoint under 300 ms would end an
 * utterance before the recognizer has heard the pause begin. */
#define PIPE_SEG_PARAM_SPECS                                                                         \
    { "silence_ms",                                                                                  \
      PIPE_P_INT,                                                                                    \
      "1000",                                                                                        \
      50,                                                                                            \
      10000,                                                                                         \
      "trailing silence that ends an utterance, where the recognizer cannot tell how its words "     \
      "read (a pause within a request is shorter)",                                                  \
      NULL },                                                                                        \
            { "complete_ms",                                                                         \
              PIPE_P_INT,                                                                            \
              "600",                                                                                 \
              300,                                                                                   \
              10000,                                                                                 \
              "the same after words the recognizer hears as a whole request (\"a large latte "       \
              "please\")",                                                                           \
              NULL },                                                                                \
            { "incomplete_ms",                                                                       \
              PIPE_P_INT,                                                                            \
              "2000",                                                                                \
              300,                                                                                   \
              30000,                                                                                 \
              "the same after words that stop half way (\"a large\", \"with\", \"um\")",             \
              NULL },                                                                                \
            { "max_ms", PIPE_P_INT, "15000",                                                         \
              500,      120000,     "an utterance's maximum length: it is ended and answered there", \
              NULL },                                                                                \
    {                                                                                                \
        "threshold", PIPE_P_INT, "30", 1, 32767,                                                     \
                "the least RMS of speech (16-bit units); above it, speech is told from the "         \
                "stream's own "                                                                      \
                "noise",                                                                             \
                NULL                                                                                 \
    }
/* The PIPE_SEG_PARAM_SPECS params of `node` (from create); in_rate, piece_ms and on_end 0. */
pipe_seg_params pipe_seg_params_of(const pipe_node *node);

/* A segmenter whose pieces go out of `node`'s output port `port` for `user` (copied,
 * checked by pipe_check_user_id). *out is owned by the caller (pipe_seg_close). */
parley_status pipe_seg_open(const pipe_seg_params *p, pipe_node *node, int port, const char *user,
                            pipe_seg **out);
void pipe_seg_close(pipe_seg *s);

/* Feeds n samples; may emit pieces (and block on a full queue). An error is the emit's or
 * an allocation's; the segmenter stays usable. */
parley_status pipe_seg_feed(pipe_seg *s, const int16_t *pcm, size_t n);
/* Ends the utterance in progress (PIPE_UTT_EXPLICIT). *sent is 1 when there was one (its
 * last piece went out), 0 when there was only silence. */
parley_status pipe_seg_end(pipe_seg *s, int *sent);
/* The source went away: an utterance in progress is dropped (an empty last piece with
 * PIPE_UTT_DROPPED tells the recognizer to forget it; no turn comes of it). */
parley_status pipe_seg_drop(pipe_seg *s);
/* Where the speaker's request lies in a whole recording (a file heard as one request): from
 * 500 ms before their first words to 250 ms after the detector's last speech frame, the
 * pauses between kept. A frame is the speaker's when the detector (audio_vad.h) calls it
 * speech and it is also within 5 dB of the recording's loudest tenth, or 15 dB above its
 * quietest (a quiet room's soft words): nearer the microphone than the people talking
 * behind them, the speaker is louder. The detector hears the recording once first, so it
 * knows its noise from the first frame on. pcm is n samples at PIPE_AUDIO_RATE; threshold
 * as in pipe_seg_params (0: PIPE_SEG_THRESHOLD). Returns 1 and [*from, *to) in samples, or
 * 0 when it holds no speech. Pure; any thread. */
int pipe_speech_span(const int16_t *pcm, size_t n, int threshold, size_t *from, size_t *to);
/* Tells the segmenter of `user` in graph g (every one, when a user has several) how its
 * utterance `utt` reads after its first `samples` samples: a recognizer's word on the pause
 * that follows a piece marked pipe_msg.pause. A hint on less audio than the segmenter sent
 * before the pause, or for another utterance, is ignored; one that comes after the
 * endpoint has passed changes nothing. Any thread. */
void pipe_seg_hint(pipe_graph *g, const char *user, uint32_t utt, size_t samples, pipe_end_hint h);
/* The number of the last utterance started (0 before the first). */
uint32_t pipe_seg_utterances(const pipe_seg *s);
/* The samples (16 kHz) sent of the utterance in progress, or of the last one. */
size_t pipe_seg_samples(const pipe_seg *s);
/* Whether an utterance is in progress. */
int pipe_seg_in_speech(const pipe_seg *s);

#endif
