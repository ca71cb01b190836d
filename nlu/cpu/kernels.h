/* kernels.h — what the op files share: SIMD cloning, the OpenMP loop macro, exp and the
 * normal CDF written so that compilers vectorize loops calling them, and the register tiles
 * and thread count of the two attention files.
 *
 * libm's expf and erff are scalar calls: inside a loop they stop vectorization, and erff costs
 * about as much as the GEMM it follows in a BERT FFN. These inline versions use only
 * arithmetic, selects and integer bit moves, so a loop over them becomes SIMD code. They are
 * accurate to a few float ulps (tests/nlu/cpu/test_ops.c measures them against double libm) and
 * defined for every float input, NaN and infinities included.
 *
 * CPU_SIMD marks a function that should also be compiled for AVX2+FMA and AVX-512 and chosen
 * at load time (GCC target_clones), without -ftrapping-math: under that default GCC keeps
 * the clamps below as branches around floating-point code instead of vector selects. (No
 * parley code reads floating-point exception flags.) It goes on functions that hold hot
 * loops, not on the OpenMP-parallel callers: GCC outlines the parallel body before it makes
 * the clones.
 *
 * CPU_PARALLEL_FOR(threads) goes before a for loop to spread it over `threads` OpenMP
 * threads in equal contiguous shares; the _DYNAMIC form hands out one iteration at a time,
 * for iterations of unequal cost. Without OpenMP both leave a plain loop (and no
 * unknown-pragma warning), and cpu_thread_id() is 0.
 */
#ifndef NLU_CPU_KERNELS_H
#define NLU_CPU_KERNELS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nlu/cpu/ops.h"
#include "parley_config.h"

#if PARLEY_HAVE_OPENMP
#include <omp.h>
#define CPU_PRAGMA(x) _Pragma(#x)
#define CPU_PARALLEL_FOR(threads) CPU_PRAGMA(omp parallel for num_threads(threads) schedule(static))
#define CPU_PARALLEL_FOR_DYNAMIC(threads) \
    CPU_PRAGMA(omp parallel for num_threads(threads) schedule(dynamic, 1))
static inline int cpu_thread_id(void)
{
    return omp_get_thread_num();
}
#else
#define CPU_PARALLEL_FOR(threads)         (void)(threads);
#define CPU_PARALLEL_FOR_DYNAMIC(threads) (void)(threads);
static inline int cpu_thread_id(void)
{
    return 0;
}
#endif

/* Helpers called from CPU_SIMD functions must be CPU_INLINE (forced inline): GCC does not
 * inline a plain static inline function into a caller whose target or optimization options
 * differ, and the call that remains stops vectorization. */
#if defined(__GNUC__)
#define CPU_INLINE __attribute__((always_inline)) static inline
#else
#define CPU_INLINE static inline
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define CPU_SIMD                                                                 \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), \
                   optimize("no-trapping-math")))
#else
#define CPU_SIMD
#endif

/* Lanes of running partial results: a reduction in one accumulator does not vectorize
 * without -ffast-math (it would reorder the additions), but 16 independent lanes do, and
 * they round less than one long sum. Sums are kept in double: they are cheap next to the
 * GEMMs, and LayerNorm's deviations from the mean stay exact even when the mean is large
 * next to the spread. */
enum { CPU_LANES = 16 };

/* sum((x - shift)^p) over n floats, p = 2 if square else 1. */
CPU_INLINE double cpu_lanes_sum(const float *x, int n, double shift, int square)
{
    double lane[CPU_LANES] = { 0 };
    int i = 0;
    for (; i + CPU_LANES <= n; i += CPU_LANES)
        for (int j = 0; j < CPU_LANES; j++) {
            double d = (double)x[i + j] - shift;
            lane[j] += square ? d * d : d;
        }
    for (; i < n; i++) {
        double d = (double)x[i] - shift;
        lane[0] += square ? d * d : d;
    }
    double s = 0;
    for (int j = 0; j < CPU_LANES; j++)
        s += lane[j];
    return s;
}

/* max(x) over n >= 1 floats. */
CPU_INLINE float cpu_lanes_max(const float *x, int n)
{
    float lane[CPU_LANES];
    for (int j = 0; j < CPU_LANES; j++)
        lane[j] = x[0];
    int i = 0;
    for (; i + CPU_LANES <= n; i += CPU_LANES)
        for (int j = 0; j < CPU_LANES; j++)
            lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
    for (; i < n; i++)
        lane[0] = x[i] > lane[0] ? x[i] : lane[0];
    float m = lane[0];
    for (int j = 1; j < CPU_LANES; j++)
        m = lane[j] > m ? lane[j] : m;
    return m;
}

/* e^(a + b), where a may be large and b small: the range reduction subtracts n ln2 from a
 * before adding b, so the rounding of a + b never enters (that rounding alone is 1e-7
 * relative of |a + b|, 1e-5 at a = -80). Degree-7 Taylor series on the reduced argument
 * |r| <= ln2/2, truncation error below 6e-9 relative.
 * Defined for every input: NaN gives NaN; a sum beyond ln(FLT_MAX) = 88.72 overflows to
 * +inf (a caller that cannot take inf keeps its arguments <= 0, as softmax does by
 * subtracting the maximum); a sum below -87.33, where e^x leaves the normal floats
 * (FLT_MIN = 1.2e-38), gives 0, so e^-inf = 0. Flushing that tail to zero rather than
 * computing subnormals keeps GELU fast: its erfc tails reach there for every input below
 * -13, and arithmetic on subnormals costs a CPU ten times as much. Outside [-87.33, 89]
 * the arithmetic runs on 0 and the answer is chosen at the end, so no float-to-int
 * conversion ever sees a value out of range (NaN included: it fails every comparison).
 * 2^n is applied as two factors so that n = 128 (up to 88.72) is reached. */
CPU_INLINE float cpu_exp_sum(float a, float b)
{
    float s = a + b;
    /* Two selects each, not one on (s >= lo && s <= hi): GCC vectorizes only these. */
    a = s >= -87.33f ? a : 0.0f;
    b = s >= -87.33f ? b : 0.0f;
    a = s <= 89.0f ? a : 0.0f;
    b = s <= 89.0f ? b : 0.0f;
    /* n = round(s / ln2) by truncating a positive number (s / ln2 >= -126 here), which
     * vectorizes where lrintf would not without -ffast-math. */
    int32_t ni = (int32_t)((a + b) * 1.44269504088896341f + 256.5f) - 256;
    float n = (float)ni;
    /* ln2 in a high part with 16 significant bits, so n * ln2_hi is exact and, for large a,
     * so is a - n * ln2_hi (Sterbenz); then the rest. */
    float r = (a - n * 0.693145751953125f) + b;
    r = r - n * 1.428606765330187045e-06f;
    float p = 1.0f / 5040.0f + r * (1.0f / 40320.0f);
    p = 1.0f / 720.0f + r * p;
    p = 1.0f / 120.0f + r * p;
    p = 1.0f / 24.0f + r * p;
    p = 1.0f / 6.0f + r * p;
    p = 0.5f + r * p;
    p = 1.0f + r * p;
    p = 1.0f + r * p;
    int32_t n1 = ni / 2, n2 = ni - n1; /* each in [-63, 64] */
    int32_t bits1 = (n1 + 127) << 23, bits2 = (n2 + 127) << 23;
    float scale1, scale2;
    memcpy(&scale1, &bits1, sizeof scale1);
    memcpy(&scale2, &bits2, sizeof scale2);
    float e = p * scale1 * scale2; /* both products exact unless the second overflows */
    e = s > 89.0f ? INFINITY : e;
    e = s < -87.33f ? 0.0f : e;
    return s != s ? s : e;
}

CPU_INLINE float cpu_expf(float x)
{
    return cpu_exp_sum(x, 0.0f);
}

/* Phi(x) = P(Z <= x) for a standard normal Z, so erf-GELU is x * Phi(x).
 * Phi(x) = erfc(-x / sqrt 2) / 2. erfc(z) for z >= 0 is the Chebyshev fit of Numerical
 * Recipes in C (2nd ed., section 6.2, erfcc): t = 1 / (1 + z/2),
 * erfc(z) = t * exp(-z^2 + poly(t)), fractional error below 1.2e-7 for every z >= 0.
 * Working from erfc of |x| keeps the negative tail accurate in relative terms, where
 * 1 + erf(x) would cancel; z^2 = x^2 / 2 is exact in double and goes to the exponential as
 * a float high part plus a remainder. */
CPU_INLINE float cpu_normal_cdf(float x)
{
    float ax = x < 0 ? -x : x;
    ax = ax > 14.0f ? 14.0f : ax; /* Phi(-14) ~ 8e-45: already zero in float */
    double half_x2 = 0.5 * (double)ax * (double)ax;
    float z2_hi = (float)half_x2, z2_lo = (float)(half_x2 - z2_hi);
    float t = 1.0f / (1.0f + 0.5f * 0.70710678118654752f * ax);
    float p = -0.82215223f + t * 0.17087277f;
    p = 1.48851587f + t * p;
    p = -1.13520398f + t * p;
    p = 0.27886807f + t * p;
    p = -0.18628806f + t * p;
    p = 0.09678418f + t * p;
    p = 0.37409196f + t * p;
    p = 1.00002368f + t * p;
    p = -1.26551223f + t * p;
    float half_erfc = 0.5f * t * cpu_exp_sum(-z2_hi, p - z2_lo);
    /* x < 0 ? half_erfc : 1 - half_erfc, with the arithmetic outside the condition: under
     * the default -ftrapping-math GCC will not vectorize a subtraction done on one branch. */
    return (x < 0 ? 0.0f : 1.0f) + (x < 0 ? 1.0f : -1.0f) * half_erfc;
}

/* The attention ops (attention.c, attention_backward.c) work on (sequence, head) items and
 * run their products on register tiles: rows of CPU_TW floats in a GCC vector type
 * (cpu_vtile), which the compiler maps onto whatever vector registers the clone has, over
 * operands copied into scratch zero-padded to multiples of CPU_TW (cpu_round_up), so that
 * tiles never run past the data. Each file picks its own rows per tile. */
enum { CPU_TW = 16 };
typedef float cpu_vtile __attribute__((vector_size(CPU_TW * sizeof(float))));

CPU_INLINE int cpu_round_up(int n, int to)
{
    return (n + to - 1) / to * to;
}

/* Multiply-adds of attention worth a thread of their own (some 30 us of work). */
enum { CPU_ATTENTION_GRAIN = 1 << 19 };

/* The threads worth waking for the B * NH items of attention over sequences of len (B) and
 * heads of D, at most `threads`; *t_max receives the longest length. */
static inline int cpu_attention_threads(const int *len, int B, int NH, int D, int threads,
                                        int *t_max)
{
    size_t work = 0; // multiply-adds of Q K^T
    *t_max = 0;
    for (int b = 0; b < B; b++) {
        *t_max = len[b] > *t_max ? len[b] : *t_max;
        work += (size_t)len[b] * len[b] * NH * D;
    }
    int useful = cpu_threads_for(work, CPU_ATTENTION_GRAIN);
    threads = useful < threads ? useful : threads;
    return B * NH < threads ? B * NH : threads;
}

#endif
