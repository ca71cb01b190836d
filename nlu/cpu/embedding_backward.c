/* embedding_backward.c — the embedding sum that training keeps, and its backward: a
 * scatter-add of the sum's gradient into the word, position and token type tables.
 *
 * cpu_embedding (embedding.c) normalizes the sum in place; training needs the sum itself
 * as the LayerNorm's input for the backward pass, so it forms the sum here and calls
 * cpu_layernorm on it. The backward touches only the rows the batch uses: a vocabulary of
 * 30k rows would otherwise cost a pass over V x H floats per step. Work items are blocks of
 * columns, each adding every token in order, so repeated ids need no atomics and the
 * result does not depend on the thread count. The LayerNorm's backward is
 * layernorm_backward.c's.
 */
#include "nlu/cpu/ops.h"
#include "nlu/cpu/ops_backward.h"
#include "nlu/cpu/kernels.h"

/* Columns per work item of the scatter-add, and additions worth a thread of their own (see
 * cpu_threads_for in ops.h). */
enum { EMB_COLS = 128, EMB_GRAIN = 1 << 16 };

// out (N, H) <- ids (N), len (B), word (V, H), pos (P, H), type (TT, H)
void cpu_embedding_sum(float *out, const int *ids, const int *len, int B, const float *word,
                       const float *pos, const float *type, int H)
{
    size_t n = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < len[b]; t++, n++) {
            const float *we = word + (size_t)ids[n] * H, *pe = pos + (size_t)t * H;
            float *o = out + n * H;
            for (int c = 0; c < H; c++)
                o[c] = we[c] + pe[c] + type[c];
        }
}

// dword, dpos, dtype columns c0 .. c0+nc-1 += dsum (N, H) at the batch's rows
CPU_SIMD static void scatter_columns(float *dword, float *dpos, float *dtype, const float *dsum,
                                     const int *ids, const int *len, int B, int H, int pad_id,
                                     int c0, int nc)
{
    size_t n = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < len[b]; t++, n++) {
            const float *d = dsum + n * H + c0;
            float *dw = dword + (size_t)ids[n] * H + c0, *dp = dpos + (size_t)t * H + c0;
            if (ids[n] != pad_id)
                for (int c = 0; c < nc; c++)
                    dw[c] += d[c];
            for (int c = 0; c < nc; c++) {
                dp[c] += d[c];
                dtype[c0 + c] += d[c];
            }
        }
}

void cpu_embedding_backward(float *dword, float *dpos, float *dtype, const float *dsum,
                            const int *ids, const int *len, int B, int H, int pad_id)
{
    const int blocks = (H + EMB_COLS - 1) / EMB_COLS;
    size_t N = 0;
    for (int b = 0; b < B; b++)
        N += (size_t)len[b];
    int threads = cpu_threads_for(N * H, EMB_GRAIN);
    threads = blocks < threads ? blocks : threads;
    CPU_PARALLEL_FOR(threads)
    for (int k = 0; k < blocks; k++) {
        int c0 = k * EMB_COLS;
        scatter_columns(dword, dpos, dtype, dsum, ids, len, B, H, pad_id, c0,
                        H - c0 < EMB_COLS ? H - c0 : EMB_COLS);
    }
}

/* The reference sums each used row's gradient in double over all tokens that use it, then
 * adds it once. */
void cpu_embedding_backward_ref(float *dword, float *dpos, float *dtype, const float *dsum,
                                const int *ids, const int *len, int B, int H, int pad_id)
{
    size_t N = 0;
    int t_max = 0;
    for (int b = 0; b < B; b++) {
        N += (size_t)len[b];
        t_max = len[b] > t_max ? len[b] : t_max;
    }
    int pos_of[N > 0 ? N : 1];
    for (int b = 0, n = 0; b < B; b++)
        for (int t = 0; t < len[b]; t++)
            pos_of[n++] = t;
    for (size_t n = 0; n < N; n++) {
        int first = 1;
        for (size_t m = 0; m < n && first; m++)
            first = ids[m] != ids[n];
        if (!first || ids[n] == pad_id)
            continue;
        for (int c = 0; c < H; c++) {
            double acc = 0;
            for (size_t m = n; m < N; m++)
                acc += ids[m] == ids[n] ? dsum[m * H + c] : 0.0;
            dword[(size_t)ids[n] * H + c] = (float)(dword[(size_t)ids[n] * H + c] + acc);
        }
    }
    for (int t = 0; t < t_max; t++)
        for (int c = 0; c < H; c++) {
            double acc = 0;
            for (size_t m = 0; m < N; m++)
                acc += pos_of[m] == t ? dsum[m * H + c] : 0.0;
            dpos[(size_t)t * H + c] = (float)(dpos[(size_t)t * H + c] + acc);
        }
    for (int c = 0; c < H; c++) {
        double acc = 0;
        for (size_t m = 0; m < N; m++)
            acc += dsum[m * H + c];
        dtype[c] = (float)(dtype[c] + acc);
    }
}
