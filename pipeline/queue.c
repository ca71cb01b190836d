/* queue.c — the bounded message queue: a ring buffer under one mutex, two conditions.
 *
 * It is the only place where threads of the graph wait on each other. It knows nothing of
 * nodes or users; the engine picks the queue (pipeline/graph.c).
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "pipeline/queue.h"
#include "sdk/base/alloc.h"
#include "sdk/base/sync.h"

struct pipe_queue {
    pthread_mutex_t mu;
    pthread_cond_t not_empty, not_full;
    pipe_qitem *ring;
    size_t cap, head, len;
    int closed;
};

pipe_queue *pipe_queue_new(size_t capacity)
{
    pipe_queue *q = pl_calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->ring = pl_calloc(capacity ? capacity : 1, sizeof *q->ring);
    if (!q->ring) {
        pl_free(q);
        return NULL;
    }
    q->cap = capacity ? capacity : 1;
    int made = 0;
    if (pl_mutex_init(&q->mu, "a queue") == PARLEY_OK && ++made &&
        pl_cond_init(&q->not_empty, "a queue") == PARLEY_OK && ++made &&
        pl_cond_init(&q->not_full, "a queue") == PARLEY_OK)
        return q;
    if (made > 1)
        pthread_cond_destroy(&q->not_empty);
    if (made > 0)
        pthread_mutex_destroy(&q->mu);
    pl_free(q->ring);
    pl_free(q);
    return NULL;
}

void pipe_queue_free(pipe_queue *q)
{
    if (!q)
        return;
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->not_empty);
    pthread_cond_destroy(&q->not_full);
    pl_free(q->ring);
    pl_free(q);
}

int pipe_queue_push(pipe_queue *q, pipe_qitem item)
{
    pthread_mutex_lock(&q->mu);
    while (q->len == q->cap && !q->closed)
        pthread_cond_wait(&q->not_full, &q->mu);
    if (q->closed) {
        pthread_mutex_unlock(&q->mu);
        return -1;
    }
    q->ring[(q->head + q->len) % q->cap] = item;
    q->len++;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

size_t pipe_queue_pop(pipe_queue *q, pipe_qitem *out, size_t max, long delay_us)
{
    pthread_mutex_lock(&q->mu);
    while (q->len == 0 && !q->closed)
        pthread_cond_wait(&q->not_empty, &q->mu);
    if (q->len < max && delay_us > 0 && !q->closed) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        long long ns = until.tv_nsec + delay_us * 1000LL;
        until.tv_sec += ns / 1000000000LL;
        until.tv_nsec = ns % 1000000000LL;
        while (q->len < max && !q->closed &&
               pthread_cond_timedwait(&q->not_empty, &q->mu, &until) != ETIMEDOUT) {
        }
    }
    size_t n = q->len < max ? q->len : max;
    for (size_t i = 0; i < n; i++) {
        out[i] = q->ring[q->head];
        q->head = (q->head + 1) % q->cap;
    }
    q->len -= n;
    if (n)
        pthread_cond_broadcast(&q->not_full);
    pthread_mutex_unlock(&q->mu);
    return n;
}

void pipe_queue_close(pipe_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->closed = 1;
    pthread_cond_broadcast(&q->not_empty);
    pthread_cond_broadcast(&q->not_full);
    pthread_mutex_unlock(&q->mu);
}

size_t pipe_queue_len(pipe_queue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->len;
    pthread_mutex_unlock(&q->mu);
    return n;
}
