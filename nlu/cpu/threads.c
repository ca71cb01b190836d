/* threads.c — how many threads the OpenMP ops use.
 *
 * omp_set_num_threads() changes a per-thread setting, so a count set in the thread that
 * opened the model would not reach the worker threads that run it. The ops instead read one
 * process-wide count here and pass it in num_threads clauses. This file does not touch
 * OpenBLAS's pool; bert_set_threads() sets both.
 */
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

int cpu_threads_for(size_t work, size_t grain)
{
    int threads = cpu_threads();
    size_t useful = grain ? work / grain : work;
    return useful < 1 ? 1 : useful < (size_t)threads ? (int)useful : threads;
}
