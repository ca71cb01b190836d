/* tts.h — what the speech-output kinds (tts.espeak, tts.flite) share: their ports, and the
 * handling of a turn around one synthesis.
 *
 * A kind supplies only its synthesis: a function that attaches the speech of msg->reply to
 * msg (pipe_msg_set_pcm) or fails with a status and pl_fail detail. svc_tts_process calls it
 * for a reply that has text, passes an empty reply on without speech, and fails the turn
 * when the synthesis fails. Failed turns never reach it (the engine passes them through).
 */
#ifndef SERVICES_TTS_H
#define SERVICES_TTS_H

#include "pipeline/node.h"

/* in `reply` (port 0), out `out` (port 1): the same replies, with their speech */
extern const pipe_port_spec svc_tts_ports[];

typedef parley_status (*svc_tts_speak_fn)(const void *state, pipe_msg *msg);

/* The body of a tts kind's process(): owns msg, always returns PARLEY_OK (a failed synthesis
 * fails the turn, which goes on to the sink). */
parley_status svc_tts_process(pipe_node *node, const void *state, pipe_msg *msg,
                              svc_tts_speak_fn speak);

#endif
