/* users.h — many simulated users submitting into a pipeline from several threads.
 *
 * users_submit() runs `threads` threads; thread i submits turn k of every user u with
 * u % threads == i, for k = 0 .. turns-1 in order, so each user's turns are submitted in
 * order while users interleave. The user id is "user<u>"; the text comes from `say`.
 */
#ifndef TESTS_PIPELINE_USERS_H
#define TESTS_PIPELINE_USERS_H

#include <pthread.h>
#include <stdio.h>

#include "parley/pipeline.h"

typedef void (*users_say_fn)(int user, int turn, char *buf, size_t cap);

typedef struct users_job {
    parley_pipeline *p;
    int first, users, turns, threads;
    users_say_fn say;
    long failed;
} users_job;

static void *users_thread(void *arg)
{
    users_job *j = arg;
    char user[32], text[256];
    for (int k = 0; k < j->turns; k++)
        for (int u = j->first; u < j->users; u += j->threads) {
            snprintf(user, sizeof user, "user%d", u);
            j->say(u, k, text, sizeof text);
            j->failed += parley_pipeline_submit(j->p, user, text, NULL) != PARLEY_OK;
        }
    return NULL;
}

/* Returns how many submits failed (at most 16 threads). */
static inline long users_submit(parley_pipeline *p, int users, int turns, int threads,
                                users_say_fn say)
{
    users_job jobs[16];
    pthread_t th[16];
    long failed = 0;
    threads = threads < 1 ? 1 : threads > 16 ? 16 : threads;
    for (int i = 0; i < threads; i++) {
        jobs[i] = (users_job){ p, i, users, turns, threads, say, 0 };
        pthread_create(&th[i], NULL, users_thread, &jobs[i]);
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        failed += jobs[i].failed;
    }
    return failed;
}

#endif
