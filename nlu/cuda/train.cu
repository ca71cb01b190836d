/* train.cu — the GPU trainer (cuda_train.h): device state, the step as a sequence of
 * train_ops.cuh launches and cuBLAS GEMMs in the order of bert_train.c, the gradient norm,
 * the fused clip + AdamW update of the encoder and heads (their kernels are adamw.cu's) and
 * the sparse weights' SGD (sparse.cu).
 *
 * Per step the host builds one int buffer (train_batch.h: ids, positions, labels,
 * per-sequence offsets, the tokens grouped for the embedding backward) and copies it in
 * once; the row losses, argmaxes and gradient-norm partial sums come back in three small
 * copies, which the host adds in double as the CPU does. Activations live in one device
 * block carved like bert_train.c's arena and grown with a quarter to spare.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/cuda/cuda_train.h"
#include "nlu/cuda/ops.cuh"
#include "nlu/cuda/train_batch.h"
#include "nlu/cuda/train_ops.cuh"

extern "C" {
#include "nlu/text/vocab.h"
#include "sdk/base/alloc.h"
}

/* Activations and gradients of one step (device, FP32), as bert_train.c's acts. */
typedef struct tacts {
    float *emb_sum, *x, *qkv, *probs, *att, *u1, *h1, *pre, *act, *u2;
    float *hd, *cls, *pooled, *pd, *slot_logits, *intent_logits;
    float *dx, *d1, *d2, *dwide, *dslot, *dintent, *dpool, *dcls, *ds;
    float *mlm_in, *mlm_pre, *mlm_act, *mlm_t, *mlm_dt, *mlm_din; // (M, H) the MLM head's rows
    float *mlm_logits, *mlm_dlogits;                              // (M, V)
    float *row_loss; // (N + B) slot rows, then intent rows; or (M) masked rows
    float *class_w;  // (NI) bert_labels.intent_weight, when given
    float *scratch;  // LayerNorm backward and column sums
    int *best;       // (N + B) argmaxes, same order
} tacts;

/* Where the per-step ints sit in the device buffer. */
typedef struct tints {
    int *ids, *pos, *slot, *intent, *seq, *cls_rows;
    int *id_order, *id_start, *id_row, n_id_seg;
    int *pos_order, *pos_start, *pos_row, n_pos_seg;
    int *all_order, *all_start, *all_row;
    int sparse; /* the model has sparse features: their rows below */
    cuda_sparse_rows sent, word;
} tints;

struct cuda_trainer {
    int device;
    cuda_precision prec;
    bert_config cfg; /* the sizes only: labels are not copied */
    int pad_id;
    size_t n;      /* the model's parameters */
    size_t dense;  /* those before the sparse weights: the encoder and heads (AdamW) */
    size_t n_enc;  /* those before the pooler: the encoder (a masked-LM step's AdamW) */
    size_t n_head; /* the masked-LM head's, after the model's (0: none) */
    size_t n_all;  /* n + n_head: every array below */
    cudaStream_t stream;
    cublasHandle_t blas;
    void *blas_ws;
    float *p, *g, *m, *v;         // (n) each
    unsigned char *decay;         // (n)
    __nv_bfloat16 *p16;           // (n) BF16 weights for the GEMMs, NULL in FP32
    bert_weights wp, wg;          // pointers into p and g
    bert_mlm_head hw, hg;         // the masked-LM head's, at p + n and g + n
    float *norm_part, *norm_host; // (CUDA_NORM_BLOCKS) device, pinned
    float *block;                 // the activations
    size_t block_cap;             // floats
    __nv_bfloat16 *c16a, *c16b;   // BF16 GEMM operand scratch
    size_t c16_cap;               // elements each
    int *ibuf, *ibuf_host;        // per-step ints, device and pinned
    size_t ibuf_cap;
    int *cuda_batch_work;       // host scratch of cuda_batch_build (train_batch.h)
    size_t cuda_batch_work_cap; // ints
    float *loss_host;           // pinned (N + B)
    int *best_host;             // pinned (N + B)
    size_t out_cap;
    char desc[320];
};

/* ---- sizes and buffers --------------------------------------------------------------- */

typedef struct tdims {
    int B, N, H, I, NH, D, L, NS, NI, t_max;
    size_t PS; /* per layer: NH * sum(T^2) */
    int M, V;  /* a masked-LM step: the masked tokens, the vocabulary (M 0: a joint step) */
} tdims;

/* The widest row a GEMM operand or a bias gradient has: 3H, I, NS or NI. */
static size_t widest(const tdims *d)
{
    size_t w = 3 * (size_t)d->H;
    const size_t others[] = { (size_t)d->I, (size_t)d->NS, (size_t)d->NI };
    for (size_t i = 0; i < 3; i++)
        w = others[i] > w ? others[i] : w;
    return w;
}

/* The column sums' scratch of a step: its widest bias gradient, or the decoder's (V) over the
 * masked rows. */
static size_t col_scratch(const tdims *d, size_t cols)
{
    const size_t rows = cuda_col_sum_scratch(d->N, (int)cols),
                 mlm = d->M ? cuda_col_sum_scratch(d->M, d->V) : 0;
    return rows > mlm ? rows : mlm;
}

/* Carves a from a block of `total` floats at base (base NULL: only counts). */
static size_t tacts_carve(tacts *a, const tdims *d, float *base)
{
    const size_t N = (size_t)d->N, B = (size_t)d->B, H = (size_t)d->H, I = (size_t)d->I;
    const size_t L = (size_t)d->L, wide = 3 * H > I ? 3 * H : I, cols = widest(d);
    struct {
        float **p;
        size_t n;
    } parts[] = {
        { &a->emb_sum, N * H },
        { &a->x, (L + 1) * N * H },
        { &a->qkv, L * N * 3 * H },
        { &a->probs, L * d->PS },
        { &a->att, L * N * H },
        { &a->u1, L * N * H },
        { &a->h1, L * N * H },
        { &a->pre, L * N * I },
        { &a->act, L * N * I },
        { &a->u2, L * N * H },
        { &a->hd, N * H },
        { &a->cls, B * H },
        { &a->pooled, B * H },
        { &a->pd, B * H },
        { &a->slot_logits, N * (size_t)d->NS },
        { &a->intent_logits, B * (size_t)d->NI },
        { &a->dx, N * H },
        { &a->d1, N * H },
        { &a->d2, N * H },
        { &a->dwide, N * wide },
        { &a->dslot, N * (size_t)d->NS },
        { &a->dintent, B * (size_t)d->NI },
        { &a->mlm_in, (size_t)d->M * H },
        { &a->mlm_pre, (size_t)d->M * H },
        { &a->mlm_act, (size_t)d->M * H },
        { &a->mlm_t, (size_t)d->M * H },
        { &a->mlm_dt, (size_t)d->M * H },
        { &a->mlm_din, (size_t)d->M * H },
        { &a->mlm_logits, (size_t)d->M * d->V },
        { &a->mlm_dlogits, (size_t)d->M * d->V },
        { &a->dpool, B * H },
        { &a->dcls, B * H },
        { &a->ds, d->PS },
        { &a->row_loss, N + B },
        { &a->class_w, (size_t)d->NI },
        { &a->scratch, N * H + col_scratch(d, cols) },
        { (float **)&a->best, N + B }, /* an int fits a float's room */
    };
    size_t at = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        *parts[i].p = base ? base + at : NULL;
        at += parts[i].n;
    }
    return at;
}

static void free_step_buffers(cuda_trainer *g)
{
    cudaFree(g->block);
    cudaFree(g->c16a);
    cudaFree(g->c16b);
    cudaFree(g->ibuf);
    cudaFreeHost(g->ibuf_host);
    cudaFreeHost(g->loss_host);
    cudaFreeHost(g->best_host);
    pl_free(g->cuda_batch_work);
    g->cuda_batch_work = NULL;
    g->cuda_batch_work_cap = 0;
    g->block = NULL;
    g->c16a = g->c16b = NULL;
    g->ibuf = g->ibuf_host = g->best_host = NULL;
    g->loss_host = NULL;
    g->block_cap = g->c16_cap = g->ibuf_cap = g->out_cap = 0;
}

/* Grows buf (device, or pinned host when host) to hold n elements of size sz, with a quarter
 * to spare; *cap counts elements. */
static parley_status grow(void **buf, size_t *cap, size_t n, size_t sz, int host, const char *what)
{
    if (n <= *cap)
        return PARLEY_OK;
    n += n / 4;
    if (host)
        cudaFreeHost(*buf);
    else
        cudaFree(*buf);
    *buf = NULL;
    *cap = 0;
    parley_status st =
            cuda_check(host ? cudaMallocHost(buf, n * sz) : cudaMalloc(buf, n * sz), what);
    if (st == PARLEY_OK)
        *cap = n;
    return st;
}

/* grow for two buffers that share one capacity (an array and its pinned twin). */
static parley_status grow2(void **a, int a_host, size_t a_sz, void **b, int b_host, size_t b_sz,
                           size_t *cap, size_t n, const char *what)
{
    if (n <= *cap)
        return PARLEY_OK;
    size_t a_cap = *cap;
    parley_status st = grow(a, &a_cap, n, a_sz, a_host, what);
    return st != PARLEY_OK ? st : grow(b, cap, n, b_sz, b_host, what);
}

static parley_status reserve(cuda_trainer *g, const tdims *d, size_t n_ints, tacts *a)
{
    const size_t rows = (size_t)d->N * widest(d), mlm = (size_t)d->M * (size_t)d->V;
    const size_t c16 = rows > mlm ? rows : mlm;
    parley_status st = grow((void **)&g->block, &g->block_cap, tacts_carve(a, d, NULL),
                            sizeof(float), 0, "allocating activations");
    if (st == PARLEY_OK && g->prec == CUDA_PREC_BF16)
        st = grow2((void **)&g->c16a, 0, 2, (void **)&g->c16b, 0, 2, &g->c16_cap, c16,
                   "allocating BF16 scratch");
    if (st == PARLEY_OK)
        st = grow2((void **)&g->ibuf, 0, sizeof(int), (void **)&g->ibuf_host, 1, sizeof(int),
                   &g->ibuf_cap, n_ints, "allocating batch buffers");
    if (st == PARLEY_OK)
        st = grow2((void **)&g->loss_host, 1, sizeof(float), (void **)&g->best_host, 1, sizeof(int),
                   &g->out_cap, (size_t)d->N + (size_t)d->B, "allocating pinned buffers");
    if (st != PARLEY_OK) {
        free_step_buffers(g);
        return st;
    }
    tacts_carve(a, d, g->block);
    return PARLEY_OK;
}

/* The device addresses of one kind of sparse rows (train_batch.h) in the buffer at dev. */
static cuda_sparse_rows device_sparse(const int *dev, const cuda_batch_sparse *x)
{
    return cuda_sparse_rows{ x->rows,
                             x->by_feature.n,
                             dev + x->start,
                             dev + x->index,
                             dev + x->by_feature.order,
                             dev + x->by_feature.start,
                             dev + x->by_feature.row,
                             dev + x->entry_row,
                             (const float *)(dev + x->value) };
}

/* The device addresses of a batch's ints (train_batch.h) in the buffer at dev. */
static tints device_ints(int *dev, const cuda_batch_layout *l)
{
    tints t = { dev + l->ids,
                dev + l->pos,
                dev + l->slot,
                dev + l->intent,
                dev + l->seq,
                dev + l->cls,
                dev + l->by_id.order,
                dev + l->by_id.start,
                dev + l->by_id.row,
                l->by_id.n,
                dev + l->by_pos.order,
                dev + l->by_pos.start,
                dev + l->by_pos.row,
                l->by_pos.n,
                dev + l->all.order,
                dev + l->all.start,
                dev + l->all.row,
                l->sparse,
                {},
                {} };
    if (t.sparse) {
        t.sent = device_sparse(dev, &l->sent);
        t.word = device_sparse(dev, &l->word);
    }
    return t;
}

/* ---- GEMMs ------------------------------------------------------------------------- */

/* The BF16 twin of a device FP32 array in scratch (converted), or the array itself in
 * FP32 mode. */
static const void *operand(cuda_trainer *g, __nv_bfloat16 *scratch, const float *x, size_t n)
{
    if (g->prec == CUDA_PREC_FP32)
        return x;
    cuda_convert<__nv_bfloat16>(scratch, x, n, g->stream);
    return scratch;
}

/* The GEMM operand of weight w (an FP32 pointer into p). */
static const void *weight(const cuda_trainer *g, const float *w)
{
    return g->prec == CUDA_PREC_FP32 ? (const void *)w : (const void *)(g->p16 + (w - g->p));
}

/* Column-major C (m, n) = op(A) op(B) + beta C, FP32 accumulation and output. */
static parley_status gemm(cuda_trainer *g, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                          int k, const void *A, int lda, const void *B, int ldb, float *C, int ldc,
                          float beta)
{
    const float alpha = 1.0f;
    const int f32 = g->prec == CUDA_PREC_FP32;
    const cudaDataType_t t = f32 ? CUDA_R_32F : CUDA_R_16BF;
    return cublas_check(cublasGemmEx(g->blas, ta, tb, m, n, k, &alpha, A, t, lda, B, t, ldb, &beta,
                                     C, CUDA_R_32F, ldc,
                                     f32 ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT),
                        "cublasGemmEx");
}

/* y (M, OC) = x (M, IC) w^T + bias, as cpu_matmul. */
static parley_status linear(cuda_trainer *g, float *y, const float *x, const float *w,
                            const float *bias, int M, int IC, int OC)
{
    const void *xa = operand(g, g->c16a, x, (size_t)M * IC);
    /* row-major y (M, OC) is column-major y^T (OC, M) = w x^T */
    parley_status st =
            gemm(g, CUBLAS_OP_T, CUBLAS_OP_N, OC, M, IC, weight(g, w), IC, xa, IC, y, OC, 0.0f);
    if (st == PARLEY_OK)
        cuda_bias_add<float>(y, bias, M, OC, g->stream);
    return st;
}

/* The backward of linear, as cpu_matmul_backward: dinp (M, IC) = dout w (added when
 * accumulate), dw (OC, IC) += dout^T x, dbias (OC) += column sums of dout. */
static parley_status linear_backward(cuda_trainer *g, tacts *a, float *dinp, float *dw,
                                     float *dbias, const float *dout, const float *x,
                                     const float *w, int M, int IC, int OC, int accumulate)
{
    const void *da = operand(g, g->c16a, dout, (size_t)M * OC);
    const void *xb = operand(g, g->c16b, x, (size_t)M * IC);
    parley_status st = PARLEY_OK;
    if (dinp) /* column-major dinp^T (IC, M) = w^T (IC, OC) dout^T (OC, M) */
        st = gemm(g, CUBLAS_OP_N, CUBLAS_OP_N, IC, M, OC, weight(g, w), IC, da, OC, dinp, IC,
                  accumulate ? 1.0f : 0.0f);
    if (st == PARLEY_OK) /* column-major dw^T (IC, OC) += x^T (IC, M) dout (M, OC) */
        st = gemm(g, CUBLAS_OP_N, CUBLAS_OP_T, IC, OC, M, xb, IC, da, OC, dw, IC, 1.0f);
    if (st == PARLEY_OK && dbias)
        cuda_col_sum_add(dbias, dout, M, OC, a->scratch, g->stream);
    return st;
}

/* ---- the step ------------------------------------------------------------------------ */

static parley_status layer_forward(cuda_trainer *g, const tdims *d, const tints *t, tacts *a, int l,
                                   float p, uint64_t seed)
{
    const bert_weights *w = &g->wp;
    const int N = d->N, H = d->H, I = d->I;
    const size_t NH = (size_t)N * H, NI = (size_t)N * I, lH = (size_t)l * H;
    const float eps = g->cfg.ln_eps;
    const float *x = a->x + l * NH;
    float *qkv = a->qkv + l * 3 * NH, *att = a->att + l * NH, *u1 = a->u1 + l * NH;
    float *h1 = a->h1 + l * NH, *pre = a->pre + l * NI, *act = a->act + l * NI,
          *u2 = a->u2 + l * NH;
    parley_status st;
    cudaStream_t s = g->stream;
    if ((st = linear(g, qkv, x, w->qkv_w + lH * 3 * H, w->qkv_b + lH * 3, N, H, 3 * H)) !=
        PARLEY_OK)
        return st;
    cuda_attention_train(att, a->probs + l * d->PS, qkv, t->seq, d->B, d->NH, d->D, p,
                         bert_dropout_key(seed, l, BERT_DROP_ATTN_PROBS), s);
    if ((st = linear(g, a->d1, att, w->attn_out_w + lH * H, w->attn_out_b + lH, N, H, H)) !=
        PARLEY_OK)
        return st;
    cuda_dropout(u1, a->d1, x, NH, p, bert_dropout_key(seed, l, BERT_DROP_ATTN_OUT), s);
    cuda_layernorm(h1, u1, w->ln1_w + lH, w->ln1_b + lH, N, H, eps, s);
    if ((st = linear(g, pre, h1, w->ffn_in_w + lH * I, w->ffn_in_b + (size_t)l * I, N, H, I)) !=
        PARLEY_OK)
        return st;
    cuda_gelu(act, pre, NI, s);
    if ((st = linear(g, a->d1, act, w->ffn_out_w + lH * I, w->ffn_out_b + lH, N, I, H)) !=
        PARLEY_OK)
        return st;
    cuda_dropout(u2, a->d1, h1, NH, p, bert_dropout_key(seed, l, BERT_DROP_FFN_OUT), s);
    cuda_layernorm(a->x + (l + 1) * NH, u2, w->ln2_w + lH, w->ln2_b + lH, N, H, eps, s);
    return PARLEY_OK;
}

static parley_status layer_backward(cuda_trainer *g, const tdims *d, const tints *t, tacts *a,
                                    int l, float p, uint64_t seed)
{
    const bert_weights *w = &g->wp, *gw = &g->wg;
    const int N = d->N, H = d->H, I = d->I;
    const size_t NH = (size_t)N * H, NI = (size_t)N * I, lH = (size_t)l * H;
    const float eps = g->cfg.ln_eps;
    const float *x = a->x + l * NH, *qkv = a->qkv + l * 3 * NH, *att = a->att + l * NH;
    const float *u1 = a->u1 + l * NH, *h1 = a->h1 + l * NH, *pre = a->pre + l * NI;
    const float *act = a->act + l * NI, *u2 = a->u2 + l * NH;
    parley_status st;
    cudaStream_t s = g->stream;
    cuda_layernorm_backward(a->dx, gw->ln2_w + lH, gw->ln2_b + lH, a->dx, u2, w->ln2_w + lH, N, H,
                            eps, a->scratch, s);
    cuda_dropout(a->d1, a->dx, NULL, NH, p, bert_dropout_key(seed, l, BERT_DROP_FFN_OUT), s);
    if ((st = linear_backward(g, a, a->dwide, gw->ffn_out_w + lH * I, gw->ffn_out_b + lH, a->d1,
                              act, w->ffn_out_w + lH * I, N, I, H, 0)) != PARLEY_OK)
        return st;
    cuda_gelu_backward(a->dwide, pre, a->dwide, NI, s);
    if ((st = linear_backward(g, a, a->dx, gw->ffn_in_w + lH * I, gw->ffn_in_b + (size_t)l * I,
                              a->dwide, h1, w->ffn_in_w + lH * I, N, H, I, 1)) != PARLEY_OK)
        return st;
    cuda_layernorm_backward(a->dx, gw->ln1_w + lH, gw->ln1_b + lH, a->dx, u1, w->ln1_w + lH, N, H,
                            eps, a->scratch, s);
    cuda_dropout(a->d1, a->dx, NULL, NH, p, bert_dropout_key(seed, l, BERT_DROP_ATTN_OUT), s);
    if ((st = linear_backward(g, a, a->d2, gw->attn_out_w + lH * H, gw->attn_out_b + lH, a->d1, att,
                              w->attn_out_w + lH * H, N, H, H, 0)) != PARLEY_OK)
        return st;
    cuda_attention_backward(a->dwide, a->ds, a->d2, qkv, a->probs + l * d->PS, t->seq, d->B, d->NH,
                            d->D, p, bert_dropout_key(seed, l, BERT_DROP_ATTN_PROBS), s);
    return linear_backward(g, a, a->dx, gw->qkv_w + lH * 3 * H, gw->qkv_b + lH * 3, a->dwide, x,
                           w->qkv_w + lH * 3 * H, N, H, 3 * H, 1);
}

/* The embeddings and the layers: the last layer's output is a->x + L * N * H. */
static parley_status encoder_forward(cuda_trainer *g, const tdims *d, const tints *t, tacts *a,
                                     float p, uint64_t seed)
{
    const bert_weights *w = &g->wp;
    const int N = d->N, H = d->H;
    cudaStream_t s = g->stream;
    parley_status st;
    cuda_embedding_sum(a->emb_sum, t->ids, t->pos, w->word_emb, w->pos_emb, w->type_emb, N, H, s);
    cuda_layernorm(a->x, a->emb_sum, w->emb_ln_w, w->emb_ln_b, N, H, g->cfg.ln_eps, s);
    cuda_dropout(a->x, a->x, NULL, (size_t)N * H, p, bert_dropout_key(seed, -1, BERT_DROP_EMB), s);
    for (int l = 0; l < d->L; l++)
        if ((st = layer_forward(g, d, t, a, l, p, seed)) != PARLEY_OK)
            return st;
    return PARLEY_OK;
}

/* The backward of encoder_forward from a->dx = d(last layer's output) into the gradients. */
static parley_status encoder_backward(cuda_trainer *g, const tdims *d, const tints *t, tacts *a,
                                      float p, uint64_t seed)
{
    const bert_weights *w = &g->wp, *gw = &g->wg;
    const int N = d->N, H = d->H;
    cudaStream_t s = g->stream;
    parley_status st;
    for (int l = d->L - 1; l >= 0; l--)
        if ((st = layer_backward(g, d, t, a, l, p, seed)) != PARLEY_OK)
            return st;
    cuda_dropout(a->dx, a->dx, NULL, (size_t)N * H, p, bert_dropout_key(seed, -1, BERT_DROP_EMB),
                 s);
    cuda_layernorm_backward(a->dx, gw->emb_ln_w, gw->emb_ln_b, a->dx, a->emb_sum, w->emb_ln_w, N, H,
                            g->cfg.ln_eps, a->scratch, s);
    cuda_segment_sum_add(gw->word_emb, a->dx, t->id_order, t->id_start, t->id_row, t->n_id_seg, H,
                         s);
    cuda_segment_sum_add(gw->pos_emb, a->dx, t->pos_order, t->pos_start, t->pos_row, t->n_pos_seg,
                         H, s);
    cuda_segment_sum_add(gw->type_emb, a->dx, t->all_order, t->all_start, t->all_row, 1, H, s);
    return PARLEY_OK;
}

/* Copies the first n row losses and argmaxes of a step to the host (g->loss_host,
 * g->best_host) and waits for the step. */
static parley_status fetch_rows(cuda_trainer *g, const tacts *a, size_t n)
{
    parley_status st;
    cudaStream_t s = g->stream;
    if ((st = cuda_check(cudaMemcpyAsync(g->loss_host, a->row_loss, n * sizeof(float),
                                         cudaMemcpyDeviceToHost, s),
                         "copying the loss")) != PARLEY_OK ||
        (st = cuda_check(
                 cudaMemcpyAsync(g->best_host, a->best, n * sizeof(int), cudaMemcpyDeviceToHost, s),
                 "copying the predictions")) != PARLEY_OK)
        return st;
    return cuda_check(cudaStreamSynchronize(s), "training step");
}

/* Forward, loss and backward of a checked batch; the loss terms come back to *loss. */
static parley_status step_math(cuda_trainer *g, const tdims *d, const tints *t, tacts *a,
                               const bert_labels *y, float p, uint64_t seed, bert_loss *loss)
{
    const bert_weights *w = &g->wp, *gw = &g->wg;
    const int B = d->B, N = d->N, H = d->H, NI = d->NI, NS = d->NS;
    const size_t NH = (size_t)N * H, BH = (size_t)B * H;
    cudaStream_t s = g->stream;
    parley_status st;

    if ((st = encoder_forward(g, d, t, a, p, seed)) != PARLEY_OK)
        return st;
    const float *last = a->x + (size_t)d->L * NH;
    cuda_dropout(a->hd, last, NULL, NH, p, bert_dropout_key(seed, -1, BERT_DROP_SLOT_HEAD), s);
    if ((st = linear(g, a->slot_logits, a->hd, w->slot_w, w->slot_b, N, H, NS)) != PARLEY_OK)
        return st;
    cuda_gather_rows(a->cls, last, t->cls_rows, B, H, s);
    const void *ca = operand(g, g->c16a, a->cls, BH);
    if ((st = gemm(g, CUBLAS_OP_T, CUBLAS_OP_N, H, B, H, weight(g, w->pool_w), H, ca, H, a->pooled,
                   H, 0.0f)) != PARLEY_OK)
        return st;
    cuda_bias_tanh<float>(a->pooled, w->pool_b, B, H, s);
    cuda_dropout(a->pd, a->pooled, NULL, BH, p, bert_dropout_key(seed, -1, BERT_DROP_INTENT_HEAD),
                 s);
    if ((st = linear(g, a->intent_logits, a->pd, w->intent_w, w->intent_b, B, H, NI)) != PARLEY_OK)
        return st;
    const bert_config *c = &g->cfg;
    if (t->sparse) { /* as bert_sparse_logits */
        if (c->intent_sparse_only &&
            (st = cuda_check(
                     cudaMemsetAsync(a->intent_logits, 0, (size_t)B * NI * sizeof(float), s),
                     "zeroing the intent logits")) != PARLEY_OK)
            return st;
        cuda_sparse_logits(a->intent_logits, NI, w->sparse_intent_w, c->sparse_sent, &t->sent, s);
        cuda_sparse_logits(a->slot_logits, NS, w->sparse_slot_w, c->sparse_word, &t->word, s);
    }

    int scored = 0;
    for (int i = 0; i < N; i++)
        scored += y->slot[i] >= 0;
    const float slot_scale = scored ? y->slot_weight / (float)scored : 0.0f;
    cuda_softmax_xent(a->dslot, a->row_loss, a->best, a->slot_logits, t->slot, N, NS, slot_scale,
                      NULL, s);
    if (y->intent_weight &&
        (st = cuda_check(cudaMemcpyAsync(a->class_w, y->intent_weight, (size_t)NI * sizeof(float),
                                         cudaMemcpyHostToDevice, s),
                         "copying the intent weights")) != PARLEY_OK)
        return st;
    cuda_softmax_xent(a->dintent, a->row_loss + N, a->best + N, a->intent_logits, t->intent, B, NI,
                      1.0f / (float)B, y->intent_weight ? a->class_w : NULL, s);
    if (t->sparse) { /* as bert_sparse_backward */
        cuda_sparse_outer(gw->sparse_intent_w, NI, c->sparse_sent, a->dintent, &t->sent, s);
        cuda_sparse_outer(gw->sparse_slot_w, NS, c->sparse_word, a->dslot, &t->word, s);
        if (c->intent_sparse_only && /* the encoder's intent logits were not used */
            (st = cuda_check(cudaMemsetAsync(a->dintent, 0, (size_t)B * NI * sizeof(float), s),
                             "zeroing the intent gradient")) != PARLEY_OK)
            return st;
    }

    if ((st = linear_backward(g, a, a->dx, gw->slot_w, gw->slot_b, a->dslot, a->hd, w->slot_w, N, H,
                              NS, 0)) != PARLEY_OK)
        return st;
    cuda_dropout(a->dx, a->dx, NULL, NH, p, bert_dropout_key(seed, -1, BERT_DROP_SLOT_HEAD), s);
    if ((st = linear_backward(g, a, a->dpool, gw->intent_w, gw->intent_b, a->dintent, a->pd,
                              w->intent_w, B, H, NI, 0)) != PARLEY_OK)
        return st;
    cuda_dropout(a->dpool, a->dpool, NULL, BH, p, bert_dropout_key(seed, -1, BERT_DROP_INTENT_HEAD),
                 s);
    cuda_tanh_backward(a->dpool, a->pooled, BH, s);
    if ((st = linear_backward(g, a, a->dcls, gw->pool_w, gw->pool_b, a->dpool, a->cls, w->pool_w, B,
                              H, H, 0)) != PARLEY_OK)
        return st;
    cuda_scatter_add_rows(a->dx, a->dcls, t->cls_rows, B, H, s);
    if ((st = encoder_backward(g, d, t, a, p, seed)) != PARLEY_OK ||
        (st = fetch_rows(g, a, (size_t)N + (size_t)B)) != PARLEY_OK)
        return st;
    /* The loss, as joint_loss sums it on the CPU. */
    double intent = 0, slot = 0;
    int slot_correct = 0, intent_correct = 0;
    for (int i = 0; i < N; i++) {
        slot += g->loss_host[i];
        slot_correct += y->slot[i] >= 0 && g->best_host[i] == y->slot[i];
    }
    for (int b = 0; b < B; b++) {
        intent += g->loss_host[N + b];
        intent_correct += g->best_host[N + b] == y->intent[b];
    }
    intent /= B;
    slot = scored ? slot / scored : 0.0;
    *loss = bert_loss{ (float)(intent + (double)y->slot_weight * slot),
                       (float)intent,
                       (float)slot,
                       intent_correct,
                       scored,
                       slot_correct };
    return PARLEY_OK;
}

/* The sizes of batch b for g's model. */
static parley_status measure(const cuda_trainer *g, const bert_batch *b, tdims *d)
{
    *d = tdims{ b->n_seq,
                0,
                g->cfg.hidden,
                g->cfg.intermediate,
                g->cfg.heads,
                g->cfg.hidden / g->cfg.heads,
                g->cfg.layers,
                g->cfg.n_slots,
                g->cfg.n_intents,
                0,
                0,
                0,
                g->cfg.vocab_size };
    for (int s = 0; s < b->n_seq; s++) {
        d->N += b->len[s];
        d->PS += (size_t)b->len[s] * (size_t)b->len[s];
        d->t_max = b->len[s] > d->t_max ? b->len[s] : d->t_max;
    }
    d->PS *= (size_t)d->NH;
    if (d->PS > INT32_MAX)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "cuda: a batch of %zu attention scores per layer is too large", d->PS);
    return PARLEY_OK;
}

/* Everything a step needs before its math: the buffers for d, the batch's ints on the device
 * (train_batch.h: b and y's labels and sparse rows, then the caller's n_extra ints, whose
 * device address goes to *extra_dev), and the gradients zeroed. */
static parley_status begin_step(cuda_trainer *g, const bert_batch *b, const bert_labels *y,
                                const tdims *d, const int *extra, size_t n_extra, tacts *a,
                                tints *t, const int **extra_dev)
{
    const bert_sparse_batch *x = g->cfg.sparse_sent || g->cfg.sparse_word ? y->sparse : NULL;
    const size_t work = cuda_batch_scratch(&g->cfg, d->N, x);
    if (work > g->cuda_batch_work_cap) {
        int *w = (int *)pl_realloc(g->cuda_batch_work, work * sizeof(int));
        if (!w)
            return pl_nomem("cuda: a batch of %d tokens", d->N);
        g->cuda_batch_work = w;
        g->cuda_batch_work_cap = work;
    }
    cudaSetDevice(g->device);
    parley_status st = reserve(g, d, cuda_batch_bound(d->N, d->B, x) + n_extra, a);
    if (st != PARLEY_OK)
        return st;
    cuda_batch_layout lay;
    cuda_batch_build(&g->cfg, g->pad_id, b, y, d->N, g->ibuf_host, g->cuda_batch_work, &lay);
    *t = device_ints(g->ibuf, &lay);
    if (n_extra)
        memcpy(g->ibuf_host + lay.used, extra, n_extra * sizeof(int));
    if (extra_dev)
        *extra_dev = g->ibuf + lay.used;
    if ((st = cuda_check(cudaMemcpyAsync(g->ibuf, g->ibuf_host, (lay.used + n_extra) * sizeof(int),
                                         cudaMemcpyHostToDevice, g->stream),
                         "copying the batch")) != PARLEY_OK)
        return st;
    return cuda_check(cudaMemsetAsync(g->g, 0, g->n_all * sizeof(float), g->stream),
                      "zeroing the gradients");
}

extern "C" parley_status cuda_trainer_grads(cuda_trainer *g, const bert_batch *b,
                                            const bert_labels *y, float dropout, uint64_t seed,
                                            bert_loss *loss, float *grads)
{
    parley_status st;
    if (!g || !loss)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "cuda_trainer_grads: NULL trainer or loss");
    tdims d;
    tacts a;
    tints t;
    if ((st = bert_train_check(&g->cfg, b, y, dropout)) != PARLEY_OK ||
        (st = measure(g, b, &d)) != PARLEY_OK)
        return st;
    if ((st = begin_step(g, b, y, &d, NULL, 0, &a, &t, NULL)) == PARLEY_OK)
        st = step_math(g, &d, &t, &a, y, dropout, seed, loss);
    if (st == PARLEY_OK && grads)
        st = cuda_check(cudaMemcpy(grads, g->g, g->n * sizeof(float), cudaMemcpyDeviceToHost),
                        "copying the gradients");
    return st != PARLEY_OK ? pl_wrap(st, "cuda:%d", g->device) : PARLEY_OK;
}

/* The masked-LM loss of a batch whose masked tokens are rows[0..M) (device) with labels
 * (device; label_host their host twin), bert_mlm_step_ws's math, and with `backward` its
 * gradients: the masked rows through the head, the decoder tied to the word embeddings. */
static parley_status mlm_math(cuda_trainer *g, const tdims *d, const tints *t, tacts *a,
                              const int *rows, const int *labels, const int *label_host, float p,
                              uint64_t seed, int backward, bert_mlm_loss *loss)
{
    const bert_weights *w = &g->wp, *gw = &g->wg;
    const bert_mlm_head *hw = &g->hw, *hg = &g->hg;
    const int M = d->M, H = d->H, V = d->V;
    const size_t MH = (size_t)M * H;
    const float eps = g->cfg.ln_eps;
    cudaStream_t s = g->stream;
    parley_status st;
    if ((st = encoder_forward(g, d, t, a, p, seed)) != PARLEY_OK)
        return st;
    cuda_gather_rows(a->mlm_in, a->x + (size_t)d->L * d->N * H, rows, M, H, s);
    if ((st = linear(g, a->mlm_pre, a->mlm_in, hw->dense_w, hw->dense_b, M, H, H)) != PARLEY_OK)
        return st;
    cuda_gelu(a->mlm_act, a->mlm_pre, MH, s);
    cuda_layernorm(a->mlm_t, a->mlm_act, hw->ln_w, hw->ln_b, M, H, eps, s);
    if ((st = linear(g, a->mlm_logits, a->mlm_t, w->word_emb, hw->bias, M, H, V)) != PARLEY_OK)
        return st;
    cuda_softmax_xent(a->mlm_dlogits, a->row_loss, a->best, a->mlm_logits, labels, M, V,
                      1.0f / (float)M, NULL, s);
    if (backward) {
        if ((st = linear_backward(g, a, a->mlm_dt, gw->word_emb, hg->bias, a->mlm_dlogits, a->mlm_t,
                                  w->word_emb, M, H, V, 0)) != PARLEY_OK)
            return st;
        cuda_layernorm_backward(a->mlm_dt, hg->ln_w, hg->ln_b, a->mlm_dt, a->mlm_act, hw->ln_w, M,
                                H, eps, a->scratch, s);
        cuda_gelu_backward(a->mlm_dt, a->mlm_pre, a->mlm_dt, MH, s);
        if ((st = linear_backward(g, a, a->mlm_din, hg->dense_w, hg->dense_b, a->mlm_dt, a->mlm_in,
                                  hw->dense_w, M, H, H, 0)) != PARLEY_OK ||
            (st = cuda_check(cudaMemsetAsync(a->dx, 0, (size_t)d->N * H * sizeof(float), s),
                             "zeroing the hidden gradient")) != PARLEY_OK)
            return st;
        cuda_scatter_add_rows(a->dx, a->mlm_din, rows, M, H, s);
        if ((st = encoder_backward(g, d, t, a, p, seed)) != PARLEY_OK)
            return st;
    }
    if ((st = fetch_rows(g, a, (size_t)M)) != PARLEY_OK)
        return st;
    double sum = 0;
    int correct = 0;
    for (int k = 0; k < M; k++) {
        sum += g->loss_host[k];
        correct += g->best_host[k] == label_host[k];
    }
    *loss = bert_mlm_loss{ (float)(sum / M), M, correct };
    return PARLEY_OK;
}

extern "C" parley_status cuda_trainer_mlm(cuda_trainer *g, const bert_batch *b, const int *target,
                                          float dropout, uint64_t seed, int backward,
                                          bert_mlm_loss *loss, float *grads, float *head_grads)
{
    parley_status st;
    if (!g || !b || !target || !loss)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "cuda_trainer_mlm: NULL trainer, batch, targets or loss");
    if (!g->n_head)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "cuda_trainer_mlm: the trainer was opened without a masked-LM head");
    tdims d;
    tacts a;
    tints t;
    int masked = 0;
    if ((st = bert_mlm_check(&g->cfg, b, target, dropout, &masked)) != PARLEY_OK ||
        (st = measure(g, b, &d)) != PARLEY_OK)
        return st;
    d.M = masked;
    /* the joint labels the batch layout copies: none scored */
    int *ints = (int *)pl_malloc(((size_t)d.B + 3 * (size_t)d.N + 1) * sizeof(int));
    if (!ints)
        return pl_nomem("cuda: a batch of %d tokens", d.N);
    int *intent = ints, *slot = intent + d.B, *extra = slot + d.N;
    memset(intent, 0, (size_t)d.B * sizeof(int));
    for (int i = 0, k = 0; i < d.N; i++) {
        slot[i] = -1;
        if (target[i] >= 0) {
            extra[k] = i; /* the masked rows, then their labels */
            extra[d.M + k++] = target[i];
        }
    }
    bert_labels y = { intent, slot, 1.0f, NULL, NULL };
    const int *rows = NULL;
    *loss = bert_mlm_loss{ 0.0f, 0, 0 };
    st = begin_step(g, b, &y, &d, extra, 2 * (size_t)d.M, &a, &t, &rows);
    if (st == PARLEY_OK && d.M) /* a batch with nothing masked has no loss and no gradient */
        st = mlm_math(g, &d, &t, &a, rows, rows + d.M, extra + d.M, dropout, seed, backward, loss);
    else if (st == PARLEY_OK) /* mlm_math waits for its step; the zeroing must land too */
        st = cuda_check(cudaStreamSynchronize(g->stream), "zeroing the gradients");
    pl_free(ints);
    if (st == PARLEY_OK && grads)
        st = cuda_check(cudaMemcpy(grads, g->g, g->n * sizeof(float), cudaMemcpyDeviceToHost),
                        "copying the gradients");
    if (st == PARLEY_OK && head_grads)
        st = cuda_check(cudaMemcpy(head_grads, g->g + g->n, g->n_head * sizeof(float),
                                   cudaMemcpyDeviceToHost),
                        "copying the head's gradients");
    return st != PARLEY_OK ? pl_wrap(st, "cuda:%d", g->device) : PARLEY_OK;
}

/* Clipping to the global norm `clip` of all the gradients (0 = off, as train_clip_grads) and
 * AdamW step t with *p over [0, n_adam) and the masked-LM head (when there is one), the
 * coefficients out in *k. */
static parley_status update(cuda_trainer *g, float clip, const adamw_params *p, long t,
                            size_t n_adam, cuda_adamw_coef *k)
{
    parley_status st;
    /* The global norm as train_clip_grads takes it: partial sums on the device, their sum in
     * double here. */
    cuda_sumsq_partials(g->norm_part, g->g, g->n_all, g->stream);
    if ((st = cuda_check(cudaMemcpyAsync(g->norm_host, g->norm_part,
                                         CUDA_NORM_BLOCKS * sizeof(float), cudaMemcpyDeviceToHost,
                                         g->stream),
                         "copying the norm")) != PARLEY_OK ||
        (st = cuda_check(cudaStreamSynchronize(g->stream), "gradient norm")) != PARLEY_OK)
        return st;
    double sum = 0;
    for (int i = 0; i < CUDA_NORM_BLOCKS; i++)
        sum += g->norm_host[i];
    const float coef = (float)((double)clip / (sqrt(sum) + 1e-6));
    const double b1 = p->beta1, b2 = p->beta2;
    *k = cuda_adamw_coef{
        clip > 0 && coef < 1 ? coef : 1.0f,
        p->beta1,
        p->beta2,
        (float)(1.0 - b1),
        (float)(1.0 - b2),
        (float)(1.0 - (double)p->lr * p->weight_decay),
        (float)(p->lr / (1.0 - pow(b1, (double)t))),
        (float)sqrt(1.0 - pow(b2, (double)t)),
        p->eps,
    };
    cuda_adamw(g->p, g->p16, g->g, g->m, g->v, g->decay, n_adam, *k, g->stream);
    const size_t n = g->n;
    if (g->n_head)
        cuda_adamw(g->p + n, g->p16 ? g->p16 + n : NULL, g->g + n, g->m + n, g->v + n, g->decay + n,
                   g->n_head, *k, g->stream);
    return cuda_check(cudaGetLastError(), "the update");
}

extern "C" parley_status cuda_trainer_step(cuda_trainer *g, const bert_batch *b,
                                           const bert_labels *y, float dropout, uint64_t seed,
                                           float clip, const adamw_params *p, float sparse_lr,
                                           float slot_lr, long t, bert_loss *loss)
{
    cuda_adamw_coef k;
    parley_status st = cuda_trainer_grads(g, b, y, dropout, seed, loss, NULL);
    if (st != PARLEY_OK)
        return st;
    if ((st = update(g, clip, p, t, g->dense, &k)) == PARLEY_OK && g->dense < g->n) {
        /* as train_sparse_update: U, then S and what lies between */
        const size_t n_u = (size_t)(g->wp.sparse_slot_w - g->wp.sparse_intent_w);
        float *p_u = g->p + g->dense, *g_u = g->g + g->dense, *m_u = g->m + g->dense;
        if (!g->cfg.intent_sparse_only)
            cuda_sparse_sgd(p_u, g_u, m_u, n_u, k.gscale, sparse_lr, g->stream);
        cuda_sparse_sgd(p_u + n_u, g_u + n_u, m_u + n_u, g->n - g->dense - n_u, k.gscale, slot_lr,
                        g->stream);
        st = cuda_check(cudaGetLastError(), "the sparse features' update");
    }
    return st != PARLEY_OK ? pl_wrap(st, "cuda:%d", g->device) : PARLEY_OK;
}

extern "C" parley_status cuda_trainer_mlm_step(cuda_trainer *g, const bert_batch *b,
                                               const int *target, float dropout, uint64_t seed,
                                               float clip, const adamw_params *p, long t,
                                               bert_mlm_loss *loss)
{
    cuda_adamw_coef k;
    parley_status st = cuda_trainer_mlm(g, b, target, dropout, seed, 1, loss, NULL, NULL);
    if (st == PARLEY_OK && (st = update(g, clip, p, t, g->n_enc, &k)) != PARLEY_OK)
        st = pl_wrap(st, "cuda:%d", g->device);
    return st;
}

/* ---- life cycle ---------------------------------------------------------------------- */

/* cuda_trainer_open and cuda_trainer_open_mlm: head NULL for none. */
static parley_status open_trainer(const bert_model *m, const float *head,
                                  const unsigned char *decay, int device, cuda_precision prec,
                                  cuda_trainer **out)
{
    *out = NULL;
    if (prec == CUDA_PREC_FP16)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "cuda:%d: training takes bf16 or fp32 (fp16 would need loss "
                       "scaling)",
                       device);
    int count = cuda_device_count();
    if (device < 0 || device >= count)
        return pl_fail(PARLEY_ERR_DEVICE, "cuda:%d: %d CUDA device%s usable here", device, count,
                       count == 1 ? " is" : "s are");
    cuda_trainer *g = (cuda_trainer *)pl_calloc(1, sizeof *g);
    if (!g)
        return pl_nomem("cuda");
    g->device = device;
    g->prec = prec;
    g->cfg = m->cfg;
    g->cfg.intent_labels = g->cfg.slot_labels = NULL; /* not ours */
    g->pad_id = m->vocab ? wp_vocab_pad(m->vocab) : -1;
    g->n = m->n_params;
    g->n_head = head ? bert_mlm_param_count(&m->cfg) : 0;
    g->n_all = g->n + g->n_head;
    const size_t bytes = g->n_all * sizeof(float);
    cudaDeviceProp prop;
    parley_status st = cuda_context_open(device, &prop, &g->stream, &g->blas, &g->blas_ws);
    float **bufs[] = { &g->p, &g->g, &g->m, &g->v };
    for (float **b : bufs)
        if (st == PARLEY_OK)
            st = cuda_check(cudaMalloc((void **)b, bytes),
                            "allocating the parameters and their state");
    if (st == PARLEY_OK)
        st = cuda_check(cudaMalloc((void **)&g->decay, g->n_all), "allocating the decay mask");
    if (st == PARLEY_OK)
        st = cuda_check(cudaMalloc((void **)&g->norm_part, CUDA_NORM_BLOCKS * sizeof(float)),
                        "allocating");
    if (st == PARLEY_OK)
        st = cuda_check(cudaMallocHost((void **)&g->norm_host, CUDA_NORM_BLOCKS * sizeof(float)),
                        "allocating");
    if (st == PARLEY_OK)
        st = cuda_check(cudaMemcpy(g->p, m->params, g->n * sizeof(float), cudaMemcpyHostToDevice),
                        "uploading the weights");
    if (st == PARLEY_OK && head)
        st = cuda_check(
                cudaMemcpy(g->p + g->n, head, g->n_head * sizeof(float), cudaMemcpyHostToDevice),
                "uploading the masked-LM head");
    if (st == PARLEY_OK)
        st = cuda_check(cudaMemcpy(g->decay, decay, g->n_all, cudaMemcpyHostToDevice),
                        "uploading the decay mask");
    if (st == PARLEY_OK)
        st = cuda_check(cudaMemset(g->m, 0, bytes), "zeroing the moments");
    if (st == PARLEY_OK)
        st = cuda_check(cudaMemset(g->v, 0, bytes), "zeroing the moments");
    /* The uploads ran on the legacy stream, whose pageable copies may still be in flight:
     * the trainer's own stream must not read the weights before they land. */
    if (st == PARLEY_OK)
        st = cuda_check(cudaDeviceSynchronize(), "uploading the weights");
    if (st == PARLEY_OK && prec == CUDA_PREC_BF16) {
        st = cuda_check(cudaMalloc((void **)&g->p16, g->n_all * 2), "allocating the BF16 weights");
        if (st == PARLEY_OK) {
            cuda_convert<__nv_bfloat16>(g->p16, g->p, g->n_all, g->stream);
            st = cuda_check(cudaStreamSynchronize(g->stream), "converting the weights");
        }
    }
    if (st != PARLEY_OK) {
        cuda_trainer_close(g);
        return pl_wrap(st, "cuda:%d", device);
    }
    bert_weights_point(&g->wp, &g->cfg, g->p);
    bert_weights_point(&g->wg, &g->cfg, g->g);
    g->dense = g->cfg.sparse_sent || g->cfg.sparse_word ? (size_t)(g->wp.sparse_intent_w - g->p)
                                                        : g->n;
    g->n_enc = (size_t)(g->wp.pool_w - g->p);
    if (head) {
        bert_mlm_point(&g->hw, &g->cfg, g->p + g->n);
        bert_mlm_point(&g->hg, &g->cfg, g->g + g->n);
    }
    snprintf(g->desc, sizeof g->desc, "%s (cuda:%d), %s", prop.name, device,
             cuda_precision_name(prec));
    *out = g;
    return PARLEY_OK;
}

extern "C" parley_status cuda_trainer_open(const bert_model *m, const unsigned char *decay,
                                           int device, cuda_precision prec, cuda_trainer **out)
{
    return open_trainer(m, NULL, decay, device, prec, out);
}

extern "C" parley_status cuda_trainer_open_mlm(const bert_model *m, const float *head,
                                               const unsigned char *decay, int device,
                                               cuda_precision prec, cuda_trainer **out)
{
    if (!head)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "cuda_trainer_open_mlm: NULL head");
    return open_trainer(m, head, decay, device, prec, out);
}

extern "C" parley_status cuda_trainer_set_moments(cuda_trainer *g, const float *adam_m,
                                                  const float *adam_v)
{
    const size_t bytes = g->n * sizeof(float);
    cudaSetDevice(g->device);
    parley_status st = cuda_check(cudaMemcpy(g->m, adam_m, bytes, cudaMemcpyHostToDevice),
                                  "uploading moments");
    if (st == PARLEY_OK)
        st = cuda_check(cudaMemcpy(g->v, adam_v, bytes, cudaMemcpyHostToDevice),
                        "uploading moments");
    if (st ==
        PARLEY_OK) /* as in cuda_trainer_open: the trainer's stream must not read them early */
        st = cuda_check(cudaDeviceSynchronize(), "uploading moments");
    return st != PARLEY_OK ? pl_wrap(st, "cuda:%d", g->device) : PARLEY_OK;
}

extern "C" parley_status cuda_trainer_download(cuda_trainer *g, float *params, float *adam_m,
                                               float *adam_v)
{
    const size_t bytes = g->n * sizeof(float);
    cudaSetDevice(g->device);
    parley_status st = cuda_check(cudaStreamSynchronize(g->stream), "finishing the step");
    if (st == PARLEY_OK)
        st = cuda_check(cudaMemcpy(params, g->p, bytes, cudaMemcpyDeviceToHost),
                        "copying the weights");
    if (st == PARLEY_OK && adam_m)
        st = cuda_check(cudaMemcpy(adam_m, g->m, bytes, cudaMemcpyDeviceToHost),
                        "copying the moments");
    if (st == PARLEY_OK && adam_v)
        st = cuda_check(cudaMemcpy(adam_v, g->v, bytes, cudaMemcpyDeviceToHost),
                        "copying the moments");
    return st != PARLEY_OK ? pl_wrap(st, "cuda:%d", g->device) : PARLEY_OK;
}

extern "C" parley_status cuda_trainer_download_head(cuda_trainer *g, float *head)
{
    cudaSetDevice(g->device);
    parley_status st = cuda_check(cudaStreamSynchronize(g->stream), "finishing the step");
    if (st == PARLEY_OK)
        st = cuda_check(
                cudaMemcpy(head, g->p + g->n, g->n_head * sizeof(float), cudaMemcpyDeviceToHost),
                "copying the masked-LM head");
    return st != PARLEY_OK ? pl_wrap(st, "cuda:%d", g->device) : PARLEY_OK;
}

extern "C" const char *cuda_trainer_describe(const cuda_trainer *g)
{
    return g->desc;
}

extern "C" void cuda_trainer_close(cuda_trainer *g)
{
    if (!g)
        return;
    cudaSetDevice(g->device);
    free_step_buffers(g);
    void *dev[] = { g->p, g->g, g->m, g->v, g->decay, g->p16, g->norm_part };
    for (void *p : dev)
        cudaFree(p);
    cudaFreeHost(g->norm_host);
    cuda_context_close(g->stream, g->blas, g->blas_ws);
    pl_free(g);
}
