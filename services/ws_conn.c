/* ws_conn.c — per-connection state of the websocket server and its table of turns in
 * flight (see ws_conn.h). Plain memory bookkeeping: no locks, no I/O.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "services/ws_conn.h"

/* The largest reassembly buffer a connection keeps between messages. */
enum { RX_KEEP = 64 * 1024 };

ws_conn *ws_conn_new(void *wsi, size_t pre)
{
    ws_conn *c = pl_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->wsi = wsi;
    c->pre = pre;
    return c;
}

void ws_conn_free(ws_conn *c)
{
    if (!c)
        return;
    ws_out *o;
    while ((o = ws_conn_pop(c)))
        pl_free(o);
    pl_free(c->rx);
    pl_free(c);
}

parley_status ws_conn_rx_add(ws_conn *c, const void *data, size_t len, size_t max)
{
    if (len == 0) /* an empty frame: rx may still be NULL, and lws may give NULL data */
        return PARLEY_OK;
    if (len > max || c->rx_len > max - len)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "a message of more than %zu bytes", max);
    if (c->rx_len + len > c->rx_cap) {
        size_t cap = c->rx_cap ? c->rx_cap : 1024;
        while (cap < c->rx_len + len)
            cap *= 2;
        if (cap > max)
            cap = max;
        unsigned char *rx = pl_realloc(c->rx, cap);
        if (!rx)
            return pl_nomem("a message of %zu bytes", c->rx_len + len);
        c->rx = rx;
        c->rx_cap = cap;
    }
    memcpy(c->rx + c->rx_len, data, len);
    c->rx_len += len;
    return PARLEY_OK;
}

void ws_conn_rx_reset(ws_conn *c)
{
    c->rx_len = 0;
    if (c->rx_cap > RX_KEEP) { /* a big message's buffer is not kept for an idle client */
        pl_free(c->rx);
        c->rx = NULL;
        c->rx_cap = 0;
    }
}

static parley_status push(ws_conn *c, const void *data, size_t len, int binary)
{
    ws_out *o = pl_malloc(sizeof *o + c->pre + len);
    if (!o)
        return pl_nomem("a message of %zu bytes for user %s", len, c->user);
    o->next = NULL;
    o->len = len;
    o->binary = binary;
    memcpy(o->data + c->pre, data, len);
    if (c->out_tail)
        c->out_tail->next = o;
    else
        c->out_head = o;
    c->out_tail = o;
    c->out_bytes += len;
    return PARLEY_OK;
}

parley_status ws_conn_push(ws_conn *c, const char *json, size_t len)
{
    return push(c, json, len, 0);
}

parley_status ws_conn_push_binary(ws_conn *c, const void *data, size_t len)
{
    return push(c, data, len, 1);
}

ws_out *ws_conn_pop(ws_conn *c)
{
    ws_out *o = c->out_head;
    if (!o)
        return NULL;
    c->out_head = o->next;
    if (!c->out_head)
        c->out_tail = NULL;
    c->out_bytes -= o->len;
    o->next = NULL;
    return o;
}

size_t ws_conn_held(const ws_conn *c)
{
    return c->out_bytes + c->rx_cap + c->answer_bytes;
}

/* What an answer adds beside the echoed text and id: type, user, turn, intent, slots (each
 * value at most 1024 bytes), the reply, latencies. */
enum { ANSWER_OVERHEAD = 8 * 1024 };

size_t ws_answer_room(size_t text_len, size_t id_len)
{
    return 6 * (text_len + id_len) + ANSWER_OVERHEAD;
}

/* ---- The turns in flight: a chained hash table on the sequence number ---- */

enum { N_BUCKETS = 4096 };

typedef struct ws_turn {
    struct ws_turn *next;
    uint64_t seq;
    ws_conn *conn;
    cJSON *id;
    size_t room; /* counted in conn->answer_bytes */
} ws_turn;

struct ws_turns {
    ws_turn *bucket[N_BUCKETS];
};

ws_turns *ws_turns_new(void)
{
    return pl_calloc(1, sizeof(ws_turns));
}

void ws_turns_free(ws_turns *t)
{
    if (!t)
        return;
    for (size_t b = 0; b < N_BUCKETS; b++) {
        while (t->bucket[b]) {
            ws_turn *e = t->bucket[b];
            t->bucket[b] = e->next;
            cJSON_Delete(e->id);
            pl_free(e);
        }
    }
    pl_free(t);
}

parley_status ws_turns_add(ws_turns *t, uint64_t seq, ws_conn *c, const cJSON *id, size_t room)
{
    ws_turn *e = pl_calloc(1, sizeof *e);
    if (!e || (id && !(e->id = cJSON_Duplicate(id, 1)))) {
        pl_free(e);
        return pl_nomem("turn %llu of user %s", (unsigned long long)seq, c->user);
    }
    e->seq = seq;
    e->conn = c;
    e->room = room;
    c->answer_bytes += room;
    e->next = t->bucket[seq % N_BUCKETS];
    t->bucket[seq % N_BUCKETS] = e;
    return PARLEY_OK;
}

int ws_turns_take(ws_turns *t, uint64_t seq, ws_conn **conn, cJSON **id)
{
    *conn = NULL;
    *id = NULL;
    for (ws_turn **p = &t->bucket[seq % N_BUCKETS]; *p; p = &(*p)->next) {
        ws_turn *e = *p;
        if (e->seq != seq)
            continue;
        *p = e->next;
        if (e->conn)
            e->conn->answer_bytes -= e->room;
        *conn = e->conn;
        *id = e->id;
        pl_free(e);
        return 1;
    }
    return 0;
}

void ws_turns_drop_conn(ws_turns *t, const ws_conn *c)
{
    for (size_t b = 0; b < N_BUCKETS; b++)
        for (ws_turn *e = t->bucket[b]; e; e = e->next)
            if (e->conn == c)
                e->conn = NULL;
}
