/* audio_out.c — the `audio.out` node: a sink that plays or writes each reply's speech
 * through a GStreamer sink description (`autoaudiosink` on a kiosk, `wavenc ! filesink
 * location=reply.wav` in tests).
 *
 * A reply without speech (no tts.* before it) only ends its turn. Each reply plays to its
 * end before the next (one worker): a file sink holds the last reply. Failed turns end here
 * too, with their error on the bus. It synthesizes nothing: tts.espeak does.
 */
#include "pipeline/node.h"
#include "services/gst_audio.h"

static const pipe_port_spec ports[] = {
    { "reply", PIPE_IN, PIPE_T_REPLY, 1, "replies (with their speech, after tts.*)" },
    { NULL, 0, 0, 0, NULL },
};

static const pipe_param_spec params[] = {
    { "sink", PIPE_P_STRING, "autoaudiosink", 0, 0,
      "a GStreamer sink description; parley prepends the conversion from the speech's format",
      NULL },
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

static parley_status out_create(pipe_node *node, void **out)
{
    *out = (void *)pipe_node_param_str(node, "sink");
    return PARLEY_OK;
}

static parley_status out_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    parley_status st = PARLEY_OK;
    (void)port;
    if (msg->status == PARLEY_OK && msg->n_pcm)
        st = svc_gst_sink_play(state, msg->pcm, msg->n_pcm, msg->rate);
    if (st != PARLEY_OK)
        pipe_node_error(node, st);
    pipe_node_turn_done(node, msg);
    return PARLEY_OK;
}

const pipe_kind svc_kind_audio_out = {
    .name = "audio.out",
    .doc = "plays or writes each reply's speech through a GStreamer sink description",
    .ports = ports,
    .params = params,
    .create = out_create,
    .process = out_process,
};
