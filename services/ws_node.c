/* ws_node.c — the `ws.server` node kind: its ports, params and documentation, in every build.
 * What it does is services/ws_server.c (with libwebsockets) or services/ws_none.c (without:
 * opening a graph that names it answers PARLEY_ERR_NOT_BUILT). docs/websocket.md is the
 * protocol.
 */
#include "pipeline/audio.h"
#include "services/ws_server.h"

static const pipe_port_spec ports[] = {
    { "text", PIPE_OUT, PIPE_T_TEXT, 0, "typed turns of the clients" },
    { "audio", PIPE_OUT, PIPE_T_AUDIO, 0,
      "the clients' speech, cut into utterances (link it to an asr.* node)" },
    { "reply", PIPE_IN, PIPE_T_REPLY | PIPE_T_NLU | PIPE_T_TEXT, 1,
      "finished turns, sent back to the connection that asked (with their speech, after tts.*)" },
    { "partial", PIPE_IN, PIPE_T_TEXT, 0,
      "an asr.* node's partial and final transcripts, sent to the speaker's connection" },
    { NULL, 0, 0, 0, NULL },
};

static const pipe_param_spec params[] = {
    { "port", PIPE_P_INT, "8765", 0, 65535, "TCP port; 0 = any free port (logged)", NULL },
    { "host", PIPE_P_STRING, "127.0.0.1", 0, 0, "address to listen on; \"\" = every interface",
      NULL },
    { "max_connections", PIPE_P_INT, "1000", 1, 100000,
      "connections at once; more are refused at the handshake (HTTP 503)", NULL },
    { "max_message_bytes", PIPE_P_INT, "1048576", 1024, 67108864,
      "largest client message, reassembled (over it: close 1009)", NULL },
    { "timeout", PIPE_P_INT, "60", 2, 86400,
      "seconds without a valid frame before a connection is closed (pinged at half)", NULL },
    { "static_dir", PIPE_P_PATH, "", 0, 0, "folder served over HTTP at / (index.html); \"\" = none",
      NULL },
    { "cert", PIPE_P_PATH, "", 0, 0, "TLS certificate (PEM); with key, the server speaks wss://",
      NULL },
    { "key", PIPE_P_PATH, "", 0, 0, "TLS private key (PEM)", NULL },
    { "token", PIPE_P_STRING, "", 0, 0,
      "when set, clients must present it (Authorization: Bearer, or ?token=) and may then name "
      "their user ids",
      NULL },
    { "trust_user_ids", PIPE_P_BOOL, "false", 0, 0,
      "accept any user id a client names (local development)", NULL },
    PIPE_SEG_PARAM_SPECS,
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

const pipe_kind svc_kind_ws_server = {
    .name = "ws.server",
    .doc = "a websocket server: clients send turns as JSON messages and get their replies; "
           "HTTP /healthz, /metrics, static files and Rasa's REST API on the same port",
    .ports = ports,
    .params = params,
    .workers = 2,
    .ends_turns = 1,
    .create = svc_ws_create,
    .process = svc_ws_process,
    .run = svc_ws_run,
    .stop = svc_ws_stop,
    .destroy = svc_ws_destroy,
};
