/* action_http.c — the action servers' HTTP client over libcurl's multi API (action_http.h).
 *
 * One thread owns the multi handle: it takes the calls posted since it last looked, adds
 * them as easy handles, lets libcurl move every transfer along, and ends the finished ones
 * through their callbacks; between rounds it sleeps in curl_multi_poll, which a post cuts
 * short with curl_multi_wakeup. This is the one place that includes curl.h: libcurl's codes
 * become a dm_http_why here. It does not parse what the servers answer.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "dialog/action_http.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/strbuf.h"
#include "sdk/base/sync.h"

typedef struct call {
    struct call *next;
    char *url, *body;
    dm_http_done_fn fn;
    void *user;
    CURL *easy;
    struct curl_slist *headers;
    pl_strbuf got; /* the answer so far */
    size_t max;
    int too_long;
} call;

struct dm_http {
    dm_http_params p;
    CURLM *multi;
    pthread_t thread;
    int started;
    pthread_mutex_t mu; /* guards posted and closing */
    call *posted;       /* handed over, not yet added to the multi (newest first) */
    int closing;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void call_free(call *c)
{
    if (!c)
        return;
    curl_slist_free_all(c->headers);
    pl_free(c->url);
    pl_free(c->body);
    pl_free(c->got.s);
    pl_free(c);
}

static size_t on_data(char *data, size_t size, size_t n, void *user)
{
    call *c = user;
    size_t add = size * n;
    if (add > c->max - c->got.len) {
        c->too_long = 1;
        return 0; /* libcurl stops the transfer with CURLE_WRITE_ERROR */
    }
    pl_strbuf_append(&c->got, data, add);
    return c->got.failed ? 0 : add;
}

/* Ends a call: its callback with the outcome, then its handle and memory. */
static void finish(dm_http *h, call *c, CURLcode rc)
{
    long status = 0;
    char detail[160];
    dm_http_why why = DM_HTTP_OK;
    curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
    if (c->too_long) {
        why = DM_HTTP_SIZE;
        snprintf(detail, sizeof detail, "the answer is longer than %zu bytes", c->max);
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
        why = DM_HTTP_TIMEOUT;
        snprintf(detail, sizeof detail, "no answer within %ld ms", h->p.timeout_ms);
    } else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST) {
        why = DM_HTTP_CONNECT;
        snprintf(detail, sizeof detail, "cannot connect: %s", curl_easy_strerror(rc));
    } else if (rc != CURLE_OK) {
        why = DM_HTTP_OTHER;
        snprintf(detail, sizeof detail, "%s", curl_easy_strerror(rc));
    } else if (status < 200 || status > 299) {
        why = DM_HTTP_STATUS;
        snprintf(detail, sizeof detail, "HTTP status %ld", status);
    } else {
        snprintf(detail, sizeof detail, "HTTP status %ld", status);
    }
    char *body = NULL;
    if (why == DM_HTTP_OK) {
        body = c->got.s ? c->got.s : pl_strdup("");
        c->got.s = NULL;
        if (!body) {
            why = DM_HTTP_OTHER;
            snprintf(detail, sizeof detail, "out of memory for the answer");
        }
    }
    curl_multi_remove_handle(h->multi, c->easy);
    curl_easy_cleanup(c->easy);
    c->easy = NULL;
    c->fn(c->user, why, status, body, detail);
    call_free(c);
}

/* Makes the easy handle of a posted call and adds it; a call that cannot start ends now. */
static void start(dm_http *h, call *c)
{
    CURLcode rc = CURLE_OUT_OF_MEMORY;
    c->easy = curl_easy_init();
    c->headers = curl_slist_append(NULL, "Content-Type: application/json");
    if (c->easy && c->headers) {
        curl_easy_setopt(c->easy, CURLOPT_PRIVATE, c);
        curl_easy_setopt(c->easy, CURLOPT_URL, c->url);
        curl_easy_setopt(c->easy, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, c->headers);
        curl_easy_setopt(c->easy, CURLOPT_POSTFIELDS, c->body);
        curl_easy_setopt(c->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(c->body));
        curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, c);
        curl_easy_setopt(c->easy, CURLOPT_TIMEOUT_MS, h->p.timeout_ms);
        curl_easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM timeouts */
        rc = curl_multi_add_handle(h->multi, c->easy) == CURLM_OK ? CURLE_OK : CURLE_OUT_OF_MEMORY;
    }
    if (rc != CURLE_OK) {
        if (c->easy) {
            curl_easy_cleanup(c->easy);
            c->easy = NULL;
        }
        c->fn(c->user, DM_HTTP_OTHER, 0, NULL, "cannot start the call: out of memory");
        call_free(c);
    }
}

static void *loop(void *arg)
{
    dm_http *h = arg;
    int running = 0;
    for (;;) {
        pthread_mutex_lock(&h->mu);
        call *posted = h->posted;
        h->posted = NULL;
        int closing = h->closing;
        pthread_mutex_unlock(&h->mu);
        /* The list is newest first: reverse it, so calls start in the order they came. */
        call *in_order = NULL;
        while (posted) {
            call *next = posted->next;
            posted->next = in_order;
            in_order = posted;
            posted = next;
        }
        while (in_order) {
            call *next = in_order->next;
            start(h, in_order);
            in_order = next;
        }
        curl_multi_perform(h->multi, &running);
        CURLMsg *m;
        int left;
        while ((m = curl_multi_info_read(h->multi, &left)))
            if (m->msg == CURLMSG_DONE) {
                call *c = NULL;
                curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&c);
                finish(h, c, m->data.result);
            }
        if (closing && !running) {
            pthread_mutex_lock(&h->mu);
            int more = h->posted != NULL;
            pthread_mutex_unlock(&h->mu);
            if (!more)
                return NULL;
        }
        curl_multi_poll(h->multi, NULL, 0, 1000, NULL);
    }
}

parley_status dm_http_open(const dm_http_params *p, dm_http **out)
{
    *out = NULL;
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return pl_fail(PARLEY_ERR_IO, "libcurl: %s", curl_easy_strerror(global_rc));
    dm_http *h = pl_calloc(1, sizeof *h);
    if (!h)
        return pl_nomem("the action servers' client");
    h->p = *p;
    if (h->p.timeout_ms <= 0)
        h->p.timeout_ms = 5000;
    if (!h->p.max_bytes)
        h->p.max_bytes = 1 << 20;
    if (h->p.max_connections <= 0)
        h->p.max_connections = 8;
    parley_status st = pl_mutex_init(&h->mu, "the action servers' client");
    if (st != PARLEY_OK) {
        pl_free(h);
        return st;
    }
    if (!(h->multi = curl_multi_init())) {
        st = pl_nomem("the action servers' client");
        goto fail;
    }
    /* Per server: a server that hangs holds its own connections, not another's. */
    curl_multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS, h->p.max_connections);
    if (pthread_create(&h->thread, NULL, loop, h)) {
        st = pl_fail(PARLEY_ERR_NOMEM, "cannot start the action servers' client thread");
        goto fail;
    }
    h->started = 1;
    *out = h;
    return PARLEY_OK;
fail:
    dm_http_close(h);
    return st;
}

parley_status dm_http_post(dm_http *h, const char *url, const char *body, dm_http_done_fn fn,
                           void *user)
{
    call *c = pl_calloc(1, sizeof *c);
    if (!c || !(c->url = pl_strdup(url)) || !(c->body = pl_strdup(body))) {
        call_free(c);
        return pl_nomem("a call to an action server");
    }
    c->fn = fn;
    c->user = user;
    c->max = h->p.max_bytes;
    pthread_mutex_lock(&h->mu);
    c->next = h->posted;
    h->posted = c;
    pthread_mutex_unlock(&h->mu);
    curl_multi_wakeup(h->multi);
    return PARLEY_OK;
}

void dm_http_close(dm_http *h)
{
    if (!h)
        return;
    if (h->started) {
        pthread_mutex_lock(&h->mu);
        h->closing = 1;
        pthread_mutex_unlock(&h->mu);
        curl_multi_wakeup(h->multi);
        pthread_join(h->thread, NULL);
    }
    if (h->multi)
        curl_multi_cleanup(h->multi);
    pthread_mutex_destroy(&h->mu);
    pl_free(h);
}
