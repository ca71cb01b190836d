/* train_kernels.cu — the row-wise and element-wise kernels of training (train_ops.cuh):
 * embedding sum and its segment-sum backward, LayerNorm forward and backward, GELU, the
 * tanh backward, dropout, row gathers, softmax cross-entropy, the gradient norm's partial sums and
 * the fused clip + AdamW update. Attention is train_attention.cu.
 *
 * Rows get one block each (LN_THREADS threads striding over the columns); element-wise
 * kernels a grid-stride loop. Column sums go through fixed chunks of CUDA_COL_ROWS rows whose
 * partial sums are then added in chunk order, so results never depend on scheduling.
 */
#include <math.h>

#include "nlu/cuda/train_ops.cuh"

extern "C" {
#include "nlu/cpu/ops_backward.h"
}

enum { LN_THREADS = 256, EW_THREADS = 256, EW_MAX_BLOCKS = 4096, COL_THREADS = 128 };

static int ew_blocks(size_t n)
{
    size_t b = (n + EW_THREADS - 1) / EW_THREADS;
    const size_t most = EW_MAX_BLOCKS;
    return (int)(b < 1 ? 1 : b > most ? most : b);
}

#define GRID_STRIDE(i, n)                                                   \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (size_t)gridDim.x * blockDim.x)

/* ---- column sums --------------------------------------------------------------------- */

size_t cuda_col_sum_scratch(int M, int C)
{
    return (size_t)((M + CUDA_COL_ROWS - 1) / CUDA_COL_ROWS) * (size_t)C;
}

// part (chunks, C): chunk k's sum of rows k*CUDA_COL_ROWS ..
static __global__ void col_partial_kernel(float *part, const float *x, int M, int C)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x, k = blockIdx.y;
    if (c >= C)
        return;
    const int r1 = min(M, (k + 1) * CUDA_COL_ROWS);
    float acc = 0.0f;
    for (int r = k * CUDA_COL_ROWS; r < r1; r++)
        acc += x[(size_t)r * C + c];
    part[(size_t)k * C + c] = acc;
}

static __global__ void col_finish_kernel(float *out, const float *part, int chunks, int C)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C)
        return;
    float acc = 0.0f;
    for (int k = 0; k < chunks; k++)
        acc += part[(size_t)k * C + c];
    out[c] += acc;
}

void cuda_col_sum_add(float *out, const float *x, int M, int C, float *scratch, cudaStream_t s)
{
    const int chunks = (M + CUDA_COL_ROWS - 1) / CUDA_COL_ROWS,
              cb = (C + COL_THREADS - 1) / COL_THREADS;
    if (M < 1)
        return;
    col_partial_kernel<<<dim3(cb, chunks), COL_THREADS, 0, s>>>(scratch, x, M, C);
    col_finish_kernel<<<cb, COL_THREADS, 0, s>>>(out, scratch, chunks, C);
}

/* ---- embeddings ---------------------------------------------------------------------- */

static __global__ void embedding_sum_kernel(float *out, const int *ids, const int *pos,
                                            const float *word, const float *pos_emb,
                                            const float *type, int H)
{
    const size_t t = blockIdx.x;
    const float *w = word + (size_t)ids[t] * H, *p = pos_emb + (size_t)pos[t] * H;
    for (int c = threadIdx.x; c < H; c += blockDim.x)
        out[t * H + c] = w[c] + p[c] + type[c];
}

void cuda_embedding_sum(float *out, const int *ids, const int *pos, const float *word,
                        const float *pos_emb, const float *type, int N, int H, cudaStream_t s)
{
    if (N > 0)
        embedding_sum_kernel<<<N, LN_THREADS, 0, s>>>(out, ids, pos, word, pos_emb, type, H);
}

static __global__ void segment_sum_kernel(float *table, const float *rows, const int *order,
                                          const int *seg_start, const int *seg_row, int H)
{
    const int k = blockIdx.x, a = seg_start[k], b = seg_start[k + 1];
    float *dst = table + (size_t)seg_row[k] * H;
    for (int c = threadIdx.x; c < H; c += blockDim.x) {
        float acc = 0.0f;
        for (int i = a; i < b; i++)
            acc += rows[(size_t)order[i] * H + c];
        dst[c] += acc;
    }
}

void cuda_segment_sum_add(float *table, const float *rows, const int *order, const int *seg_start,
                          const int *seg_row, int n_seg, int H, cudaStream_t s)
{
    if (n_seg > 0)
        segment_sum_kernel<<<n_seg, LN_THREADS, 0, s>>>(table, rows, order, seg_start, seg_row, H);
}

/* ---- LayerNorm ----------------------------------------------------------------------- */

/* Mean and 1/std of row x (C), two passes in float; every thread gets both. */
static __device__ void row_stats(const float *x, int C, float eps, float *red, float *mean,
                                 float *rstd)
{
    float acc = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        acc += x[c];
    const float mu = block_sum(acc, red) / (float)C;
    acc = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        const float d = x[c] - mu;
        acc += d * d;
    }
    const float var = block_sum(acc, red) / (float)C;
    *mean = mu;
    *rstd = rsqrtf(var + eps);
}

static __global__ void layernorm_kernel(float *out, const float *inp, const float *w,
                                        const float *b, int C, float eps)
{
    __shared__ float red[32];
    const size_t r = blockIdx.x;
    const float *x = inp + r * C;
    float mean, rstd;
    row_stats(x, C, eps, red, &mean, &rstd);
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        out[r * C + c] = (x[c] - mean) * rstd * w[c] + b[c];
}

void cuda_layernorm(float *out, const float *inp, const float *w, const float *b, int M, int C,
                    float eps, cudaStream_t s)
{
    if (M > 0)
        layernorm_kernel<<<M, LN_THREADS, 0, s>>>(out, inp, w, b, C, eps);
}

/* dinp = rstd (g - mean(g) - xhat mean(g xhat)) with g = dout w; gx (M, C) = dout xhat for
 * the dw sum. Each thread reads dout[c] before it writes dinp[c], so they may alias. */
static __global__ void layernorm_backward_kernel(float *dinp, float *gx, const float *dout,
                                                 const float *inp, const float *w, int C, float eps)
{
    __shared__ float red[32];
    const size_t r = blockIdx.x;
    const float *x = inp + r * C, *dy = dout + r * C;
    float mean, rstd, sg = 0.0f, sgx = 0.0f;
    row_stats(x, C, eps, red, &mean, &rstd);
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        const float xh = (x[c] - mean) * rstd, g = dy[c] * w[c];
        sg += g;
        sgx += g * xh;
    }
    sg = block_sum(sg, red) / (float)C;
    sgx = block_sum(sgx, red) / (float)C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        const float xh = (x[c] - mean) * rstd, d = dy[c];
        gx[r * C + c] = d * xh;
        dinp[r * C + c] = rstd * (d * w[c] - sg - xh * sgx);
    }
}

void cuda_layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                             const float *w, int M, int C, float eps, float *scratch,
                             cudaStream_t s)
{
    if (M < 1)
        return;
    float *gx = scratch, *col = scratch + (size_t)M * C;
    cuda_col_sum_add(db, dout, M, C, col, s); /* before dinp may overwrite dout */
    layernorm_backward_kernel<<<M, LN_THREADS, 0, s>>>(dinp, gx, dout, inp, w, C, eps);
    cuda_col_sum_add(dw, gx, M, C, col, s);
}

/* ---- element-wise -------------------------------------------------------------------- */

static __global__ void gelu_kernel(float *out, const float *inp, size_t n)
{
    GRID_STRIDE(i, n)
    {
        const float x = inp[i];
        out[i] = 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    }
}

static __global__ void gelu_backward_kernel(float *dinp, const float *inp, const float *dout,
                                            size_t n)
{
    GRID_STRIDE(i, n)
    {
        const float x = inp[i];
        const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
        const float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
        dinp[i] = dout[i] * (cdf + x * pdf);
    }
}

void cuda_gelu(float *out, const float *inp, size_t n, cudaStream_t s)
{
    if (n)
        gelu_kernel<<<ew_blocks(n), EW_THREADS, 0, s>>>(out, inp, n);
}

void cuda_gelu_backward(float *dinp, const float *inp, const float *dout, size_t n, cudaStream_t s)
{
    if (n)
        gelu_backward_kernel<<<ew_blocks(n), EW_THREADS, 0, s>>>(dinp, inp, dout, n);
}

static __global__ void tanh_backward_kernel(float *d, const float *y, size_t n)
{
    GRID_STRIDE(i, n)
    d[i] *= 1.0f - y[i] * y[i];
}

void cuda_tanh_backward(float *d, const float *y, size_t n, cudaStream_t s)
{
    if (n)
        tanh_backward_kernel<<<ew_blocks(n), EW_THREADS, 0, s>>>(d, y, n);
}

static __global__ void dropout_kernel(float *out, const float *inp, const float *res, size_t n,
                                      uint32_t threshold, float scale, uint64_t key, int masked)
{
    GRID_STRIDE(i, n)
    {
        const float m = !masked ? 1.0f : cpu_dropout_bits(key, i) >= threshold ? scale : 0.0f;
        out[i] = (res ? res[i] : 0.0f) + m * inp[i];
    }
}

void cuda_dropout(float *out, const float *inp, const float *res, size_t n, float p, uint64_t key,
                  cudaStream_t s)
{
    if (!n || (p <= 0.0f && !res && out == inp))
        return;
    dropout_kernel<<<ew_blocks(n), EW_THREADS, 0, s>>>(out, inp, res, n, cpu_dropout_threshold(p),
                                                       1.0f / (1.0f - p), key, p > 0.0f);
}

static __global__ void gather_rows_kernel(float *dst, const float *src, const int *rows, int H,
                                          int add)
{
    const size_t i = blockIdx.x, r = (size_t)rows[i];
    for (int c = threadIdx.x; c < H; c += blockDim.x) {
        if (add)
            dst[r * H + c] += src[i * H + c];
        else
            dst[i * H + c] = src[r * H + c];
    }
}

void cuda_gather_rows(float *dst, const float *src, const int *rows, int n, int H, cudaStream_t s)
{
    if (n > 0)
        gather_rows_kernel<<<n, LN_THREADS, 0, s>>>(dst, src, rows, H, 0);
}

void cuda_scatter_add_rows(float *dst, const float *src, const int *rows, int n, int H,
                           cudaStream_t s)
{
    if (n > 0)
        gather_rows_kernel<<<n, LN_THREADS, 0, s>>>(dst, src, rows, H, 1);
}

/* ---- softmax cross-entropy ----------------------------------------------------------- */

static __global__ void softmax_xent_kernel(float *dlogits, float *loss, int *best,
                                           const float *logits, const int *labels, int C,
                                           float scale)
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
    if (threadIdx.x == 0) {
        best[r] = at;
        loss[r] = label >= 0 ? logf(sum) - (x[label] - m) : 0.0f;
    }
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        dlogits[r * C + c] =
                label >= 0 ? scale * (expf(x[c] - m) / sum - (c == label ? 1.0f : 0.0f)) : 0.0f;
}

void cuda_softmax_xent(float *dlogits, float *loss, int *best, const float *logits,
                       const int *labels, int M, int C, float scale, cudaStream_t s)
{
    if (M > 0)
        softmax_xent_kernel<<<M, 128, 0, s>>>(dlogits, loss, best, logits, labels, C, scale);
}

/* ---- the update ---------------------------------------------------------------------- */

static __global__ void sumsq_kernel(float *part, const float *g, size_t n)
{
    __shared__ float red[32];
    float acc = 0.0f;
    GRID_STRIDE(i, n)
    acc += g[i] * g[i];
    acc = block_sum(acc, red);
    if (threadIdx.x == 0)
        part[blockIdx.x] = acc;
}

void cuda_sumsq_partials(float *part, const float *g, size_t n, cudaStream_t s)
{
    sumsq_kernel<<<CUDA_NORM_BLOCKS, EW_THREADS, 0, s>>>(part, g, n);
}

static __global__ void adamw_kernel(float *p, __nv_bfloat16 *p16, const float *g, float *m,
                                    float *v, const unsigned char *decay, size_t n,
                                    cuda_adamw_coef k)
{
    GRID_STRIDE(i, n)
    {
        const float gi = g[i] * k.gscale;
        const float pi = decay[i] ? p[i] * k.decay : p[i];
        const float mi = m[i] * k.b1 + k.one_minus_b1 * gi;
        const float vi = v[i] * k.b2 + k.one_minus_b2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        const float out = pi - k.step_size * (mi / (sqrtf(vi) / k.bc2_sqrt + k.eps));
        p[i] = out;
        if (p16)
            p16[i] = __float2bfloat16_rn(out);
    }
}

void cuda_adamw(float *p, __nv_bfloat16 *p16, const float *g, float *m, float *v,
                const unsigned char *decay, size_t n, cuda_adamw_coef k, cudaStream_t s)
{
    if (n)
        adamw_kernel<<<ew_blocks(n), EW_THREADS, 0, s>>>(p, p16, g, m, v, decay, n, k);
}
