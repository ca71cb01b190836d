/* text_stdout.c — the `text.stdout` sink node: one JSON line per finished turn.
 *
 * A reply becomes {"user","turn","reply","intent","confidence","slots"} (slots as an
 * object of name: value); an NLU result without a dialog gives the same line with a null
 * reply; a turn that failed anywhere in the graph, or an input line text.stdin could not
 * take, gives {"user","turn","line","error"} (see services/reply_json.h), so no input line
 * goes unanswered. Every line is valid JSON. Lines are written whole under a lock and
 * flushed.
 * With `format: chat` (what `parley chat` sets) the lines are for people instead:
 * "parley> reply", with the intent and slots under it when `verbose`, then `prompt`.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/node.h"
#include "sdk/base/alloc.h"
#include "services/api_node.h"
#include "sdk/base/sync.h"
#include "services/reply_json.h"

typedef struct stdout_state {
    FILE *f;
    int own;
    int chat, verbose, echo;
    const char *prompt;
    pthread_mutex_t mu;
} stdout_state;

static const pipe_port_spec ports[] = {
    { "reply", PIPE_IN, PIPE_T_REPLY | PIPE_T_NLU | PIPE_T_TEXT, 1,
      "dialog replies (or bare NLU results, or transcripts)" },
    { NULL, 0, 0, 0, NULL },
};

const pipe_param_spec svc_stdout_params[] = {
    { "path", PIPE_P_PATH, "-", 0, 0, "file to append to; - is standard output", NULL },
    { "format", PIPE_P_STRING, "json", 0, 0, "json (one object per line) or chat (for people)",
      "json|chat" },
    { "verbose", PIPE_P_BOOL, "false", 0, 0, "chat format: show the intent and slots too", NULL },
    { "prompt", PIPE_P_STRING, "", 0, 0, "chat format: written after each reply", NULL },
    { "echo", PIPE_P_BOOL, "false", 0, 0,
      "chat format: repeat the user's words before each reply (input from a file or pipe)", NULL },
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

/* The chat format: a reply for people (under s->mu). */
static void write_chat(stdout_state *s, const pipe_msg *m, const char *error)
{
    int reply = m->type == PIPE_T_REPLY;
    if (s->echo)
        fprintf(s->f, "%s\n", m->text ? m->text : "");
    if (error)
        fprintf(s->f, "parley! turn failed: %s\n", error);
    else
        fprintf(s->f, "parley> %s\n", reply && m->reply ? m->reply : "(no dialog in this graph)");
    if (s->verbose && !error) {
        fprintf(s->f, "         intent: %s (%.4f)  slots:", m->intent ? m->intent : "-",
                m->confidence);
        for (size_t i = 0; i < m->n_slots; i++)
            fprintf(s->f, " %s=%s", m->slots[i].name, m->slots[i].value);
        fprintf(s->f, "%s\n", m->n_slots ? "" : " none");
    }
    fputs(s->prompt, s->f);
}

static void write_line(stdout_state *s, const pipe_msg *m, const char *error)
{
    if (s->chat) {
        pthread_mutex_lock(&s->mu);
        write_chat(s, m, error);
        fflush(s->f);
        pthread_mutex_unlock(&s->mu);
        return;
    }
    char *line = svc_reply_json(m, error);
    pthread_mutex_lock(&s->mu);
    if (line)
        fprintf(s->f, "%s\n", line);
    else
        fprintf(s->f, "{\"error\":\"out of memory\"}\n");
    fflush(s->f);
    pthread_mutex_unlock(&s->mu);
    cJSON_free(line);
}

static parley_status stdout_create(pipe_node *node, void **out)
{
    const char *path = pipe_node_param_str(node, "path");
    const char *format = pipe_node_param_str(node, "format"); /* json or chat: the loader checks */
    stdout_state *s = pl_calloc(1, sizeof *s);
    if (!s)
        return pl_nomem(NULL);
    s->chat = !strcmp(format, "chat");
    s->verbose = pipe_node_param_bool(node, "verbose");
    s->echo = pipe_node_param_bool(node, "echo");
    s->prompt = pipe_node_param_str(node, "prompt");
    s->f = stdout;
    if (strcmp(path, "-")) {
        if (!(s->f = fopen(path, "ae"))) {
            pl_free(s);
            return pl_fail(PARLEY_ERR_IO, "%s: %s", path, strerror(errno));
        }
        s->own = 1;
    }
    parley_status st = pl_mutex_init(&s->mu, pipe_node_name(node));
    if (st != PARLEY_OK) {
        if (s->own)
            fclose(s->f);
        pl_free(s);
        return st;
    }
    *out = s;
    return PARLEY_OK;
}

static parley_status stdout_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    (void)port;
    if (!msg->no_answer)
        write_line(state, msg, pipe_msg_error(msg));
    pipe_node_turn_done(node, msg);
    return PARLEY_OK;
}

static void stdout_destroy(void *state)
{
    stdout_state *s = state;
    if (!s)
        return;
    if (s->own)
        fclose(s->f);
    pthread_mutex_destroy(&s->mu);
    pl_free(s);
}

const pipe_kind svc_kind_stdout = {
    .name = "text.stdout",
    .doc = "writes one JSON line per reply: {user, turn, reply, intent, confidence, slots}",
    .ports = ports,
    .params = svc_stdout_params,
    .create = stdout_create,
    .process = stdout_process,
    .destroy = stdout_destroy,
};
