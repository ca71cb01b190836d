/* store_io.c — the store's operator calls of parley/dialog.h: migrate, export, import, purge.
 *
 * An export line is one user as a JSON object (cJSON builds and reads it): the context of
 * store.h's dm_user with its slots as an object, and the kept history rows in turn order,
 * the NLU's entities kept as the JSON text the store holds. Import reads the same lines
 * back into dm_store_put(), so SQLite → PostgreSQL → SQLite gives the same export. Works
 * through store.h only: it does not know which back end it has.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "dialog/store.h"
#include "parley/dialog.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

static parley_status open_store(const char *where, dm_store **s)
{
    if (!where)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "store: no file or URI given");
    return dm_store_open(where, NULL, s);
}

parley_status parley_store_migrate(const char *where)
{
    dm_store *s;
    parley_status st = open_store(where, &s);
    dm_store_close(st == PARLEY_OK ? s : NULL);
    return st;
}

/* ---- export ----------------------------------------------------------------------------- */

typedef struct export_ctx {
    dm_store *s;
    FILE *out;
    long n;
    cJSON *history; /* the line being built's history array */
} export_ctx;

static int add_str(cJSON *o, const char *k, const char *v)
{
    return (v ? cJSON_AddStringToObject(o, k, v) : cJSON_AddNullToObject(o, k)) != NULL;
}

static int add_num(cJSON *o, const char *k, double v)
{
    return cJSON_AddNumberToObject(o, k, v) != NULL;
}

static parley_status export_row(const dm_turn_row *r, void *arg)
{
    export_ctx *x = arg;
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(x->history, o)) {
        cJSON_Delete(o);
        return pl_nomem("exporting history");
    }
    int ok = add_num(o, "turn", (double)r->turn_id) && add_str(o, "session_id", r->session_id) &&
             add_str(o, "text", r->text) && add_str(o, "nlu_intent", r->nlu_intent) &&
             add_num(o, "confidence", r->confidence) && add_str(o, "entities", r->entities_json) &&
             add_str(o, "intent", r->intent) && add_str(o, "action", r->action) &&
             add_str(o, "reply", r->reply) && add_str(o, "form", r->form) &&
             add_num(o, "t_in_ms", (double)r->t_in_ms) &&
             add_num(o, "t_reply_ms", (double)r->t_reply_ms);
    return ok ? PARLEY_OK : pl_nomem("exporting history");
}

static parley_status export_user(const char *user_id, void *arg)
{
    export_ctx *x = arg;
    dm_user u;
    parley_status st = dm_store_load(x->s, user_id, &u);
    if (st != PARLEY_OK)
        return st;
    cJSON *o = cJSON_CreateObject(), *slots = NULL;
    int ok = o && add_str(o, "user", user_id) && add_str(o, "session_id", u.session_id) &&
             add_num(o, "session_no", (double)u.session_no) &&
             add_num(o, "session_start_ms", (double)u.session_start_ms) &&
             add_num(o, "last_active_ms", (double)u.last_active_ms) &&
             add_num(o, "turns", (double)u.turns) && add_str(o, "form", u.form) &&
             add_str(o, "requested_slot", u.requested_slot) &&
             add_num(o, "confirming", u.confirming) &&
             (slots = cJSON_AddObjectToObject(o, "slots")) != NULL &&
             (x->history = cJSON_AddArrayToObject(o, "history")) != NULL;
    for (size_t i = 0; ok && i < u.n_slots; i++)
        ok = add_str(slots, u.slots[i].name, u.slots[i].value);
    dm_user_clear(&u);
    st = ok ? dm_store_turns(x->s, user_id, export_row, x) : pl_nomem("exporting a user");
    char *text = st == PARLEY_OK ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (st == PARLEY_OK && !text)
        st = pl_nomem("exporting a user");
    if (st == PARLEY_OK && fprintf(x->out, "%s\n", text) < 0)
        st = pl_fail(PARLEY_ERR_IO, "store export: cannot write the output");
    cJSON_free(text);
    x->n += st == PARLEY_OK;
    return st;
}

parley_status parley_store_export(const char *where, FILE *out, long *n_users)
{
    export_ctx x = { .out = out };
    if (n_users)
        *n_users = 0;
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "store export: no output");
    parley_status st = open_store(where, &x.s);
    if (st != PARLEY_OK)
        return st;
    st = dm_store_users(x.s, export_user, &x);
    if (st == PARLEY_OK && fflush(out) != 0)
        st = pl_fail(PARLEY_ERR_IO, "store export: cannot write the output");
    dm_store_close(x.s);
    if (n_users)
        *n_users = x.n;
    return st;
}

/* ---- import ----------------------------------------------------------------------------- */

/* A string member, or NULL when it is missing or null; *bad set when it is another type. */
static const char *get_str(const cJSON *o, const char *k, int *bad)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v || cJSON_IsNull(v))
        return NULL;
    *bad |= !cJSON_IsString(v);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double get_num(const cJSON *o, const char *k, int *bad)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    *bad |= !cJSON_IsNumber(v);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Stores one export line's user; `line` numbers the message. */
static parley_status import_user(dm_store *s, const cJSON *o, long line)
{
    int bad = !cJSON_IsObject(o);
    const char *user_id = get_str(o, "user", &bad);
    const cJSON *slots = cJSON_GetObjectItemCaseSensitive(o, "slots");
    const cJSON *hist = cJSON_GetObjectItemCaseSensitive(o, "history");
    dm_user u = {
        .exists = 1,
        .session_no = (int64_t)get_num(o, "session_no", &bad),
        .session_start_ms = (int64_t)get_num(o, "session_start_ms", &bad),
        .last_active_ms = (int64_t)get_num(o, "last_active_ms", &bad),
        .turns = (uint64_t)get_num(o, "turns", &bad),
        .confirming = (int)get_num(o, "confirming", &bad),
    };
    const char *session = get_str(o, "session_id", &bad);
    const char *form = get_str(o, "form", &bad), *req = get_str(o, "requested_slot", &bad);
    bad |= !user_id || !*user_id || !session || !cJSON_IsObject(slots) || !cJSON_IsArray(hist);
    if (bad)
        return pl_fail(PARLEY_ERR_FORMAT,
                       "store import: line %ld: not a user as `parley store export` writes "
                       "one (user, session_id, counters, slots, history)",
                       line);
    int n_rows = cJSON_GetArraySize(hist), n_slots = cJSON_GetArraySize(slots);
    dm_turn_row *rows = pl_calloc((size_t)n_rows + 1, sizeof *rows);
    u.slots = pl_calloc((size_t)n_slots + 1, sizeof *u.slots);
    /* The strings stay in the cJSON tree: u borrows them, so only the arrays are freed. */
    u.session_id = (char *)session;
    u.form = (char *)form;
    u.requested_slot = (char *)req;
    parley_status st = rows && u.slots ? PARLEY_OK : pl_nomem("importing a user");
    const cJSON *it;
    cJSON_ArrayForEach(it, slots)
    {
        if (st != PARLEY_OK || !cJSON_IsString(it)) {
            bad = 1;
            break;
        }
        u.slots[u.n_slots++] = (dm_slot){ it->string, it->valuestring };
    }
    int i = 0;
    cJSON_ArrayForEach(it, hist)
    {
        if (st != PARLEY_OK)
            break;
        rows[i++] = (dm_turn_row){
            .turn_id = (uint64_t)get_num(it, "turn", &bad),
            .session_id = get_str(it, "session_id", &bad),
            .text = get_str(it, "text", &bad),
            .nlu_intent = get_str(it, "nlu_intent", &bad),
            .confidence = get_num(it, "confidence", &bad),
            .entities_json = get_str(it, "entities", &bad),
            .intent = get_str(it, "intent", &bad),
            .action = get_str(it, "action", &bad),
            .reply = get_str(it, "reply", &bad),
            .form = get_str(it, "form", &bad),
            .t_in_ms = (int64_t)get_num(it, "t_in_ms", &bad),
            .t_reply_ms = (int64_t)get_num(it, "t_reply_ms", &bad),
        };
        bad |= !rows[i - 1].session_id;
    }
    if (st == PARLEY_OK && bad)
        st = pl_fail(PARLEY_ERR_FORMAT,
                     "store import: line %ld: a slot that is not a string, or a history row "
                     "without its fields",
                     line);
    if (st == PARLEY_OK)
        st = dm_store_put(s, user_id, &u, rows, (size_t)i);
    pl_free(rows);
    pl_free(u.slots);
    return st;
}

parley_status parley_store_import(const char *where, FILE *in, long *n_users)
{
    if (n_users)
        *n_users = 0;
    if (!in)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "store import: no input");
    dm_store *s;
    parley_status st = open_store(where, &s);
    if (st != PARLEY_OK)
        return st;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    long line = 0;
    while (st == PARLEY_OK && (len = getline(&buf, &cap, in)) >= 0) {
        line++;
        if (len == 0 || (len == 1 && buf[0] == '\n'))
            continue;
        cJSON *o = cJSON_ParseWithLength(buf, (size_t)len);
        st = o ? import_user(s, o, line)
               : pl_fail(PARLEY_ERR_FORMAT, "store import: line %ld: not JSON", line);
        cJSON_Delete(o);
        if (st == PARLEY_OK && n_users)
            (*n_users)++;
    }
    if (st == PARLEY_OK && ferror(in))
        st = pl_fail(PARLEY_ERR_IO, "store import: cannot read the input");
    free(buf); /* getline's, from the C library */
    dm_store_close(s);
    return st;
}

/* ---- purge ------------------------------------------------------------------------------ */

parley_status parley_store_purge(const char *where, double days, long *n_users)
{
    long n = 0;
    if (n_users)
        *n_users = 0;
    if (!(days >= 0) || days > 1e6)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "store purge: --older-than wants days in [0, 1000000], got %g", days);
    dm_store *s;
    parley_status st = open_store(where, &s);
    if (st != PARLEY_OK)
        return st;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    st = dm_store_purge(s, now - (int64_t)(days * 86400000.0), &n);
    dm_store_close(s);
    if (n_users)
        *n_users = n;
    return st;
}
