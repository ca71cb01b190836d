/* bert.cu — the joint BERT model on the GPU: weight upload, activation buffers, the forward
 * pass as a sequence of ops.cuh launches, and one CUDA graph per batch shape.
 *
 * A batch of B packed sequences is laid out padded on the device, T = the longest length
 * rounded up to a multiple of 8 (capped at the model's positions), so that a graph captured
 * for (B, T) serves every batch of that shape: the ids and lengths change, the launches do
 * not. The host side packs ids and lengths into one pinned buffer (one copy in), and the
 * intent and slot logits come back in one pinned buffer (one copy out) that is unpacked
 * into the caller's packed arrays. Weights are uploaded once in FP32 (biases, LayerNorm and
 * embeddings are read in FP32) and, for FP16/BF16, converted on the device into a second
 * copy that the GEMMs read. It does not decode: nlu.c turns logits into labels, as for the
 * CPU path.
 */
#include <stdio.h>
#include <string.h>

#include "nlu/cuda/cuda_bert.h"
#include "nlu/cuda/ops.cuh"

extern "C" {
#include "sdk/base/alloc.h"
}

enum { MAX_GRAPHS = 16, T_ROUND = 8 };

typedef struct graph_entry {
    int B, T;
    cudaGraphExec_t exec;
    unsigned long long used;
} graph_entry;

struct cuda_bert {
    int device;
    cuda_precision prec;
    int H, L, NH, I, NI, NS, V, P;
    float eps;
    cudaStream_t stream;
    cublasHandle_t blas;
    cublasLtHandle_t lt; // for the GEMMs with a bias epilogue (linear_bias)
    void *blas_ws;
    float *pf;         // (n_params) FP32 parameters, laid out as bert_weights says
    void *ps;          // (n_params) in the storage type (== pf for FP32)
    bert_weights wf;   // pointers into pf
    size_t smem_ready; // dynamic shared memory the attention kernel may use
    int flash_ok;      // attention_flash.cu runs for this precision, head size and device
    int split_k;       // few rows' attention-out and FFN-out products split over K (split_k)
    int sms;           // the device's multiprocessors
    float *part;       // (sms * 64 * 64) FP32 products of the slices of K (not for FP32)
    cuda_attention_mode attention;
    int cap_rows, cap_seqs; // what the buffers below hold
    size_t cap_scores;      // B * NH * T * T entries of scores and probs (0: fused only)
    void *h, *qkv, *att, *proj, *ffn, *pooled; // (rows, H|3H|H|H|I), (seqs, H) of S
    float *out;                                // (seqs, NI) then (rows, NS)
    float *scores;                             // (cap_scores) attention_gemm scratch
    void *probs;                               // (cap_scores) of S
    const void **ptrs;                         // (6, seqs * NH) attention_gemm pointers
    int *in;                                   // (seqs) lengths then (rows) ids
    int *in_host;                              // pinned twin of in
    float *out_host;                           // pinned twin of out
    graph_entry graphs[MAX_GRAPHS];
    unsigned long long tick;
    char desc[320];
};

extern "C" int cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no driver" error */
        return 0;
    }
    return n;
}

static size_t storage_size(cuda_precision p)
{
    return p == CUDA_PREC_FP32 ? sizeof(float) : 2;
}

/* The storage-type twin of a parameter pointer into pf. */
template <typename S>
static const S *sw(const cuda_bert *g, const float *f)
{
    return (const S *)g->ps + (f - g->pf);
}

static void drop_graphs(cuda_bert *g)
{
    for (int i = 0; i < MAX_GRAPHS; i++)
        if (g->graphs[i].exec) {
            cudaGraphExecDestroy(g->graphs[i].exec);
            g->graphs[i] = graph_entry{};
        }
}

static void free_buffers(cuda_bert *g)
{
    drop_graphs(g);
    void *dev[] = { g->h,   g->qkv, g->att,    g->proj,  g->ffn,         g->pooled,
                    g->out, g->in,  g->scores, g->probs, (void *)g->ptrs };
    for (void *p : dev)
        cudaFree(p);
    cudaFreeHost(g->in_host);
    cudaFreeHost(g->out_host);
    g->h = g->qkv = g->att = g->proj = g->ffn = g->pooled = NULL;
    g->out = g->scores = NULL;
    g->probs = NULL;
    g->ptrs = NULL;
    g->in = g->in_host = NULL;
    g->out_host = NULL;
    g->cap_rows = g->cap_seqs = 0;
    g->cap_scores = 0;
}

/* Makes the buffers hold `rows` padded rows of `seqs` sequences and `scores` attention
 * scores (growing by doubling). */
static parley_status reserve(cuda_bert *g, int rows, int seqs, size_t scores)
{
    if (rows <= g->cap_rows && seqs <= g->cap_seqs && scores <= g->cap_scores)
        return PARLEY_OK;
    int r = rows > 2 * g->cap_rows ? rows : 2 * g->cap_rows;
    int s = seqs > 2 * g->cap_seqs ? seqs : 2 * g->cap_seqs;
    size_t sc = scores <= g->cap_scores      ? g->cap_scores
                : scores > 2 * g->cap_scores ? scores
                                             : 2 * g->cap_scores;
    free_buffers(g);
    const size_t e = storage_size(g->prec), R = (size_t)r, Sq = (size_t)s;
    const size_t out_n = Sq * g->NI + R * g->NS, in_n = Sq + R;
    struct {
        void **p;
        size_t bytes;
    } dev[] = {
        { &g->h, R * g->H * e },
        { &g->qkv, R * 3 * g->H * e },
        { &g->att, R * g->H * e },
        { &g->proj, R * g->H * e },
        { &g->ffn, R * g->I * e },
        { &g->pooled, Sq * g->H * e },
        { (void **)&g->out, out_n * sizeof(float) },
        { (void **)&g->in, in_n * sizeof(int) },
        { (void **)&g->scores, sc * sizeof(float) },
        { &g->probs, sc * e },
        { (void **)&g->ptrs, sc ? 6 * Sq * g->NH * sizeof(void *) : 0 },
    };
    parley_status st = PARLEY_OK;
    for (auto &d : dev)
        if (d.bytes &&
            (st = cuda_check(cudaMalloc(d.p, d.bytes), "allocating activations")) != PARLEY_OK)
            break;
    if (st == PARLEY_OK)
        st = cuda_check(cudaMallocHost((void **)&g->in_host, in_n * sizeof(int)),
                        "allocating pinned input");
    if (st == PARLEY_OK)
        st = cuda_check(cudaMallocHost((void **)&g->out_host, out_n * sizeof(float)),
                        "allocating pinned output");
    if (st != PARLEY_OK) {
        free_buffers(g);
        return pl_wrap(st, "cuda: buffers for %d rows of %d sequences", r, s);
    }
    g->cap_rows = r;
    g->cap_seqs = s;
    g->cap_scores = sc;
    return PARLEY_OK;
}

/* y (M, OC) = x · w^T + bias, w and bias pointers into pf, y of type Y (S, or float for the
 * heads): the bias in cuBLASLt's epilogue where it has an algorithm for the shape, else the
 * GEMM and a bias kernel. */
template <typename S, typename Y>
static parley_status linear_bias(cuda_bert *g, Y *y, const S *x, int ldx, const float *w,
                                 const float *bias, int M, int IC, int OC)
{
    const int y_f32 = sizeof(Y) == sizeof(float);
    const void *b = y_f32 ? (const void *)bias : (const void *)sw<S>(g, bias);
    parley_status st = cuda_linear_bias<S>(g->lt, g->blas_ws, CUDA_BLAS_WORKSPACE, y, y_f32, x, ldx,
                                           sw<S>(g, w), b, M, IC, OC, g->stream);
    if (st != PARLEY_ERR_UNSUPPORTED)
        return st;
    if ((st = cuda_linear<S>(g->blas, y, y_f32, x, ldx, sw<S>(g, w), M, IC, OC)) != PARLEY_OK)
        return st;
    cuda_bias_add<Y>(y, bias, M, OC, g->stream);
    return PARLEY_OK;
}

/* The slices of K for h = LayerNorm(h + x (M, K) · w^T + bias) over N columns: as many as
 * keep the product's 64 x 64 tiles within one wave on the multiprocessors, up to 8, each a
 * multiple of 64 wide; 1 (cuBLAS's own choice, then the bias + residual + LayerNorm kernel)
 * where that is one, for FP32 storage (the reference precision) and where the LayerNorm
 * kernel cannot sum the slices (see cuda_partials_residual_layernorm). */
static int split_k(const cuda_bert *g, int M, int N, int K, size_t elem)
{
    const int tiles = (M + 63) / 64 * ((N + 63) / 64);
    if (!g->split_k || g->prec == CUDA_PREC_FP32 || N % 64 || N * elem > 16 * 1024 || K % 64)
        return 1;
    int s = g->sms / tiles < 8 ? g->sms / tiles : 8;
    while (s > 1 && K / 64 % s)
        s--;
    return s > 1 ? s : 1;
}

/* h (M, OC) = LayerNorm(h + x · w^T + bias) with ln_w, ln_b: FP32 products of slices of K
 * summed by the LayerNorm kernel where split_k says so, else one cuBLAS product into
 * scratch (M, OC) and the bias + residual + LayerNorm kernel. */
template <typename S>
static parley_status linear_residual_layernorm(cuda_bert *g, S *h, S *scratch, const S *x,
                                               const float *w, const float *bias, const float *ln_w,
                                               const float *ln_b, int M, int IC, int OC)
{
    parley_status st;
    const int splits = split_k(g, M, OC, IC, sizeof(S));
    if (splits > 1) {
        if ((st = cuda_linear_split_k<S>(g->blas, g->part, x, IC, sw<S>(g, w), M, IC, OC,
                                         splits)) == PARLEY_OK)
            cuda_partials_residual_layernorm<S>(h, g->part, splits, bias, ln_w, ln_b, M, OC, g->eps,
                                                g->stream);
        return st;
    }
    if ((st = cuda_linear<S>(g->blas, scratch, 0, x, IC, sw<S>(g, w), M, IC, OC)) != PARLEY_OK)
        return st;
    cuda_bias_residual_layernorm<S>(h, scratch, bias, ln_w, ln_b, M, OC, g->eps, g->stream);
    return PARLEY_OK;
}

/* The attention path batches take: the fused kernel where asked (cuda_bert_set_attention),
 * else the flash kernel where it runs here, else the GEMMs (asked for, or the fallback). */
static cuda_attention_mode attention_path(const cuda_bert *g)
{
    if (g->attention == CUDA_ATT_FUSED || g->attention == CUDA_ATT_GEMM)
        return g->attention;
    return g->flash_ok ? CUDA_ATT_FLASH : CUDA_ATT_GEMM;
}

/* Enqueues one whole batch on the stream: copy in, forward, copy out. */
template <typename S>
static parley_status enqueue(cuda_bert *g, int B, int T)
{
    const int M = B * T, H = g->H, I = g->I, D = H / g->NH;
    const bert_weights *w = &g->wf;
    const int *len = g->in, *ids = g->in + B;
    S *h = (S *)g->h, *qkv = (S *)g->qkv, *att = (S *)g->att, *proj = (S *)g->proj;
    S *ffn = (S *)g->ffn, *pooled = (S *)g->pooled;
    float *intent = g->out, *slots = g->out + (size_t)B * g->NI;
    cudaStream_t s = g->stream;
    const cuda_attention_mode path = attention_path(g);
    parley_status st;
    if ((st = cuda_check(cudaMemcpyAsync(g->in, g->in_host, (size_t)(B + M) * sizeof(int),
                                         cudaMemcpyHostToDevice, s),
                         "copying ids in")) != PARLEY_OK)
        return st;
    if (path == CUDA_ATT_GEMM)
        cuda_attention_pointers<S>(g->ptrs, att, qkv, g->scores, (S *)g->probs, B, T, g->NH, D, s);
    cuda_embedding<S>(h, ids, M, T, w->word_emb, w->pos_emb, w->type_emb, w->emb_ln_w, w->emb_ln_b,
                      H, g->eps, s);
    for (int l = 0; l < g->L; l++) {
        const size_t lH = (size_t)l * H;
        if (path == CUDA_ATT_FUSED) { // the fused kernel adds the QKV bias itself
            if ((st = cuda_linear<S>(g->blas, qkv, 0, h, H, sw<S>(g, w->qkv_w + lH * 3 * H), M, H,
                                     3 * H)) != PARLEY_OK)
                return st;
            cuda_attention<S>(att, qkv, w->qkv_b + lH * 3, len, B, T, g->NH, D, s);
        } else if ((st = linear_bias<S>(g, qkv, h, H, w->qkv_w + lH * 3 * H, w->qkv_b + lH * 3, M,
                                        H, 3 * H)) != PARLEY_OK) {
            return st;
        } else if (path == CUDA_ATT_FLASH) {
            cuda_attention_flash<S>(att, qkv, len, B, T, g->NH, D, s);
        } else if ((st = cuda_attention_gemm<S>(g->blas, g->ptrs, g->scores, (S *)g->probs, len, B,
                                                T, g->NH, D, s)) != PARLEY_OK) {
            return st;
        }
        if ((st = linear_residual_layernorm<S>(g, h, proj, att, w->attn_out_w + lH * H,
                                               w->attn_out_b + lH, w->ln1_w + lH, w->ln1_b + lH, M,
                                               H, H)) != PARLEY_OK ||
            (st = cuda_linear<S>(g->blas, ffn, 0, h, H, sw<S>(g, w->ffn_in_w + lH * I), M, H, I)) !=
                    PARLEY_OK)
            return st;
        cuda_bias_gelu<S>(ffn, w->ffn_in_b + (size_t)l * I, M, I, s);
        if ((st = linear_residual_layernorm<S>(g, h, proj, ffn, w->ffn_out_w + lH * I,
                                               w->ffn_out_b + lH, w->ln2_w + lH, w->ln2_b + lH, M,
                                               I, H)) != PARLEY_OK)
            return st;
    }
    // pooled (B, H) = tanh(pool_w · h[b * T] + pool_b): the first rows, T * H apart
    if ((st = cuda_linear<S>(g->blas, pooled, 0, h, T * H, sw<S>(g, w->pool_w), B, H, H)) !=
        PARLEY_OK)
        return st;
    cuda_bias_tanh<S>(pooled, w->pool_b, B, H, s);
    if ((st = linear_bias<S>(g, intent, pooled, H, w->intent_w, w->intent_b, B, H, g->NI)) !=
                PARLEY_OK ||
        (st = linear_bias<S>(g, slots, h, H, w->slot_w, w->slot_b, M, H, g->NS)) != PARLEY_OK)
        return st;
    if ((st = cuda_check(cudaGetLastError(), "launching the forward kernels")) != PARLEY_OK)
        return st;
    return cuda_check(cudaMemcpyAsync(g->out_host, g->out,
                                      ((size_t)B * g->NI + (size_t)M * g->NS) * sizeof(float),
                                      cudaMemcpyDeviceToHost, s),
                      "copying logits out");
}

static parley_status enqueue_any(cuda_bert *g, int B, int T)
{
    switch (g->prec) {
    case CUDA_PREC_FP32: return enqueue<float>(g, B, T);
    case CUDA_PREC_BF16: return enqueue<__nv_bfloat16>(g, B, T);
    default: return enqueue<__half>(g, B, T);
    }
}

/* The graph for (B, T), captured on first use; the least recently used one makes room. */
static parley_status graph_for(cuda_bert *g, int B, int T, cudaGraphExec_t *out)
{
    graph_entry *slot = &g->graphs[0];
    for (int i = 0; i < MAX_GRAPHS; i++) {
        graph_entry *e = &g->graphs[i];
        if (e->exec && e->B == B && e->T == T) {
            e->used = ++g->tick;
            *out = e->exec;
            return PARLEY_OK;
        }
        if (!e->exec || (slot->exec && e->used < slot->used))
            slot = e;
    }
    if (slot->exec)
        cudaGraphExecDestroy(slot->exec);
    *slot = graph_entry{};
    cudaGraph_t graph = NULL;
    parley_status st =
            cuda_check(cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeThreadLocal),
                       "starting graph capture");
    if (st != PARLEY_OK)
        return st;
    parley_status enq = enqueue_any(g, B, T);
    st = cuda_check(cudaStreamEndCapture(g->stream, &graph), "ending graph capture");
    if (!enq && st == PARLEY_OK)
        st = cuda_check(cudaGraphInstantiate(&slot->exec, graph, 0), "instantiating the graph");
    if (graph)
        cudaGraphDestroy(graph);
    if (enq || st != PARLEY_OK) {
        slot->exec = NULL;
        return enq ? enq : st;
    }
    slot->B = B;
    slot->T = T;
    slot->used = ++g->tick;
    *out = slot->exec;
    return PARLEY_OK;
}

template <typename S>
static parley_status prepare_attention(cuda_bert *g)
{
    int optin = 0;
    parley_status st = cuda_check(
            cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, g->device),
            "reading shared memory size");
    size_t want = cuda_attention_smem<S>(g->P, g->H / g->NH);
    g->flash_ok = cuda_attention_flash_supported<S>(g->H / g->NH);
    g->smem_ready = want < (size_t)optin ? want : (size_t)optin;
    return st != PARLEY_OK ? st : cuda_attention_prepare<S>(g->smem_ready);
}

static size_t attention_need(const cuda_bert *g, int T)
{
    const int D = g->H / g->NH;
    switch (g->prec) {
    case CUDA_PREC_FP32: return cuda_attention_smem<float>(T, D);
    case CUDA_PREC_BF16: return cuda_attention_smem<__nv_bfloat16>(T, D);
    default: return cuda_attention_smem<__half>(T, D);
    }
}

extern "C" parley_status cuda_bert_open(const bert_model *m, int device, cuda_precision prec,
                                        cuda_bert **out)
{
    *out = NULL;
    int count = cuda_device_count();
    if (device < 0 || device >= count)
        return pl_fail(PARLEY_ERR_DEVICE, "cuda:%d: %d CUDA device%s usable here", device, count,
                       count == 1 ? " is" : "s are");
    cuda_bert *g = (cuda_bert *)pl_calloc(1, sizeof *g);
    if (!g)
        return pl_nomem("cuda");
    const bert_config *c = &m->cfg;
    g->device = device;
    g->prec = prec;
    g->H = c->hidden, g->L = c->layers, g->NH = c->heads, g->I = c->intermediate;
    g->NI = c->n_intents, g->NS = c->n_slots, g->V = c->vocab_size, g->P = c->max_positions;
    g->eps = c->ln_eps;
    cudaDeviceProp prop = {};
    parley_status st = cuda_context_open(device, &prop, &g->stream, &g->blas, &g->blas_ws);
    g->sms = prop.multiProcessorCount;
    if (st == PARLEY_OK)
        st = cublas_check(cublasLtCreate(&g->lt), "cublasLtCreate");
    if (st == PARLEY_OK)
        st = cuda_check(cudaMalloc((void **)&g->pf, m->n_params * sizeof(float)),
                        "allocating the weights");
    if (st == PARLEY_OK)
        st = cuda_check(
                cudaMemcpy(g->pf, m->params, m->n_params * sizeof(float), cudaMemcpyHostToDevice),
                "uploading the weights");
    if (st ==
        PARLEY_OK) /* the pageable upload may still be in flight: g->stream must not read early */
        st = cuda_check(cudaDeviceSynchronize(), "uploading the weights");
    if (st == PARLEY_OK && prec != CUDA_PREC_FP32) {
        st = cuda_check(cudaMalloc(&g->ps, m->n_params * 2), "allocating the FP16/BF16 weights");
        if (st == PARLEY_OK && prec == CUDA_PREC_BF16)
            cuda_convert<__nv_bfloat16>((__nv_bfloat16 *)g->ps, g->pf, m->n_params, g->stream);
        else if (st == PARLEY_OK)
            cuda_convert<__half>((__half *)g->ps, g->pf, m->n_params, g->stream);
        if (st == PARLEY_OK)
            st = cuda_check(cudaStreamSynchronize(g->stream), "converting the weights");
    } else {
        g->ps = g->pf;
    }
    if (st == PARLEY_OK)
        st = prec == CUDA_PREC_FP32   ? prepare_attention<float>(g)
             : prec == CUDA_PREC_BF16 ? prepare_attention<__nv_bfloat16>(g)
                                      : prepare_attention<__half>(g);
    g->split_k = 1;
    if (st == PARLEY_OK && prec != CUDA_PREC_FP32) // split_k's products: sms tiles of 64 x 64
        st = cuda_check(cudaMalloc((void **)&g->part, (size_t)g->sms * 64 * 64 * sizeof(float)),
                        "allocating split-K scratch");
    if (st != PARLEY_OK) {
        cuda_bert_close(g);
        return pl_wrap(st, "cuda:%d", device);
    }
    bert_weights_point(&g->wf, c, g->pf);
    snprintf(g->desc, sizeof g->desc, "%s (cuda:%d, sm_%d%d, %.0f GiB), %s", prop.name, device,
             prop.major, prop.minor, prop.totalGlobalMem / 1073741824.0, cuda_precision_name(prec));
    *out = g;
    return PARLEY_OK;
}

extern "C" parley_status cuda_bert_forward(cuda_bert *g, const bert_batch *b, float *intent_logits,
                                           float *slot_logits)
{
    parley_status st;
    int N = 0;
    if (!g || !b || !intent_logits || !slot_logits)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "cuda_bert_forward: NULL argument");
    bert_config limits = {};
    limits.vocab_size = g->V;
    limits.max_positions = g->P;
    if ((st = bert_check_batch(&limits, b, &N)) != PARLEY_OK || N == 0)
        return st;
    const int B = b->n_seq;
    int T = 0;
    for (int i = 0; i < B; i++)
        T = b->len[i] > T ? b->len[i] : T;
    T = (T + T_ROUND - 1) / T_ROUND * T_ROUND;
    T = T < g->P ? T : g->P;
    const cuda_attention_mode path = attention_path(g);
    if (path == CUDA_ATT_FUSED && attention_need(g, T) > g->smem_ready)
        return pl_fail(PARLEY_ERR_UNSUPPORTED,
                       "cuda: sequences of %d pieces need %zu bytes of "
                       "shared memory in %s attention; this device gives %zu",
                       T, attention_need(g, T), cuda_precision_name(g->prec), g->smem_ready);
    if ((size_t)B * T > (size_t)INT32_MAX / 4)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "cuda: batch of %d x %d pieces too big", B, T);
    if ((st = cuda_check(cudaSetDevice(g->device), "selecting the device")) != PARLEY_OK ||
        (st = reserve(g, B * T, B, path == CUDA_ATT_GEMM ? (size_t)B * g->NH * T * T : 0)) !=
                PARLEY_OK)
        return st;
    int *len = g->in_host, *ids = g->in_host + B;
    memset(ids, 0, (size_t)B * T * sizeof *ids);
    for (int i = 0, at = 0; i < B; at += b->len[i], i++) {
        len[i] = b->len[i];
        memcpy(ids + (size_t)i * T, b->ids + at, (size_t)b->len[i] * sizeof *ids);
    }
    cudaGraphExec_t exec;
    if ((st = graph_for(g, B, T, &exec)) != PARLEY_OK ||
        (st = cuda_check(cudaGraphLaunch(exec, g->stream), "launching the graph")) != PARLEY_OK ||
        (st = cuda_check(cudaStreamSynchronize(g->stream), "running the forward pass")) !=
                PARLEY_OK)
        return st;
    memcpy(intent_logits, g->out_host, (size_t)B * g->NI * sizeof(float));
    const float *slots = g->out_host + (size_t)B * g->NI;
    for (int i = 0, at = 0; i < B; at += b->len[i], i++)
        memcpy(slot_logits + (size_t)at * g->NS, slots + (size_t)i * T * g->NS,
               (size_t)b->len[i] * g->NS * sizeof(float));
    return PARLEY_OK;
}

extern "C" void cuda_bert_set_attention(cuda_bert *g, cuda_attention_mode mode)
{
    if (g->attention != mode)
        drop_graphs(g);
    g->attention = mode;
}

extern "C" void cuda_bert_set_split_k(cuda_bert *g, int on)
{
    if (g->split_k != !!on)
        drop_graphs(g);
    g->split_k = !!on;
}

extern "C" const char *cuda_bert_describe(const cuda_bert *g)
{
    return g->desc;
}

extern "C" void cuda_bert_close(cuda_bert *g)
{
    if (!g)
        return;
    cudaSetDevice(g->device);
    free_buffers(g);
    if (g->ps != g->pf)
        cudaFree(g->ps);
    cudaFree(g->pf);
    cudaFree(g->part);
    if (g->lt)
        cublasLtDestroy(g->lt);
    cuda_context_close(g->stream, g->blas, g->blas_ws);
    pl_free(g);
}
