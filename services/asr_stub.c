/* asr_stub.c — the `asr.stub` node: a stand-in for speech recognition.
 *
 * Text messages pass through unchanged. Audio messages (once audio sources exist) get the
 * next line of the `transcripts` file as their text, in arrival order, so the audio path
 * of a graph can be tested before a real recognizer lands. It recognizes nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/node.h"
#include "sdk/base/alloc.h"
#include "sdk/base/sync.h"

typedef struct asr_state {
    char **lines;
    size_t n, next;
    pthread_mutex_t mu;
} asr_state;

static const pipe_port_spec ports[] = {
    { "in", PIPE_IN, PIPE_T_AUDIO | PIPE_T_TEXT, 1, "audio (gets a scripted transcript) or text" },
    { "text", PIPE_OUT, PIPE_T_TEXT, 0, "transcripts" },
    { NULL, 0, 0, 0, NULL },
};

static const pipe_param_spec params[] = {
    { "transcripts", PIPE_P_PATH, "", 0, 0, "file of transcripts, one per line, replayed for audio",
      NULL },
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

static void asr_destroy(void *state)
{
    asr_state *s = state;
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        pl_free(s->lines[i]);
    pl_free(s->lines);
    pthread_mutex_destroy(&s->mu);
    pl_free(s);
}

static parley_status read_lines(asr_state *s, const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return pl_fail(PARLEY_ERR_IO, "%s: %s", path, strerror(errno));
    char buf[4096];
    parley_status st = PARLEY_OK;
    while (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\r\n")] = 0;
        char **l = pl_realloc(s->lines, (s->n + 1) * sizeof *l);
        if (!l || !(l[s->n] = pl_strdup(buf))) {
            if (l)
                s->lines = l;
            st = pl_nomem(NULL);
            break;
        }
        s->lines = l;
        s->n++;
    }
    fclose(f);
    return st;
}

static parley_status asr_create(pipe_node *node, void **out)
{
    asr_state *s = pl_calloc(1, sizeof *s);
    if (!s)
        return pl_nomem(NULL);
    parley_status st = pl_mutex_init(&s->mu, pipe_node_name(node));
    if (st != PARLEY_OK) {
        pl_free(s);
        return st;
    }
    const char *path = pipe_node_param_str(node, "transcripts");
    st = path[0] ? read_lines(s, path) : PARLEY_OK;
    if (st != PARLEY_OK) {
        asr_destroy(s);
        return st;
    }
    *out = s;
    return PARLEY_OK;
}

static parley_status asr_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    asr_state *s = state;
    (void)port;
    if (msg->type == PIPE_T_AUDIO) {
        pthread_mutex_lock(&s->mu);
        const char *line = s->next < s->n ? s->lines[s->next++] : NULL;
        pthread_mutex_unlock(&s->mu);
        if (!line) {
            pipe_node_fail_turn(
                    node, msg,
                    pl_fail(PARLEY_ERR_NOT_FOUND, "asr.stub: no scripted transcript left"));
            return PARLEY_OK;
        }
        char *t = pl_strdup(line);
        if (!t) {
            pipe_node_fail_turn(node, msg, pl_nomem(NULL));
            return PARLEY_OK;
        }
        pl_free(msg->text);
        msg->text = t;
        msg->type = PIPE_T_TEXT;
    }
    return pipe_node_emit(node, 1, msg); /* ports[1]: text */
}

const pipe_kind svc_kind_asr_stub = {
    .name = "asr.stub",
    .doc = "passes text through; replays scripted transcripts for audio (testing without ASR)",
    .ports = ports,
    .params = params,
    .create = asr_create,
    .process = asr_process,
    .destroy = asr_destroy,
};
