/* queue.h — a bounded FIFO of messages between two nodes, with backpressure.
 *
 * pipe_queue_push() blocks while the queue is full, so a fast producer waits for a slow
 * consumer instead of dropping anything. pipe_queue_pop() takes up to `max` items at once,
 * waiting up to a delay after the first for more (the NLU node's dynamic batching).
 * Threading: any number of producers and consumers; all calls are synchronized.
 */
#ifndef PIPELINE_QUEUE_H
#define PIPELINE_QUEUE_H

#include <stddef.h>

#include "pipeline/node.h"

typedef struct pipe_qitem {
    pipe_msg *msg;
    int port; /* the receiving node's input port */
} pipe_qitem;

typedef struct pipe_queue pipe_queue;

/* NULL when out of memory (or out of locks). capacity >= 1. */
pipe_queue *pipe_queue_new(size_t capacity);
/* The queue must be empty and no thread waiting on it. NULL is a no-op. */
void pipe_queue_free(pipe_queue *q);

/* Appends, blocking while full. Returns 0, or -1 when the queue was closed (the item is
 * not taken: the caller still owns it). */
int pipe_queue_push(pipe_queue *q, pipe_qitem item);

/* Takes 1..max items, oldest first, into out. Blocks until one is there; then waits up to
 * delay_us (from the first) for the batch to fill. Returns 0 only when the queue is closed
 * and empty. */
size_t pipe_queue_pop(pipe_queue *q, pipe_qitem *out, size_t max, long delay_us);

/* Wakes every waiter; later pushes fail, pops drain what is left then return 0. */
void pipe_queue_close(pipe_queue *q);

/* Items queued now (a snapshot). */
size_t pipe_queue_len(pipe_queue *q);

#endif
