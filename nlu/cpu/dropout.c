/* dropout.c — inverted dropout whose mask is a hash of (key, element index).
 *
 * A counter-based mask needs no RNG state: the forward pass draws it, the backward pass
 * draws the same one again instead of storing N x H bytes per dropout site, and threads
 * may take the elements in any order. The key names one tensor of one step (the seed and
 * the tensor's number hashed together with SplitMix64's finalizer, Steele, Lea and Flood
 * 2014); the per-element hash is in ops_backward.h so attention can inline it. This file
 * does not choose where dropout goes (nlu/train/bert_train.c does).
 */
#include "nlu/cpu/ops.h"
#include "nlu/cpu/ops_backward.h"
#include "nlu/cpu/kernels.h"

/* Elements per parallel work item, and elements worth a thread of their own. */
enum { DROP_BLOCK = 4096, DROP_GRAIN = 32768 };

static uint64_t splitmix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t cpu_dropout_key(uint64_t seed, uint64_t tensor)
{
    return splitmix64(splitmix64(seed) + tensor);
}

uint32_t cpu_dropout_threshold(float p)
{
    if (!(p > 0.0f))
        return 0;
    double t = (double)p * 4294967296.0 + 0.5;
    return t >= 4294967295.0 ? UINT32_MAX : (uint32_t)t;
}

// out (n) = res (n) + mask * inp (n) * scale for elements first .. first+n-1
CPU_SIMD static void dropout_block(float *out, const float *inp, const float *res, size_t n,
                                   uint32_t threshold, float scale, uint64_t key, uint64_t first)
{
    for (size_t i = 0; i < n; i++) {
        float m = cpu_dropout_bits(key, first + i) >= threshold ? scale : 0.0f;
        out[i] = (res ? res[i] : 0.0f) + m * inp[i];
    }
}

CPU_SIMD static void add_block(float *out, const float *inp, const float *res, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (res ? res[i] : 0.0f) + inp[i];
}

void cpu_dropout(float *out, const float *inp, const float *res, size_t n, float p, uint64_t key,
                 uint64_t first)
{
    if (p <= 0.0f && !res && out == inp)
        return;
    const uint32_t threshold = cpu_dropout_threshold(p);
    const float scale = 1.0f / (1.0f - p);
    long blocks = (long)((n + DROP_BLOCK - 1) / DROP_BLOCK);
    int threads = cpu_threads_for(n, DROP_GRAIN);
    CPU_PARALLEL_FOR(threads)
    for (long k = 0; k < blocks; k++) {
        size_t at = (size_t)k * DROP_BLOCK, m = n - at < DROP_BLOCK ? n - at : DROP_BLOCK;
        if (p > 0.0f)
            dropout_block(out + at, inp + at, res ? res + at : NULL, m, threshold, scale, key,
                          first + at);
        else
            add_block(out + at, inp + at, res ? res + at : NULL, m);
    }
}
