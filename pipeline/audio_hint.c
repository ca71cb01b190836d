/* audio_hint.c — the graph's board of segmenters by user (audio_hint.h) and pipe_seg_hint
 * (audio.h): a fixed table of lists by the user's hash, under one lock. A graph serves up to
 * thousands of users speaking at once; a hint comes once per pause of each, so one lock is
 * far from busy.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "pipeline/audio_hint.h"
#include "pipeline/graph_impl.h"
#include "sdk/base/alloc.h"
#include "sdk/base/sync.h"

enum { BUCKETS = 1024, UTT_BITS = 24 };

struct pipe_hint_board {
    pthread_mutex_t mu;
    pthread_cond_t posted; /* a hint was written */
    pipe_hint_entry *bucket[BUCKETS];
};

static size_t bucket_of(const char *user)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)user; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h % BUCKETS;
}

parley_status pipe_hint_board_new(pipe_hint_board **out)
{
    parley_status st;
    pipe_hint_board *b = pl_calloc(1, sizeof *b);
    *out = NULL;
    if (!b)
        return pl_nomem("the board of audio segmenters");
    if ((st = pl_mutex_init(&b->mu, "the board of audio segmenters")) != PARLEY_OK) {
        pl_free(b);
        return st;
    }
    if ((st = pl_cond_init(&b->posted, "the board of audio segmenters")) != PARLEY_OK) {
        pthread_mutex_destroy(&b->mu);
        pl_free(b);
        return st;
    }
    *out = b;
    return PARLEY_OK;
}

void pipe_hint_board_free(pipe_hint_board *b)
{
    if (!b)
        return;
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->posted);
    pl_free(b);
}

void pipe_hint_board_add(pipe_hint_board *b, pipe_hint_entry *e)
{
    pipe_hint_entry **head = &b->bucket[bucket_of(e->user)];
    pthread_mutex_lock(&b->mu);
    e->next = *head;
    *head = e;
    pthread_mutex_unlock(&b->mu);
}

void pipe_hint_board_remove(pipe_hint_board *b, pipe_hint_entry *e)
{
    pthread_mutex_lock(&b->mu);
    for (pipe_hint_entry **p = &b->bucket[bucket_of(e->user)]; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            break;
        }
    pthread_mutex_unlock(&b->mu);
}

static uint64_t pack(uint32_t utt, size_t samples, pipe_end_hint h)
{
    uint64_t n = samples > UINT32_MAX ? UINT32_MAX : samples;
    return (uint64_t)(utt & ((1u << UTT_BITS) - 1)) << 40 | n << 8 | (uint64_t)h;
}

int pipe_hint_read(const pipe_hint_entry *e, uint32_t utt, size_t samples)
{
    uint64_t v = atomic_load_explicit(&e->hint, memory_order_relaxed);
    if (!v || v >> 40 != (utt & ((1u << UTT_BITS) - 1)) || ((v >> 8) & UINT32_MAX) < samples)
        return -1;
    return (int)(v & 0xff);
}

int pipe_hint_wait(pipe_hint_board *b, const pipe_hint_entry *e, uint32_t utt, size_t samples,
                   int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    int h;
    pthread_mutex_lock(&b->mu);
    while ((h = pipe_hint_read(e, utt, samples)) < 0 &&
           pthread_cond_timedwait(&b->posted, &b->mu, &until) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&b->mu);
    return h;
}

void pipe_hint_clear(pipe_hint_entry *e)
{
    atomic_store_explicit(&e->hint, 0, memory_order_relaxed);
}

void pipe_seg_hint(pipe_graph *g, const char *user, uint32_t utt, size_t samples, pipe_end_hint h)
{
    pipe_hint_board *b = g->hints;
    pthread_mutex_lock(&b->mu);
    for (pipe_hint_entry *e = b->bucket[bucket_of(user)]; e; e = e->next)
        if (!strcmp(e->user, user))
            atomic_store_explicit(&e->hint, pack(utt, samples, h), memory_order_relaxed);
    pthread_cond_broadcast(&b->posted);
    pthread_mutex_unlock(&b->mu);
}
