/* store_io.c — the store's operator calls of parley/dialog.h: migrate, export, import, purge.
 *
 * An export line is one user as a JSON object (store_line.c writes, reads and checks it):
 * the context of store.h's dm_user with its slots as an object, and the kept history rows
 * in turn order. Import reads the same lines back into one dm_store_put(), all of them or
 * none, so SQLite → PostgreSQL → SQLite gives the same export. Works through store.h only:
 * it does not know which back end it has.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "dialog/store.h"
#include "dialog/store_line.h"
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

static parley_status export_row(const dm_turn_row *r, void *arg)
{
    return dm_line_add_row(((export_ctx *)arg)->history, r);
}

static parley_status export_user(const char *user_id, void *arg)
{
    export_ctx *x = arg;
    dm_user u;
    parley_status st = dm_store_load(x->s, user_id, &u);
    if (st != PARLEY_OK)
        return st;
    cJSON *o = dm_line_user_json(user_id, &u, &x->history);
    dm_user_clear(&u);
    st = o ? dm_store_turns(x->s, user_id, export_row, x) : pl_nomem("exporting a user");
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

/* The input being imported: the line read last, and the user it holds. */
typedef struct import_ctx {
    FILE *in;
    char *buf; /* getline's, from the C library */
    size_t cap;
    long line, n;
    dm_line_user user;
} import_ctx;

/* dm_store_put's source: the next non-blank line's user, checked. */
static parley_status import_next(void *arg, const char **user_id, const dm_user **u,
                                 const dm_turn_row **rows, size_t *n_rows)
{
    import_ctx *x = arg;
    ssize_t len;
    dm_line_clear(&x->user);
    *user_id = NULL;
    while ((len = getline(&x->buf, &x->cap, x->in)) >= 0) {
        x->line++;
        if (len == 0 || (len == 1 && x->buf[0] == '\n'))
            continue;
        parley_status st = dm_line_read(x->buf, (size_t)len, &x->user);
        if (st != PARLEY_OK)
            return pl_wrap(st, "store import: line %ld", x->line);
        *user_id = x->user.user_id;
        *u = &x->user.u;
        *rows = x->user.rows;
        *n_rows = x->user.n_rows;
        x->n++;
        return PARLEY_OK;
    }
    return ferror(x->in) ? pl_fail(PARLEY_ERR_IO, "store import: cannot read the input")
                         : PARLEY_OK;
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
    import_ctx x = { .in = in };
    st = dm_store_put(s, import_next, &x);
    dm_line_clear(&x.user);
    free(x.buf);
    dm_store_close(s);
    if (n_users && st == PARLEY_OK)
        *n_users = x.n;
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
                       "store purge: --older-than wants days in [0, 1000000], got %.15g", days);
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
