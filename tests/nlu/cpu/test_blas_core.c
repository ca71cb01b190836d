/* test_blas_core.c — cpu_blas_better_core() names faster OpenBLAS kernels when OpenBLAS
 * chose generic ones, and the public parley_nlu_blas_coretype() says the same.
 *
 * meson runs it with OPENBLAS_CORETYPE=Prescott, the SSE3 kernels OpenBLAS falls back to on
 * CPUs it does not know: on any CPU with AVX2 + FMA the function must then name a better
 * core, chosen by the CPU's features; on an older CPU, nothing. With the argument `modern`
 * meson runs it with OPENBLAS_CORETYPE=Haswell: kernels of the AVX2 generation are right
 * already, even on a CPU with AVX-512 (an AMD EPYC gets them), so nothing is named and
 * nothing is warned.
 */
#include <string.h>

#include "nlu/cpu/ops.h"
#include "parley/nlu.h"
#include "tests/check.h"

int main(int argc, char **argv)
{
    __builtin_cpu_init();
    const char *core = cpu_blas_better_core();
    if (argc > 1 && !strcmp(argv[1], "modern"))
        CHECK(core == NULL, "Haswell's kernels are not slow: got %s", core ? core : "NULL");
    else if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
        CHECK(core && !strcmp(core, "SkylakeX"), "got %s", core ? core : "NULL");
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        CHECK(core && !strcmp(core, "Haswell"), "got %s", core ? core : "NULL");
    else
        CHECK(core == NULL, "got %s on a CPU without AVX2", core);
    CHECK(cpu_blas_better_core() == core, "the answer changed between calls");
    CHECK(parley_nlu_blas_coretype() == core, "the public call answers the same");
    return check_done();
}
