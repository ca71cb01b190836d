/* text_stdin.c — the `text.stdin` source node: one turn per input line.
 *
 * A line is either plain text for the default user (param `user`) or a JSON object
 * {"user": ID, "text": "..."} (read with cJSON). Blank lines are skipped; a bad JSON line
 * is reported on the event bus with its line number and skipped. It reads a file
 * descriptor with poll() so that a graph stop (SIGINT in `parley run`) ends it promptly.
 * It is not a terminal UI (that is `parley chat`).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/node.h"
#include "sdk/base/alloc.h"

typedef struct stdin_state {
    int fd;
    int own_fd;
} stdin_state;

static const pipe_port_spec ports[] = {
    { "text", PIPE_OUT, PIPE_T_TEXT, 0, "one message per input line" },
    { NULL, 0, 0, 0, NULL },
};

static const pipe_param_spec params[] = {
    { "path", PIPE_P_PATH, "-", 0, 0, "file to read; - is standard input" },
    { "user", PIPE_P_STRING, "default", 0, 0, "user id of plain-text lines" },
    { NULL, 0, NULL, 0, 0, NULL },
};

static parley_status stdin_create(pipe_node *node, void **out)
{
    const char *path = pipe_node_param_str(node, "path");
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

/* One line (without its newline) into a turn, or an error on the bus. */
static void submit_line(pipe_node *node, char *line, long lineno)
{
    const char *user = pipe_node_param_str(node, "user"), *text = line;
    char idbuf[32];
    cJSON *j = NULL;
    size_t len = strlen(line);
    if (len && line[len - 1] == '\r')
        line[--len] = 0;
    if (!line[strspn(line, " \t")])
        return;
    if (line[strspn(line, " \t")] == '{') {
        j = cJSON_Parse(line);
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(j, "user");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "text");
        if (!j || !cJSON_IsString(t) || !(cJSON_IsString(u) || cJSON_IsNumber(u) || !u)) {
            pipe_node_error(node, pl_fail(PARLEY_ERR_FORMAT,
                                          "input line %ld: expected {\"user\": ID, \"text\": "
                                          "\"...\"}",
                                          lineno));
            cJSON_Delete(j);
            return;
        }
        text = t->valuestring;
        if (cJSON_IsString(u)) {
            user = u->valuestring;
        } else if (u) {
            snprintf(idbuf, sizeof idbuf, "%.0f", u->valuedouble);
            user = idbuf;
        }
    }
    pipe_msg *m;
    parley_status st = pipe_msg_new(pipe_node_graph(node), user, text, &m);
    cJSON_Delete(j);
    if (st != PARLEY_OK) {
        pipe_node_error(node, pl_wrap(st, "input line %ld", lineno));
        return;
    }
    pipe_node_emit(node, 0, m);
}

static parley_status stdin_run(pipe_node *node, void *state)
{
    stdin_state *s = state;
    size_t cap = 4096, len = 0;
    long lineno = 0;
    char *buf = pl_malloc(cap);
    if (!buf)
        return pl_nomem(NULL);
    parley_status st = PARLEY_OK;
    for (;;) {
        char *nl;
        while ((nl = memchr(buf, '\n', len))) {
            *nl = 0;
            submit_line(node, buf, ++lineno);
            len -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, len);
        }
        if (pipe_node_stopping(node))
            break;
        struct pollfd p = { s->fd, POLLIN, 0 };
        int r = poll(&p, 1, 100);
        if (r == 0 || (r < 0 && errno == EINTR))
            continue;
        if (len + 1 >= cap) {
            char *nb = pl_realloc(buf, cap * 2);
            if (!nb) {
                st = pl_nomem("input line %ld", lineno + 1);
                break;
            }
            buf = nb;
            cap *= 2;
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
                submit_line(node, buf, ++lineno);
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
           "lines",
    .ports = ports,
    .params = params,
    .create = stdin_create,
    .run = stdin_run,
    .destroy = stdin_destroy,
};
