/* cmd_stream.c — `parley stream`: the command-line client of a parley websocket server.
 *
 * It connects (services/ws_client.h), optionally sends a config (`--user`, the WAV file's
 * rate), then typed turns (`--text`, or lines of standard input with `-`), each waiting for
 * its reply unless --no-wait, or a WAV file as ~100 ms binary frames at real-time pace (or
 * --fast), then `{"eof":1}`, and waits for the server to close. Every text message from the
 * server is printed as one JSON line on stdout. The exit code says whether every turn was
 * answered with a reply and the server closed normally. The protocol itself is the server's
 * (docs/websocket.md); this file only speaks it.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sdk/cli/cli.h"
#include "services/ws_client.h"

#define FRAME_MS 100

typedef struct {
    svc_ws_conn *conn;
    int readies;      /* `ready` messages so far */
    long sent;        /* typed turns sent (their ids are 1..sent) */
    long answered;    /* replies and errors that carry one of those ids */
    long errors;      /* every `error` message */
    long config_errs; /* `error` messages without an id (a refused config, audio) */
    int closed;       /* the connection is over; the fields below say how */
    parley_status st;
    int code, by_server, http;
    char text[200];
} stream;

typedef struct {
    const char *url, *input, *token, *user, *ca;
    const char **texts;
    int n_texts, no_wait, fast, insecure, timeout_s;
} options;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Prints "parley stream: MESSAGE" to stderr; returns 1 (the exit code of a failure). */
static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("parley stream: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

/* Copies at most cap - 1 bytes of what a server sent into dst, each control character (C0,
 * DEL, and C1 as UTF-8 writes it) as '?', so nothing the server chose can drive the terminal
 * (escape sequences, a bell). */
static void printable(char *dst, size_t cap, const char *src)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p && o + 1 < cap; p++) {
        int c1 = p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
        dst[o++] = *p < 0x20 || *p == 0x7f || c1 ? '?' : (char)*p;
        p += c1;
    }
    dst[o] = '\0';
}

/* Prints a server message as one JSON line and counts what it answers. */
static void on_message(stream *s, const char *data, size_t len)
{
    cJSON *msg = cJSON_ParseWithLength(data, len);
    char *line = msg ? cJSON_PrintUnformatted(msg) : NULL;
    if (!line) {
        char shown[201];
        printable(shown, sizeof shown, data);
        fprintf(stderr, "parley stream: the server sent a message that is not JSON: %s\n", shown);
        s->errors++;
        svc_ws_close(s->conn, 1002, "not JSON"); /* no answer can be told apart any more */
        cJSON_Delete(msg);
        return;
    }
    printf("%s\n", line);
    fflush(stdout);
    free(line);
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(msg, "type"));
    int has_id = cJSON_GetObjectItemCaseSensitive(msg, "id") != NULL;
    if (type && !strcmp(type, "ready"))
        s->readies++;
    else if (type && !strcmp(type, "error")) {
        s->errors++;
        s->config_errs += !has_id;
    }
    if (type && (!strcmp(type, "reply") || !strcmp(type, "error")) && has_id)
        s->answered++;
    cJSON_Delete(msg);
}

static void on_event(svc_ws_conn *conn, const svc_ws_event *ev, void *user)
{
    stream *s = user;
    (void)conn;
    if (ev->type == SVC_WS_MESSAGE && !ev->binary)
        on_message(s, ev->data, ev->len);
    else if (ev->type == SVC_WS_CLOSED) {
        s->closed = 1;
        s->st = ev->status;
        s->code = ev->close_code;
        s->by_server = ev->by_server;
        s->http = ev->http_status;
        printable(s->text, sizeof s->text, ev->text);
    }
}

enum { WAIT_READY, WAIT_ANSWERS, WAIT_CLOSE };

/* Runs the loop until the condition holds (1), the connection ends first (0) or `timeout_s`
 * passes (-1; also when the loop itself fails, which is said here). */
static int wait_for(svc_ws_client *c, stream *s, int what, long n, int timeout_s)
{
    double end = now_s() + timeout_s;
    for (;;) {
        int ok = what == WAIT_READY     ? s->readies >= n || s->config_errs > 0
                 : what == WAIT_ANSWERS ? s->answered >= n
                                        : s->closed;
        if (ok)
            return 1;
        if (s->closed)
            return 0;
        double left = end - now_s();
        if (left <= 0)
            return -1;
        if (svc_ws_client_service(c, left > 0.1 ? 100 : (int)(left * 1000) + 1) != PARLEY_OK)
            return -fail("%s", parley_errmsg());
    }
}

static parley_status send_json(stream *s, cJSON *msg)
{
    char *text = msg ? cJSON_PrintUnformatted(msg) : NULL;
    parley_status st = text ? svc_ws_send(s->conn, text, strlen(text), 0) : PARLEY_ERR_NOMEM;
    free(text);
    cJSON_Delete(msg);
    return st;
}

/* Sends one typed turn with the next id. */
static parley_status send_turn(stream *s, const char *text)
{
    cJSON *msg = cJSON_CreateObject();
    if (msg && (!cJSON_AddStringToObject(msg, "text", text) ||
                !cJSON_AddNumberToObject(msg, "id", (double)(s->sent + 1)))) {
        cJSON_Delete(msg);
        msg = NULL;
    }
    s->sent++;
    return send_json(s, msg);
}

/* The WAV file's format and where its samples start. */
typedef struct {
    FILE *f;
    unsigned rate;
    uint32_t data_bytes;
} wav;

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Opens `path` and reads its RIFF header up to the data chunk; only 16-bit PCM mono passes.
 * Prints the reason and returns -1 otherwise. */
static int wav_open(const char *path, wav *w)
{
    unsigned char h[12], ch[8], fmt[16];
    int have_fmt = 0;
    if (!(w->f = fopen(path, "rb")))
        return -fail("%s: cannot open the file: %s", path, strerror(errno));
    if (fread(h, 1, 12, w->f) != 12 || memcmp(h, "RIFF", 4) || memcmp(h + 8, "WAVE", 4))
        return -fail("%s: not a WAV file (no RIFF/WAVE header)", path);
    while (fread(ch, 1, 8, w->f) == 8) {
        uint32_t size = le32(ch + 4);
        if (!memcmp(ch, "fmt ", 4)) {
            if (size < 16 || fread(fmt, 1, 16, w->f) != 16 ||
                fseek(w->f, (long)(size - 16 + (size & 1)), SEEK_CUR))
                return -fail("%s: a truncated fmt chunk", path);
            unsigned format = fmt[0] | fmt[1] << 8, channels = fmt[2] | fmt[3] << 8,
                     bits = fmt[14] | fmt[15] << 8;
            w->rate = le32(fmt + 4);
            if (format != 1 || channels != 1 || bits != 16) {
                fprintf(stderr,
                        "parley stream: %s: format %u, %u channel(s), %u bits per sample; only "
                        "16-bit PCM mono is sent (convert: sox IN -c 1 -b 16 -e signed OUT.wav)\n",
                        path, format, channels, bits);
                return -1;
            }
            if (w->rate < 8000 || w->rate > 48000)
                return -fail("%s: %u Hz; the protocol takes 8000 to 48000 (convert: sox IN -r "
                             "16000 OUT.wav)",
                             path, w->rate);
            have_fmt = 1;
        } else if (!memcmp(ch, "data", 4)) {
            if (!have_fmt)
                return -fail("%s: the data chunk comes before the fmt chunk", path);
            w->data_bytes = size;
            return 0;
        } else if (fseek(w->f, (long)size + (size & 1), SEEK_CUR)) {
            break;
        }
    }
    return -fail("%s: no data chunk", path);
}

/* Sends the samples as ~100 ms binary frames, paced to real time unless `fast`; a frame
 * goes out only when the previous ones left, so the queue stays short. Returns -1 when the
 * connection ended or the loop failed. */
static int send_wav(svc_ws_client *c, stream *s, wav *w, int fast)
{
    size_t frame = (size_t)w->rate * 2 * FRAME_MS / 1000, left = w->data_bytes & ~(uint32_t)1;
    size_t sent = 0;
    unsigned char *buf = malloc(frame);
    double t0 = now_s();
    int rc = -1;
    if (!buf)
        goto done;
    for (long i = 0; left > 0 && !s->closed; i++) {
        double due = fast ? 0 : t0 + i * FRAME_MS / 1000.0;
        while (!s->closed && (now_s() < due || svc_ws_pending(s->conn) > 4)) {
            double wait = due - now_s();
            if (svc_ws_client_service(c, wait > 0.01 ? (int)(wait * 1000) : 10) != PARLEY_OK)
                goto done;
        }
        size_t n = fread(buf, 1, left < frame ? left : frame, w->f);
        n &= ~(size_t)1;
        if (n == 0 || s->closed)
            break;
        if (svc_ws_send(s->conn, buf, n, 1) != PARLEY_OK)
            goto done;
        left -= n;
        sent += n;
    }
    /* The last frame's 100 ms pass before {"eof":1}, as they would from a microphone. */
    while (!fast && !s->closed && now_s() < t0 + (double)sent / (2.0 * w->rate))
        if (svc_ws_client_service(c, 10) != PARLEY_OK)
            goto done;
    rc = s->closed ? -1 : 0;
done:
    free(buf);
    return rc;
}

/* Sends the typed turns: the --text values, then standard input's lines when `input` is
 * "-"; each waits for its answer unless no_wait. Returns -1 when the connection ended or a
 * reply did not come in time (then the timeout is reported). */
static int send_texts(svc_ws_client *c, stream *s, const options *o)
{
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    for (int i = 0; rc == 0; i++) {
        const char *text = NULL;
        if (i < o->n_texts)
            text = o->texts[i];
        else if (o->input && !strcmp(o->input, "-")) {
            ssize_t n = getline(&line, &cap, stdin);
            if (n < 0)
                break;
            while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                line[--n] = '\0';
            if (strspn(line, " \t") == (size_t)n)
                continue; /* a blank line is no turn */
            text = line;
        } else
            break;
        if (send_turn(s, text) != PARLEY_OK) {
            rc = -1;
            break;
        }
        int w = o->no_wait ? (svc_ws_client_service(c, 0), 1)
                           : wait_for(c, s, WAIT_ANSWERS, s->sent, o->timeout_s);
        if (w < 0)
            fail("no answer to turn %ld within %d s", s->sent, o->timeout_s);
        rc = w > 0 ? 0 : -1;
    }
    free(line);
    return rc;
}

/* Sends {"config": {...}} with the user and/or rate, and waits for the second `ready`. */
static int configure(svc_ws_client *c, stream *s, const options *o, unsigned rate)
{
    cJSON *msg = cJSON_CreateObject(), *cfg = cJSON_AddObjectToObject(msg, "config");
    if (!cfg || (o->user && !cJSON_AddStringToObject(cfg, "user", o->user)) ||
        (rate && !cJSON_AddNumberToObject(cfg, "sample_rate", rate))) {
        cJSON_Delete(msg);
        return -fail("out of memory");
    }
    if (send_json(s, msg) != PARLEY_OK)
        return -1;
    int w = wait_for(c, s, WAIT_READY, 2, o->timeout_s);
    if (w < 0)
        fail("no answer to the config within %d s", o->timeout_s);
    if (w > 0 && s->config_errs)
        return -fail("the server refused the config%s", o->user ? " (--user)" : "");
    return w > 0 ? 0 : -1;
}

/* How the session ended, as the exit code. */
static int verdict(const stream *s, const options *o)
{
    if (!s->closed)
        return fail("the server did not close the connection within %d s", o->timeout_s);
    if (s->st != PARLEY_OK)
        return fail("%s", s->text);
    if (s->by_server && s->code != 1000)
        return fail("the server closed the connection: %s (code %d)",
                    *s->text ? s->text : "no reason given", s->code);
    if (s->answered < s->sent)
        return fail("%ld turn(s) got no answer", s->sent - s->answered);
    if (s->errors)
        return fail("the server answered with %ld error(s)", s->errors);
    return 0;
}

static int run(const options *o)
{
    stream s = { 0 };
    wav w = { 0 };
    svc_ws_client *c = NULL;
    svc_ws_client_params p = svc_ws_client_params_default();
    p.on_event = on_event;
    p.token = o->token;
    p.ca_file = o->ca;
    p.insecure = o->insecure;
    p.connect_timeout_s = o->timeout_s;
    parley_status st;
    int rc = 1, ok = 0;
    int is_wav = o->input && strcmp(o->input, "-");
    if (is_wav && wav_open(o->input, &w))
        goto done;
    if ((st = svc_ws_client_open(&p, &c)) != PARLEY_OK ||
        (st = svc_ws_connect(c, o->url, &s, &s.conn)) != PARLEY_OK) {
        rc = fail("%s", parley_errmsg());
        goto done;
    }
    int r = wait_for(c, &s, WAIT_READY, 1, o->timeout_s);
    if (r < 0)
        fail("no ready message from %s within %d s", o->url, o->timeout_s);
    ok = r > 0 && (!o->user && !is_wav ? 1 : configure(c, &s, o, w.rate) == 0) &&
         (is_wav ? send_wav(c, &s, &w, o->fast) == 0 : send_texts(c, &s, o) == 0);
    if (ok && svc_ws_send(s.conn, "{\"eof\":1}", 9, 0) == PARLEY_OK)
        wait_for(c, &s, WAIT_CLOSE, 0, o->timeout_s);
    if (ok || s.closed)
        rc = verdict(&s, o); /* otherwise what went wrong was said already */
done:
    svc_ws_client_close(c);
    if (w.f)
        fclose(w.f);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: parley stream URL [FILE.wav|-] [--text T]... [--token T] [--user ID]\n"
               "                     [--no-wait] [--fast] [--timeout S] [--ca FILE] [--insecure]\n"
               "\n"
               "Talks to a parley websocket server (a graph with a ws.server node) at URL\n"
               "(ws://HOST:PORT/ or wss://...) and prints every message it sends as one JSON\n"
               "line. Typed turns come from --text (repeatable) and, with '-', from the lines\n"
               "of standard input, one turn each; a WAV file (16-bit PCM mono) is sent as\n"
               "100 ms binary frames at real-time pace. Then {\"eof\":1}, and the server closes.\n"
               "  --text T      a typed turn (repeatable, before standard input's lines)\n"
               "  --token T     sent as 'Authorization: Bearer T'\n"
               "  --user ID     continue the conversation of user ID (a ready id, or any id\n"
               "                with a token the server trusts)\n"
               "  --no-wait     send the next turn without waiting for the answer\n"
               "  --fast        send the WAV file as fast as the connection takes it\n"
               "  --timeout S   seconds to wait for the connection, each answer and the close\n"
               "                (default 30)\n"
               "  --ca FILE     wss: trust the CAs of this PEM file\n"
               "  --insecure    wss: accept any certificate (self-signed)\n"
               "Exit 0 when every turn got a reply and the server closed normally; 1 when the\n"
               "connection failed or was refused (e.g. HTTP 401), a turn got an error or no\n"
               "answer, or the server closed abnormally; 2 on a usage error.\n");
}

int cmd_stream(int argc, char **argv)
{
    options o = { .timeout_s = 30 };
    int rc = 2;
    if (argc >= 2 && cli_is_help(argv[1])) {
        usage(stdout);
        return 0;
    }
    if (!(o.texts = calloc((size_t)argc, sizeof *o.texts)))
        return fail("out of memory");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **opt = !strcmp(a, "--token")  ? &o.token
                           : !strcmp(a, "--user") ? &o.user
                           : !strcmp(a, "--ca")   ? &o.ca
                                                  : NULL;
        if ((opt || !strcmp(a, "--text") || !strcmp(a, "--timeout")) && !v) {
            fprintf(stderr, "parley stream: %s wants a value\n", a);
            goto done;
        }
        if (opt) {
            *opt = argv[++i];
        } else if (!strcmp(a, "--text")) {
            o.texts[o.n_texts++] = argv[++i];
        } else if (!strcmp(a, "--timeout")) {
            if (cli_parse_int("--timeout", argv[++i], 1, 86400, &o.timeout_s))
                goto done;
        } else if (!strcmp(a, "--no-wait") || !strcmp(a, "--fast") || !strcmp(a, "--insecure")) {
            *(a[2] == 'n' ? &o.no_wait : a[2] == 'f' ? &o.fast : &o.insecure) = 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "parley stream: unknown option '%s'\n", a);
            goto done;
        } else if (!o.url) {
            o.url = a;
        } else if (!o.input) {
            o.input = a;
        } else {
            fprintf(stderr, "parley stream: one input at most ('%s' and '%s')\n", o.input, a);
            goto done;
        }
    }
    if (!o.url) {
        usage(stderr);
        goto done;
    }
    if (o.input && strcmp(o.input, "-") && o.n_texts) {
        fprintf(stderr, "parley stream: a WAV file and --text do not go together\n");
        goto done;
    }
    rc = run(&o);
done:
    free(o.texts);
    return rc;
}
