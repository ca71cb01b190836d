/* text_stdin.c — the `text.stdin` source node: one turn per input line.
 *
 * A line is either plain text for the default user (param `user`) or, when its first
 * character after spaces is '{', a JSON object {"user": ID, "text": "..."} (read with cJSON;
 * ID a string or a whole number; other keys are ignored). Every line that is not blank gets
 * exactly one answer at the sink: its turn, or, when the line cannot be one (bad JSON, a
 * missing or ill-typed field, a user id or text that breaks the rules of parley/pipeline.h,
 * a line over LINE_MAX_BYTES), a failed turn carrying the line number and why, in its user's
 * order when the user could be read. Blank lines (spaces and tabs only) are skipped but
 * counted. Lines are read through a bounded buffer: an over-long line is answered as soon
 * as it is seen and the rest of it is dropped unread. It reads a file descriptor with poll()
 * so that a graph stop (SIGINT in `parley run`) ends it promptly. It is not a terminal UI
 * (that is `parley chat`).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/node.h"
#include "sdk/base/alloc.h"
#include "services/api_node.h"
#include "services/input_line.h"

/* The longest input line, in bytes before its newline (1 MiB: room for a text of
 * PARLEY_MAX_TEXT_BYTES written with JSON escapes). */
enum { LINE_MAX_BYTES = 1 << 20 };

typedef struct stdin_state {
    int fd;
    int own_fd;
} stdin_state;

static const pipe_port_spec ports[] = {
    { "text", PIPE_OUT, PIPE_T_TEXT, 0, "one message per input line" },
    { NULL, 0, 0, 0, NULL },
};

const pipe_param_spec svc_stdin_params[] = {
    { "path", PIPE_P_PATH, "-", 0, 0, "file to read; - is standard input", NULL },
    { "user", PIPE_P_STRING, "default", 0, 0, "user id of plain-text lines", NULL },
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

static parley_status stdin_create(pipe_node *node, void **out)
{
    const char *path = pipe_node_param_str(node, "path");
    const char *user = pipe_node_param_str(node, "user");
    parley_status st = pipe_check_user_id(user, strlen(user));
    if (st != PARLEY_OK)
        return pl_wrap(PARLEY_ERR_CONFIG, "param user");
    stdin_state *s = pl_calloc(1, sizeof *s);
    if (!s)
        return pl_nomem(NULL);
    s->fd = 0;
    if (strcmp(path, "-")) {
        s->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0) {
            pl_free(s);
            return pl_fail(PARLEY_ERR_IO, "%s: %s", path, strerror(errno));
        }
        s->own_fd = 1;
    }
    *out = s;
    return PARLEY_OK;
}

static void stdin_destroy(void *state)
{
    stdin_state *s = state;
    if (s && s->own_fd)
        close(s->fd);
    pl_free(s);
}

/* Answers input line `lineno` that cannot be a turn (why: st and parley_errmsg(), which
 * names the line) with a failed turn for `user` (NULL when unknown). */
static void refuse_line(pipe_node *node, const char *user, long lineno, parley_status st)
{
    pipe_msg *m = pipe_msg_new_refused(pipe_node_graph(node), user);
    if (!m) {
        pipe_node_error(node, pl_nomem("the answer to input line %ld", lineno));
        return;
    }
    m->line = lineno;
    pipe_node_fail_turn(node, m, st);
}

/* One line of `len` bytes (its newline replaced by a NUL) into a turn, or into an answer
 * saying why it cannot be one. */
static void submit_line(pipe_node *node, char *line, size_t len, long lineno)
{
    svc_line in;
    pipe_msg *m = NULL;
    parley_status st = svc_line_read(line, len, pipe_node_param_str(node, "user"), &in);
    if (st == PARLEY_OK && !in.blank)
        st = pipe_msg_new(pipe_node_graph(node), in.user, in.text, &m);
    if (st != PARLEY_OK) {
        pl_wrap(st, "input line %ld", lineno);
        refuse_line(node, in.user, lineno, st);
    } else if (m) {
        m->line = lineno;
        pipe_node_emit(node, 0, m);
    }
    svc_line_clear(&in);
}

static parley_status stdin_run(pipe_node *node, void *state)
{
    stdin_state *s = state;
    size_t cap = 4096, len = 0;
    long lineno = 0;
    int skipping = 0; /* inside a line already answered as too long: drop it to its end */
    char *buf = pl_malloc(cap);
    if (!buf)
        return pl_nomem(NULL);
    parley_status st = PARLEY_OK;
    for (;;) {
        char *start = buf, *nl;
        while ((nl = memchr(start, '\n', len - (size_t)(start - buf)))) {
            *nl = 0;
            if (!skipping)
                submit_line(node, start, (size_t)(nl - start), ++lineno);
            skipping = 0;
            start = nl + 1;
        }
        len -= (size_t)(start - buf);
        memmove(buf, start, len);
        if (!skipping && len > LINE_MAX_BYTES) {
            lineno++;
            refuse_line(node, NULL, lineno,
                        pl_fail(PARLEY_ERR_FORMAT,
                                "input line %ld: longer than %d bytes (the rest of it is "
                                "dropped)",
                                lineno, LINE_MAX_BYTES));
            skipping = 1;
        }
        if (skipping)
            len = 0;
        if (pipe_node_stopping(node))
            break;
        struct pollfd p = { s->fd, POLLIN, 0 };
        int r = poll(&p, 1, 100);
        if (r == 0 || (r < 0 && errno == EINTR))
            continue;
        if (len + 1 >= cap) {
            size_t ncap = cap * 2 < LINE_MAX_BYTES + 2 ? cap * 2 : LINE_MAX_BYTES + 2;
            char *nb = pl_realloc(buf, ncap);
            if (!nb) {
                st = pl_nomem("input line %ld", lineno + 1);
                break;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t n = read(s->fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            st = pl_fail(PARLEY_ERR_IO, "reading input: %s", strerror(errno));
            break;
        }
        if (n == 0) {
            buf[len] = 0;
            if (len)
                submit_line(node, buf, len, ++lineno);
            break;
        }
        len += (size_t)n;
    }
    pl_free(buf);
    return st;
}

const pipe_kind svc_kind_stdin = {
    .name = "text.stdin",
    .doc = "reads turns from standard input or a file: plain text or {\"user\",\"text\"} JSON "
           "lines; every line that is not blank gets one answer",
    .ports = ports,
    .params = svc_stdin_params,
    .create = stdin_create,
    .run = stdin_run,
    .destroy = stdin_destroy,
};
