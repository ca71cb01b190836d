/* audio.c — the utterance segmenter of pipeline/audio.h: rate conversion to 16 kHz, the
 * speech detector over 10 ms frames, the pause held back, and the pieces it sends.
 *
 * Rate conversion is linear interpolation after a moving average as wide as the rate ratio
 * (a plain low-pass when going down from 44.1 or 48 kHz): good enough for speech
 * recognition, not for music. The detector (pipeline/audio_vad.h) calls a frame speech
 * against the stream's own noise; three speech frames in a row start an utterance, which
 * takes the 300 ms before it along (the first sounds are quiet, and the detector's average
 * rises after them); one that a trailing silence ends with under 80 ms of speech is dropped
 * as a knock. Nothing here knows a recognizer: a pause's endpoint follows what one
 * says of it through the graph's board (audio_hint.h), when it says it in time.
 */
#include <math.h>
#include <string.h>

#include "pipeline/audio.h"
#include "pipeline/audio_hint.h"
#include "pipeline/audio_vad.h"
#include "pipeline/graph_impl.h"
#include "sdk/base/alloc.h"

#define DC_POLE 0.995 /* the DC blocker's: its cutoff is (1 - DC_POLE) * 16000 / 2 pi, 13 Hz */

enum {
    FRAME = PIPE_AUDIO_RATE / 100, /* 10 ms */
    PRE_FRAMES = 30,               /* kept from before the start of speech */
    START_FRAMES = 3,              /* speech frames in a row that start an utterance */
    MAX_AVG = 8,                   /* widest moving average (48 kHz / 16 kHz = 3) */
    /* silent frames that go on with the utterance as they come (with the detector's lag,
     * 250 ms of a pause: the last word's end); the rest of a pause is held back */
    PAUSE_SENT = 10,
    /* An utterance that the endpoint ends with fewer speech frames than this was a clatter,
     * a knock or the noise at a stream's start (where the detector's average is short), not
     * a word: it is dropped. Short words said alone ("no") had 8 or more in noise at 6 dB,
     * and half such bursts fewer (bench/RESULTS.md#voice-bursts). */
    MIN_SPEECH_FRAMES = 8,
    /* A whole recording's request (pipe_speech_span) is the speaker's speech: frames within
     * SPAN_UNDER_DB of its loudest tenth, or SPAN_OVER_DB above its quietest. The detector's
     * own threshold, half way from the noise to the speech, takes the loudest words of the
     * people talking behind the speaker for speech (bench/RESULTS.md#voice-span). */
    SPAN_UNDER_DB = 5,
    SPAN_OVER_DB = 15,
    /* and the frames kept around it: the recognizer's own voice detector and first mean need
     * some of the room before the first word */
    SPAN_BEFORE = 50,
    SPAN_AFTER = 25,
    /* wait_hints: the longest a pause waits for the recognizer's word (one far behind, or a
     * graph without one, leaves the endpoint at silence_ms), in slices between which a graph
     * that stops is noticed */
    HINT_WAIT_MS = 3000,
    HINT_WAIT_SLICE_MS = 100,
};

struct pipe_seg {
    pipe_seg_params p;
    pipe_node *node;
    int port;
    char *user;
    pipe_hint_entry hint; /* on the graph's board: what the recognizer says of a pause */
    size_t pause_at;      /* the samples sent before the pause in progress */
    int waited;           /* wait_hints: this pause's hint was waited for */
    int shortest_ms;      /* the shortest of the three endpoints */
    /* the DC blocker's last input and output (16 kHz) */
    double dc_in, dc_out;
    /* rate conversion */
    double step, t; /* input samples per output sample; position of the next output */
    double prev;    /* the last filtered input sample */
    int avg_w, avg_n, avg_at;
    double avg[MAX_AVG];
    /* detection */
    pipe_vad vad;
    size_t frames; /* 10 ms frames of the stream so far */
    int16_t frame[FRAME];
    int n_frame;
    int16_t pre[PRE_FRAMES * FRAME]; /* ring of the frames before speech */
    int pre_frames, pre_at, speech_run;
    int in_speech, silence_run;
    int speech_frames; /* of the utterance in progress */
    size_t utt_samples;
    uint32_t utt;
    /* the pause being held back: it goes on if speech resumes, and is dropped if the
     * utterance ends there, so the recognizer does not hear the noise after the speech */
    int16_t *held;
    size_t n_held, held_cap; /* frames */
    /* the piece being filled */
    int16_t *piece;
    size_t n_piece, piece_samples, piece_cap;
};

static int or_default(int v, int def)
{
    return v ? v : def;
}

parley_status pipe_seg_open(const pipe_seg_params *p, pipe_node *node, int port, const char *user,
                            pipe_seg **out)
{
    parley_status st;
    *out = NULL;
    if ((st = pipe_check_user_id(user, strlen(user))) != PARLEY_OK)
        return st;
    pipe_seg_params q = *p;
    q.in_rate = or_default(q.in_rate, PIPE_AUDIO_RATE);
    q.silence_ms = or_default(q.silence_ms, 1000);
    q.complete_ms = or_default(q.complete_ms, 600);
    q.incomplete_ms = or_default(q.incomplete_ms, 2000);
    q.max_ms = or_default(q.max_ms, 15000);
    q.piece_ms = or_default(q.piece_ms, 100);
    q.threshold = or_default(q.threshold, PIPE_SEG_THRESHOLD);
    if (q.in_rate < PIPE_SEG_MIN_RATE || q.in_rate > PIPE_SEG_MAX_RATE || q.max_ms < 0 ||
        q.complete_ms < 0 || q.incomplete_ms < 0 || q.piece_ms < 10 || q.piece_ms > 1000 ||
        q.threshold < 0 || q.threshold > 32767)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "audio of user '%s': rate %d Hz (8000-48000), piece %d ms (10-1000), "
                       "endpoints %d / %d ms, maximum %d ms or threshold %d (1-32767) out of "
                       "range",
                       user, q.in_rate, q.piece_ms, q.complete_ms, q.incomplete_ms, q.max_ms,
                       q.threshold);
    pipe_seg *s = pl_calloc(1, sizeof *s);
    if (!s)
        return pl_nomem("an audio segmenter");
    s->p = q;
    pipe_vad_init(&s->vad, q.threshold);
    s->node = node;
    s->port = port;
    s->step = (double)q.in_rate / PIPE_AUDIO_RATE;
    s->avg_w = s->step > 1 ? (int)lround(s->step) : 1;
    s->avg_w = s->avg_w > MAX_AVG ? MAX_AVG : s->avg_w;
    s->piece_samples = (size_t)q.piece_ms * (PIPE_AUDIO_RATE / 1000);
    s->piece_cap = s->piece_samples + PRE_FRAMES * FRAME + FRAME;
    int longest = q.silence_ms > q.complete_ms ? q.silence_ms : q.complete_ms;
    longest = longest > q.incomplete_ms ? longest : q.incomplete_ms;
    s->shortest_ms = q.silence_ms < q.complete_ms ? q.silence_ms : q.complete_ms;
    s->shortest_ms = s->shortest_ms < q.incomplete_ms ? s->shortest_ms : q.incomplete_ms;
    s->held_cap = longest > 0 ? (size_t)longest / 10 : 100;
    s->user = pl_strdup(user);
    s->piece = pl_malloc(s->piece_cap * sizeof *s->piece);
    s->held = pl_malloc(s->held_cap * FRAME * sizeof *s->held);
    if (!s->user || !s->piece || !s->held) {
        pipe_seg_close(s);
        return pl_nomem("an audio segmenter");
    }
    s->hint.user = s->user;
    pipe_hint_board_add(pipe_node_graph(node)->hints, &s->hint);
    *out = s;
    return PARLEY_OK;
}

void pipe_seg_close(pipe_seg *s)
{
    if (!s)
        return;
    if (s->hint.user)
        pipe_hint_board_remove(pipe_node_graph(s->node)->hints, &s->hint);
    pl_free(s->user);
    pl_free(s->piece);
    pl_free(s->held);
    pl_free(s);
}

uint32_t pipe_seg_utterances(const pipe_seg *s)
{
    return s->utt;
}

size_t pipe_seg_samples(const pipe_seg *s)
{
    return s->utt_samples;
}

int pipe_seg_in_speech(const pipe_seg *s)
{
    return s->in_speech;
}

/* Sends the piece filled so far (pause: the speaker paused after it). */
static parley_status send_piece_at(pipe_seg *s, pipe_utt_end end, int pause)
{
    pipe_msg *m;
    parley_status st = pipe_msg_new_audio(pipe_node_graph(s->node), s->user, s->piece, s->n_piece,
                                          s->utt, end, &m);
    s->n_piece = 0;
    if (st != PARLEY_OK)
        return st;
    m->pause = pause;
    if (end != PIPE_UTT_MORE && end != PIPE_UTT_DROPPED && s->p.on_end)
        s->p.on_end(s->p.ctx, m);
    return pipe_node_emit(s->node, s->port, m);
}

static parley_status send_piece(pipe_seg *s, pipe_utt_end end)
{
    return send_piece_at(s, end, 0);
}

static parley_status end_utterance(pipe_seg *s, pipe_utt_end why)
{
    static const char *const whys[] = { "", "silence", "explicit", "maximum length", "dropped" };
    pl_log(PARLEY_LOG_DEBUG, "audio: user '%s': utterance %u ends at %.2f s (%s), %.2f s long",
           s->user, (unsigned)s->utt, (double)s->frames / 100, whys[why],
           (double)s->utt_samples / PIPE_AUDIO_RATE);
    s->in_speech = 0;
    s->speech_run = s->silence_run = 0;
    s->pre_frames = s->pre_at = 0;
    s->n_held = 0;
    return send_piece(s, why);
}

static void append(pipe_seg *s, const int16_t *x, size_t n)
{
    memcpy(s->piece + s->n_piece, x, n * sizeof *x);
    s->n_piece += n;
    s->utt_samples += n;
}

/* Appends a frame of the utterance, sending the piece when it is full. */
static parley_status go_on(pipe_seg *s, const int16_t *frame)
{
    append(s, frame, FRAME);
    return s->n_piece >= s->piece_samples ? send_piece(s, PIPE_UTT_MORE) : PARLEY_OK;
}

/* The pause held back goes on after all: speech resumed, or there is no room for more. */
static parley_status release_held(pipe_seg *s)
{
    parley_status st = PARLEY_OK;
    for (size_t i = 0; i < s->n_held && st == PARLEY_OK; i++)
        st = go_on(s, s->held + i * FRAME);
    s->n_held = 0;
    return st;
}

/* A frame of an utterance in progress. */
static parley_status in_utterance(pipe_seg *s, int speech)
{
    parley_status st = PARLEY_OK;
    s->silence_run = speech ? 0 : s->silence_run + 1;
    s->speech_frames += speech;
    if (speech || s->silence_run <= PAUSE_SENT) {
        if (speech)
            st = release_held(s);
        return st == PARLEY_OK ? go_on(s, s->frame) : st;
    }
    if (s->silence_run == PAUSE_SENT + 1) { /* the pause begins: what was said goes out */
        s->pause_at = s->utt_samples;
        s->waited = 0;
        st = send_piece_at(s, PIPE_UTT_MORE, 1);
    } else if (s->n_held == s->held_cap) {
        st = release_held(s);
    }
    memcpy(s->held + s->n_held++ * FRAME, s->frame, sizeof s->frame);
    return st;
}

/* The trailing silence that ends the utterance in progress, after what the recognizer said of
 * its pause (once it was sent). */
static int endpoint_ms(pipe_seg *s)
{
    if (s->silence_run <= PAUSE_SENT)
        return s->p.silence_ms;
    int h = pipe_hint_read(&s->hint, s->utt, s->pause_at);
    if (h < 0 && s->p.wait_hints && !s->waited &&
        (s->silence_run + PIPE_VAD_LAG_FRAMES) * 10 >= s->shortest_ms) {
        s->waited = 1;
        for (int ms = 0; h < 0 && ms < HINT_WAIT_MS && !pipe_node_stopping(s->node);
             ms += HINT_WAIT_SLICE_MS)
            h = pipe_hint_wait(pipe_node_graph(s->node)->hints, &s->hint, s->utt, s->pause_at,
                               HINT_WAIT_SLICE_MS);
    }
    switch (h) {
    case PIPE_END_COMPLETE: return s->p.complete_ms;
    case PIPE_END_INCOMPLETE: return s->p.incomplete_ms;
    default: return s->p.silence_ms;
    }
}

/* One whole 10 ms frame at 16 kHz. */
static parley_status on_frame(pipe_seg *s)
{
    parley_status st = PARLEY_OK;
    int speech = pipe_vad_frame(&s->vad, s->frame, FRAME);
    s->frames++;
    if (!s->in_speech) {
        memcpy(s->pre + s->pre_at * FRAME, s->frame, sizeof s->frame);
        s->pre_at = (s->pre_at + 1) % PRE_FRAMES;
        s->pre_frames += s->pre_frames < PRE_FRAMES;
        s->speech_run = speech ? s->speech_run + 1 : 0;
        if (s->speech_run < START_FRAMES)
            return PARLEY_OK;
        s->in_speech = 1;
        s->speech_frames = START_FRAMES;
        s->utt++;
        pl_log(PARLEY_LOG_DEBUG, "audio: user '%s': utterance %u starts at %.2f s", s->user,
               (unsigned)s->utt, (double)(s->frames - (size_t)s->pre_frames) / 100);
        s->utt_samples = 0;
        pipe_hint_clear(&s->hint);
        s->n_piece = 0;
        for (int i = 0; i < s->pre_frames; i++) {
            int at = (s->pre_at - s->pre_frames + i + PRE_FRAMES) % PRE_FRAMES;
            append(s, s->pre + at * FRAME, FRAME);
        }
    } else if ((st = in_utterance(s, speech)) != PARLEY_OK) {
        return st;
    }
    /* the detector's first silent frame comes PIPE_VAD_LAG_FRAMES into the silence */
    if (s->p.silence_ms > 0 && s->silence_run > 0 &&
        (s->silence_run + PIPE_VAD_LAG_FRAMES) * 10 >= endpoint_ms(s))
        return end_utterance(s, s->speech_frames < MIN_SPEECH_FRAMES ? PIPE_UTT_DROPPED
                                                                     : PIPE_UTT_SILENCE);
    if (s->utt_samples >= (size_t)s->p.max_ms * (PIPE_AUDIO_RATE / 1000))
        return end_utterance(s, PIPE_UTT_MAX);
    return s->n_piece >= s->piece_samples ? send_piece(s, PIPE_UTT_MORE) : PARLEY_OK;
}

/* One sample at 16 kHz, its DC taken out first: a microphone's offset (some sound cards
 * add thousands) would stand in every frame's level as steady noise, and speech over it
 * would never rise half way from that floor. A one-pole high-pass at about 13 Hz leaves
 * the rumble of a room to the detector. */
static parley_status put(pipe_seg *s, double v)
{
    double y = v - s->dc_in + DC_POLE * s->dc_out;
    s->dc_in = v;
    s->dc_out = v = y;
    s->frame[s->n_frame++] = (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : lrint(v));
    if (s->n_frame < FRAME)
        return PARLEY_OK;
    s->n_frame = 0;
    return on_frame(s);
}

pipe_seg_params pipe_seg_params_of(const pipe_node *node)
{
    return (pipe_seg_params){
        .silence_ms = (int)pipe_node_param_int(node, "silence_ms"),
        .complete_ms = (int)pipe_node_param_int(node, "complete_ms"),
        .incomplete_ms = (int)pipe_node_param_int(node, "incomplete_ms"),
        .max_ms = (int)pipe_node_param_int(node, "max_ms"),
        .threshold = (int)pipe_node_param_int(node, "threshold"),
    };
}

parley_status pipe_seg_feed(pipe_seg *s, const int16_t *pcm, size_t n)
{
    parley_status st = PARLEY_OK;
    for (size_t i = 0; i < n && st == PARLEY_OK; i++) {
        if (s->step == 1) {
            st = put(s, pcm[i]);
            continue;
        }
        /* moving average of the last avg_w inputs, then linear interpolation */
        s->avg[s->avg_at] = pcm[i];
        s->avg_at = (s->avg_at + 1) % s->avg_w;
        s->avg_n += s->avg_n < s->avg_w;
        double cur = 0;
        for (int k = 0; k < s->avg_n; k++)
            cur += s->avg[k];
        cur /= s->avg_n;
        while (s->t <= 1 && st == PARLEY_OK) {
            st = put(s, s->prev + (cur - s->prev) * s->t);
            s->t += s->step;
        }
        s->t -= 1;
        s->prev = cur;
    }
    return st;
}

parley_status pipe_seg_end(pipe_seg *s, int *sent)
{
    *sent = s->in_speech;
    if (!s->in_speech) {
        s->n_frame = 0;
        s->speech_run = 0;
        return PARLEY_OK;
    }
    append(s, s->frame, (size_t)s->n_frame);
    s->n_frame = 0;
    return end_utterance(s, PIPE_UTT_EXPLICIT);
}

int pipe_speech_span(const int16_t *pcm, size_t n, int threshold, size_t *from, size_t *to)
{
    pipe_vad v;
    uint32_t hist[PIPE_VAD_BINS] = { 0 };
    size_t frames = n / FRAME, first = 0, last = 0;
    int run = 0, found = 0;
    pipe_vad_init(&v, or_default(threshold, PIPE_SEG_THRESHOLD));
    for (size_t f = 0; f < frames; f++) {
        pipe_vad_frame(&v, pcm + f * FRAME, FRAME);
        hist[pipe_vad_bin(pipe_vad_level(&v))]++;
    }
    float floor = pipe_vad_percentile(hist, frames, 0.10),
          loud = pipe_vad_percentile(hist, frames, 0.90);
    pipe_vad_rewind(&v);
    for (size_t f = 0; f < frames; f++) {
        int speech = pipe_vad_frame(&v, pcm + f * FRAME, FRAME);
        float level = pipe_vad_level(&v);
        speech = speech && (level >= loud - SPAN_UNDER_DB || level >= floor + SPAN_OVER_DB);
        run = speech ? run + 1 : 0;
        if (!found && run == START_FRAMES) {
            found = 1;
            first = f + 1 > SPAN_BEFORE ? f + 1 - SPAN_BEFORE : 0;
        }
        last = found && speech ? f : last;
    }
    if (!found)
        return 0;
    *from = first * FRAME;
    *to = (last + 1 + SPAN_AFTER) * FRAME < n ? (last + 1 + SPAN_AFTER) * FRAME : n;
    return 1;
}

parley_status pipe_seg_drop(pipe_seg *s)
{
    if (!s->in_speech)
        return PARLEY_OK;
    s->n_piece = 0;
    return end_utterance(s, PIPE_UTT_DROPPED);
}
