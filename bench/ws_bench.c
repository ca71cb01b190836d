/* ws_bench.c — text turns over parley's websocket server against the same turns over a
 * graph's stdin, and the server's memory with many idle connections.
 *
 * usage: ws_bench ws URL CLIENTS SECONDS [WARMUP [SERVER_PID]]
 *        ws_bench stdin CLIENTS SECONDS [WARMUP] -- COMMAND...
 *        ws_bench idle URL CLIENTS SECONDS PID
 *
 * ws: CLIENTS websocket connections from this one process (one libwebsockets context, see
 * services/ws_client.h), each a user talking in a closed loop: a turn, its reply, the next.
 * stdin: the same users and turns as JSON lines {"user","text"} into COMMAND's standard input
 * (`parley run` of the graph with text.stdin/text.stdout in place of ws.server), replies
 * read from its standard output. Both print one JSON line: turns, turns/s, and the p50/p99
 * latency from sending a turn to reading its reply, leaving out the first WARMUP seconds
 * (default 1), and the server's CPU time per turn over that window (its process: SERVER_PID, or
 * COMMAND's), which a machine shared with other work disturbs less than turns/s. idle: opens
 * CLIENTS connections, waits until each has its `ready`, holds them SECONDS (the server pings them
 * as it wishes), and prints process PID's resident memory before and with them. It measures; it
 * does not judge: the figures and the targets are in bench/RESULTS.md, and bench/ws_bench.sh runs
 * the whole comparison.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench_turns.h"
#include "services/ws_client.h"

/* The latencies of the turns that count, and the turns that failed. */
typedef struct {
    double *ms;
    size_t n, cap;
    long errors;
    double t_count; /* turns sent before this do not count (warm-up) */
    double t_end;   /* no turn is sent after this */
    long pid;       /* the server's process, whose CPU time is read (0: none) */
    double cpu0;    /* its CPU seconds when the warm-up ended (< 0: not read yet) */
} tally;

/* The CPU time (user + system) process `pid` has used so far, in seconds; -1 if unknown. */
static double cpu_s(long pid)
{
    char path[64], buf[1024];
    unsigned long utime = 0, stime = 0;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    if (!p ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
        return -1;
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

/* Reads the server's CPU time once the warm-up is over; call it as the loop turns. */
static void tally_tick(tally *t)
{
    if (t->pid && t->cpu0 < 0 && bench_now_s() >= t->t_count)
        t->cpu0 = cpu_s(t->pid);
}

static void tally_add(tally *t, double t_sent, double ms, int failed)
{
    if (t_sent < t->t_count)
        return;
    t->errors += failed;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 4096;
        double *ms2 = realloc(t->ms, cap * sizeof *ms2);
        if (!ms2)
            return;
        t->ms = ms2;
        t->cap = cap;
    }
    t->ms[t->n++] = ms;
}

static int report(const char *transport, int clients, tally *t)
{
    double dt = bench_now_s() - t->t_count; /* the last turns end after t_end */
    if (!t->n) {
        fprintf(stderr, "ws_bench: %s: no turn was answered\n", transport);
        return 1;
    }
    qsort(t->ms, t->n, sizeof *t->ms, bench_cmp_double);
    double cpu = t->pid && t->cpu0 >= 0 ? cpu_s(t->pid) - t->cpu0 : -1;
    printf("{\"transport\":\"%s\",\"clients\":%d,\"turns\":%zu,\"seconds\":%.1f,"
           "\"turns_per_s\":%.1f,\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"errors\":%ld,"
           "\"server_cpu_ms_per_turn\":%.3f}\n",
           transport, clients, t->n, dt, (double)t->n / dt, t->ms[t->n / 2],
           t->ms[(size_t)((double)t->n * 0.99)], t->errors, cpu * 1000 / (double)t->n);
    fflush(stdout);
    free(t->ms);
    return 0;
}

/* ---- over the websocket ---- */

typedef struct ws_run ws_run;

typedef struct {
    ws_run *run;
    svc_ws_conn *conn;
    int index;
    unsigned long sent;
    double t_sent;
    int ready, busy;
} user;

struct ws_run {
    user *users;
    int n, n_ready, n_closed, running, talk;
    tally t;
    char why[256]; /* the first connection that ended unasked, and how */
};

static void send_turn(ws_run *r, user *u)
{
    char msg[160];
    int n = snprintf(msg, sizeof msg, "{\"text\":\"%s\",\"id\":%lu}",
                     bench_utterance(u->index, u->sent), u->sent + 1);
    u->t_sent = bench_now_s();
    u->busy = svc_ws_send(u->conn, msg, (size_t)n, 0) == PARLEY_OK;
    u->sent++;
    r->running += u->busy;
}

static void on_event(svc_ws_conn *conn, const svc_ws_event *ev, void *arg)
{
    user *u = arg;
    ws_run *r = u->run;
    (void)conn;
    if (ev->type == SVC_WS_CLOSED) {
        r->n_closed++;
        if (!*r->why && (ev->status != PARLEY_OK || ev->by_server))
            snprintf(r->why, sizeof r->why, "connection %d: %s (code %d)", u->index, ev->text,
                     ev->close_code);
        r->running -= u->busy;
        u->busy = 0;
        return;
    }
    if (ev->type != SVC_WS_MESSAGE || ev->binary)
        return;
    cJSON *msg = cJSON_ParseWithLength(ev->data, ev->len);
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(msg, "type"));
    if (type && !strcmp(type, "ready") && !u->ready) {
        u->ready = 1;
        r->n_ready++;
    } else if (type && u->busy && cJSON_GetObjectItemCaseSensitive(msg, "id") &&
               (!strcmp(type, "reply") || !strcmp(type, "error"))) {
        double now = bench_now_s();
        tally_add(&r->t, u->t_sent, 1000 * (now - u->t_sent), !strcmp(type, "reply") ? 0 : 1);
        u->busy = 0;
        r->running--;
        if (r->talk && now < r->t.t_end)
            send_turn(r, u);
    }
    cJSON_Delete(msg);
}

/* Opens `clients` connections and waits (up to 120 s) until each has its `ready`. */
static int connect_all(svc_ws_client **c, ws_run *r, const char *url, int clients)
{
    svc_ws_client_params p = svc_ws_client_params_default();
    p.on_event = on_event;
    p.connect_timeout_s = 60;
    parley_status st;
    if ((st = svc_ws_client_open(&p, c)) != PARLEY_OK) {
        fprintf(stderr, "ws_bench: %s\n", parley_errmsg());
        return -1;
    }
    for (int i = 0; i < clients; i++) {
        r->users[i].index = i;
        r->users[i].run = r;
        if ((st = svc_ws_connect(*c, url, &r->users[i], &r->users[i].conn)) != PARLEY_OK) {
            fprintf(stderr, "ws_bench: %s\n", parley_errmsg());
            return -1;
        }
    }
    double end = bench_now_s() + 120;
    while (r->n_ready + r->n_closed < clients && bench_now_s() < end)
        if (svc_ws_client_service(*c, 100) != PARLEY_OK)
            return -1;
    if (r->n_ready < clients) {
        fprintf(stderr, "ws_bench: %d of %d connections ready; %s\n", r->n_ready, clients,
                *r->why ? r->why : "the others timed out");
        return -1;
    }
    return 0;
}

static ws_run *ws_run_new(int clients)
{
    ws_run *r = calloc(1, sizeof *r + (size_t)clients * sizeof(user));
    if (r) {
        r->users = (user *)(r + 1);
        r->n = clients;
    }
    return r;
}

static int bench_ws(const char *url, int clients, double seconds, double warmup, long pid)
{
    svc_ws_client *c = NULL;
    ws_run *r = ws_run_new(clients);
    int rc = 1;
    if (!r || connect_all(&c, r, url, clients))
        goto done;
    r->talk = 1;
    r->t.t_count = bench_now_s() + warmup;
    r->t.t_end = r->t.t_count + seconds;
    r->t.pid = pid;
    r->t.cpu0 = -1;
    for (int i = 0; i < clients; i++)
        send_turn(r, &r->users[i]);
    while (r->running > 0 && !*r->why) {
        tally_tick(&r->t);
        if (svc_ws_client_service(c, 100) != PARLEY_OK)
            goto done;
    }
    if (*r->why)
        fprintf(stderr, "ws_bench: %s\n", r->why);
    else
        rc = report("ws", clients, &r->t);
done:
    svc_ws_client_close(c);
    free(r);
    return rc;
}

/* The resident memory of process `pid` in MiB, or -1. */
static double rss_mib(long pid)
{
    char path[64], line[256];
    double kib = -1;
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atof(line + 6);
    if (f)
        fclose(f);
    return kib < 0 ? -1 : kib / 1024;
}

static int bench_idle(const char *url, int clients, double seconds, long pid)
{
    svc_ws_client *c = NULL;
    ws_run *r = ws_run_new(clients);
    int rc = 1;
    double before = rss_mib(pid);
    if (!r || before < 0 || connect_all(&c, r, url, clients))
        goto done;
    double end = bench_now_s() + seconds;
    while (bench_now_s() < end && r->n_closed == 0)
        if (svc_ws_client_service(c, 100) != PARLEY_OK)
            goto done;
    double with = rss_mib(pid);
    printf("{\"idle_connections\":%d,\"open_after_s\":%d,\"server_rss_mib_before\":%.1f,"
           "\"server_rss_mib\":%.1f,\"per_connection_kib\":%.1f}\n",
           clients - r->n_closed, (int)seconds, before, with, (with - before) * 1024 / clients);
    rc = r->n_closed ? 1 : 0;
    if (r->n_closed)
        fprintf(stderr, "ws_bench: %d connections closed while idle; %s\n", r->n_closed, r->why);
done:
    svc_ws_client_close(c);
    free(r);
    return rc;
}

/* ---- over a graph's stdin and stdout ---- */

typedef struct {
    int in, out; /* the child's stdin (we write) and stdout (we read) */
    char *wbuf, *rbuf;
    size_t wlen, wcap, rlen, rcap;
} pipes;

static int queue_line(pipes *p, int user, unsigned long n)
{
    char line[192];
    int len = snprintf(line, sizeof line, "{\"user\":\"bench-%d\",\"text\":\"%s\"}\n", user,
                       bench_utterance(user, n));
    if (p->wlen + (size_t)len > p->wcap) {
        size_t cap = (p->wlen + (size_t)len) * 2;
        char *w = realloc(p->wbuf, cap);
        if (!w)
            return -1;
        p->wbuf = w;
        p->wcap = cap;
    }
    memcpy(p->wbuf + p->wlen, line, (size_t)len);
    p->wlen += (size_t)len;
    return 0;
}

static pid_t spawn(char **argv, pipes *p)
{
    int in[2], out[2];
    if (pipe(in) || pipe(out))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    p->in = in[1];
    p->out = out[0];
    fcntl(p->in, F_SETFL, O_NONBLOCK);
    return pid;
}

/* Takes the whole lines read so far: each reply finishes its user's turn. */
static int take_lines(pipes *p, tally *t, double *t_sent, unsigned long *sent, long *running)
{
    char *nl, *start = p->rbuf;
    while ((nl = memchr(start, '\n', p->rlen - (size_t)(start - p->rbuf)))) {
        cJSON *msg = cJSON_ParseWithLength(start, (size_t)(nl - start));
        const char *who = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(msg, "user"));
        int u = who && !strncmp(who, "bench-", 6) ? atoi(who + 6) : -1;
        if (u >= 0) {
            double now = bench_now_s();
            tally_add(t, t_sent[u], 1000 * (now - t_sent[u]),
                      cJSON_GetObjectItemCaseSensitive(msg, "error") != NULL);
            (*running)--;
            if (now < t->t_end) {
                t_sent[u] = now;
                if (queue_line(p, u, sent[u]++))
                    return -1;
                (*running)++;
            }
        }
        cJSON_Delete(msg);
        start = nl + 1;
    }
    p->rlen -= (size_t)(start - p->rbuf);
    memmove(p->rbuf, start, p->rlen);
    return 0;
}

static int bench_stdin(char **argv, int clients, double seconds, double warmup)
{
    pipes p = { .rcap = 1 << 20 };
    tally t = { 0 };
    double *t_sent = calloc((size_t)clients, sizeof *t_sent);
    unsigned long *sent = calloc((size_t)clients, sizeof *sent);
    long running = 0;
    int rc = 1;
    p.rbuf = malloc(p.rcap);
    pid_t pid = t_sent && sent && p.rbuf ? spawn(argv, &p) : -1;
    if (pid < 0)
        goto done;
    t.t_count = bench_now_s() + warmup;
    t.t_end = t.t_count + seconds;
    t.pid = pid;
    t.cpu0 = -1;
    for (int u = 0; u < clients; u++, running++) {
        t_sent[u] = bench_now_s();
        if (queue_line(&p, u, sent[u]++))
            goto done;
    }
    while (running > 0) {
        tally_tick(&t);
        struct pollfd fds[2] = { { p.out, POLLIN, 0 }, { p.in, p.wlen ? POLLOUT : 0, 0 } };
        if (poll(fds, 2, 100) == 0 && bench_now_s() > t.t_end + 60) {
            fprintf(stderr, "ws_bench: stdin: turns still unanswered 60 s after the end\n");
            goto done;
        }
        if (fds[1].revents & POLLOUT) {
            ssize_t n = write(p.in, p.wbuf, p.wlen);
            if (n > 0) {
                memmove(p.wbuf, p.wbuf + n, p.wlen - (size_t)n);
                p.wlen -= (size_t)n;
            }
        }
        if (fds[0].revents & (POLLIN | POLLHUP)) {
            ssize_t n = read(p.out, p.rbuf + p.rlen, p.rcap - p.rlen);
            if (n <= 0) {
                fprintf(stderr, "ws_bench: stdin: the graph ended early\n");
                goto done;
            }
            p.rlen += (size_t)n;
            if (take_lines(&p, &t, t_sent, sent, &running))
                goto done;
        }
    }
    rc = report("stdin", clients, &t);
    t.ms = NULL;
done:
    if (pid > 0) {
        close(p.in);
        close(p.out);
        waitpid(pid, NULL, 0);
    }
    free(t.ms);
    free(t_sent);
    free(sent);
    free(p.wbuf);
    free(p.rbuf);
    return rc;
}

static void usage(void)
{
    fprintf(stderr, "usage: ws_bench ws URL CLIENTS SECONDS [WARMUP [SERVER_PID]]\n"
                    "       ws_bench stdin CLIENTS SECONDS [WARMUP] -- COMMAND...\n"
                    "       ws_bench idle URL CLIENTS SECONDS PID\n");
}

int main(int argc, char **argv)
{
    /* A thousand connections need a thousand descriptors: take what the hard limit allows. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 5 && !strcmp(argv[1], "ws"))
        return bench_ws(argv[2], atoi(argv[3]), atof(argv[4]), argc > 5 ? atof(argv[5]) : 1,
                        argc > 6 ? atol(argv[6]) : 0);
    if (argc >= 6 && !strcmp(argv[1], "idle"))
        return bench_idle(argv[2], atoi(argv[3]), atof(argv[4]), atol(argv[5]));
    if (argc >= 5 && !strcmp(argv[1], "stdin")) {
        int dash = 4;
        while (dash < argc && strcmp(argv[dash], "--"))
            dash++;
        if (dash + 1 < argc)
            return bench_stdin(argv + dash + 1, atoi(argv[2]), atof(argv[3]),
                               dash > 4 ? atof(argv[4]) : 1);
    }
    usage();
    return 2;
}
