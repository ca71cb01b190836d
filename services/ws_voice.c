/* ws_voice.c — a websocket connection's audio into utterances, and the voice messages'
 * JSON (services/ws_voice.h). No lws: ws_server.c calls it on its service thread (feeding)
 * and on the graph's workers (the JSON).
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "services/ws_voice.h"

enum { CHUNK = 4096 }; /* samples converted at a time */

struct ws_voice {
    pipe_seg *seg;
    unsigned char odd; /* a byte waiting for its pair */
    int has_odd;
    size_t msg_bytes; /* bytes of the binary message so far */
};

parley_status ws_voice_open(pipe_node *node, int port, const char *user, int rate,
                            const pipe_seg_params *p, ws_voice **out)
{
    parley_status st;
    pipe_seg_params q = *p;
    q.in_rate = rate;
    ws_voice *v = pl_calloc(1, sizeof *v);
    if (!v)
        return pl_nomem("the audio of user '%s'", user);
    if ((st = pipe_seg_open(&q, node, port, user, &v->seg)) != PARLEY_OK) {
        pl_free(v);
        return st;
    }
    *out = v;
    return PARLEY_OK;
}

void ws_voice_close(ws_voice *v)
{
    if (!v)
        return;
    pipe_seg_drop(v->seg);
    pipe_seg_close(v->seg);
    pl_free(v);
}

parley_status ws_voice_feed(ws_voice *v, const void *bytes, size_t len)
{
    const unsigned char *b = bytes;
    int16_t pcm[CHUNK];
    size_t n = 0;
    parley_status st = PARLEY_OK;
    v->msg_bytes += len;
    for (size_t i = 0; i < len && st == PARLEY_OK; i++) {
        if (!v->has_odd) {
            v->odd = b[i];
            v->has_odd = 1;
            continue;
        }
        pcm[n++] = (int16_t)(uint16_t)(v->odd | (unsigned)b[i] << 8);
        v->has_odd = 0;
        if (n == CHUNK) {
            st = pipe_seg_feed(v->seg, pcm, n);
            n = 0;
        }
    }
    if (st == PARLEY_OK && n)
        st = pipe_seg_feed(v->seg, pcm, n);
    return st;
}

int ws_voice_message_end(ws_voice *v)
{
    int odd = (int)(v->msg_bytes % 2);
    v->msg_bytes = 0;
    v->has_odd = 0;
    return odd;
}

parley_status ws_voice_end(ws_voice *v, int *sent)
{
    return pipe_seg_end(v->seg, sent);
}

static char *print(cJSON *o, int ok)
{
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    char *copy = text ? pl_strdup(text) : NULL;
    cJSON_free(text);
    return copy;
}

char *ws_voice_text_json(const pipe_msg *msg)
{
    cJSON *o = cJSON_CreateObject();
    int ok = o && cJSON_AddStringToObject(o, "type", msg->utt_end ? "final" : "partial") &&
             cJSON_AddStringToObject(o, "text", msg->text ? msg->text : "") &&
             cJSON_AddNumberToObject(o, "utterance", msg->utt) &&
             (msg->utt_end != PIPE_UTT_DROPPED || cJSON_AddTrueToObject(o, "dropped"));
    return print(o, ok);
}

char *ws_voice_audio_json(const pipe_msg *msg)
{
    cJSON *o = cJSON_CreateObject();
    int ok = o && cJSON_AddStringToObject(o, "type", "audio") &&
             cJSON_AddNumberToObject(o, "utterance", msg->utt) &&
             cJSON_AddNumberToObject(o, "sample_rate", msg->rate) &&
             cJSON_AddNumberToObject(o, "samples", (double)msg->n_pcm);
    return print(o, ok);
}
