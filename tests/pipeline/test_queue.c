/* test_queue.c — the bounded queue: a full queue blocks the producer (nothing dropped),
 * order is kept, batches fill up to max within the delay, close drains then ends.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "pipeline/queue.h"
#include "tests/check.h"

enum { N = 2000, CAP = 4 };

static atomic_int pushed;

static void *producer(void *arg)
{
    pipe_queue *q = arg;
    for (long i = 0; i < N; i++) {
        pipe_queue_push(q, (pipe_qitem){ (pipe_msg *)(i + 1), 0 });
        atomic_fetch_add(&pushed, 1);
    }
    return NULL;
}

static void test_backpressure(void)
{
    pipe_queue *q = pipe_queue_new(CAP);
    pthread_t t;
    pthread_create(&t, NULL, producer, q);
    usleep(50000); /* the producer fills the queue and must then wait */
    CHECK(atomic_load(&pushed) == CAP, "pushed %d with nobody popping, capacity %d",
          atomic_load(&pushed), CAP);
    CHECK(pipe_queue_len(q) == CAP, "len %zu", pipe_queue_len(q));
    long next = 1, bad = 0;
    pipe_qitem it[3];
    while (next <= N) {
        size_t n = pipe_queue_pop(q, it, 3, 0);
        CHECK(n >= 1 && n <= 3, "pop gave %zu", n);
        for (size_t i = 0; i < n; i++)
            bad += (long)it[i].msg != next++;
        if (pipe_queue_len(q) > CAP)
            bad++;
    }
    CHECK(bad == 0, "%ld items out of order or over capacity", bad);
    pthread_join(t, NULL);
    CHECK(pipe_queue_len(q) == 0, "left %zu", pipe_queue_len(q));
    pipe_queue_free(q);
}

static void test_batch_and_close(void)
{
    pipe_queue *q = pipe_queue_new(16);
    for (long i = 1; i <= 3; i++)
        pipe_queue_push(q, (pipe_qitem){ (pipe_msg *)i, (int)i });
    pipe_qitem it[8];
    /* Three waiting, max 8, 20 ms delay: the batch is the three once the delay passes. */
    size_t n = pipe_queue_pop(q, it, 8, 20000);
    CHECK(n == 3 && (long)it[0].msg == 1 && (long)it[2].msg == 3 && it[2].port == 3, "batch %zu",
          n);
    for (long i = 1; i <= 5; i++)
        pipe_queue_push(q, (pipe_qitem){ (pipe_msg *)i, 0 });
    n = pipe_queue_pop(q, it, 2, 1000000); /* full batch: no waiting for the delay */
    CHECK(n == 2, "capped batch %zu", n);
    pipe_queue_close(q);
    CHECK(pipe_queue_push(q, (pipe_qitem){ (pipe_msg *)9, 0 }) == -1, "push after close refused");
    n = pipe_queue_pop(q, it, 8, 0);
    CHECK(n == 3 && (long)it[0].msg == 3, "drain after close %zu", n);
    CHECK(pipe_queue_pop(q, it, 8, 0) == 0, "closed and empty ends");
    pipe_queue_free(q);
}

int main(void)
{
    test_backpressure();
    test_batch_and_close();
    return check_done();
}
