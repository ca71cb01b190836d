/* ws_voice.h — the voice side of ws.server, without the network: one connection's binary
 * PCM frames cut into utterances, and the JSON of the voice messages sent back.
 *
 * A connection's frames arrive as fragments of any size: ws_voice_feed carries an odd
 * trailing byte to the next fragment, converts the client's rate to 16 kHz and sends the
 * utterances on through pipeline/audio.h (from the server's `audio` output; the emit may
 * wait on a full queue: backpressure). The messages back (docs/websocket.md, "From
 * the server"): {"type":"partial"|"final","text","utterance"} from the recognizer's
 * `partial` port, and {"type":"audio","utterance","sample_rate","samples"} announcing the
 * binary frame of a reply's speech. The server (ws_server.c) does the I/O and locking; one
 * ws_voice is used by one thread at a time.
 */
#ifndef SERVICES_WS_VOICE_H
#define SERVICES_WS_VOICE_H

#include <stddef.h>

#include "pipeline/audio.h"

typedef struct ws_voice ws_voice;

/* A connection's audio at `rate` Hz for `user`, sent out of node's output `port`; params
 * (endpoint, max length, on_end) as pipe_seg's, with in_rate replaced by rate. */
parley_status ws_voice_open(pipe_node *node, int port, const char *user, int rate,
                            const pipe_seg_params *p, ws_voice **out);
/* Forgets the utterance in progress (the client went away) and frees v. NULL is a no-op. */
void ws_voice_close(ws_voice *v);

/* Feeds len bytes of little-endian 16-bit PCM (any split: an odd byte waits for the next). */
parley_status ws_voice_feed(ws_voice *v, const void *bytes, size_t len);
/* The end of a binary message: 1 when it held an odd number of bytes (the stray byte is
 * dropped; the caller answers with an error). */
int ws_voice_message_end(ws_voice *v);
/* The client's explicit end of an utterance; *sent as pipe_seg_end's. */
parley_status ws_voice_end(ws_voice *v, int *sent);

/* {"type":"partial" or "final","text":...,"utterance":N} for a message of the recognizer's
 * partial port (final when msg->utt_end is set; "dropped":true and no text when the source
 * dropped the utterance after partials were sent: no turn follows); owned by the caller
 * (pl_free), NULL when out of memory. */
char *ws_voice_text_json(const pipe_msg *msg);
/* {"type":"audio","utterance":N,"sample_rate":R,"samples":n} for a reply with speech; the
 * n samples follow as one binary frame. Owned by the caller; NULL when out of memory. */
char *ws_voice_audio_json(const pipe_msg *msg);

#endif
