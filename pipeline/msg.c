/* msg.c — turn messages: the checks on what users send, creation, deep copy for fan-out,
 * freeing, and the in-flight count.
 *
 * The user id and text rules of parley/pipeline.h are checked here, once for every source
 * (text.stdin, the C API, servers to come), with utf8proc reading the UTF-8. Every live
 * message is counted by its graph, so shutdown can wait until the last turn has left the
 * graph (pipe_graph_drain). A payload is shared by clones with a count and freed by the
 * function its node gave with it, since only that node knows how it is made; everything else
 * is copied. Nothing here reads input formats (lines, JSON): that is each source's business.
 */
#include <string.h>
#include <time.h>
#include <utf8proc.h>

#include "pipeline/graph_impl.h"
#include "sdk/base/alloc.h"

const char *pipe_type_name(unsigned types)
{
    if (types & PIPE_T_AUDIO)
        return "audio";
    if (types & PIPE_T_TEXT)
        return "text";
    if (types & PIPE_T_NLU)
        return "nlu";
    if (types & PIPE_T_REPLY)
        return "reply";
    return "nothing";
}

int64_t pipe_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void pipe_msg_live_add(pipe_graph *g, long delta)
{
    pthread_mutex_lock(&g->mu);
    g->live += delta;
    if (g->live == 0)
        pthread_cond_broadcast(&g->idle);
    pthread_mutex_unlock(&g->mu);
}

size_t pipe_utf8_valid_len(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        utf8proc_int32_t c;
        utf8proc_ssize_t n =
                utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &c);
        if (n <= 0)
            break;
        i += (size_t)n;
    }
    return i;
}

/* The first code point of s[0, len) in Unicode category Cc at or after byte *at (valid
 * UTF-8), or -1; *at is set to its offset. NUL counts. */
static utf8proc_int32_t find_control(const char *s, size_t len, size_t *at)
{
    for (size_t i = *at; i < len;) {
        utf8proc_int32_t c;
        utf8proc_ssize_t n =
                utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &c);
        if (utf8proc_category(c) == UTF8PROC_CATEGORY_CC) {
            *at = i;
            return c;
        }
        i += (size_t)n;
    }
    return -1;
}

parley_status pipe_check_field(const char *what, const char *s, size_t len, size_t min, size_t max,
                               int rules)
{
    size_t at = 0;
    if (len == 0 && min > 0)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s is empty", what);
    if (len < min)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s is %zu bytes, fewer than the %zu needed", what,
                       len, min);
    if (len > max)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s is %zu bytes, more than the %zu allowed", what,
                       len, max);
    if ((at = pipe_utf8_valid_len(s, len)) < len)
        return pl_fail(PARLEY_ERR_UTF8, "%s: invalid UTF-8 at byte %zu (0x%02X)", what, at,
                       (unsigned char)s[at]);
    at = 0;
    utf8proc_int32_t c = rules & PIPE_NO_CONTROL ? find_control(s, len, &at) : -1;
    if (c >= 0)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s: control character U+%04X at byte %zu", what,
                       (unsigned)c, at);
    const char *nul = rules & PIPE_NO_NUL ? memchr(s, 0, len) : NULL;
    if (nul)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s: NUL (U+0000) at byte %zu", what,
                       (size_t)(nul - s));
    return PARLEY_OK;
}

parley_status pipe_check_user_id(const char *user, size_t len)
{
    return pipe_check_field("user id", user, len, 1, PARLEY_MAX_USER_ID_BYTES, PIPE_NO_CONTROL);
}

parley_status pipe_check_text(const char *text, size_t len)
{
    if (len > PARLEY_MAX_TEXT_BYTES)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "text is %zu bytes, more than the %d a turn may hold", len,
                       PARLEY_MAX_TEXT_BYTES);
    return pipe_check_field("text", text, len, 0, PARLEY_MAX_TEXT_BYTES, PIPE_NO_NUL);
}

/* A text turn for user and text, unchecked; NULL when out of memory. */
static pipe_msg *make_msg(pipe_graph *g, const char *user, const char *text)
{
    pipe_msg *m = pl_calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->user_id = pl_strdup(user);
    m->text = pl_strdup(text);
    if (!m->user_id || !m->text) {
        pl_free(m->user_id);
        pl_free(m->text);
        pl_free(m);
        return NULL;
    }
    m->type = PIPE_T_TEXT;
    m->graph = g;
    m->seq = atomic_fetch_add(&g->seq, 1) + 1;
    m->t_in = pipe_now_ns();
    pipe_msg_live_add(g, 1);
    return m;
}

parley_status pipe_msg_new(pipe_graph *g, const char *user, const char *text, pipe_msg **out)
{
    parley_status st;
    *out = NULL;
    if ((st = pipe_check_user_id(user, strlen(user))) != PARLEY_OK ||
        (st = pipe_check_text(text, strlen(text))) != PARLEY_OK)
        return st;
    if (!(*out = make_msg(g, user, text)))
        return pl_nomem("a turn of user '%s'", user);
    return PARLEY_OK;
}

pipe_msg *pipe_msg_new_refused(pipe_graph *g, const char *user)
{
    return make_msg(g, user ? user : "", "");
}

parley_status pipe_msg_set_pcm(pipe_msg *msg, const int16_t *pcm, size_t n, int rate)
{
    int16_t *copy = NULL;
    if (n && !(copy = pl_malloc(n * sizeof *copy)))
        return pl_nomem("%zu audio samples", n);
    if (n)
        memcpy(copy, pcm, n * sizeof *copy);
    pl_free(msg->pcm);
    msg->pcm = copy;
    msg->n_pcm = n;
    msg->rate = rate;
    return PARLEY_OK;
}

parley_status pipe_msg_new_audio(pipe_graph *g, const char *user, const int16_t *pcm, size_t n,
                                 uint32_t utt, pipe_utt_end end, pipe_msg **out)
{
    parley_status st;
    if ((st = pipe_msg_new(g, user, "", out)) != PARLEY_OK)
        return st;
    if ((st = pipe_msg_set_pcm(*out, pcm, n, PIPE_AUDIO_RATE)) != PARLEY_OK) {
        pipe_msg_free(*out);
        *out = NULL;
        return st;
    }
    (*out)->type = PIPE_T_AUDIO;
    (*out)->utt = utt;
    (*out)->utt_end = end;
    return PARLEY_OK;
}

/* Lets go of msg's payload, freeing it when no clone shares it any more. */
static void release_payload(pipe_msg *m)
{
    if (m->payload_refs && __atomic_sub_fetch(m->payload_refs, 1, __ATOMIC_ACQ_REL) > 0) {
        m->payload_refs = NULL; /* a clone still reads it */
    } else {
        if (m->payload_free)
            m->payload_free(m->payload);
        pl_free(m->payload_refs);
        m->payload_refs = NULL;
    }
    m->payload = NULL;
    m->payload_free = NULL;
    m->session_id = m->intent = m->reply = NULL;
    m->confidence = 0;
    m->slots = NULL;
    m->n_slots = 0;
}

void pipe_msg_set_payload(pipe_msg *msg, pipe_type type, void *payload,
                          void (*destroy)(void *payload))
{
    release_payload(msg);
    msg->payload = payload;
    msg->payload_free = destroy;
    msg->type = type;
}

const char *pipe_msg_error(const pipe_msg *msg)
{
    if (msg->status == PARLEY_OK)
        return NULL;
    return msg->error ? msg->error : parley_status_str(msg->status);
}

void pipe_msg_free(pipe_msg *m)
{
    if (!m)
        return;
    release_payload(m);
    pl_free(m->user_id);
    pl_free(m->text);
    pl_free(m->error);
    pl_free(m->pcm);
    pipe_graph *g = m->graph;
    pl_free(m);
    if (g)
        pipe_msg_live_add(g, -1);
}

static int dup_str(char **dst, const char *src)
{
    *dst = NULL;
    return !src || (*dst = pl_strdup(src));
}

pipe_msg *pipe_msg_clone(const pipe_msg *m)
{
    pipe_msg *c = pl_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    *c = *m;
    c->user_id = c->text = c->error = NULL;
    c->graph = NULL;
    c->pcm = NULL;
    c->n_pcm = 0;
    /* The turn's values point into the payload, which the clone shares. */
    c->payload = NULL;
    c->payload_free = NULL;
    c->payload_refs = NULL;
    int ok = pipe_msg_set_pcm(c, m->pcm, m->n_pcm, m->rate) == PARLEY_OK &&
             dup_str(&c->user_id, m->user_id) && dup_str(&c->text, m->text) &&
             dup_str(&c->error, m->error);
    if (ok && m->payload) {
        pipe_msg *mm = (pipe_msg *)m; /* the shared count lives beside the const message */
        if (!mm->payload_refs && (mm->payload_refs = pl_malloc(sizeof *mm->payload_refs)))
            *mm->payload_refs = 1;
        ok = mm->payload_refs != NULL;
        if (ok) {
            __atomic_add_fetch(mm->payload_refs, 1, __ATOMIC_ACQ_REL);
            c->payload = m->payload;
            c->payload_free = m->payload_free;
            c->payload_refs = mm->payload_refs;
        }
    }
    if (!ok) {
        pipe_msg_free(c);
        return NULL;
    }
    c->graph = m->graph;
    if (c->graph)
        pipe_msg_live_add(c->graph, 1);
    return c;
}
