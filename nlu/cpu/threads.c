/* threads.c — how many threads the OpenMP ops use.
 *
 * omp_set_num_threads() changes a per-thread setting, so a count set in the thread that
 * opened the model would not reach the worker threads that run it. The ops instead read one
 * process-wide count here and pass it in num_threads clauses. This file does not touch
 * OpenBLAS's pool; bert_set_threads() sets both.
 */
#include <stdlib.h>
#include <strings.h>

#include "parley_config.h"
#include "nlu/cpu/ops.h"

#if PARLEY_HAVE_OPENMP
#include <omp.h>
#endif

static _Atomic int cpu_thread_count; /* 0 = one per core */

void cpu_set_threads(int n)
{
    cpu_thread_count = n > 0 ? n : 0;
}

int cpu_threads(void)
{
#if PARLEY_HAVE_OPENMP
    int n = cpu_thread_count;
    return n > 0 ? n : omp_get_num_procs();
#else
    return 1;
#endif
}

/* libgomp's idle workers spin for some milliseconds after each parallel region before they
 * sleep, and on a machine with no spare core that spinning takes a core from OpenBLAS's next
 * GEMM: on the 2-core test machine each region cost 3-5 ms of GEMM time, which made
 * BERT-base at batch 1 three times slower with every op threaded than with none. So unless
 * the environment stops the spinning (OMP_WAIT_POLICY=passive, or GOMP_SPINCOUNT below
 * 100000), a thread must get SPIN_FACTOR grains (some 8 ms) of work before an op goes
 * parallel; only attention and GELU of big batches do. libgomp reads these variables once, at
 * start-up; so does this. */
enum { SPIN_FACTOR = 256 };

static size_t grain_factor(void)
{
    static _Atomic size_t factor; /* 0 = not read yet; the race to set it is benign */
    size_t f = factor;
    if (f)
        return f;
    const char *policy = getenv("OMP_WAIT_POLICY"), *spins = getenv("GOMP_SPINCOUNT");
    int passive = policy && !strcasecmp(policy, "passive");
    passive |= spins && *spins >= '0' && *spins <= '9' && strtoull(spins, NULL, 10) < 100000;
    factor = f = passive ? 1 : SPIN_FACTOR;
    return f;
}

int cpu_threads_for(size_t work, size_t grain)
{
    int threads = cpu_threads();
    size_t useful = work / (grain * grain_factor());
    return useful < 1 ? 1 : useful < (size_t)threads ? (int)useful : threads;
}
