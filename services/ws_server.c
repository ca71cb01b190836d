/* ws_server.c — the `ws.server` node's workings: parley on the network, over libwebsockets.
 * Built only with libwebsockets; its ports and params are services/ws_node.c.
 *
 * Both where turns start and where they end (like `api`): a client's {"text": ...} message
 * becomes a turn at the `text` output, and the finished turn comes back at the `reply`
 * input, which routes it by the turn's sequence number to the connection that asked (a
 * connection that is gone gets nothing; its dialog context was stored anyway). The protocol
 * (docs/websocket.md#the-protocol-version-1) is read by services/ws_msg.c; per-connection state and
 * the table of turns in flight are services/ws_conn.c. This file is the I/O: the lws
 * context (made in create, so a port that cannot be bound fails the graph's open), the
 * service loop in run(), the callbacks, the handshake's checks (token, connection cap), the
 * HTTP side on the same port (/healthz, /metrics, static files; Rasa's HTTP API is
 * services/ws_rest.c, handed its paths here), its metrics, and stopping.
 *
 * Threads: one service thread (run()) does every lws call but lws_cancel_service (and the
 * context's creation and destruction, in create and destroy, before and after it). The graph's
 * workers (process()) put the reply onto its connection's queue under `mu`, mark the
 * connection dirty, and wake the service thread with lws_cancel_service(); the service thread
 * asks for a writeable callback for each dirty connection and writes one message per
 * callback. Memory per connection is bounded by one count (ws_conn_held: unwritten messages,
 * the message being read, room for the answers of its turns in flight): at HELD_PAUSE bytes,
 * or MAX_INFLIGHT turns in flight, the server stops reading from that client
 * (lws_rx_flow_control) until it has drained; past max_message_bytes + HELD_SLACK (answers to
 * turns already in flight, for a client that does not read them) it is dropped, and logged.
 * Audio is read at most AUDIO_BURST_MS ahead of real time: a client that streams faster is
 * not read until its audio is due (a timer, never a wait on the service thread), so
 * flooders cannot fill the recognizer's queues, on which the service thread would block.
 */
#include <cjson/cJSON.h>
#include <libwebsockets.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "pipeline/metrics.h"
#include "pipeline/node.h"
#include "sdk/base/alloc.h"
#include "sdk/base/sync.h"
#include "services/reply_json.h"
#include "services/ws_conn.h"
#include "services/ws_msg.h"
#include "services/ws_rest.h"
#include "services/ws_server.h"
#include "services/ws_voice.h"

enum {
    MAX_INFLIGHT = 8,      /* turns of one connection in the graph at once */
    HELD_PAUSE = 1 << 20,  /* bytes held for a connection (less the message it is sending)
                            * before reading from it stops */
    HELD_SLACK = 2 << 20,  /* held past max_message_bytes + this: the connection is dropped */
    AUDIO_BURST_MS = 5000, /* how far a connection's audio may run ahead of real time */
    MAX_ERRORS = 32,       /* protocol errors one connection may make before it is closed */
    DRAIN_SECONDS = 10,    /* how long a stop waits for the turns in flight */
    CLOSE_SECONDS = 2,     /* then how long for the connections to close */
    PROTOCOL_VERSION = 1,  /* the "protocol" of the ready message */
};

/* Why a handshake or a message was refused: the label values of the refusal metrics. */
enum { REFUSED_TOKEN, REFUSED_FULL, REFUSED_STOPPING, N_REFUSED };
enum { BAD_MESSAGE, BAD_CONFIG, BAD_AUDIO, BAD_TOO_LARGE, BAD_TOO_MANY, BAD_MEMORY, N_BAD };
static const char *const refused_names[N_REFUSED] = { "token", "full", "stopping" };
static const char *const bad_names[N_BAD] = { "message",   "config",          "audio",
                                              "too_large", "too_many_errors", "over_memory" };

typedef struct ws_metrics {
    pipe_gauge *open, *held;
    pipe_counter *accepted, *refused[N_REFUSED], *in, *out, *bad[N_BAD];
} ws_metrics;

typedef struct ws_state {
    pipe_node *node;
    ws_metrics m;
    struct lws_context *ctx;
    struct lws_protocols protocols[2];
    struct lws_http_mount mounts[2]; /* /healthz and /metrics */
    char static_root[PATH_MAX];      /* static_dir's real path, or "" */
    lws_retry_bo_t retry;
    lws_sorted_usec_list_t tick; /* wakes the loop while stopping */
    const char *token;
    int trust_user_ids;
    int takes_text;      /* the text output links somewhere */
    int takes_audio;     /* the audio output links somewhere (an asr.* node) */
    pipe_seg_params seg; /* how a connection's audio is cut into utterances */
    ws_rest *rest;       /* Rasa's HTTP API on the same port */
    int max_connections;
    size_t max_message_bytes;
    size_t held_max; /* max_message_bytes + HELD_SLACK */
    int tls;

    pthread_mutex_t mu; /* guards what follows, and every ws_conn's queue and counters */
    ws_conn *conns;     /* the open connections */
    ws_conn *dirty;     /* those with something to write or to close */
    ws_turns *turns;    /* the turns in flight */
    int n_conns;
    int inflight;

    atomic_int stopping;
    atomic_int serving; /* run() is in its loop and not stopping: /healthz says 200 */
} ws_state;

/* What lws keeps per connection (HTTP or websocket). */
typedef struct ws_pss {
    ws_conn *conn;                    /* websocket connections */
    lws_sorted_usec_list_t audio_due; /* resumes reading when its audio is due */
    ws_rest_req *rest;                /* HTTP: a request of Rasa's API */
    unsigned char *body;              /* HTTP: the response body, after LWS_PRE bytes of headroom */
    size_t body_len;
} ws_pss;

/* ---- Small helpers ---- */

/* Whether a and b are equal, in a time that does not depend on where they differ. */
static int same_secret(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b);
    unsigned diff = la != lb;
    for (size_t i = 0; i < lb; i++)
        diff |= (unsigned char)(i < la ? a[i] : 0) ^ (unsigned char)b[i];
    return diff == 0;
}

/* Whether the handshake on wsi presents the node's token (header or ?token=). */
static int token_ok(ws_state *s, struct lws *wsi)
{
    char buf[1024];
    int n = lws_hdr_copy(wsi, buf, sizeof buf, WSI_TOKEN_HTTP_AUTHORIZATION);
    if (n > 7 && !strncasecmp(buf, "Bearer ", 7) && same_secret(buf + 7, (size_t)n - 7, s->token))
        return 1;
    const char *v = lws_get_urlarg_by_name(wsi, "token=", buf, sizeof buf);
    return v && same_secret(v, strlen(v), s->token);
}

static parley_status fresh_id(char *out)
{
    unsigned char r[16];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        return pl_fail(PARLEY_ERR_IO, "getrandom: no random bytes for a user id");
    strcpy(out, "u-");
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 + 2 * i, 3, "%02x", r[i]);
    return PARLEY_OK;
}

/* Puts c on the dirty list (under s->mu). */
static void mark_dirty(ws_state *s, ws_conn *c)
{
    if (c->dirty)
        return;
    c->dirty = 1;
    c->dirty_next = s->dirty;
    s->dirty = c;
}

/* Counts what c holds into the gauge (under s->mu). Past held_max, c is marked to be dropped
 * (over_memory: on_wake closes it) and its unwritten messages, then and later, are freed. */
static void count_held(ws_state *s, ws_conn *c)
{
    size_t held = ws_conn_held(c);
    if (held > s->held_max || c->over_memory) {
        if (!c->over_memory) {
            c->over_memory = held;
            mark_dirty(s, c);
            lws_cancel_service(s->ctx); /* on_wake drops it, whichever thread this is */
        }
        ws_out *o;
        while ((o = ws_conn_pop(c)))
            pl_free(o);
        held = ws_conn_held(c);
    }
    pipe_gauge_add(s->m.held, (int64_t)held - (int64_t)c->held);
    c->held = held;
}

/* Closes c once what is queued is written: code and reason (service thread). */
static void close_later(ws_conn *c, int code, const char *reason)
{
    if (c->close_code)
        return;
    c->close_code = code;
    snprintf(c->close_reason, sizeof c->close_reason, "%s", reason);
    lws_callback_on_writable(c->wsi);
}

/* Queues JSON object o (deleted here) to c when `made` (all its members were added), else
 * closes c: it cannot be told what it should be (service thread). */
static void send_obj(ws_state *s, ws_conn *c, cJSON *o, int made)
{
    char *text = made ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    pthread_mutex_lock(&s->mu);
    parley_status st = text ? ws_conn_push(c, text, strlen(text)) : PARLEY_ERR_NOMEM;
    count_held(s, c);
    pthread_mutex_unlock(&s->mu);
    cJSON_free(text);
    if (st != PARLEY_OK)
        close_later(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "out of memory");
    lws_callback_on_writable(c->wsi);
}

/* Sends {"type":"error","error":why,"id":id} for a protocol error of kind `bad` (-1: not the
 * client's fault); after MAX_ERRORS of the client's, closes with 1008. */
static void send_error(ws_state *s, ws_conn *c, int bad, const char *why, const cJSON *id)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *copy = id ? cJSON_Duplicate(id, 1) : NULL;
    int ok = o && cJSON_AddStringToObject(o, "type", "error") &&
             cJSON_AddStringToObject(o, "error", why) && (!id || copy);
    if (ok && copy && !(ok = cJSON_AddItemToObject(o, "id", copy)))
        cJSON_Delete(copy);
    send_obj(s, c, o, ok);
    if (bad < 0)
        return;
    pipe_counter_add(s->m.bad[bad], 1);
    if (++c->errors >= MAX_ERRORS) {
        pipe_counter_add(s->m.bad[BAD_TOO_MANY], 1);
        close_later(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "too many errors");
    }
}

static void send_ready(ws_state *s, ws_conn *c, int resumed)
{
    cJSON *o = cJSON_CreateObject();
    int ok = o && cJSON_AddStringToObject(o, "type", "ready") &&
             cJSON_AddNumberToObject(o, "protocol", PROTOCOL_VERSION) &&
             cJSON_AddStringToObject(o, "user", c->user) &&
             cJSON_AddBoolToObject(o, "resumed", resumed) &&
             cJSON_AddNumberToObject(o, "sample_rate", c->sample_rate);
    send_obj(s, c, o, ok);
}

static void pace(ws_state *s, ws_conn *c);

/* The timer of a connection whose audio ran ahead: it is due now. */
static void audio_due(lws_sorted_usec_list_t *sul)
{
    ws_pss *pss = lws_container_of(sul, ws_pss, audio_due);
    if (pss->conn)
        pace(pss->conn->server, pss->conn);
}

/* Stops reading from c while it has too much in flight or held, or its audio runs more
 * than AUDIO_BURST_MS ahead of real time; resumes when it has drained or the audio is due
 * (service thread). */
static void pace(ws_state *s, ws_conn *c)
{
    pthread_mutex_lock(&s->mu);
    count_held(s, c);
    int full = c->inflight >= MAX_INFLIGHT || c->held - c->rx_cap >= HELD_PAUSE;
    pthread_mutex_unlock(&s->mu);
    int64_t ahead = c->audio_due - pipe_now_ns() - (int64_t)AUDIO_BURST_MS * 1000000;
    if (ahead > 0) {
        ws_pss *pss = lws_wsi_user(c->wsi);
        lws_sul_schedule(s->ctx, 0, &pss->audio_due, audio_due, ahead / 1000 + 1);
        full = 1;
    }
    if (full != c->paused) {
        c->paused = full;
        lws_rx_flow_control(c->wsi, !full);
    }
}

/* ---- Audio (service thread, but on_utterance_end) ---- */

/* pipe_seg's on_end, on the service thread inside a feed: the utterance's last piece is
 * about to go into the graph; its turn is recorded first, so its reply finds c. */
static void on_utterance_end(void *ctx, const pipe_msg *last)
{
    ws_conn *c = ctx;
    ws_state *s = c->server;
    pthread_mutex_lock(&s->mu);
    if (ws_turns_add(s->turns, last->seq, c, NULL, ws_answer_room(0, 0)) == PARLEY_OK) {
        s->inflight++;
        c->inflight++;
        c->last_utt_seq = last->seq;
    }
    c->turns++;
    pthread_mutex_unlock(&s->mu);
}

static parley_status open_voice(ws_state *s, ws_conn *c)
{
    pipe_seg_params p = s->seg;
    p.ctx = c;
    c->server = s;
    parley_status st =
            ws_voice_open(s->node, WS_PORT_AUDIO, c->user, c->sample_rate, &p, &c->voice);
    if (st != PARLEY_OK)
        send_error(s, c, -1, parley_errmsg(), NULL);
    return st;
}

/* A feed or end that failed (the graph is closing, or out of memory): the utterance whose
 * last piece may not have gone in is answered here, and the audio starts afresh. */
static void audio_failed(ws_state *s, ws_conn *c)
{
    ws_conn *owner;
    cJSON *id = NULL;
    char why[256];
    snprintf(why, sizeof why, "audio: %s", parley_errmsg());
    pthread_mutex_lock(&s->mu);
    if (c->last_utt_seq && ws_turns_take(s->turns, c->last_utt_seq, &owner, &id)) {
        s->inflight--;
        c->inflight--;
    }
    c->last_utt_seq = 0;
    pthread_mutex_unlock(&s->mu);
    cJSON_Delete(id);
    ws_voice_close(c->voice);
    c->voice = NULL;
    send_error(s, c, -1, why, NULL);
}

/* The client's end of an utterance ({"end":1}; {"eof":1} with `told` 0: silence needs no
 * answer there). */
static void end_utterance(ws_state *s, ws_conn *c, int told)
{
    int sent = 0;
    if (c->voice && ws_voice_end(c->voice, &sent) != PARLEY_OK)
        audio_failed(s, c);
    else if (!sent && told)
        send_error(s, c, -1, "end: no speech since the last utterance (nothing to answer)", NULL);
    c->audio_refused = 0;
}

/* ---- The protocol's commands (service thread) ---- */

static void on_config(ws_state *s, ws_conn *c, const ws_cmd *cmd)
{
    if (c->turns) {
        send_error(s, c, BAD_CONFIG, "config: only before the first turn of a connection", NULL);
        return;
    }
    if (cmd->user && !ws_is_issued_id(cmd->user) && !c->authorized && !s->trust_user_ids) {
        send_error(s, c, BAD_CONFIG,
                   "config.user: only an id this server issued (u- and 32 hex digits) may be "
                   "resumed without the server's token; the connection keeps its fresh id",
                   NULL);
        return;
    }
    if (cmd->sample_rate)
        c->sample_rate = cmd->sample_rate;
    ws_voice_close(c->voice); /* opened again at the next audio, with the new rate or user */
    c->voice = NULL;
    if (cmd->user) {
        /* One connection per user: the newer takes over, the older one is told and closed. */
        for (ws_conn *o = s->conns; o; o = o->next)
            if (o != c && !strcmp(o->user, cmd->user))
                close_later(o, LWS_CLOSE_STATUS_POLICY_VIOLATION,
                            "another connection took over this user");
        snprintf(c->user, sizeof c->user, "%s", cmd->user);
        c->since = pipe_now_ns();
    }
    send_ready(s, c, cmd->user != NULL);
}

static void on_text(ws_state *s, ws_conn *c, const ws_cmd *cmd)
{
    pipe_msg *m = NULL;
    parley_status st;
    if (atomic_load(&s->stopping)) {
        send_error(s, c, -1, "the server is stopping: no new turns", cmd->id);
        return;
    }
    if (!s->takes_text) {
        send_error(s, c, BAD_MESSAGE,
                   "this graph takes no typed turns (the server's text output links nowhere)",
                   cmd->id);
        return;
    }
    if ((st = pipe_msg_new(pipe_node_graph(s->node), c->user, cmd->text, &m)) != PARLEY_OK) {
        send_error(s, c, BAD_MESSAGE, parley_errmsg(), cmd->id);
        return;
    }
    uint64_t seq = m->seq;
    size_t id_len = cJSON_IsString(cmd->id) ? strlen(cmd->id->valuestring) : 32;
    pthread_mutex_lock(&s->mu);
    if ((st = ws_turns_add(s->turns, seq, c, cmd->id, ws_answer_room(strlen(cmd->text), id_len))) ==
        PARLEY_OK) {
        s->inflight++;
        c->inflight++;
    }
    pthread_mutex_unlock(&s->mu);
    if (st != PARLEY_OK) {
        pipe_msg_free(m);
        send_error(s, c, -1, parley_errmsg(), cmd->id);
        return;
    }
    c->turns++;
    pace(s, c);
    if ((st = pipe_node_emit(s->node, WS_PORT_TEXT, m)) != PARLEY_OK) {
        /* The graph is closing: the turn went nowhere, so it is answered here. */
        ws_conn *owner;
        cJSON *id;
        pthread_mutex_lock(&s->mu);
        if (ws_turns_take(s->turns, seq, &owner, &id)) {
            s->inflight--;
            c->inflight--;
        }
        pthread_mutex_unlock(&s->mu);
        send_error(s, c, -1, "the server is stopping: no new turns", id);
        cJSON_Delete(id);
    }
}

static void on_message(ws_state *s, ws_conn *c)
{
    ws_cmd cmd;
    parley_status st = ws_msg_parse(c->rx ? (const char *)c->rx : "", c->rx_len, &cmd);
    pipe_counter_add(s->m.in, 1);
    if (st != PARLEY_OK)
        send_error(s, c, st == PARLEY_ERR_NOMEM ? -1 : BAD_MESSAGE, parley_errmsg(), cmd.id);
    else if (cmd.type == WS_CMD_CONFIG)
        on_config(s, c, &cmd);
    else if (cmd.type == WS_CMD_TEXT)
        on_text(s, c, &cmd);
    else if (cmd.type == WS_CMD_END)
        end_utterance(s, c, 1);
    else {
        end_utterance(s, c, 0);
        c->eof = 1; /* closed with 1000 once every turn is answered and written */
        c->audio_refused = 0;
        lws_callback_on_writable(c->wsi);
    }
    ws_cmd_clear(&cmd);
}

/* A piece of a binary message: audio, fed to the connection's utterances when the graph
 * has a recognizer, else answered once per utterance with an error. */
static void on_audio(ws_state *s, ws_conn *c, const void *in, size_t len, int last)
{
    parley_status st = PARLEY_OK;
    int64_t now = pipe_now_ns();
    c->rx_len += len; /* counted, not kept */
    c->audio_due = (c->audio_due > now ? c->audio_due : now) +
                   (int64_t)((double)len * 5e8 / c->sample_rate); /* 2 bytes a sample */
    if (s->takes_audio && !atomic_load(&s->stopping)) {
        if (!c->voice)
            st = open_voice(s, c);
        if (st == PARLEY_OK && (st = ws_voice_feed(c->voice, in, len)) != PARLEY_OK)
            audio_failed(s, c);
    }
    if (!last) {
        pace(s, c);
        return;
    }
    int odd = c->voice ? ws_voice_message_end(c->voice) : (int)(c->rx_len % 2);
    if (odd)
        send_error(s, c, BAD_AUDIO,
                   "audio: a binary message of an odd number of bytes (16-bit samples)", NULL);
    else if (!s->takes_audio && !c->audio_refused++)
        send_error(s, c, BAD_AUDIO,
                   "this graph has no speech recognizer: audio is not carried (send "
                   "{\"text\": ...} turns); the rest of this utterance is dropped",
                   NULL);
    ws_conn_rx_reset(c);
    pace(s, c);
}

static void on_receive(ws_state *s, ws_conn *c, struct lws *wsi, const void *in, size_t len)
{
    int last = lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi);
    if (c->close_code || c->eof)
        return; /* closing: what it sends now is not read */
    if (c->rx_len == 0)
        c->rx_binary = lws_frame_is_binary(wsi);
    if (c->rx_len + len > s->max_message_bytes) {
        pipe_counter_add(s->m.bad[BAD_TOO_LARGE], 1);
        close_later(c, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "message too large");
        return;
    }
    if (c->rx_binary) {
        on_audio(s, c, in, len, last);
        return;
    }
    if (ws_conn_rx_add(c, in, len, s->max_message_bytes) != PARLEY_OK) {
        close_later(c, LWS_CLOSE_STATUS_UNEXPECTED_CONDITION, "out of memory");
        return;
    }
    if (!last)
        return;
    on_message(s, c);
    ws_conn_rx_reset(c);
    pace(s, c);
}

/* ---- Connections opening, writing, closing (service thread) ---- */

static int on_established(ws_state *s, struct lws *wsi, ws_pss *pss)
{
    ws_conn *c = ws_conn_new(wsi, LWS_PRE);
    if (!c || fresh_id(c->user) != PARLEY_OK) {
        ws_conn_free(c);
        return -1;
    }
    c->sample_rate = WS_RATE_DEFAULT;
    c->since = pipe_now_ns();
    c->server = s;
    c->authorized = s->token[0] && token_ok(s, wsi);
    pss->conn = c;
    pthread_mutex_lock(&s->mu);
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->n_conns++;
    pthread_mutex_unlock(&s->mu);
    pipe_counter_add(s->m.accepted, 1);
    pipe_gauge_add(s->m.open, 1);
    send_ready(s, c, 0);
    return 0;
}

/* Forgets c, which is closing: its turns' replies are dropped, it leaves the dirty list,
 * and what it held leaves the count (under s->mu). */
static void forget_conn(ws_state *s, ws_conn *c)
{
    ws_turns_drop_conn(s->turns, c);
    for (ws_conn **p = &s->dirty; *p; p = &(*p)->dirty_next)
        if (*p == c) {
            *p = c->dirty_next;
            break;
        }
    pipe_gauge_add(s->m.held, -(int64_t)c->held);
    c->held = 0;
}

static void on_closed(ws_state *s, ws_pss *pss)
{
    ws_conn *c = pss->conn;
    if (!c)
        return;
    pss->conn = NULL;
    lws_sul_cancel(&pss->audio_due);
    ws_voice_close(c->voice); /* an utterance in progress is dropped; its context is kept */
    c->voice = NULL;
    pthread_mutex_lock(&s->mu);
    forget_conn(s, c);
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->n_conns--;
    pthread_mutex_unlock(&s->mu);
    pipe_gauge_add(s->m.open, -1);
    ws_conn_free(c);
}

/* Writes c's oldest queued message, or closes c when it is done; -1 closes. */
static int on_writeable(ws_state *s, ws_conn *c, struct lws *wsi)
{
    pace(s, c);
    pthread_mutex_lock(&s->mu);
    ws_out *o = ws_conn_pop(c);
    count_held(s, c);
    int more = c->out_head != NULL;
    int done = c->eof && c->inflight == 0;
    pthread_mutex_unlock(&s->mu);
    if (o) {
        int n = lws_write(wsi, o->data + LWS_PRE, o->len,
                          o->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);
        pl_free(o);
        if (n < 0)
            return -1;
        pipe_counter_add(s->m.out, 1);
        if (more || c->close_code || done)
            lws_callback_on_writable(wsi);
        return 0;
    }
    if (c->close_code) {
        lws_close_reason(wsi, (enum lws_close_status)c->close_code,
                         (unsigned char *)c->close_reason, strlen(c->close_reason));
        return -1;
    }
    if (done) {
        lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, (unsigned char *)"eof", 3);
        return -1;
    }
    return 0;
}

/* A connection over its memory limit: closed with 1008, or dropped within a second when the
 * close cannot be written (a client that does not read); logged once a second at most. */
static void drop_over_memory(ws_state *s, ws_conn *c)
{
    static pl_log_gate gate = PL_LOG_GATE_INIT(1000);
    pipe_counter_add(s->m.bad[BAD_MEMORY], 1);
    pl_log_gated(&gate, PARLEY_LOG_WARN,
                 "%s: dropped the connection of user %s: it held %zu bytes, over its limit of "
                 "%zu (answers it does not read)",
                 pipe_node_name(s->node), c->user, c->over_memory, s->held_max);
    close_later(c, LWS_CLOSE_STATUS_POLICY_VIOLATION, "over the connection's memory limit");
    lws_set_timeout(c->wsi, PENDING_TIMEOUT_CLOSE_SEND, 1);
}

/* The wake-up from another thread: ask to write to every connection with news. */
static void on_wake(ws_state *s)
{
    pthread_mutex_lock(&s->mu);
    while (s->dirty) {
        ws_conn *c = s->dirty;
        s->dirty = c->dirty_next;
        c->dirty = 0;
        if (c->over_memory && !c->close_code)
            drop_over_memory(s, c);
        lws_callback_on_writable(c->wsi);
    }
    pthread_mutex_unlock(&s->mu);
}

/* ---- HTTP on the same port ---- */

/* Answers an HTTP request with status and a plain-text body (copied); -1 closes. */
static int http_answer(struct lws *wsi, ws_pss *pss, unsigned status, const char *ctype,
                       const char *body, size_t len)
{
    unsigned char head[LWS_PRE + 512], *start = head + LWS_PRE, *p = start;
    unsigned char *end = head + sizeof head - 1;
    if (!(pss->body = pl_malloc(LWS_PRE + len + 1)))
        return -1;
    memcpy(pss->body + LWS_PRE, body, len);
    pss->body_len = len;
    if (lws_add_http_common_headers(wsi, status, ctype, len, &p, end) ||
        lws_finalize_write_http_header(wsi, start, &p, end))
        return -1;
    lws_callback_on_writable(wsi);
    return 0;
}

/* The real path of `want` (every link resolved) into real, when it lies under static_dir's
 * real path; *sb its stat. */
static int under_root(const ws_state *s, const char *want, char *real, struct stat *sb)
{
    size_t n = strlen(s->static_root);
    return realpath(want, real) && !strncmp(real, s->static_root, n) &&
           (real[n] == '/' || real[n] == '\0') && stat(real, sb) == 0;
}

/* A file of static_dir: served only when its real path is a regular file under the folder's
 * real path, so a link inside the folder never serves what lies outside it (404); a folder
 * serves its index.html, checked the same way. */
static int serve_static(const ws_state *s, struct lws *wsi, const char *uri)
{
    char want[PATH_MAX], real[PATH_MAX];
    struct stat sb;
    int ok = snprintf(want, sizeof want, "%s%s", s->static_root, uri) < (int)sizeof want &&
             under_root(s, want, real, &sb);
    if (ok && S_ISDIR(sb.st_mode))
        ok = snprintf(want, sizeof want, "%s/index.html", real) < (int)sizeof want &&
             under_root(s, want, real, &sb);
    if (!ok || !S_ISREG(sb.st_mode)) {
        lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL);
        return -1;
    }
    const char *mime = lws_get_mimetype(real, NULL);
    int n = lws_serve_http_file(wsi, real, mime ? mime : "application/octet-stream", NULL, 0);
    return n < 0 || (n > 0 && lws_http_transaction_completed(wsi)) ? -1 : 0;
}

static int on_http(ws_state *s, struct lws *wsi, ws_pss *pss)
{
    char uri[256];
    if (lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) <= 0)
        uri[0] = 0;
    if (!strcmp(uri, "/metrics")) {
        char *text = NULL;
        size_t len = 0;
        if (pipe_metrics_render(pipe_node_graph(s->node), &text, &len) != PARLEY_OK) {
            pipe_node_error(s->node, PARLEY_ERR_NOMEM);
            lws_return_http_status(wsi, HTTP_STATUS_INTERNAL_SERVER_ERROR, NULL);
            return -1;
        }
        int r = http_answer(wsi, pss, 200, "text/plain; version=0.0.4", text, len);
        pl_free(text);
        return r;
    }
    if (!strcmp(uri, "/healthz")) {
        int up = atomic_load(&s->serving) &&
                 pipe_graph_get_state(pipe_node_graph(s->node)) == PIPE_STATE_RUNNING;
        return http_answer(wsi, pss, up ? 200 : 503, "text/plain", up ? "ok\n" : "unavailable\n",
                           up ? 3 : 12);
    }
    if (s->static_root[0])
        return serve_static(s, wsi, uri);
    lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL);
    return -1;
}

static int on_http_writeable(struct lws *wsi, ws_pss *pss)
{
    if (!pss->body)
        return 0;
    int n = lws_write(wsi, pss->body + LWS_PRE, pss->body_len, LWS_WRITE_HTTP_FINAL);
    pl_free(pss->body);
    pss->body = NULL;
    if (n < 0)
        return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* Refuses a websocket handshake: a wrong or missing token (401), too many connections or a
 * server that is stopping (503). >0 when refused with an HTTP answer, 0 to go on. */
static int on_upgrade(ws_state *s, struct lws *wsi)
{
    int reason = -1;
    if (s->token[0] && !token_ok(s, wsi))
        reason = REFUSED_TOKEN;
    else if (atomic_load(&s->stopping))
        reason = REFUSED_STOPPING;
    else {
        pthread_mutex_lock(&s->mu);
        if (s->n_conns >= s->max_connections)
            reason = REFUSED_FULL;
        pthread_mutex_unlock(&s->mu);
    }
    if (reason < 0)
        return 0;
    pipe_counter_add(s->m.refused[reason], 1);
    unsigned status =
            reason == REFUSED_TOKEN ? HTTP_STATUS_UNAUTHORIZED : HTTP_STATUS_SERVICE_UNAVAILABLE;
    /* Written whole here: lws would answer an upgrade request in HTTP/1.0, which websocket
     * clients refuse to read. */
    const char *why = status == HTTP_STATUS_UNAUTHORIZED ? "Unauthorized" : "Service Unavailable";
    const char *body = status == HTTP_STATUS_UNAUTHORIZED
                               ? "a wrong or missing token\n"
                               : "too many connections, or the server is stopping\n";
    unsigned char buf[LWS_PRE + 256];
    int n = snprintf((char *)buf + LWS_PRE, sizeof buf - LWS_PRE,
                     "HTTP/1.1 %u %s\r\ncontent-type: text/plain\r\ncontent-length: %zu\r\n"
                     "connection: close\r\n\r\n%s",
                     status, why, strlen(body), body);
    return lws_write(wsi, buf + LWS_PRE, (size_t)n, LWS_WRITE_HTTP) < 0 ? -1 : 1;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
    ws_state *s = lws_context_user(lws_get_context(wsi));
    ws_pss *pss = user;
    switch (reason) {
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE: return on_upgrade(s, wsi);
    case LWS_CALLBACK_ESTABLISHED: return on_established(s, wsi, pss);
    case LWS_CALLBACK_CLOSED: on_closed(s, pss); return 0;
    case LWS_CALLBACK_RECEIVE:
        if (pss->conn)
            on_receive(s, pss->conn, wsi, in, len);
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE: return pss->conn ? on_writeable(s, pss->conn, wsi) : 0;
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED: on_wake(s); return 0;
    case LWS_CALLBACK_HTTP: {
        int r = ws_rest_http(s->rest, wsi, &pss->rest);
        return r == 1 ? on_http(s, wsi, pss) : r;
    }
    case LWS_CALLBACK_HTTP_BODY:
        return pss->rest ? ws_rest_body(s->rest, wsi, pss->rest, in, len) : 0;
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        return pss->rest ? ws_rest_body_done(s->rest, wsi, pss->rest) : 0;
    case LWS_CALLBACK_HTTP_WRITEABLE:
        return pss->rest ? ws_rest_writeable(s->rest, wsi, &pss->rest)
                         : on_http_writeable(wsi, pss);
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
    case LWS_CALLBACK_CLOSED_HTTP:
        if (pss) {
            ws_rest_req_free(s->rest, pss->rest);
            pss->rest = NULL;
            pl_free(pss->body);
            pss->body = NULL;
        }
        return 0;
    default: return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

/* ---- The node ---- */

static void lws_log_to_parley(int level, const char *line)
{
    size_t n = strlen(line);
    while (n && line[n - 1] == '\n')
        n--;
    /* One gate for every lws context: a failure lws meets in a loop is logged once a second. */
    static pl_log_gate gate = PL_LOG_GATE_INIT(1000);
    pl_log_gated(&gate, level == LLL_ERR ? PARLEY_LOG_ERROR : PARLEY_LOG_WARN,
                 "libwebsockets: %.*s", (int)n, line);
}

/* Files the process keeps for itself beside lws's sockets: the store, models, logs. */
enum { FD_RESERVE = 64 };
/* Seconds a connection has to finish its HTTP request or websocket handshake. */
enum { HANDSHAKE_S = 10 };

/* Raises the soft limit on open files toward the hard one when max_connections needs it,
 * and returns how many sockets lws may hold (fd_limit_per_thread): the limit less
 * FD_RESERVE. lws stops accepting while it holds that many (new connections wait in the
 * kernel's backlog) instead of accepting into EMFILE, which failed again at once, a busy
 * loop with a log line each time. */
static unsigned fd_budget(int max_connections)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)max_connections + 256;
    if (getrlimit(RLIMIT_NOFILE, &rl))
        return 0; /* lws's default: the process limit */
    if (rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) == 0 && (rlim_t)max_connections + 16 > rl.rlim_cur)
            pl_log(PARLEY_LOG_WARN, "max_connections %d: only %llu files may be open",
                   max_connections, (unsigned long long)rl.rlim_cur);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t)max_connections + 256)
        rl.rlim_cur = (rlim_t)max_connections + 256;
    return rl.rlim_cur > 2 * FD_RESERVE ? (unsigned)rl.rlim_cur - FD_RESERVE
                                        : (unsigned)rl.rlim_cur / 2;
}

/* One metric with the node's label and, when `key` is not NULL, key="value" too. */
static void *metric(ws_state *s, int gauge, const char *name, const char *help, const char *key,
                    const char *value)
{
    pipe_graph *g = pipe_node_graph(s->node);
    char *node = pipe_metrics_label("node", pipe_node_name(s->node));
    char *more = key ? pipe_metrics_label(key, value) : NULL;
    size_t n = (node ? strlen(node) : 0) + (more ? strlen(more) : 0) + 2;
    char *labels = node && (more || !key) ? pl_malloc(n) : NULL;
    void *m = NULL;
    if (labels) {
        snprintf(labels, n, "%s%s%s", node, more ? "," : "", more ? more : "");
        m = gauge ? (void *)pipe_metrics_gauge(g, name, help, labels)
                  : (void *)pipe_metrics_counter(g, name, help, labels);
    } else {
        pl_nomem("the labels of metric %s", name);
    }
    pl_free(labels);
    pl_free(more);
    pl_free(node);
    return m;
}

static parley_status register_metrics(ws_state *s)
{
    ws_metrics *m = &s->m;
    int ok = (m->open = metric(s, 1, "parley_ws_connections_open", "websocket connections open",
                               NULL, NULL)) &&
             (m->held = metric(s, 1, "parley_ws_held_bytes",
                               "bytes held for websocket connections: unwritten messages, messages "
                               "being read, room for the answers of turns in flight",
                               NULL, NULL)) &&
             (m->accepted = metric(s, 0, "parley_ws_connections_total",
                                   "websocket connections accepted", NULL, NULL)) &&
             (m->in = metric(s, 0, "parley_ws_messages_in_total",
                             "text messages received from clients", NULL, NULL)) &&
             (m->out = metric(s, 0, "parley_ws_messages_out_total", "messages sent to clients",
                              NULL, NULL));
    for (int i = 0; ok && i < N_REFUSED; i++)
        ok = (m->refused[i] = metric(s, 0, "parley_ws_connections_refused_total",
                                     "websocket handshakes refused, by reason", "reason",
                                     refused_names[i])) != NULL;
    for (int i = 0; ok && i < N_BAD; i++)
        ok = (m->bad[i] = metric(s, 0, "parley_ws_protocol_errors_total",
                                 "client errors answered or closed, by kind", "kind",
                                 bad_names[i])) != NULL;
    return ok ? PARLEY_OK : pl_wrap(PARLEY_ERR_NOMEM, "its metrics");
}

/* What ws_rest.c borrows of the server: the token check, forgetting a request, its
 * metrics. */
static int rest_token_ok(void *server, struct lws *wsi)
{
    return token_ok(server, wsi);
}

static void rest_forget(void *server, ws_conn *c)
{
    forget_conn(server, c);
}

static pipe_counter *rest_counter(void *server, const char *name, const char *help, const char *key,
                                  const char *value)
{
    return metric(server, 0, name, help, key, value);
}

static parley_status open_rest(ws_state *s, int timeout)
{
    ws_rest_host h = { .node = s->node,
                       .mu = &s->mu,
                       .turns = s->turns,
                       .inflight = &s->inflight,
                       .stopping = &s->stopping,
                       .takes_text = s->takes_text,
                       .trust_user_ids = s->trust_user_ids,
                       .token = s->token,
                       .max_body = s->max_message_bytes,
                       .timeout = timeout,
                       .server = s,
                       .token_ok = rest_token_ok,
                       .forget = rest_forget,
                       .counter = rest_counter };
    return ws_rest_open(&h, &s->rest);
}

parley_status svc_ws_create(pipe_node *node, void **out)
{
    const char *name = pipe_node_name(node);
    const char *cert = pipe_node_param_str(node, "cert");
    const char *key = pipe_node_param_str(node, "key");
    const char *dir = pipe_node_param_str(node, "static_dir");
    const char *host = pipe_node_param_str(node, "host");
    if (!cert[0] != !key[0])
        return pl_fail(PARLEY_ERR_CONFIG, "TLS needs both cert and key");
    ws_state *s = pl_calloc(1, sizeof *s);
    if (!s)
        return pl_nomem(NULL);
    parley_status st = pl_mutex_init(&s->mu, name);
    if (st != PARLEY_OK) {
        pl_free(s);
        return st;
    }
    s->node = node;
    s->token = pipe_node_param_str(node, "token");
    s->trust_user_ids = pipe_node_param_bool(node, "trust_user_ids");
    s->takes_text = pipe_node_out_links(node, WS_PORT_TEXT) > 0;
    s->takes_audio = pipe_node_out_links(node, WS_PORT_AUDIO) > 0;
    s->seg = pipe_seg_params_of(node);
    s->seg.on_end = on_utterance_end;
    s->max_connections = (int)pipe_node_param_int(node, "max_connections");
    s->max_message_bytes = (size_t)pipe_node_param_int(node, "max_message_bytes");
    s->held_max = s->max_message_bytes + HELD_SLACK;
    s->tls = cert[0] != 0;
    if (!(s->turns = ws_turns_new())) {
        svc_ws_destroy(s);
        return pl_nomem("the table of turns");
    }
    if ((st = register_metrics(s)) != PARLEY_OK) {
        svc_ws_destroy(s);
        return st;
    }
    unsigned fds = fd_budget(s->max_connections);
    int timeout = (int)pipe_node_param_int(node, "timeout");
    if ((st = open_rest(s, timeout)) != PARLEY_OK) {
        svc_ws_destroy(s);
        return st;
    }
    s->retry.secs_since_valid_ping = (uint16_t)(timeout / 2);
    s->retry.secs_since_valid_hangup = (uint16_t)timeout;
    s->protocols[0] = (struct lws_protocols){ "parley", callback, sizeof(ws_pss), 0, 0, NULL, 0 };
    struct stat sb;
    if (dir[0] && (stat(dir, &sb) || !S_ISDIR(sb.st_mode) || !realpath(dir, s->static_root))) {
        s->static_root[0] = '\0';
        pl_log(PARLEY_LOG_WARN, "%s: static_dir %s is not a folder: / will answer 404", name, dir);
    }
    /* /healthz and /metrics go to the callback, and so does every other path (no mount):
     * static files are served there (serve_static), not by a file mount, which would follow
     * links out of the folder. */
    for (int i = 0; i < 2; i++) {
        s->mounts[i].mountpoint = i == 0 ? "/healthz" : "/metrics";
        s->mounts[i].mountpoint_len = 8;
        s->mounts[i].origin = "parley";
        s->mounts[i].origin_protocol = LWSMPRO_CALLBACK;
    }
    s->mounts[0].mount_next = &s->mounts[1];

    lws_set_log_level(LLL_ERR | LLL_WARN, lws_log_to_parley);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = (int)pipe_node_param_int(node, "port");
    info.iface = host[0] ? host : NULL;
    info.protocols = s->protocols;
    info.mounts = &s->mounts[0];
    info.retry_and_idle_policy = &s->retry;
    info.user = s;
    info.fd_limit_per_thread = fds;
    /* A connection that has not finished its handshake this long after connecting is
     * dropped, so idle sockets do not hold the files others wait for. */
    info.timeout_secs = HANDSHAKE_S;
    info.options = LWS_SERVER_OPTION_VALIDATE_UTF8 | LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
    if (s->tls) {
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        info.ssl_cert_filepath = cert;
        info.ssl_private_key_filepath = key;
        /* HTTP/1.1 only: the handshake's refusals (on_upgrade) are written as HTTP/1.1. */
        info.alpn = "http/1.1";
    }
    if (!(s->ctx = lws_create_context(&info))) {
        st = pl_fail(PARLEY_ERR_IO,
                     "cannot listen on %s:%lld%s (in use, not an address of this machine, or "
                     "unreadable TLS files)",
                     host[0] ? host : "*", pipe_node_param_int(node, "port"),
                     cert[0] ? " with TLS" : "");
        svc_ws_destroy(s);
        return st;
    }
    int port = lws_get_vhost_listen_port(lws_get_vhost_by_name(s->ctx, "default"));
    pl_log(PARLEY_LOG_INFO, "%s: listening on %s://%s:%d/", name, s->tls ? "wss" : "ws",
           host[0] ? host : "0.0.0.0", port);
    *out = s;
    return PARLEY_OK;
}

/* While stopping, the service loop wakes every 100 ms to look at the clock. */
static void tick(lws_sorted_usec_list_t *sul)
{
    ws_state *s = lws_container_of(sul, ws_state, tick);
    lws_sul_schedule(s->ctx, 0, &s->tick, tick, 100 * LWS_US_PER_MS);
}

static double now_s(void)
{
    return (double)pipe_now_ns() / 1e9;
}

parley_status svc_ws_run(pipe_node *node, void *state)
{
    (void)node;
    ws_state *s = state;
    double drain_until = 0, close_until = 0;
    atomic_store(&s->serving, !atomic_load(&s->stopping));
    while (lws_service(s->ctx, 0) >= 0) {
        if (!atomic_load(&s->stopping))
            continue;
        atomic_store(&s->serving, 0);
        if (!drain_until) {
            drain_until = now_s() + DRAIN_SECONDS;
            tick(&s->tick);
        }
        pthread_mutex_lock(&s->mu);
        int idle = s->inflight == 0, open = s->n_conns;
        pthread_mutex_unlock(&s->mu);
        open += ws_rest_waiting(s->rest); /* answers to write before the loop ends */
        if (!close_until && (idle || now_s() > drain_until)) {
            close_until = now_s() + CLOSE_SECONDS;
            pthread_mutex_lock(&s->mu);
            for (ws_conn *c = s->conns; c; c = c->next)
                if (!c->close_code) {
                    c->close_code = LWS_CLOSE_STATUS_GOINGAWAY;
                    snprintf(c->close_reason, sizeof c->close_reason, "server stopping");
                    mark_dirty(s, c);
                }
            pthread_mutex_unlock(&s->mu);
            on_wake(s);
        }
        if (close_until && (open == 0 || now_s() > close_until))
            break;
    }
    lws_sul_cancel(&s->tick);
    return PARLEY_OK;
}

void svc_ws_stop(void *state)
{
    ws_state *s = state;
    atomic_store(&s->stopping, 1);
    lws_cancel_service(s->ctx);
}

/* A partial or final transcript from the recognizer: to the connection its audio came
 * from, if still there (graph worker). That is the one of its user that took the user last
 * before the audio was made: a connection that resumed the user after another dropped
 * mid-utterance is not shown the dropped utterance's words. Not a turn: freed here. */
static void send_transcript(ws_state *s, pipe_msg *msg)
{
    char *text = ws_voice_text_json(msg);
    int sent = 0;
    ws_conn *to = NULL;
    pthread_mutex_lock(&s->mu);
    for (ws_conn *c = s->conns; c && text; c = c->next)
        if (!strcmp(c->user, msg->user_id) && c->since <= msg->t_in &&
            (!to || c->since > to->since))
            to = c;
    if (to) {
        sent = ws_conn_push(to, text, strlen(text)) == PARLEY_OK;
        count_held(s, to);
        mark_dirty(s, to);
    }
    pthread_mutex_unlock(&s->mu);
    if (sent)
        lws_cancel_service(s->ctx);
    pl_free(text);
    pipe_msg_free(msg);
}

/* Queues a reply's speech to c: the {"type":"audio"} header, then the samples as one
 * binary frame (16-bit little-endian, as this machine stores them). Under s->mu. */
static int push_speech(ws_conn *c, const pipe_msg *msg)
{
    char *head = ws_voice_audio_json(msg);
    int ok = head && ws_conn_push(c, head, strlen(head)) == PARLEY_OK &&
             ws_conn_push_binary(c, msg->pcm, msg->n_pcm * sizeof *msg->pcm) == PARLEY_OK;
    pl_free(head);
    return ok;
}

/* A finished turn (worker threads): to the queue of the connection that asked; one that gets
 * no answer (pipe_msg.no_answer) only leaves the turns in flight. */
parley_status svc_ws_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    ws_state *s = state;
    if (port == WS_PORT_PARTIAL) {
        send_transcript(s, msg);
        return PARLEY_OK;
    }
    const char *error = pipe_msg_error(msg);
    ws_conn *c;
    cJSON *id;
    cJSON *o = cJSON_CreateObject();
    int ok = o && cJSON_AddStringToObject(o, "type", error ? "error" : "reply") &&
             svc_reply_fill(o, msg, error) &&
             (!msg->utt || cJSON_AddNumberToObject(o, "utterance", msg->utt));
    if (ok && !error) {
        cJSON *lat = cJSON_AddObjectToObject(o, "latency_ms");
        ok = cJSON_AddStringToObject(o, "text", msg->text ? msg->text : "") && lat &&
             cJSON_AddNumberToObject(lat, "nlu", (double)msg->nlu_ns / 1e6) &&
             cJSON_AddNumberToObject(lat, "dialog", (double)msg->dialog_ns / 1e6) &&
             cJSON_AddNumberToObject(lat, "total", (double)(pipe_now_ns() - msg->t_in) / 1e6);
    }
    int lost = 0;
    pthread_mutex_lock(&s->mu);
    int ours = ws_turns_take(s->turns, msg->seq, &c, &id);
    if (ours)
        s->inflight--;
    if (c) {
        c->inflight--;
        if (ok && id && (ok = cJSON_AddItemToObject(o, "id", id)))
            id = NULL;
        char *text = ok && !msg->no_answer ? cJSON_PrintUnformatted(o) : NULL;
        lost = !msg->no_answer && (!text || ws_conn_push(c, text, strlen(text)) != PARLEY_OK ||
                                   (!error && msg->n_pcm && !push_speech(c, msg)));
        count_held(s, c);
        mark_dirty(s, c); /* even when lost: its pacing may change */
        cJSON_free(text);
    }
    pthread_mutex_unlock(&s->mu);
    cJSON_Delete(id);
    cJSON_Delete(o);
    if (ours)
        lws_cancel_service(s->ctx);
    if (lost)
        pipe_node_error(node, pl_nomem("the reply to turn %llu of user %s",
                                       (unsigned long long)msg->seq, msg->user_id));
    pipe_node_turn_done(node, msg);
    return PARLEY_OK;
}

void svc_ws_destroy(void *state)
{
    ws_state *s = state;
    if (!s)
        return;
    if (s->ctx)
        lws_context_destroy(s->ctx); /* closes what is still open: on_closed frees it */
    ws_rest_close(s->rest);
    ws_turns_free(s->turns);
    pthread_mutex_destroy(&s->mu);
    pl_free(s);
}
