/* asr_stub.c — the `asr.stub` node: a stand-in for speech recognition behind the engine
 * interface of services/asr.h.
 *
 * Text messages pass through unchanged. Each utterance (its pieces of audio) gets the next
 * line of the `transcripts` file as its text, in the order utterances end, so the audio
 * path of a graph can be tested without a recognizer. It recognizes nothing: a stream is
 * the engine itself, and partial hypotheses are never sent.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/node.h"
#include "sdk/base/alloc.h"
#include "sdk/base/sync.h"
#include "services/asr.h"

typedef struct asr_state {
    char **lines;
    size_t n, next;
    pthread_mutex_t mu;
    svc_asr *asr;
} asr_state;

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
    svc_asr_free(s->asr);
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

static parley_status stub_open(void *engine, const char *user, void **stream)
{
    (void)user;
    *stream = engine;
    return PARLEY_OK;
}

static parley_status stub_feed(void *stream, const int16_t *pcm, size_t n)
{
    (void)stream, (void)pcm, (void)n;
    return PARLEY_OK;
}

static parley_status stub_end(void *stream)
{
    (void)stream;
    return PARLEY_OK;
}

/* The next scripted line, or an error when the script has run out. */
static parley_status stub_final(void *stream, char **text)
{
    asr_state *s = stream;
    pthread_mutex_lock(&s->mu);
    const char *line = s->next < s->n ? s->lines[s->next++] : NULL;
    pthread_mutex_unlock(&s->mu);
    if (!line)
        return pl_fail(PARLEY_ERR_NOT_FOUND, "asr.stub: no scripted transcript left");
    if (!(*text = pl_strdup(line)))
        return pl_nomem("a transcript");
    return PARLEY_OK;
}

static void stub_close(void *stream)
{
    (void)stream;
}

static const svc_asr_engine stub_engine = {
    .name = "asr.stub",
    .open = stub_open,
    .feed = stub_feed,
    .end = stub_end,
    .final = stub_final,
    .close = stub_close,
};

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
    if (st == PARLEY_OK)
        st = svc_asr_new(&stub_engine, s, 0, 0, &s->asr);
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
    return svc_asr_process(s->asr, node, msg);
}

const pipe_kind svc_kind_asr_stub = {
    .name = "asr.stub",
    .doc = "passes text through; replays scripted transcripts for audio (testing without ASR)",
    .ports = svc_asr_ports,
    .params = params,
    .create = asr_create,
    .process = asr_process,
    .destroy = asr_destroy,
};
