/* tts.c — the ports and the turn handling every speech-output kind shares (see tts.h); the
 * synthesis itself is each kind's (tts_espeak.c, tts_flite.c).
 */
#include "services/tts.h"

const pipe_port_spec svc_tts_ports[] = {
    { "reply", PIPE_IN, PIPE_T_REPLY, 1, "replies to speak" },
    { "out", PIPE_OUT, PIPE_T_REPLY, 0, "the same replies, with their speech" },
    { NULL, 0, 0, 0, NULL },
};

parley_status svc_tts_process(pipe_node *node, const void *state, pipe_msg *msg,
                              svc_tts_speak_fn speak)
{
    parley_status st;
    if (msg->reply && *msg->reply && (st = speak(state, msg)) != PARLEY_OK) {
        pipe_node_fail_turn(node, msg, st);
        return PARLEY_OK;
    }
    return pipe_node_emit(node, 1, msg); /* svc_tts_ports[1]: out */
}
