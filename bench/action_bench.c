/* action_bench.c — what an action server costs a turn: the same reply from an action the
 * dialog answers itself (`builtin`: its domain reply) and from one its action server answers
 * (`hi`: the server names the same response), through the same running graph.
 *
 * Run by bench/action_server.py (through tests/dialog/action_server/server.py, which serves
 * the actions on a free port and appends the bot's folder to the arguments):
 *   action_bench TURNS USERS FOLDER
 * For each intent: TURNS turns of one user one after the other (latency from submit to reply:
 * mean, p50, p99; and the mean time the dialog node itself worked on a turn, its runs and
 * store included, the wait for the server not), then USERS users in a closed loop, TURNS turns in
 * all (turns/s). Every reply is checked ("Hi!"). One line per measurement: "INTENT MODE key=value
 * ...".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/graph.h"
#include "pipeline/node.h"
#include "services/api_node.h"
#include "tests/dialog/words_nlu.h"

extern const pipe_kind dm_kind_frames;

static pipe_graph *g;
static pipe_node *api;
static long bad;

static void submit(const char *user, const char *text)
{
    pipe_msg *m = NULL;
    if (pipe_msg_new(g, user, text, &m) != PARLEY_OK) {
        fprintf(stderr, "action_bench: submit: %s\n", parley_errmsg());
        exit(1);
    }
    pipe_node_emit(api, 0, m);
}

static parley_reply *reply(void)
{
    parley_reply *r = NULL;
    if (svc_api_poll(api, 30000, &r) != PARLEY_OK) {
        fprintf(stderr, "action_bench: no reply in 30 s\n");
        exit(1);
    }
    bad += r->status != PARLEY_OK || strcmp(r->reply, "Hi!") != 0;
    return r;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void sequential(const char *intent, int turns)
{
    double *ms = malloc((size_t)turns * sizeof *ms), sum = 0, dialog = 0;
    for (int i = -20; i < turns; i++) { /* 20 turns to warm up */
        int64_t t0 = pipe_now_ns();
        submit("seq", intent);
        parley_reply *r = reply();
        if (i >= 0) {
            sum += ms[i] = (double)(pipe_now_ns() - t0) / 1e6;
            dialog += r->dialog_ms;
        }
        parley_reply_free(r);
    }
    qsort(ms, (size_t)turns, sizeof *ms, cmp);
    printf("%s sequential turns=%d mean_ms=%.3f p50_ms=%.3f p99_ms=%.3f dialog_ms=%.3f\n", intent,
           turns, sum / turns, ms[turns / 2], ms[(int)(turns * 0.99)], dialog / turns);
    free(ms);
}

static void concurrent(const char *intent, int turns, int users)
{
    char user[32];
    int64_t t0 = pipe_now_ns();
    int sent = 0;
    for (; sent < users && sent < turns; sent++) {
        snprintf(user, sizeof user, "c%d", sent);
        submit(user, intent);
    }
    for (int done = 0; done < turns; done++) {
        parley_reply *r = reply();
        if (sent < turns) {
            submit(r->user, intent);
            sent++;
        }
        parley_reply_free(r);
    }
    double s = (double)(pipe_now_ns() - t0) / 1e9;
    printf("%s concurrent turns=%d users=%d turns_per_s=%.1f\n", intent, turns, users, turns / s);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr,
                "usage: action_bench TURNS USERS FOLDER (bench/action_server.py runs it)\n");
        return 2;
    }
    int turns = atoi(argv[1]), users = atoi(argv[2]);
    static char graph[1024], store[1024];
    snprintf(graph, sizeof graph, "%s/graph.yaml", argv[3]);
    snprintf(store, sizeof store, "dialog.store=%s/bench.db", argv[3]);
    const pipe_kind *const kinds[] = { &svc_kind_api, &words_nlu, &dm_kind_frames, NULL };
    const char *const set[] = { store, NULL };
    pipe_graph_opts opts = { .kinds = kinds, .set = set, .need_output = 1 };
    if (pipe_graph_load(graph, &opts, &g) != PARLEY_OK || pipe_graph_start(g) != PARLEY_OK) {
        fprintf(stderr, "action_bench: %s\n", parley_errmsg());
        return 1;
    }
    api = pipe_graph_find_kind(g, "api");
    for (int i = 0; i < 2; i++) {
        const char *intent = i ? "hi" : "builtin";
        sequential(intent, turns);
        concurrent(intent, turns, users);
    }
    pipe_graph_close(g);
    if (bad)
        fprintf(stderr, "action_bench: %ld replies were not \"Hi!\"\n", bad);
    return bad != 0;
}
