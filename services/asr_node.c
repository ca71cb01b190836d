/* asr_node.c — what every ASR node kind does with its messages (services/asr.h): one engine
 * stream per user's utterance in progress, partial hypotheses out of the `partial` port, the
 * engine's word on each pause back to the source (pipe_seg_hint), the last piece turned into
 * the utterance's text turn, marked rejected when the engine's confidence in it is under the
 * node's threshold.
 *
 * The table of streams is a small array under a lock (a node serves as many streams as
 * users speaking at once); the engine calls run outside the lock, since a user's pieces
 * reach one worker in order. It recognizes nothing itself: engines do.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "pipeline/audio.h"
#include "sdk/base/alloc.h"
#include "sdk/base/sync.h"
#include "services/asr.h"
#include "services/gst_audio.h"

const pipe_port_spec svc_asr_ports[] = {
    { "in", PIPE_IN, PIPE_T_AUDIO | PIPE_T_TEXT, 1,
      "speech (pieces of utterances), or typed text that passes through" },
    { "text", PIPE_OUT, PIPE_T_TEXT, 0, "one turn per utterance: its transcript" },
    { "partial", PIPE_OUT, PIPE_T_TEXT, 0,
      "hypotheses while an utterance goes on, then its final transcript (utt_end set) as soon "
      "as it is known (not turns: for display; t_in is when the source made the audio)" },
    { NULL, 0, 0, 0, NULL },
};

typedef struct asr_stream {
    char *user;
    uint32_t utt;
    size_t heard; /* samples fed */
    void *stream;
    int failed; /* an engine call failed: the utterance's last piece fails */
    int64_t last_partial;
    char *partial; /* the last partial sent */
} asr_stream;

struct svc_asr {
    const svc_asr_engine *vt;
    void *engine;
    int64_t partial_ns;
    float reject_below; /* 0: no utterance is rejected */
    pthread_mutex_t mu;
    asr_stream *s;
    size_t n, cap;
};

parley_status svc_asr_new(const svc_asr_engine *vt, void *engine, long partial_ms,
                          float reject_below, svc_asr **out)
{
    parley_status st;
    svc_asr *a = pl_calloc(1, sizeof *a);
    if (!a)
        return pl_nomem("the ASR streams of %s", vt->name);
    if ((st = pl_mutex_init(&a->mu, vt->name)) != PARLEY_OK) {
        pl_free(a);
        return st;
    }
    a->vt = vt;
    a->engine = engine;
    a->partial_ns = (int64_t)partial_ms * 1000000;
    a->reject_below = reject_below;
    *out = a;
    return PARLEY_OK;
}

static void stream_free(const svc_asr *a, asr_stream *s)
{
    if (s->stream)
        a->vt->close(s->stream);
    pl_free(s->user);
    pl_free(s->partial);
}

void svc_asr_free(svc_asr *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        stream_free(a, &a->s[i]);
    pl_free(a->s);
    pthread_mutex_destroy(&a->mu);
    pl_free(a);
}

/* Takes the user's entry out of the table into *out (zeroed when there is none). */
static void take(svc_asr *a, const char *user, asr_stream *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&a->mu);
    for (size_t i = 0; i < a->n; i++)
        if (!strcmp(a->s[i].user, user)) {
            *out = a->s[i];
            a->s[i] = a->s[--a->n];
            break;
        }
    pthread_mutex_unlock(&a->mu);
}

static parley_status put_back(svc_asr *a, asr_stream *s)
{
    parley_status st = PARLEY_OK;
    pthread_mutex_lock(&a->mu);
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 16;
        asr_stream *t = pl_realloc(a->s, cap * sizeof *t);
        if (t) {
            a->s = t;
            a->cap = cap;
        } else {
            st = pl_nomem("the ASR stream of user '%s'", s->user);
        }
    }
    if (st == PARLEY_OK)
        a->s[a->n++] = *s;
    pthread_mutex_unlock(&a->mu);
    if (st != PARLEY_OK)
        stream_free(a, s);
    return st;
}

/* Sends text for user's utterance utt out of the partial port (end: 0 for a hypothesis, or
 * why the utterance ended, for its final transcript), stamped with t_in, when the source
 * made the audio it transcribes. Best effort: it is for display. */
static void send_display(pipe_node *node, const char *user, const char *text, uint32_t utt,
                         pipe_utt_end end, int64_t t_in)
{
    pipe_msg *m = NULL;
    if (pipe_msg_new(pipe_node_graph(node), user, text, &m) == PARLEY_OK) {
        m->t_in = t_in;
        m->utt = utt;
        m->utt_end = end;
        pipe_node_emit(node, SVC_ASR_PARTIAL, m);
    }
}

/* Sends the hypothesis so far when it changed and partial_ns has passed since the last one
 * sent (the first as soon as there is one); `piece` is the audio just fed. */
static void send_partial(svc_asr *a, pipe_node *node, asr_stream *s, const pipe_msg *piece)
{
    int64_t now = pipe_now_ns();
    char *hyp = NULL;
    if (!a->vt->partial || !pipe_node_out_links(node, SVC_ASR_PARTIAL) ||
        now - s->last_partial < a->partial_ns)
        return;
    if (a->vt->partial(s->stream, &hyp) != PARLEY_OK || !hyp[0] ||
        (s->partial && !strcmp(s->partial, hyp))) {
        pl_free(hyp); /* nothing new: the next piece asks again */
        return;
    }
    s->last_partial = now;
    send_display(node, s->user, hyp, s->utt, PIPE_UTT_MORE, piece->t_in);
    pl_free(s->partial);
    s->partial = hyp;
}

/* The utterance's transcript into msg, which becomes its text turn. An utterance of no words
 * fails its turn; where its source cut it by itself (at a pause, or at its longest: a cough,
 * a door, the room's noise), the turn is marked to be answered by nothing
 * (pipe_msg.no_answer): a kiosk does not answer what nobody said. Where the source was told
 * to end it (a file's end, a client's eof), whoever asked gets the error. */
static parley_status finish(svc_asr *a, asr_stream *s, pipe_msg *msg)
{
    parley_status st;
    char *text = NULL;
    if (s->failed)
        return pl_fail(PARLEY_ERR_INTERNAL, "%s: utterance %u of user '%s' failed earlier",
                       a->vt->name, (unsigned)msg->utt, msg->user_id);
    if ((st = a->vt->end(s->stream)) != PARLEY_OK ||
        (st = a->vt->final(s->stream, &text)) != PARLEY_OK)
        return st;
    if (!text[0]) {
        pl_free(text);
        msg->no_answer = msg->utt_end != PIPE_UTT_EXPLICIT;
        return pl_fail(PARLEY_ERR_NOT_FOUND, "%s: no words recognized in utterance %u", a->vt->name,
                       (unsigned)msg->utt);
    }
    float conf = a->vt->confidence ? a->vt->confidence(s->stream) : NAN;
    msg->asr_rejected = conf < a->reject_below; /* NAN is not */
    pl_log(PARLEY_LOG_DEBUG,
           "%s: utterance %u of user '%s' %s (confidence %.1f, reject_below %.1f): \"%s\"",
           a->vt->name, (unsigned)msg->utt, msg->user_id, msg->asr_rejected ? "rejected" : "heard",
           conf, a->reject_below, text);
    pl_free(msg->text);
    msg->text = text;
    msg->type = PIPE_T_TEXT;
    pipe_msg_set_pcm(msg, NULL, 0, 0);
    return PARLEY_OK;
}

parley_status svc_asr_process(svc_asr *a, pipe_node *node, pipe_msg *msg)
{
    parley_status st = PARLEY_OK;
    if (msg->type != PIPE_T_AUDIO)
        return pipe_node_emit(node, SVC_ASR_TEXT, msg);
    asr_stream s;
    take(a, msg->user_id, &s);
    if (s.user && s.utt != msg->utt) { /* an utterance that never ended: its source left */
        stream_free(a, &s);
        memset(&s, 0, sizeof s);
    }
    if (msg->utt_end == PIPE_UTT_DROPPED) {
        if (s.partial) /* a display showing its hypothesis learns that none will follow */
            send_display(node, msg->user_id, "", msg->utt, PIPE_UTT_DROPPED, msg->t_in);
        stream_free(a, &s);
        pipe_msg_free(msg);
        return PARLEY_OK;
    }
    if (!s.user) {
        s.utt = msg->utt;
        if (!(s.user = pl_strdup(msg->user_id)))
            st = pl_nomem("the ASR stream of user '%s'", msg->user_id);
        else if ((st = a->vt->open(a->engine, s.user, &s.stream)) != PARLEY_OK)
            s.failed = 1;
    }
    if (st == PARLEY_OK && !s.failed && msg->n_pcm &&
        a->vt->feed(s.stream, msg->pcm, msg->n_pcm) != PARLEY_OK)
        s.failed = 1;
    s.heard += msg->n_pcm;
    if (st == PARLEY_OK && msg->pause) { /* the source may be waiting for a word: always one */
        pipe_end_hint hint = PIPE_END_UNKNOWN;
        if (!s.failed && a->vt->end_hint && a->vt->end_hint(s.stream, &hint) != PARLEY_OK)
            s.failed = 1;
        pipe_seg_hint(pipe_node_graph(node), s.user, s.utt, s.heard, hint);
    }
    if (st != PARLEY_OK || msg->utt_end != PIPE_UTT_MORE) {
        if (st == PARLEY_OK)
            st = finish(a, &s, msg);
        if (st != PARLEY_OK && msg->no_answer && s.partial) /* its display learns it */
            send_display(node, msg->user_id, "", msg->utt, PIPE_UTT_DROPPED, msg->t_in);
        stream_free(a, &s);
        if (st != PARLEY_OK) {
            pipe_node_fail_turn(node, msg, st);
            return PARLEY_OK;
        }
        if (pipe_node_out_links(node, SVC_ASR_PARTIAL))
            send_display(node, msg->user_id, msg->text, msg->utt, msg->utt_end, msg->t_in);
        return pipe_node_emit(node, SVC_ASR_TEXT, msg);
    }
    if (!s.failed)
        send_partial(a, node, &s, msg);
    pipe_msg_free(msg);
    return put_back(a, &s);
}

parley_status svc_asr_transcribe_file(const svc_asr_engine *vt, void *engine, const char *path,
                                      char **text, float *confidence)
{
    parley_status st;
    int16_t *pcm = NULL;
    size_t n = 0;
    void *s = NULL;
    *text = NULL;
    if ((st = svc_gst_read_file(path, &pcm, &n)) != PARLEY_OK)
        return st;
    /* the noise before and after the request is not heard (a file with no speech the
     * detector finds, one too quiet for it, is heard whole) */
    size_t from = 0, to = n;
    if (!pipe_speech_span(pcm, n, 0, &from, &to))
        from = 0, to = n;
    if ((st = vt->open(engine, NULL, &s)) == PARLEY_OK) {
        for (size_t at = from; at < to && st == PARLEY_OK; at += PIPE_AUDIO_RATE / 10)
            st = vt->feed(s, pcm + at,
                          to - at < PIPE_AUDIO_RATE / 10 ? to - at : PIPE_AUDIO_RATE / 10);
        if (st == PARLEY_OK && (st = vt->end(s)) == PARLEY_OK)
            st = vt->final(s, text);
        if (st == PARLEY_OK && confidence)
            *confidence = vt->confidence ? vt->confidence(s) : NAN;
        vt->close(s);
    }
    pl_free(pcm);
    return st;
}
