/* bert_train.c — one training step of the joint intent/slot BERT on the CPU: the forward
 * pass keeping what the backward needs, dropout, the joint loss, and the backward pass
 * into gradients laid out like bert_model.params; and the weight decay mask.
 *
 * All activations of a step live in one arena sized from the batch (token count, the
 * attention blocks, thread count), kept in a bert_train_ws between steps: no op allocates,
 * and a loop of steps allocates only when a batch outgrows the arena. The math is
 * the ops of nlu/cpu/ (ops.h forward, ops_backward.h backward), composed here in the
 * order of Hugging Face's BertModel with JointBERT's heads: embeddings, L post-LN layers,
 * the tanh pooler on each sequence's first token into the intent classifier, and the slot
 * classifier on every token; dropout after the embeddings, on the attention probabilities,
 * on both sublayer outputs before their residual add, and before each classifier.
 * Dropout masks are hashed from (seed, tensor number, element), so the backward redraws
 * them and a step is reproducible. The masks' keys and the checks of a step's batch and
 * labels are nlu/bert_step.c's, shared with the GPU trainer. This file does not update
 * parameters (adamw.c), order batches or schedule anything (the training driver does).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nlu/cpu/ops.h"
#include "nlu/cpu/ops_backward.h"
#include "nlu/train/bert_train.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

/* Saved activations and backward scratch of one step, carved from the workspace block.
 * Per-layer arrays hold L blocks one after another. */
typedef struct acts {
    float *emb_sum;       // (N, H) embedding sum, the embedding LayerNorm's input
    float *x;             // (L+1, N, H) layer inputs after dropout; x[L] the last hidden state
    float *qkv;           // (L, N, 3H)
    float *probs;         // (L, PS) attention probabilities, PS = NH * sum(T^2)
    float *att;           // (L, N, H) attention output, the input of attention.output.dense
    float *u1;            // (L, N, H) x + dropout(attention.output.dense), LayerNorm 1's input
    float *h1;            // (L, N, H) LayerNorm 1's output
    float *pre;           // (L, N, I) intermediate.dense output, GELU's input
    float *act;           // (L, N, I) GELU output
    float *u2;            // (L, N, H) h1 + dropout(output.dense), LayerNorm 2's input
    float *hd;            // (N, H) dropout(x[L]), the slot classifier's input
    float *cls;           // (B, H) x[L] at each sequence's first token
    float *pooled;        // (B, H)
    float *pd;            // (B, H) dropout(pooled), the intent classifier's input
    float *slot_logits;   // (N, NS)
    float *intent_logits; // (B, NI)
    float *dx;            // (N, H) gradient of the residual stream
    float *d1;            // (N, H) a sublayer's output gradient; in the forward, its output
    float *d2;            // (N, H) attention output gradient
    float *dwide;         // (N, max(3H, I)) qkv or FFN gradient
    float *dslot;         // (N, NS)
    float *dintent;       // (B, NI)
    float *dpool;         // (B, H) pooled, then pre-tanh gradient
    float *dcls;          // (B, H)
    float *row_loss;      // (max(N, B))
    float *att_work;      // per-thread attention scratch
    float *ln_work;       // LayerNorm backward partial sums
    float *head;          // the masked-LM head's scratch (bert_mlm_step), else empty
} acts;

/* Sizes of one step. */
typedef struct dims {
    int B, N, t_max, H, I, NH, D, L, threads;
    size_t PS;
} dims;

/* total += a * b, failing on overflow. */
static int size_add(size_t *total, size_t a, size_t b)
{
    size_t ab;
    return !__builtin_mul_overflow(a, b, &ab) && !__builtin_add_overflow(*total, ab, total);
}

/* Carves a from ws's block, growing it first if the step needs more; head_floats more for
 * a head's own scratch. */
static parley_status acts_alloc(acts *a, const bert_config *c, const dims *d, size_t head_floats,
                                bert_train_ws *ws)
{
    const size_t N = (size_t)d->N, B = (size_t)d->B, H = (size_t)d->H, I = (size_t)d->I;
    const size_t L = (size_t)d->L, NS = (size_t)c->n_slots, NI = (size_t)c->n_intents;
    const size_t wide = 3 * H > I ? 3 * H : I;
    struct {
        float **p;
        size_t n, m;
    } parts[] = {
        { &a->emb_sum, N, H },
        { &a->x, (L + 1) * N, H },
        { &a->qkv, L * N, 3 * H },
        { &a->probs, L, d->PS },
        { &a->att, L * N, H },
        { &a->u1, L * N, H },
        { &a->h1, L * N, H },
        { &a->pre, L * N, I },
        { &a->act, L * N, I },
        { &a->u2, L * N, H },
        { &a->hd, N, H },
        { &a->cls, B, H },
        { &a->pooled, B, H },
        { &a->pd, B, H },
        { &a->slot_logits, N, NS },
        { &a->intent_logits, B, NI },
        { &a->dx, N, H },
        { &a->d1, N, H },
        { &a->d2, N, H },
        { &a->dwide, N, wide },
        { &a->dslot, N, NS },
        { &a->dintent, B, NI },
        { &a->dpool, B, H },
        { &a->dcls, B, H },
        { &a->row_loss, N > B ? N : B, 1 },
        { &a->att_work, cpu_attention_train_scratch(d->t_max, d->D, d->threads), 1 },
        { &a->ln_work, cpu_layernorm_backward_scratch(d->N, d->H), 1 },
        { &a->head, head_floats, 1 },
    };
    enum { N_PARTS = sizeof parts / sizeof parts[0] };
    size_t total = 0;
    int ok = 1;
    for (int i = 0; i < N_PARTS; i++)
        ok = ok && size_add(&total, parts[i].n, parts[i].m);
    if (!ok || total > ws->cap) {
        const size_t cap = ok && total <= SIZE_MAX / 5 / sizeof(float) ? total + total / 4 : 0;
        bert_train_ws_free(ws);
        ws->block = cap ? pl_malloc(cap * sizeof(float)) : NULL;
        if (!ws->block)
            return pl_nomem("bert_train_step: %zu MiB of"
                            "activations (%d tokens, %d layers)",
                            ok ? (total * sizeof(float)) >> 20 : SIZE_MAX >> 20, d->N, d->L);
        ws->cap = cap;
    }
    float *p = ws->block;
    for (int i = 0; i < N_PARTS; i++) {
        *parts[i].p = p;
        p += parts[i].n * parts[i].m;
    }
    return PARLEY_OK;
}

/* Measures a batch that bert_step_check_batch has passed. */
static dims measure(const bert_config *c, const bert_batch *b)
{
    size_t n = 0, ps = 0;
    int t_max = 0;
    for (int s = 0; s < b->n_seq; s++) {
        const int len = b->len[s];
        n += (size_t)len;
        ps += (size_t)len * (size_t)len;
        t_max = len > t_max ? len : t_max;
    }
    return (dims){ .B = b->n_seq,
                   .N = (int)n,
                   .t_max = t_max,
                   .H = c->hidden,
                   .I = c->intermediate,
                   .NH = c->heads,
                   .D = c->hidden / c->heads,
                   .L = c->layers,
                   .threads = cpu_threads(),
                   .PS = ps * (size_t)c->heads };
}

/* One encoder layer l forward: x[l + 1] from x[l], keeping its activations. */
static void layer_forward(const bert_model *m, const bert_batch *b, const dims *d, acts *a, int l,
                          float p, uint64_t seed)
{
    const bert_weights *w = &m->w;
    const int N = d->N, H = d->H, I = d->I;
    const size_t NH = (size_t)N * H, NI = (size_t)N * I, lH = (size_t)l * H;
    const float eps = m->cfg.ln_eps;
    const float *x = a->x + l * NH;
    float *qkv = a->qkv + l * 3 * NH, *att = a->att + l * NH, *u1 = a->u1 + l * NH;
    float *h1 = a->h1 + l * NH, *pre = a->pre + l * NI, *act = a->act + l * NI;
    float *u2 = a->u2 + l * NH;
    cpu_matmul(qkv, x, w->qkv_w + lH * 3 * H, w->qkv_b + lH * 3, N, H, 3 * H);
    cpu_attention_train(att, a->probs + l * d->PS, qkv, b->len, d->B, d->NH, d->D, p,
                        bert_dropout_key(seed, l, BERT_DROP_ATTN_PROBS), a->att_work, d->threads);
    cpu_matmul(a->d1, att, w->attn_out_w + lH * H, w->attn_out_b + lH, N, H, H);
    cpu_dropout(u1, a->d1, x, NH, p, bert_dropout_key(seed, l, BERT_DROP_ATTN_OUT), 0);
    cpu_layernorm(h1, u1, w->ln1_w + lH, w->ln1_b + lH, N, H, eps);
    cpu_matmul(pre, h1, w->ffn_in_w + lH * I, w->ffn_in_b + (size_t)l * I, N, H, I);
    cpu_gelu(act, pre, NI);
    cpu_matmul(a->d1, act, w->ffn_out_w + lH * I, w->ffn_out_b + lH, N, I, H);
    cpu_dropout(u2, a->d1, h1, NH, p, bert_dropout_key(seed, l, BERT_DROP_FFN_OUT), 0);
    cpu_layernorm(a->x + (l + 1) * NH, u2, w->ln2_w + lH, w->ln2_b + lH, N, H, eps);
}

/* One encoder layer l backward: a->dx holds d x[l + 1] on entry and d x[l] on return. */
static void layer_backward(const bert_model *m, const bert_batch *b, const dims *d, acts *a,
                           bert_weights *g, int l, float p, uint64_t seed)
{
    const bert_weights *w = &m->w;
    const int N = d->N, H = d->H, I = d->I;
    const size_t NH = (size_t)N * H, NI = (size_t)N * I, lH = (size_t)l * H;
    const float eps = m->cfg.ln_eps;
    const float *x = a->x + l * NH, *qkv = a->qkv + l * 3 * NH, *att = a->att + l * NH;
    const float *u1 = a->u1 + l * NH, *h1 = a->h1 + l * NH, *pre = a->pre + l * NI;
    const float *act = a->act + l * NI, *u2 = a->u2 + l * NH;
    // LayerNorm 2: dx becomes d u2 = d h1 through the residual; d1 = d output.dense
    cpu_layernorm_backward(a->dx, g->ln2_w + lH, g->ln2_b + lH, a->dx, u2, w->ln2_w + lH, N, H, eps,
                           a->ln_work);
    cpu_dropout(a->d1, a->dx, NULL, NH, p, bert_dropout_key(seed, l, BERT_DROP_FFN_OUT), 0);
    // FFN: dwide (N, I) = d act, then d pre; d h1 += d pre · ffn_in_w
    cpu_matmul_backward(a->dwide, g->ffn_out_w + lH * I, g->ffn_out_b + lH, a->d1, act,
                        w->ffn_out_w + lH * I, N, I, H, 0);
    cpu_gelu_backward(a->dwide, pre, a->dwide, NI);
    cpu_matmul_backward(a->dx, g->ffn_in_w + lH * I, g->ffn_in_b + (size_t)l * I, a->dwide, h1,
                        w->ffn_in_w + lH * I, N, H, I, 1);
    // LayerNorm 1: dx becomes d u1 = d x through the residual; d1 = d attention.output.dense
    cpu_layernorm_backward(a->dx, g->ln1_w + lH, g->ln1_b + lH, a->dx, u1, w->ln1_w + lH, N, H, eps,
                           a->ln_work);
    cpu_dropout(a->d1, a->dx, NULL, NH, p, bert_dropout_key(seed, l, BERT_DROP_ATTN_OUT), 0);
    cpu_matmul_backward(a->d2, g->attn_out_w + lH * H, g->attn_out_b + lH, a->d1, att,
                        w->attn_out_w + lH * H, N, H, H, 0);
    // attention: dwide (N, 3H) = d qkv; d x += d qkv · qkv_w
    cpu_attention_backward(a->dwide, a->d2, qkv, a->probs + l * d->PS, b->len, d->B, d->NH, d->D, p,
                           bert_dropout_key(seed, l, BERT_DROP_ATTN_PROBS), a->att_work,
                           d->threads);
    cpu_matmul_backward(a->dx, g->qkv_w + lH * 3 * H, g->qkv_b + lH * 3, a->dwide, x,
                        w->qkv_w + lH * 3 * H, N, H, 3 * H, 1);
}

/* Index of the largest of n values (the first on ties). */
static int argmax(const float *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        best = x[i] > x[best] ? i : best;
    return best;
}

/* The joint loss and the logit gradients dintent, dslot; fills *loss. */
static void joint_loss(const bert_config *c, const bert_labels *y, const dims *d, acts *a,
                       bert_loss *loss)
{
    const int B = d->B, N = d->N, NI = c->n_intents, NS = c->n_slots;
    int scored = 0, slot_correct = 0, intent_correct = 0;
    for (int i = 0; i < N; i++)
        if (y->slot[i] >= 0) {
            scored++;
            slot_correct += argmax(a->slot_logits + (size_t)i * NS, NS) == y->slot[i];
        }
    for (int s = 0; s < B; s++)
        intent_correct += argmax(a->intent_logits + (size_t)s * NI, NI) == y->intent[s];
    double intent = 0, slot = 0;
    cpu_softmax_xent(a->dintent, a->row_loss, a->intent_logits, y->intent, B, NI, 1.0f / B);
    for (int s = 0; s < B; s++) {
        const float w = y->intent_weight ? y->intent_weight[y->intent[s]] : 1.0f;
        if (w != 1.0f)
            for (int k = 0; k < NI; k++)
                a->dintent[(size_t)s * NI + k] *= w;
        intent += w * a->row_loss[s];
    }
    /* With no scored token the slot term is 0 and so is its gradient. */
    const float slot_scale = scored ? y->slot_weight / (float)scored : 0.0f;
    cpu_softmax_xent(a->dslot, a->row_loss, a->slot_logits, y->slot, N, NS, slot_scale);
    for (int i = 0; i < N; i++)
        slot += a->row_loss[i];
    intent /= B;
    slot = scored ? slot / scored : 0.0;
    *loss = (bert_loss){ .total = (float)(intent + (double)y->slot_weight * slot),
                         .intent = (float)intent,
                         .slot = (float)slot,
                         .intent_correct = intent_correct,
                         .slot_scored = scored,
                         .slot_correct = slot_correct };
}

void bert_train_ws_free(bert_train_ws *ws)
{
    if (!ws)
        return;
    pl_free(ws->block);
    ws->block = NULL;
    ws->cap = 0;
}

parley_status bert_train_step(const bert_model *m, const bert_batch *b, const bert_labels *y,
                              float dropout, uint64_t seed, float *grads, bert_loss *loss,
                              float *intent_logits, float *slot_logits)
{
    bert_train_ws ws = { 0 };
    parley_status st = bert_train_step_ws(&ws, m, b, y, dropout, seed, grads, loss, intent_logits,
                                          slot_logits);
    bert_train_ws_free(&ws);
    return st;
}

/* For a checked batch measured as d: carves the arena (head_floats for the head) and
 * runs the encoder forward; a->x + L * N * H is then the last hidden state (N, H). */
static parley_status encoder_forward(bert_train_ws *ws, const bert_model *m, const bert_batch *b,
                                     float p, uint64_t seed, size_t head_floats, const dims *d,
                                     acts *a)
{
    parley_status st;
    const bert_config *c = &m->cfg;
    const bert_weights *w = &m->w;
    if ((st = acts_alloc(a, c, d, head_floats, ws)) != PARLEY_OK)
        return st;
    const size_t NH = (size_t)d->N * d->H;
    cpu_embedding_sum(a->emb_sum, b->ids, b->len, d->B, w->word_emb, w->pos_emb, w->type_emb, d->H);
    cpu_layernorm(a->x, a->emb_sum, w->emb_ln_w, w->emb_ln_b, d->N, d->H, c->ln_eps);
    cpu_dropout(a->x, a->x, NULL, NH, p, bert_dropout_key(seed, -1, BERT_DROP_EMB), 0);
    for (int l = 0; l < d->L; l++)
        layer_forward(m, b, d, a, l, p, seed);
    return PARLEY_OK;
}

/* The encoder backward: a->dx holds d last hidden state (N, H) on entry; the layers' and
 * embeddings' gradients are added to g. */
static void encoder_backward(const bert_model *m, const bert_batch *b, const dims *d, acts *a,
                             bert_weights *g, float p, uint64_t seed)
{
    const bert_config *c = &m->cfg;
    for (int l = d->L - 1; l >= 0; l--)
        layer_backward(m, b, d, a, g, l, p, seed);
    cpu_dropout(a->dx, a->dx, NULL, (size_t)d->N * d->H, p,
                bert_dropout_key(seed, -1, BERT_DROP_EMB), 0);
    cpu_layernorm_backward(a->dx, g->emb_ln_w, g->emb_ln_b, a->dx, a->emb_sum, m->w.emb_ln_w, d->N,
                           d->H, c->ln_eps, a->ln_work);
    cpu_embedding_backward(g->word_emb, g->pos_emb, g->type_emb, a->dx, b->ids, b->len, d->B, d->H,
                           m->vocab ? wp_vocab_pad(m->vocab) : -1);
}

parley_status bert_train_step_ws(bert_train_ws *ws, const bert_model *m, const bert_batch *b,
                                 const bert_labels *y, float dropout, uint64_t seed, float *grads,
                                 bert_loss *loss, float *intent_logits, float *slot_logits)
{
    parley_status st;
    acts a;
    dims d = { 0 };
    if (!ws || !m || !b || !y || !grads || !loss)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "bert_train_step: NULL workspace, model, batch, "
                                               "labels, gradients or loss");
    if ((st = bert_train_check(&m->cfg, b, y, dropout)) != PARLEY_OK)
        return st;
    d = measure(&m->cfg, b);
    if ((st = encoder_forward(ws, m, b, dropout, seed, 0, &d, &a)) != PARLEY_OK)
        return st;
    const bert_config *c = &m->cfg;
    const bert_weights *w = &m->w;
    bert_weights g;
    bert_weights_point(&g, c, grads);
    const int B = d.B, N = d.N, H = d.H, NI = c->n_intents, NS = c->n_slots;
    const size_t NH = (size_t)N * H, BH = (size_t)B * H;
    const float p = dropout;
    const float *last = a.x + (size_t)d.L * NH; // (N, H)

    // heads: slot classifier on every token; pooler and intent classifier on first tokens
    cpu_dropout(a.hd, last, NULL, NH, p, bert_dropout_key(seed, -1, BERT_DROP_SLOT_HEAD), 0);
    cpu_matmul(a.slot_logits, a.hd, w->slot_w, w->slot_b, N, H, NS);
    size_t first = 0;
    for (int s = 0; s < B; s++) {
        memcpy(a.cls + (size_t)s * H, last + first * H, (size_t)H * sizeof(float));
        first += (size_t)b->len[s];
    }
    cpu_matmul(a.pooled, a.cls, w->pool_w, w->pool_b, B, H, H);
    for (size_t i = 0; i < BH; i++)
        a.pooled[i] = tanhf(a.pooled[i]);
    cpu_dropout(a.pd, a.pooled, NULL, BH, p, bert_dropout_key(seed, -1, BERT_DROP_INTENT_HEAD), 0);
    cpu_matmul(a.intent_logits, a.pd, w->intent_w, w->intent_b, B, H, NI);
    const int sparse = c->sparse_sent || c->sparse_word;
    if (sparse)
        bert_sparse_logits(m, y->sparse, a.intent_logits, a.slot_logits);
    joint_loss(c, y, &d, &a, loss);
    if (sparse)
        bert_sparse_backward(m, y->sparse, a.dintent, a.dslot, &g);
    if (c->intent_sparse_only) /* the encoder's intent logits were not used */
        memset(a.dintent, 0, (size_t)B * NI * sizeof(float));
    if (intent_logits)
        memcpy(intent_logits, a.intent_logits, (size_t)B * NI * sizeof(float));
    if (slot_logits)
        memcpy(slot_logits, a.slot_logits, (size_t)N * NS * sizeof(float));

    // backward through the heads into dx = d last
    cpu_matmul_backward(a.dx, g.slot_w, g.slot_b, a.dslot, a.hd, w->slot_w, N, H, NS, 0);
    cpu_dropout(a.dx, a.dx, NULL, NH, p, bert_dropout_key(seed, -1, BERT_DROP_SLOT_HEAD), 0);
    cpu_matmul_backward(a.dpool, g.intent_w, g.intent_b, a.dintent, a.pd, w->intent_w, B, H, NI, 0);
    cpu_dropout(a.dpool, a.dpool, NULL, BH, p, bert_dropout_key(seed, -1, BERT_DROP_INTENT_HEAD),
                0);
    for (size_t i = 0; i < BH; i++)
        a.dpool[i] *= 1.0f - a.pooled[i] * a.pooled[i];
    cpu_matmul_backward(a.dcls, g.pool_w, g.pool_b, a.dpool, a.cls, w->pool_w, B, H, H, 0);
    first = 0;
    for (int s = 0; s < B; s++) {
        float *dst = a.dx + first * H;
        const float *src = a.dcls + (size_t)s * H;
        for (int k = 0; k < H; k++)
            dst[k] += src[k];
        first += (size_t)b->len[s];
    }
    encoder_backward(m, b, &d, &a, &g, p, seed);
    return PARLEY_OK;
}

/* The masked-LM head's scratch, carved from acts.head: M masked rows. */
typedef struct mlm_acts {
    float *in;       // (M, H) the last hidden state at the masked positions
    float *pre;      // (M, H) transform.dense output, GELU's input
    float *act;      // (M, H) GELU output, the LayerNorm's input
    float *t;        // (M, H) transform output, the decoder's input
    float *dt;       // (M, H) gradients of t, then act, then pre
    float *din;      // (M, H)
    float *logits;   // (M, V)
    float *dlogits;  // (M, V)
    float *row_loss; // (M)
    int *label;      // (M) the original pieces
    float *ln_work;  // LayerNorm backward scratch for M rows
} mlm_acts;

static size_t mlm_acts_size(int M, int H, int V)
{
    return (size_t)M * H * 6 + (size_t)M * V * 2 + (size_t)M * 2 +
           cpu_layernorm_backward_scratch(M, H);
}

static void mlm_acts_carve(mlm_acts *h, float *p, int M, int H, int V)
{
    const size_t MH = (size_t)M * H;
    h->in = p, h->pre = p + MH, h->act = p + 2 * MH, h->t = p + 3 * MH, h->dt = p + 4 * MH;
    h->din = p + 5 * MH;
    h->logits = p + 6 * MH;
    h->dlogits = h->logits + (size_t)M * V;
    h->row_loss = h->dlogits + (size_t)M * V;
    h->label = (int *)(h->row_loss + M); /* an int fits a float's room */
    h->ln_work = h->row_loss + 2 * (size_t)M;
}

parley_status bert_mlm_step_ws(bert_train_ws *ws, const bert_model *m, const float *head_params,
                               const bert_batch *b, const int *target, float dropout, uint64_t seed,
                               float *grads, float *head_grads, bert_mlm_loss *loss)
{
    parley_status st;
    acts a;
    dims d = { 0 };
    if (!ws || !m || !head_params || !b || !target || !grads != !head_grads || !loss)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "bert_mlm_step: NULL workspace, model, head, "
                       "batch, targets or loss, or only one of the gradients");
    const bert_config *c = &m->cfg;
    int M = 0;
    if ((st = bert_mlm_check(c, b, target, dropout, &M)) != PARLEY_OK)
        return st;
    d = measure(c, b);
    *loss = (bert_mlm_loss){ 0 };
    if (!M)
        return PARLEY_OK; /* nothing to predict: no loss and no gradient */
    const int H = d.H, V = c->vocab_size;
    if ((st = encoder_forward(ws, m, b, dropout, seed, mlm_acts_size(M, H, V), &d, &a)) !=
        PARLEY_OK)
        return st;
    bert_mlm_head hw, hg;
    bert_mlm_point(&hw, c, (float *)head_params);
    mlm_acts h;
    mlm_acts_carve(&h, a.head, M, H, V);
    const float *last = a.x + (size_t)d.L * d.N * H; // (N, H)
    const size_t MH = (size_t)M * H;

    // forward: gather the masked rows; transform; decoder tied to the word embeddings
    for (int i = 0, k = 0; i < d.N; i++)
        if (target[i] >= 0) {
            memcpy(h.in + (size_t)k * H, last + (size_t)i * H, (size_t)H * sizeof(float));
            h.label[k++] = target[i];
        }
    cpu_matmul(h.pre, h.in, hw.dense_w, hw.dense_b, M, H, H);
    cpu_gelu(h.act, h.pre, MH);
    cpu_layernorm(h.t, h.act, hw.ln_w, hw.ln_b, M, H, c->ln_eps);
    cpu_matmul(h.logits, h.t, m->w.word_emb, hw.bias, M, H, V);
    int correct = 0;
    for (int k = 0; k < M; k++)
        correct += argmax(h.logits + (size_t)k * V, V) == h.label[k];
    cpu_softmax_xent(h.dlogits, h.row_loss, h.logits, h.label, M, V, 1.0f / (float)M);
    double sum = 0;
    for (int k = 0; k < M; k++)
        sum += h.row_loss[k];
    *loss = (bert_mlm_loss){ .loss = (float)(sum / M), .masked = M, .correct = correct };
    if (!grads)
        return PARLEY_OK; /* scoring only */

    // backward through the head into dx = d last (zero where nothing was masked)
    bert_weights g;
    bert_weights_point(&g, c, grads);
    bert_mlm_point(&hg, c, head_grads);
    cpu_matmul_backward(h.dt, g.word_emb, hg.bias, h.dlogits, h.t, m->w.word_emb, M, H, V, 0);
    cpu_layernorm_backward(h.dt, hg.ln_w, hg.ln_b, h.dt, h.act, hw.ln_w, M, H, c->ln_eps,
                           h.ln_work);
    cpu_gelu_backward(h.dt, h.pre, h.dt, MH);
    cpu_matmul_backward(h.din, hg.dense_w, hg.dense_b, h.dt, h.in, hw.dense_w, M, H, H, 0);
    memset(a.dx, 0, (size_t)d.N * H * sizeof(float));
    for (int i = 0, k = 0; i < d.N; i++)
        if (target[i] >= 0)
            memcpy(a.dx + (size_t)i * H, h.din + (size_t)k++ * H, (size_t)H * sizeof(float));
    encoder_backward(m, b, &d, &a, &g, dropout, seed);
    return PARLEY_OK;
}

void bert_decay_mask(const bert_config *c, unsigned char *decay)
{
    /* The layout's fields in order (nlu/model/model.h), each with its shape and whether it
     * decays: the matrices and embedding tables do, biases and LayerNorm do not. */
    const size_t L = (size_t)c->layers, H = (size_t)c->hidden, I = (size_t)c->intermediate;
    const struct {
        size_t n;
        int decays;
    } fields[] = {
        { (size_t)c->vocab_size * H, 1 },
        { (size_t)c->max_positions * H, 1 },
        { (size_t)c->type_vocab * H, 1 },
        { H, 0 },
        { H, 0 },
        { L * 3 * H * H, 1 },
        { L * 3 * H, 0 },
        { L * H * H, 1 },
        { L * H, 0 },
        { L * H, 0 },
        { L * H, 0 },
        { L * I * H, 1 },
        { L * I, 0 },
        { L * H * I, 1 },
        { L * H, 0 },
        { L * H, 0 },
        { L * H, 0 },
        { H * H, 1 },
        { H, 0 },
        { (size_t)c->n_intents * H, 1 },
        { (size_t)c->n_intents, 0 },
        { (size_t)c->n_slots * H, 1 },
        { (size_t)c->n_slots, 0 },
        { (size_t)c->n_intents * (size_t)c->sparse_sent, 1 },
        { (size_t)c->n_slots * (size_t)c->sparse_word, 1 },
    };
    _Static_assert(sizeof fields / sizeof fields[0] * sizeof(float *) == sizeof(bert_weights),
                   "one entry per field of bert_weights");
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        memset(decay, fields[i].decays, fields[i].n);
        decay += fields[i].n;
    }
}
