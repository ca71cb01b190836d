/* attention_backward.cu — self-attention for training over packed sequences, the GPU twin of
 * cpu_attention_train and cpu_attention_backward (nlu/cpu/attention_backward.c), with the
 * same math, the same probabilities layout and the same dropout mask:
 *   forward   S = scale Q K^T, P = softmax(S) (kept), O = (P * M) V
 *   backward  dP = (dO V^T) * M, dS = scale P * (dP - rowsum(dP * P)),
 *             dQ = dS K, dK = dS^T Q, dV = (P * M)^T dO
 * One block per (sequence, head), one warp per query row (forward, dS and dQ) or per key
 * row (dK and dV, a second kernel that reads the dS the first one stored), so every output
 * element is written by one thread and summed in a fixed order. The operands are read from
 * global memory through the caches: sequences of training batches are short (T <= 128),
 * and this path is written to be checked against the CPU before it is made fast.
 */
#include "nlu/cuda/kernels.cuh"
#include "nlu/cuda/train_ops.cuh"

enum { ATT_WARPS = 8 };

/* The item of this block (sequence b = blockIdx.x / NH, head h) and this thread's place. */
struct item {
    int first, T, h;
    size_t probs; /* this head's (T, T) block */
    int lane, warp;
    int H;     /* NH * D: the width of out, dout and each third of a qkv row */
    size_t ld; /* 3H: the width of a qkv row */
};

static __device__ item item_of(const int *seq, int B, int NH, int D)
{
    const int b = blockIdx.x / NH, h = blockIdx.x % NH, T = seq[B + b];
    return item{ seq[b],
                 T,
                 h,
                 (size_t)seq[2 * B + b] + (size_t)h * T * T,
                 (int)(threadIdx.x & 31),
                 (int)(threadIdx.x >> 5),
                 NH * D,
                 3 * (size_t)NH * D };
}

static __global__ void attention_train_kernel(float *out, float *probs, const float *qkv, int B,
                                              int NH, int D, const int *seq, uint32_t threshold,
                                              float drop_scale, uint64_t key, int masked)
{
    const item it = item_of(seq, B, NH, D);
    const float scale = rsqrtf((float)D);
    for (int i = it.warp; i < it.T; i += ATT_WARPS) {
        const float *q = qkv + (size_t)(it.first + i) * it.ld + (size_t)it.h * D;
        float *prow = probs + it.probs + (size_t)i * it.T;
        float m = -INFINITY;
        for (int j = it.lane; j < it.T; j += 32) {
            const float *k = qkv + (size_t)(it.first + j) * it.ld + it.H + (size_t)it.h * D;
            float sdot = 0.0f;
            for (int d = 0; d < D; d++)
                sdot += q[d] * k[d];
            prow[j] = sdot * scale;
            m = fmaxf(m, sdot * scale);
        }
        m = warp_max(m);
        float sum = 0.0f;
        for (int j = it.lane; j < it.T; j += 32) {
            const float e = expf(prow[j] - m);
            prow[j] = e;
            sum += e;
        }
        sum = warp_sum(sum);
        for (int j = it.lane; j < it.T; j += 32)
            prow[j] /= sum;
        __syncwarp();
        for (int d = it.lane; d < D; d += 32) {
            float acc = 0.0f;
            for (int j = 0; j < it.T; j++) {
                const float *v = qkv + (size_t)(it.first + j) * it.ld + 2 * it.H + (size_t)it.h * D;
                const size_t e = it.probs + (size_t)i * it.T + j;
                acc += prow[j] * cuda_drop_factor(key, e, threshold, drop_scale, masked) * v[d];
            }
            out[(size_t)(it.first + i) * it.H + (size_t)it.h * D + d] = acc;
        }
    }
}

void cuda_attention_train(float *out, float *probs, const float *qkv, const int *seq, int B, int NH,
                          int D, float p, uint64_t key, cudaStream_t s)
{
    attention_train_kernel<<<B * NH, 32 * ATT_WARPS, 0, s>>>(out, probs, qkv, B, NH, D, seq,
                                                             cpu_dropout_threshold(p),
                                                             1.0f / (1.0f - p), key, p > 0.0f);
}

/* Per query row i: ds row = scale P (dP - rowsum(dP P)) with dP = (dO V^T) * M, and
 * dQ_i = ds row K. */
static __global__ void attention_dq_kernel(float *dqkv, float *ds, const float *dout,
                                           const float *qkv, const float *probs, int B, int NH,
                                           int D, const int *seq, uint32_t threshold,
                                           float drop_scale, uint64_t key, int masked)
{
    const item it = item_of(seq, B, NH, D);
    const float scale = rsqrtf((float)D);
    for (int i = it.warp; i < it.T; i += ATT_WARPS) {
        const float *dO = dout + (size_t)(it.first + i) * it.H + (size_t)it.h * D;
        const size_t row = it.probs + (size_t)i * it.T;
        float *dsrow = ds + row;
        float dot = 0.0f;
        for (int j = it.lane; j < it.T; j += 32) {
            const float *v = qkv + (size_t)(it.first + j) * it.ld + 2 * it.H + (size_t)it.h * D;
            float acc = 0.0f;
            for (int d = 0; d < D; d++)
                acc += dO[d] * v[d];
            acc *= cuda_drop_factor(key, row + j, threshold, drop_scale, masked);
            dsrow[j] = acc;
            dot += acc * probs[row + j];
        }
        dot = warp_sum(dot);
        for (int j = it.lane; j < it.T; j += 32)
            dsrow[j] = scale * probs[row + j] * (dsrow[j] - dot);
        __syncwarp();
        for (int d = it.lane; d < D; d += 32) {
            float acc = 0.0f;
            for (int j = 0; j < it.T; j++)
                acc += dsrow[j] * qkv[(size_t)(it.first + j) * it.ld + it.H + (size_t)it.h * D + d];
            dqkv[(size_t)(it.first + i) * it.ld + (size_t)it.h * D + d] = acc;
        }
    }
}

/* Per key row j: dK_j = sum_i ds_ij Q_i, dV_j = sum_i P_ij M_ij dO_i. */
static __global__ void attention_dkv_kernel(float *dqkv, const float *ds, const float *dout,
                                            const float *qkv, const float *probs, int B, int NH,
                                            int D, const int *seq, uint32_t threshold,
                                            float drop_scale, uint64_t key, int masked)
{
    const item it = item_of(seq, B, NH, D);
    for (int j = it.warp; j < it.T; j += ATT_WARPS)
        for (int d = it.lane; d < D; d += 32) {
            float dk = 0.0f, dv = 0.0f;
            for (int i = 0; i < it.T; i++) {
                const size_t e = it.probs + (size_t)i * it.T + j;
                const size_t tok = (size_t)(it.first + i);
                dk += ds[e] * qkv[tok * it.ld + (size_t)it.h * D + d];
                dv += probs[e] * cuda_drop_factor(key, e, threshold, drop_scale, masked) *
                      dout[tok * it.H + (size_t)it.h * D + d];
            }
            float *dst = dqkv + (size_t)(it.first + j) * it.ld + (size_t)it.h * D + d;
            dst[it.H] = dk;
            dst[2 * it.H] = dv;
        }
}

void cuda_attention_backward(float *dqkv, float *ds, const float *dout, const float *qkv,
                             const float *probs, const int *seq, int B, int NH, int D, float p,
                             uint64_t key, cudaStream_t s)
{
    const uint32_t threshold = cpu_dropout_threshold(p);
    const float drop_scale = 1.0f / (1.0f - p);
    attention_dq_kernel<<<B * NH, 32 * ATT_WARPS, 0, s>>>(dqkv, ds, dout, qkv, probs, B, NH, D, seq,
                                                          threshold, drop_scale, key, p > 0.0f);
    attention_dkv_kernel<<<B * NH, 32 * ATT_WARPS, 0, s>>>(
            dqkv, ds, dout, qkv, probs, B, NH, D, seq, threshold, drop_scale, key, p > 0.0f);
}
