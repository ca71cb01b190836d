/* audio_out.c — the `audio.out` node: a sink that plays or writes each reply's speech
 * through a GStreamer sink description (`autoaudiosink` on a kiosk, `wavenc ! filesink
 * location=reply.wav` in tests).
 *
 * A reply without speech (no tts.* before it) plays nothing. Each reply plays to its end
 * before the next (one worker): a file sink holds the last reply. With its `reply` output
 * linked (to text.stdout, say) the reply goes on there after playing, else its turn ends
 * here. A failure to play is a node error on the bus; the turn still goes on. It
 * synthesizes nothing: tts.espeak does.
 */
#include "pipeline/node.h"
#include "services/gst_audio.h"

static const pipe_port_spec ports[] = {
    { "reply", PIPE_IN, PIPE_T_REPLY, 1, "replies (with their speech, after tts.*)" },
    { "out", PIPE_OUT, PIPE_T_REPLY, 0, "the same replies once played (optional)" },
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
    return pipe_node_emit(node, 1, msg); /* unlinked: the turn ends here */
}

const pipe_kind svc_kind_audio_out = {
    .name = "audio.out",
    .doc = "plays or writes each reply's speech through a GStreamer sink description",
    .ports = ports,
    .params = params,
    .create = out_create,
    .process = out_process,
};
