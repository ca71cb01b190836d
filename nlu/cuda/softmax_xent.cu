/* softmax_xent.cu — softmax cross-entropy of classifier logits, loss and logit gradient in
 * one kernel, as cpu_softmax_xent (nlu/cpu/softmax_xent.c), plus each row's argmax for the
 * accuracy the trainer reports.
 *
 * One block of 128 threads per row: the argmax (first on ties), the sum of exp(x - max),
 * then the loss and the gradient, both times the label's class weight when there are
 * weights (bert_labels.intent_weight). Unscored rows (label -1) get zeros. The per-row losses go
 * back to the host, which adds them in a fixed order (train.cu).
 */
#include <math.h>

#include "nlu/cuda/train_ops.cuh"

static __global__ void softmax_xent_kernel(float *dlogits, float *loss, int *best,
                                           const float *logits, const int *labels, int C,
                                           float scale, const float *class_weight)
{
    __shared__ float red[32];
    __shared__ float vmax[32];
    __shared__ int imax[32];
    const size_t r = blockIdx.x;
    const float *x = logits + r * C;
    const int label = labels[r], lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    /* The argmax, first on ties: per thread, then per warp, then across warps. */
    float m = -INFINITY;
    int at = C;
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        if (x[c] > m) {
            m = x[c];
            at = c;
        }
    for (int o = 16; o > 0; o >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        const int a2 = __shfl_xor_sync(0xffffffffu, at, o);
        if (m2 > m || (m2 == m && a2 < at)) {
            m = m2;
            at = a2;
        }
    }
    if (lane == 0) {
        vmax[warp] = m;
        imax[warp] = at;
    }
    __syncthreads();
    m = vmax[0];
    at = imax[0];
    for (int w = 1; w < (int)(blockDim.x >> 5); w++)
        if (vmax[w] > m || (vmax[w] == m && imax[w] < at)) {
            m = vmax[w];
            at = imax[w];
        }
    float acc = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        acc += expf(x[c] - m);
    const float sum = block_sum(acc, red);
    const float w = class_weight && label >= 0 ? class_weight[label] : 1.0f;
    if (threadIdx.x == 0) {
        best[r] = at;
        loss[r] = label >= 0 ? w * (logf(sum) - (x[label] - m)) : 0.0f;
    }
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        dlogits[r * C + c] =
                label >= 0 ? w * scale * (expf(x[c] - m) / sum - (c == label ? 1.0f : 0.0f)) : 0.0f;
}

void cuda_softmax_xent(float *dlogits, float *loss, int *best, const float *logits,
                       const int *labels, int M, int C, float scale, const float *class_weight,
                       cudaStream_t s)
{
    if (M > 0)
        softmax_xent_kernel<<<M, 128, 0, s>>>(dlogits, loss, best, logits, labels, C, scale,
                                              class_weight);
}
