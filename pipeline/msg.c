/* msg.c — turn messages: creation, deep copy for fan-out, freeing, and the in-flight count.
 *
 * Every live message is counted by its graph, so shutdown can wait until the last turn has
 * left the graph (pipe_graph_drain). An NLU result is shared by clones with a count, since a
 * parley_nlu_result cannot be copied; everything else is copied.
 */
#include <string.h>
#include <time.h>

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

pipe_msg *pipe_msg_new(pipe_graph *g, const char *user, const char *text)
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

void pipe_msg_set_nlu(pipe_msg *msg, parley_nlu_result *r)
{
    msg->nlu = r;
    msg->type = PIPE_T_NLU;
}

static void free_slots(pipe_slot *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++) {
        pl_free(s[i].name);
        pl_free(s[i].value);
    }
    pl_free(s);
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
    if (m->nlu && (!m->nlu_refs || __atomic_sub_fetch(m->nlu_refs, 1, __ATOMIC_ACQ_REL) == 0)) {
        parley_nlu_result_free(m->nlu);
        pl_free(m->nlu_refs);
    }
    pl_free(m->user_id);
    pl_free(m->session_id);
    pl_free(m->text);
    pl_free(m->reply);
    pl_free(m->intent);
    pl_free(m->error);
    free_slots(m->slots, m->n_slots);
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
    c->user_id = c->session_id = c->text = c->reply = c->intent = c->error = NULL;
    c->slots = NULL;
    c->n_slots = 0;
    c->nlu = NULL;
    c->graph = NULL;
    int ok = dup_str(&c->user_id, m->user_id) && dup_str(&c->session_id, m->session_id) &&
             dup_str(&c->text, m->text) && dup_str(&c->reply, m->reply) &&
             dup_str(&c->intent, m->intent) && dup_str(&c->error, m->error);
    if (ok && m->n_slots) {
        ok = (c->slots = pl_calloc(m->n_slots, sizeof *c->slots)) != NULL;
        for (size_t i = 0; ok && i < m->n_slots; i++, c->n_slots++)
            ok = dup_str(&c->slots[i].name, m->slots[i].name) &&
                 dup_str(&c->slots[i].value, m->slots[i].value);
        if (!ok)
            c->n_slots++; /* the half-copied slot is freed too */
    }
    if (ok && m->nlu) {
        pipe_msg *mm = (pipe_msg *)m; /* the shared count lives beside the const message */
        if (!mm->nlu_refs && (mm->nlu_refs = pl_malloc(sizeof *mm->nlu_refs)))
            *mm->nlu_refs = 1;
        ok = mm->nlu_refs != NULL;
        if (ok) {
            __atomic_add_fetch(mm->nlu_refs, 1, __ATOMIC_ACQ_REL);
            c->nlu = m->nlu;
            c->nlu_refs = mm->nlu_refs;
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
