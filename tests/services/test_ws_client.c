/* test_ws_client.c — the websocket client (services/ws_client.h) against an independent
 * server: Debian's python3-websockets running tests/services/ws_peer.py.
 *
 * Messages go out in order, text and binary, and come back whole; fragmented messages are
 * put back together; a close with a code and a reason from the server, and one the client
 * begins, are reported as such; a message over max_message_bytes (a small one, and the
 * default 16 MiB with 17 MB in many pieces) ends in PARLEY_ERR_FORMAT (1009); the bearer token is
 * sent; a refused handshake reports its HTTP status (401, 403) and a closed port says it cannot
 * connect; bad URLs are refused before any connection; nothing can be sent on a closed connection
 * or one that is closing. Every allocation failing in turn (tests/fault.h) fails cleanly with
 * nothing left allocated. Skips (77) without libwebsockets in the build or python3-websockets on
 * the machine.
 *
 * usage: test_ws_client PYTHON3 ws_peer.py
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sdk/base/error.h"
#include "services/ws_client.h"
#include "tests/check.h"
#include "tests/fault.h"

/* Everything that happened on one connection. */
typedef struct {
    int opens, n_msgs, closed;
    char msgs[8][64];
    size_t lens[8];
    int binary[8];
    parley_status st;
    int code, by_server, http;
    char text[256];
} record;

static void on_event(svc_ws_conn *conn, const svc_ws_event *ev, void *user)
{
    record *r = user;
    (void)conn;
    if (ev->type == SVC_WS_OPEN) {
        r->opens++;
    } else if (ev->type == SVC_WS_MESSAGE) {
        if (r->n_msgs < 8) {
            memcpy(r->msgs[r->n_msgs], ev->data, ev->len < 63 ? ev->len : 63);
            r->lens[r->n_msgs] = ev->len;
            r->binary[r->n_msgs] = ev->binary;
        }
        r->n_msgs++;
    } else {
        r->closed++;
        r->st = ev->status;
        r->code = ev->close_code;
        r->by_server = ev->by_server;
        r->http = ev->http_status;
        snprintf(r->text, sizeof r->text, "%s", ev->text);
    }
}

static int port;
static char url_buf[128];

static const char *url(const char *path)
{
    snprintf(url_buf, sizeof url_buf, "ws://127.0.0.1:%d%s", port, path);
    return url_buf;
}

/* Runs the loop until the connection's last event, for at most 20 s. */
static parley_status until_closed(svc_ws_client *c, record *r)
{
    parley_status st = PARLEY_OK;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (t = t0; !r->closed && st == PARLEY_OK && t.tv_sec - t0.tv_sec < 20;)
        if ((st = svc_ws_client_service(c, 100)) == PARLEY_OK)
            clock_gettime(CLOCK_MONOTONIC, &t);
    return st;
}

/* Connects to `path` with `p`, sends `texts` (NULL-terminated; "#bin" sends 4 binary bytes),
 * and runs until the connection ends. */
static parley_status session(const svc_ws_client_params *p, const char *path,
                             const char *const *texts, record *r)
{
    static const unsigned char bin[] = { 0, 1, 2, 255 };
    svc_ws_client *c = NULL;
    svc_ws_conn *k = NULL;
    parley_status st;
    memset(r, 0, sizeof *r);
    if ((st = svc_ws_client_open(p, &c)) != PARLEY_OK ||
        (st = svc_ws_connect(c, url(path), r, &k)) != PARLEY_OK)
        goto done;
    for (int i = 0; texts && texts[i] && st == PARLEY_OK; i++)
        st = strcmp(texts[i], "#bin") ? svc_ws_send(k, texts[i], strlen(texts[i]), 0)
                                      : svc_ws_send(k, bin, sizeof bin, 1);
    if (st == PARLEY_OK)
        st = until_closed(c, r);
done:
    svc_ws_client_close(c);
    return st;
}

static svc_ws_client_params params(const char *token, size_t max)
{
    svc_ws_client_params p = svc_ws_client_params_default();
    p.on_event = on_event;
    p.token = token;
    p.max_message_bytes = max;
    return p;
}

static void test_echo(void)
{
    static const char *const texts[] = { "one", "#bin", "two", "bye", NULL };
    svc_ws_client_params p = params(NULL, 0);
    record r;
    parley_status st = session(&p, "/echo", texts, &r);
    CHECK(st == PARLEY_OK, "echo: %s", parley_errmsg());
    CHECK(r.opens == 1 && r.n_msgs == 3, "echo: %d opens, %d messages", r.opens, r.n_msgs);
    CHECK(r.lens[0] == 3 && !memcmp(r.msgs[0], "one", 3) && !r.binary[0], "first: '%s'", r.msgs[0]);
    CHECK(r.lens[1] == 4 && !memcmp(r.msgs[1], "\x00\x01\x02\xff", 4) && r.binary[1],
          "second: binary, %zu bytes", r.lens[1]);
    CHECK(r.lens[2] == 3 && !memcmp(r.msgs[2], "two", 3), "third: '%s'", r.msgs[2]);
    CHECK(r.closed == 1 && r.st == PARLEY_OK && r.code == 1000 && r.by_server &&
                  !strcmp(r.text, "as asked"),
          "echo close: %d %s %d %d '%s'", r.closed, parley_status_str(r.st), r.code, r.by_server,
          r.text);
}

static void test_fragments(void)
{
    svc_ws_client_params p = params(NULL, 0);
    record r;
    CHECK(session(&p, "/fragments", NULL, &r) == PARLEY_OK, "fragments: %s", parley_errmsg());
    CHECK(r.n_msgs == 2 && r.lens[0] == 11 && !strcmp(r.msgs[0], "hello world") && !r.binary[0],
          "a fragmented text arrives whole: %d messages, '%s'", r.n_msgs, r.msgs[0]);
    CHECK(r.lens[1] == 3 && !memcmp(r.msgs[1], "\x00\x01\x02", 3) && r.binary[1],
          "a fragmented binary arrives whole: %zu bytes", r.lens[1]);
    CHECK(r.closed == 1 && r.st == PARLEY_OK && r.code == 4001 && r.by_server &&
                  !strcmp(r.text, "done here"),
          "the server's code and reason: %d '%s'", r.code, r.text);
}

static void test_limits_and_refusals(void)
{
    static const char *const bye[] = { "bye", NULL };
    record r;
    svc_ws_client_params p = params(NULL, 1024);
    CHECK(session(&p, "/big", NULL, &r) == PARLEY_OK, "big: %s", parley_errmsg());
    CHECK(r.n_msgs == 0 && r.closed == 1 && r.st == PARLEY_ERR_FORMAT && r.code == 1009 &&
                  strstr(r.text, "over 1024 bytes"),
          "a message over the limit: %d messages, %s, code %d, '%s'", r.n_msgs,
          parley_status_str(r.st), r.code, r.text);

    /* At the default limit the message comes in many pieces: the client stops at the limit
     * with an error (lws crashed when the connection was dropped in the middle of them). */
    p = params(NULL, 0);
    CHECK(session(&p, "/huge", NULL, &r) == PARLEY_OK, "huge: %s", parley_errmsg());
    CHECK(r.n_msgs == 0 && r.closed == 1 && r.st == PARLEY_ERR_FORMAT &&
                  strstr(r.text, "over 16777216 bytes"),
          "a message over the default limit: %d messages, %s, code %d, '%s'", r.n_msgs,
          parley_status_str(r.st), r.code, r.text);

    p = params("t0k", 0);
    CHECK(session(&p, "/auth", NULL, &r) == PARLEY_OK && r.n_msgs == 1 && !strcmp(r.msgs[0], "ok"),
          "the bearer token is sent: %d messages, '%s' (%s)", r.n_msgs, r.msgs[0], r.text);
    for (int i = 0; i < 3; i++) {
        p = params(i == 1 ? "wrong" : NULL, 0);
        const char *path = i == 2 ? "/forbidden" : "/auth";
        int want = i == 2 ? 403 : 401;
        char expect[64];
        snprintf(expect, sizeof expect, "HTTP %d", want);
        CHECK(session(&p, path, bye, &r) == PARLEY_OK, "%s: %s", path, parley_errmsg());
        CHECK(r.opens == 0 && r.closed == 1 && r.st == PARLEY_ERR_IO && r.http == want &&
                      strstr(r.text, expect),
              "%s refused: %d opens, %s, http %d, '%s'", path, r.opens, parley_status_str(r.st),
              r.http, r.text);
    }
}

static void test_client_side(void)
{
    svc_ws_client_params p = params(NULL, 0);
    svc_ws_client *c = NULL;
    svc_ws_conn *k = NULL;
    record r = { 0 }, none = { 0 };
    CHECK(svc_ws_client_open(&p, &c) == PARLEY_OK, "open: %s", parley_errmsg());
    static const char *const bad[] = { "http://127.0.0.1/", "ws://", "ws://127.0.0.1:99999/",
                                       "127.0.0.1:80" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(svc_ws_connect(c, bad[i], &none, NULL) == PARLEY_ERR_INVALID_ARG &&
                      strstr(parley_errmsg(), "URL"),
              "'%s' is refused: %s", bad[i], parley_errmsg());
    CHECK(none.opens + none.closed == 0, "a refused URL has no events");

    /* The client begins the close: after an echo, and with nothing more to send after. */
    CHECK(svc_ws_connect(c, url("/echo"), &r, &k) == PARLEY_OK, "connect: %s", parley_errmsg());
    CHECK(svc_ws_send(k, "ping", 4, 0) == PARLEY_OK, "send");
    for (int i = 0; i < 200 && r.n_msgs == 0 && !r.closed; i++)
        svc_ws_client_service(c, 100);
    CHECK(r.n_msgs == 1 && !strcmp(r.msgs[0], "ping"), "the echo: %d messages", r.n_msgs);
    svc_ws_close(k, 1000, "enough");
    CHECK(svc_ws_send(k, "late", 4, 0) == PARLEY_ERR_INVALID_ARG, "no send while closing");
    CHECK(until_closed(c, &r) == PARLEY_OK, "run: %s", parley_errmsg());
    CHECK(r.closed == 1 && r.st == PARLEY_OK && r.code == 1000 && !r.by_server,
          "our close: %s, code %d, by server %d", parley_status_str(r.st), r.code, r.by_server);
    CHECK(svc_ws_send(k, "late", 4, 0) == PARLEY_ERR_INVALID_ARG && svc_ws_pending(k) == 0,
          "nothing is sent on a closed connection");

    /* A port nobody listens on (free a moment ago). */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    bind(s, (struct sockaddr *)&a, sizeof a);
    getsockname(s, (struct sockaddr *)&a, &alen);
    close(s);
    char where[64], nobody[64];
    snprintf(nobody, sizeof nobody, "ws://127.0.0.1:%d/", ntohs(a.sin_port));
    snprintf(where, sizeof where, "cannot connect to 127.0.0.1:%d", ntohs(a.sin_port));
    memset(&r, 0, sizeof r);
    CHECK(svc_ws_connect(c, nobody, &r, NULL) == PARLEY_OK, "connect: %s", parley_errmsg());
    CHECK(until_closed(c, &r) == PARLEY_OK, "run: %s", parley_errmsg());
    CHECK(r.opens == 0 && r.closed == 1 && r.st == PARLEY_ERR_IO && strstr(r.text, where),
          "nobody there: %s '%s'", parley_status_str(r.st), r.text);
    svc_ws_client_close(c);
}

/* One whole session for the sweep: token, connect, text and binary out, echoes in, close. */
static parley_status sweep_op(void *ctx)
{
    static const char *const texts[] = { "one", "#bin", "bye", NULL };
    svc_ws_client_params p = params("t0k", 0);
    record r;
    (void)ctx;
    parley_status st = session(&p, "/echo", texts, &r);
    if (st == PARLEY_OK && r.st == PARLEY_ERR_NOMEM)
        return r.st; /* no memory for a message received: the connection was dropped */
    if (st == PARLEY_OK && (r.n_msgs != 2 || r.st != PARLEY_OK || r.code != 1000))
        return pl_fail(PARLEY_ERR_INTERNAL, "the session went wrong: %d messages, %s, code %d: %s",
                       r.n_msgs, parley_status_str(r.st), r.code, r.text);
    return st;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    svc_ws_client *probe = NULL;
    svc_ws_client_params p = params(NULL, 0);
    if (svc_ws_client_open(&p, &probe) == PARLEY_ERR_NOT_BUILT) {
        printf("SKIP: built without libwebsockets\n");
        return 77;
    }
    svc_ws_client_close(probe);
    signal(SIGPIPE, SIG_IGN);
    int to_peer[2], from_peer[2];
    if (pipe(to_peer) || pipe(from_peer))
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(to_peer[0], 0);
        dup2(from_peer[1], 1);
        close(to_peer[1]);
        close(from_peer[0]);
        execl(argv[1], argv[1], argv[2], (char *)NULL);
        _exit(127);
    }
    close(to_peer[0]);
    close(from_peer[1]);
    FILE *peer = fdopen(from_peer[0], "r");
    int status = 0;
    if (!peer || fscanf(peer, "%d", &port) != 1) {
        close(to_peer[1]);
        waitpid(pid, &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
            printf("SKIP: no python3-websockets\n");
            return 77;
        }
        fprintf(stderr, "test_ws_client: the peer did not start\n");
        return 1;
    }
    test_echo();
    test_fragments();
    test_limits_and_refusals();
    test_client_side();
    long points = fault_sweep("a whole session", sweep_op, NULL);
    CHECK(points >= 6, "the sweep walked %ld allocation failures", points);
    close(to_peer[1]); /* the peer ends when its standard input does */
    fclose(peer);
    waitpid(pid, &status, 0);
    return check_done();
}
