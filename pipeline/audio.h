/* audio.h — cutting a user's stream of audio into utterances, for every audio source.
 *
 * A source (audio.gst, ws.server) feeds the samples it reads, at the rate it reads them,
 * into one pipe_seg per user stream. The segmenter converts them to PIPE_AUDIO_RATE, finds
 * where speech starts (a level detector over 10 ms frames that learns the stream's noise,
 * pipeline/audio_vad.h; some audio is kept from before the start), and sends the utterance
 * on as PIPE_T_AUDIO pieces of about `piece_ms` through pipe_node_emit (so a full queue
 * slows the source: backpressure). An utterance ends after `silence_ms` of trailing
 * silence, at `max_ms` of audio, or when the source calls pipe_seg_end (end of file, the
 * client's eof). Audio outside any utterance (silence) sends nothing, and neither does a
 * trailing silence past its first 250 ms: a pause is held back until speech resumes, so
 * the recognizer does not hear the noise after the speech. It does not recognize anything:
 * that is the ASR node's job.
 *
 * A pipe_seg belongs to one source thread at a time; it holds no lock.
 */
#ifndef PIPELINE_AUDIO_H
#define PIPELINE_AUDIO_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/node.h"

typedef struct pipe_seg_params {
    int in_rate;    /* samples per second fed in, 8000-48000 (0: PIPE_AUDIO_RATE) */
    int silence_ms; /* trailing silence that ends an utterance (0: 1000; -1: never) */
    int max_ms;     /* an utterance's maximum length (0: 15000) */
    int piece_ms;   /* audio per message (0: 100) */
    int threshold;  /* the least RMS of speech, 16-bit units (0: 100, about -50 dBFS); above
                     * it, speech is told from the stream's own noise (audio_vad.h) */
    /* Optional: called with an utterance's last piece just before it is sent (a source that
     * tracks its turns records last->seq here, as the reply will carry it); not for a
     * dropped utterance. On the feeding thread. */
    void (*on_end)(void *ctx, const pipe_msg *last);
    void *ctx;
} pipe_seg_params;

typedef struct pipe_seg pipe_seg;

/* The ranges of the fields above, for the node params that set them. */
#define PIPE_SEG_MIN_RATE 8000
#define PIPE_SEG_MAX_RATE 48000

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
 * as in pipe_seg_params (0: 100). Returns 1 and [*from, *to) in samples, or 0 when it holds
 * no speech. Pure; any thread. */
int pipe_speech_span(const int16_t *pcm, size_t n, int threshold, size_t *from, size_t *to);
/* The number of the last utterance started (0 before the first). */
uint32_t pipe_seg_utterances(const pipe_seg *s);
/* The samples (16 kHz) sent of the utterance in progress, or of the last one. */
size_t pipe_seg_samples(const pipe_seg *s);
/* Whether an utterance is in progress. */
int pipe_seg_in_speech(const pipe_seg *s);

#endif
