/* audio_gst.c — the `audio.gst` node: speech of one user from any GStreamer source
 * description (a file, a microphone, an RTSP camera), cut into utterances.
 *
 * The description is started when the graph is created, so a missing element, a bad
 * description or a missing file is an error at start-up naming it. run() pulls 16 kHz
 * samples (services/gst_audio.c) into the segmenter of pipeline/audio.h, which sends the
 * utterances on; the end of the stream ends the utterance in progress. It recognizes
 * nothing: link it to an asr.* node.
 */
#include "pipeline/audio.h"
#include "sdk/base/alloc.h"
#include "services/gst_audio.h"

typedef struct gst_node {
    svc_gst_src *src;
    pipe_seg *seg;
    volatile int stop;
} gst_node;

static const pipe_port_spec ports[] = {
    { "audio", PIPE_OUT, PIPE_T_AUDIO, 0, "the speech, one utterance after another" },
    { NULL, 0, 0, 0, NULL },
};

static const pipe_param_spec params[] = {
    { "source", PIPE_P_STRING, NULL, 0, 0,
      "a GStreamer description ('filesrc location=a.wav ! decodebin', 'autoaudiosrc'); parley "
      "appends the conversion to 16 kHz mono",
      NULL },
    { "user", PIPE_P_STRING, "default", 0, 0, "the user who speaks", NULL },
    { "sync", PIPE_P_BOOL, "false", 0, 0, "pace a file in real time (live sources always are)",
      NULL },
    PIPE_SEG_PARAM_SPECS,
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

static void gst_destroy(void *state)
{
    gst_node *s = state;
    if (!s)
        return;
    svc_gst_src_close(s->src);
    pipe_seg_close(s->seg);
    pl_free(s);
}

static parley_status gst_create(pipe_node *node, void **out)
{
    parley_status st;
    gst_node *s = pl_calloc(1, sizeof *s);
    if (!s)
        return pl_nomem("node '%s'", pipe_node_name(node));
    pipe_seg_params p = pipe_seg_params_of(node);
    p.wait_hints = 1; /* a file is read faster than real time */
    if ((st = pipe_seg_open(&p, node, 0, pipe_node_param_str(node, "user"), &s->seg)) !=
                PARLEY_OK ||
        (st = svc_gst_src_open(pipe_node_param_str(node, "source"),
                               pipe_node_param_bool(node, "sync"), &s->src)) != PARLEY_OK) {
        gst_destroy(s);
        return pl_wrap(st, "node '%s'", pipe_node_name(node));
    }
    *out = s;
    return PARLEY_OK;
}

static parley_status gst_run(pipe_node *node, void *state)
{
    gst_node *s = state;
    parley_status st = PARLEY_OK;
    int eos = 0, sent;
    while (!eos && !s->stop && !pipe_node_stopping(node) && st == PARLEY_OK) {
        const int16_t *pcm;
        size_t n;
        if ((st = svc_gst_src_pull(s->src, &pcm, &n, &eos)) == PARLEY_OK && n)
            st = pipe_seg_feed(s->seg, pcm, n);
    }
    if (st == PARLEY_OK)
        st = pipe_seg_end(s->seg, &sent);
    if (st != PARLEY_OK)
        return pl_wrap(st, "node '%s'", pipe_node_name(node));
    return PARLEY_OK;
}

static void gst_stop(void *state)
{
    ((gst_node *)state)->stop = 1;
}

const pipe_kind svc_kind_audio_gst = {
    .name = "audio.gst",
    .doc = "speech of one user from a GStreamer source description, cut into utterances",
    .ports = ports,
    .params = params,
    .create = gst_create,
    .run = gst_run,
    .stop = gst_stop,
    .destroy = gst_destroy,
};
