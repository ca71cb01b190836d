/* tts_flite.c — the `tts.flite` node: each reply's text spoken by flite (CMU's small
 * synthesizer, English only, a more natural voice than espeak-ng's for a kiosk), attached to
 * the reply as 16-bit mono samples (msg->pcm) at the voice's own rate, for ws.server or
 * audio.out. It plays nothing.
 *
 * Threading: flite reports a failure by longjmp to the one process-wide cst_errjmp (or, when
 * none is set, by exit()), and a voice's features (duration_stretch among them) belong to
 * the voice, which every node speaking with it shares; so everything flite does in the
 * process runs under one lock, with cst_errjmp set for the call. A voice is registered once,
 * by the first node that names it, and kept for the life of the process. The node has one
 * worker; a websocket loop never waits on it (replies reach the server's queue after this
 * node). Failed turns pass through untouched (the engine's rule, tts.h).
 */
#include <pthread.h>
#include <setjmp.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "services/tts.h"

#include <flite/flite.h>

/* The voices' libraries (libflite_cmu_us_*) come without headers. */
cst_voice *register_cmu_us_slt(const char *voxdir);
cst_voice *register_cmu_us_rms(const char *voxdir);
cst_voice *register_cmu_us_awb(const char *voxdir);
cst_voice *register_cmu_us_kal(const char *voxdir);
cst_voice *register_cmu_us_kal16(const char *voxdir);

typedef struct voice_entry {
    const char *name;
    cst_voice *(*reg)(const char *voxdir);
    cst_voice *voice; /* registered, under flite_mu; NULL before */
} voice_entry;

static pthread_mutex_t flite_mu = PTHREAD_MUTEX_INITIALIZER;
static int flite_started; /* under flite_mu: flite_init() has run */
static voice_entry voices[] = {
    { "slt", register_cmu_us_slt, NULL },     { "rms", register_cmu_us_rms, NULL },
    { "awb", register_cmu_us_awb, NULL },     { "kal", register_cmu_us_kal, NULL },
    { "kal16", register_cmu_us_kal16, NULL },
};

typedef struct tts_node {
    cst_voice *voice;
    float stretch;
} tts_node;

static const pipe_param_spec params[] = {
    { "voice", PIPE_P_STRING, "slt", 0, 0,
      "slt (female), rms (male), awb (male, Scottish), kal (male, 8 kHz), kal16",
      "slt|rms|awb|kal|kal16" },
    { "stretch", PIPE_P_DOUBLE, "1", 0.5, 2,
      "duration stretch: 1 the voice's own pace, 2 half as fast", NULL },
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

/* Under flite_mu: starts flite once and registers voice e once; 0 when flite failed (caught
 * through cst_errjmp instead of ending the process). */
static int voice_ready(voice_entry *e)
{
    jmp_buf env;
    if (e->voice)
        return 1;
    cst_errjmp = &env;
    if (!setjmp(env)) {
        if (!flite_started) {
            flite_init();
            flite_started = 1;
        }
        e->voice = e->reg(NULL);
    }
    cst_errjmp = NULL;
    return e->voice != NULL;
}

static parley_status tts_create(pipe_node *node, void **out)
{
    const char *name = pipe_node_param_str(node, "voice");
    voice_entry *e = NULL;
    for (size_t i = 0; i < sizeof voices / sizeof *voices && !e; i++)
        if (!strcmp(voices[i].name, name))
            e = &voices[i];
    if (!e) /* the loader refuses what params' choices lack: this table is out of step */
        return pl_fail(PARLEY_ERR_INTERNAL, "node '%s': tts.flite: no voice '%s'",
                       pipe_node_name(node), name);
    tts_node *s = pl_calloc(1, sizeof *s);
    if (!s)
        return pl_nomem("node '%s'", pipe_node_name(node));
    s->stretch = (float)pipe_node_param_double(node, "stretch");
    pthread_mutex_lock(&flite_mu);
    if (voice_ready(e))
        s->voice = e->voice;
    pthread_mutex_unlock(&flite_mu);
    if (!s->voice) {
        pl_free(s);
        return pl_fail(PARLEY_ERR_INTERNAL, "node '%s': tts.flite: flite failed to load voice '%s'",
                       pipe_node_name(node), name);
    }
    *out = s;
    return PARLEY_OK;
}

/* Under flite_mu: the speech of text, or NULL when flite failed (caught through cst_errjmp;
 * what it had allocated for the text is lost then: it keeps no record of it). */
static cst_wave *synthesize(const tts_node *s, const char *text)
{
    jmp_buf env;
    cst_wave *volatile w = NULL;
    cst_errjmp = &env;
    if (!setjmp(env)) {
        flite_feat_set_float(s->voice->features, "duration_stretch", s->stretch);
        w = flite_text_to_wave(text, s->voice);
    }
    cst_errjmp = NULL;
    return w;
}

static parley_status speak(const void *state, pipe_msg *msg)
{
    parley_status st;
    pthread_mutex_lock(&flite_mu);
    cst_wave *w = synthesize(state, msg->reply);
    pthread_mutex_unlock(&flite_mu);
    if (!w || w->num_channels != 1)
        st = pl_fail(PARLEY_ERR_INTERNAL, "tts.flite: synthesis failed");
    else
        st = pipe_msg_set_pcm(msg, w->samples, (size_t)w->num_samples, w->sample_rate);
    if (w)
        delete_wave(w);
    return st;
}

static parley_status tts_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    (void)port;
    return svc_tts_process(node, state, msg, speak);
}

static void tts_destroy(void *state)
{
    pl_free(state); /* the voice stays registered for the next node that names it */
}

const pipe_kind svc_kind_tts_flite = {
    .name = "tts.flite",
    .doc = "speaks each reply with flite (voice, stretch; English) for ws.server or audio.out",
    .ports = svc_tts_ports,
    .params = params,
    .workers = 1,
    .create = tts_create,
    .process = tts_process,
    .destroy = tts_destroy,
};
