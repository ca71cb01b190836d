/* test_asr_stub.c — asr.stub replays its scripted transcripts for audio turns, in order,
 * passes text turns through, and fails an audio turn once the script has run out (the
 * failed turn still reaches the sink). Audio messages (each a whole utterance in one piece)
 * are made by hand here. Graph: graphs/relative_path.yaml (api → asr.stub → api).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/graph.h"
#include "sdk/lib/kinds.h"
#include "tests/check.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char seen[8][64];
static parley_status status[8];
static int n_seen;

static void on_event(const pipe_event *ev, void *user)
{
    (void)user;
    if (ev->type != PIPE_EV_TURN_DONE)
        return;
    pthread_mutex_lock(&mu);
    if (n_seen < 8) {
        snprintf(seen[n_seen], sizeof seen[0], "%s", ev->msg->text);
        status[n_seen++] = ev->msg->status;
    }
    pthread_mutex_unlock(&mu);
}

int main(int argc, char **argv)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/relative_path.yaml",
             argc > 1 ? argv[1] : "tests/pipeline/graphs");
    pipe_graph *g = NULL;
    CHECK(pipe_graph_load(path, &(pipe_graph_opts){ .kinds = lib_kinds }, &g) == PARLEY_OK,
          "load: %s", parley_errmsg());
    if (!g)
        return check_done();
    pipe_graph_subscribe(g, on_event, NULL);
    CHECK(pipe_graph_start(g) == PARLEY_OK, "start");
    pipe_node *api = pipe_graph_find_kind(g, "api");
    const int audio[4] = { 1, 0, 1, 1 }; /* the 4th audio turn finds the script empty */
    for (int i = 0; i < 4; i++) {
        pipe_msg *m = NULL;
        CHECK(pipe_msg_new(g, "mic", audio[i] ? "" : "typed words", &m) == PARLEY_OK, "new");
        if (!m)
            continue;
        if (audio[i])
            m->type = PIPE_T_AUDIO, m->utt = (uint32_t)i + 1, m->utt_end = PIPE_UTT_EXPLICIT;
        pipe_node_emit(api, 0, m);
    }
    pipe_graph_close(g); /* drains */
    CHECK(n_seen == 4, "%d turns reached the sink", n_seen);
    CHECK(!strcmp(seen[0], "first transcript") && !status[0], "audio 1: '%s'", seen[0]);
    CHECK(!strcmp(seen[1], "typed words") && !status[1], "text: '%s'", seen[1]);
    CHECK(!strcmp(seen[2], "second transcript") && !status[2], "audio 2: '%s'", seen[2]);
    CHECK(status[3] == PARLEY_ERR_NOT_FOUND, "audio 3 fails: %s", parley_status_str(status[3]));
    return check_done();
}
