/* tts_espeak.c — the `tts.espeak` node: each reply's text spoken by espeak-ng, attached to
 * the reply as 16-bit mono samples (msg->pcm) for ws.server or audio.out.
 *
 * espeak-ng keeps global state, so every synthesis runs under the process's espeak lock
 * (services/espeak.h) and sets its node's voice, rate and callback first; the node has one
 * worker, and a websocket loop never waits on it (replies reach the
 * server's queue after this node). Failed turns pass through untouched. It plays nothing.
 */
#include <string.h>

#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "services/espeak.h"
#include "services/tts.h"

#include <espeak-ng/speak_lib.h>

typedef struct tts_node {
    const char *voice;
    int wpm;
} tts_node;

/* The samples being made for one reply. */
typedef struct speech {
    int16_t *pcm;
    size_t n, cap;
    int failed;
} speech;

static const pipe_param_spec params[] = {
    { "voice", PIPE_P_STRING, "en-us", 0, 0, "an espeak-ng voice (espeak-ng --voices)", NULL },
    { "rate", PIPE_P_INT, "175", 80, 450, "words per minute", NULL },
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

static int on_samples(short *wav, int n, espeak_EVENT *ev)
{
    speech *sp = ev ? ev->user_data : NULL;
    if (!sp || !wav || n <= 0 || sp->failed)
        return 0;
    if (sp->n + (size_t)n > sp->cap) {
        size_t cap = (sp->n + (size_t)n) * 2;
        int16_t *p = pl_realloc(sp->pcm, cap * sizeof *p);
        if (!p) {
            sp->failed = 1;
            return 1; /* stop */
        }
        sp->pcm = p;
        sp->cap = cap;
    }
    memcpy(sp->pcm + sp->n, wav, (size_t)n * sizeof *wav);
    sp->n += (size_t)n;
    return 0;
}

static parley_status tts_create(pipe_node *node, void **out)
{
    parley_status st;
    tts_node *s = pl_calloc(1, sizeof *s);
    if (!s)
        return pl_nomem("node '%s'", pipe_node_name(node));
    s->voice = pipe_node_param_str(node, "voice");
    s->wpm = (int)pipe_node_param_int(node, "rate");
    if ((st = svc_espeak_lock()) == PARLEY_OK) {
        if (espeak_SetVoiceByName(s->voice) != EE_OK)
            st = pl_fail(PARLEY_ERR_CONFIG,
                         "tts.espeak: no voice '%s' (espeak-ng --voices lists them)", s->voice);
        svc_espeak_unlock();
    }
    if (st != PARLEY_OK) {
        pl_free(s);
        return pl_wrap(st, "node '%s'", pipe_node_name(node));
    }
    *out = s;
    return PARLEY_OK;
}

static parley_status speak(const void *state, pipe_msg *msg)
{
    const tts_node *s = state;
    speech sp = { 0 };
    parley_status st;
    if ((st = svc_espeak_lock()) != PARLEY_OK)
        return pl_wrap(st, "tts.espeak");
    espeak_SetSynthCallback(on_samples);
    espeak_SetVoiceByName(s->voice);
    espeak_SetParameter(espeakRATE, s->wpm, 0);
    if (espeak_Synth(msg->reply, strlen(msg->reply) + 1, 0, POS_CHARACTER, 0, espeakCHARS_UTF8,
                     NULL, &sp) != EE_OK)
        st = pl_fail(PARLEY_ERR_INTERNAL, "tts.espeak: synthesis failed");
    int rate = svc_espeak_rate();
    svc_espeak_unlock();
    if (st == PARLEY_OK && sp.failed)
        st = pl_nomem("the speech of a reply");
    if (st == PARLEY_OK)
        st = pipe_msg_set_pcm(msg, sp.pcm, sp.n, rate);
    pl_free(sp.pcm);
    return st;
}

static parley_status tts_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    (void)port;
    return svc_tts_process(node, state, msg, speak);
}

static void tts_destroy(void *state)
{
    pl_free(state);
}

const pipe_kind svc_kind_tts_espeak = {
    .name = "tts.espeak",
    .doc = "speaks each reply with espeak-ng (voice, rate) for ws.server or audio.out",
    .ports = svc_tts_ports,
    .params = params,
    .workers = 1,
    .create = tts_create,
    .process = tts_process,
    .destroy = tts_destroy,
};
