/* bert.c — the forward pass of the joint intent/slot BERT on the CPU.
 *
 * It checks the batch, takes one scratch block sized from the token count, and runs the ops
 * of nlu/cpu/ in order: embeddings, L post-LN encoder layers, the tanh pooler on each
 * sequence's first token, and the two heads. The math itself lives in the ops; this file
 * owns the order, the buffers and the thread settings. It does not load models
 * (nlu/model/model_io.c) or turn logits into labels (decode.c).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nlu/bert.h"
#include "nlu/cpu/ops.h"
#include "parley_config.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

#if PARLEY_HAVE_OPENMP
#include <omp.h>
#endif

/* OpenBLAS's thread controls; declared here because not every cblas.h declares them. */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_procs(void);

void bert_set_threads(int threads)
{
    threads = threads > 0 ? threads : 0;
    openblas_set_num_threads(threads ? threads : openblas_get_num_procs());
    cpu_set_threads(threads);
#if PARLEY_HAVE_OPENMP
    omp_set_num_threads(threads ? threads : omp_get_num_procs());
#endif
}

parley_status bert_check_batch(const bert_config *c, const bert_batch *b, int *n_tokens)
{
    if (b->n_seq < 0 || (b->n_seq > 0 && (!b->len || !b->ids)))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "bert_forward: batch of %d sequences with %s",
                       b->n_seq, b->n_seq < 0 ? "a negative count" : "no lengths or ids");
    return bert_check_pieces(c, b, "bert_forward", n_tokens);
}

parley_status bert_check_pieces(const bert_config *c, const bert_batch *b, const char *who,
                                int *n_tokens)
{
    size_t n = 0;
    for (int s = 0; s < b->n_seq; s++) {
        int len = b->len[s];
        if (len < 1 || len > c->max_positions)
            return pl_fail(PARLEY_ERR_INVALID_ARG,
                           "%s: sequence %d has %d tokens; the model takes 1 to %d "
                           "(max_position_embeddings)",
                           who, s, len, c->max_positions);
        for (int t = 0; t < len; t++) {
            int id = b->ids[n + (size_t)t];
            if (id < 0 || id >= c->vocab_size)
                return pl_fail(PARLEY_ERR_INVALID_ARG,
                               "%s: token %d of sequence %d has id %d; the vocabulary "
                               "has ids 0 to %d",
                               who, t, s, id, c->vocab_size - 1);
        }
        n += (size_t)len;
        if (n > INT32_MAX)
            return pl_fail(PARLEY_ERR_INVALID_ARG, "%s: more than %d tokens in a batch", who,
                           INT32_MAX);
    }
    *n_tokens = (int)n;
    return PARLEY_OK;
}

/* Scratch buffers of one call, carved from one allocation that starts at h. The QKV and FFN
 * activations are never live at the same time, so they share `wide`. */
typedef struct scratch {
    float *h;        // (N, H) the residual stream
    float *wide;     // (N, 3H) qkv, later (N, I) ffn activations
    float *att;      // (N, H) attention output
    float *proj;     // (N, H) attn_out and ffn_out results before the residual LayerNorm
    float *cls;      // (B, H) first token of each sequence
    float *pooled;   // (B, H)
    float *att_work; // per-thread attention scratch
} scratch;

static parley_status scratch_alloc(scratch *s, const bert_config *c, int N, int B, int t_max,
                                   int threads)
{
    const size_t H = (size_t)c->hidden, I = (size_t)c->intermediate;
    const size_t wide = 3 * H > I ? 3 * H : I;
    const size_t sizes[] = { N * H,
                             N * wide,
                             N * H,
                             N * H,
                             B * H,
                             B * H,
                             cpu_attention_scratch(t_max, c->hidden / c->heads, threads) };
    float **ptrs[] = { &s->h, &s->wide, &s->att, &s->proj, &s->cls, &s->pooled, &s->att_work };
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        total += sizes[i];
    float *p = pl_malloc(total * sizeof *p);
    if (!p)
        return pl_nomem("bert_forward: %zu MiB of activations"
                        "(%d tokens)",
                        (total * sizeof *p) >> 20, N);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        *ptrs[i] = p;
        p += sizes[i];
    }
    return PARLEY_OK;
}

// h (N, H) <- one post-LN encoder layer l
static void encoder_layer(const bert_model *m, int l, const bert_batch *b, int N, scratch *s,
                          int threads)
{
    const bert_config *c = &m->cfg;
    const bert_weights *w = &m->w;
    const int H = c->hidden, I = c->intermediate, D = H / c->heads;
    const size_t lH = (size_t)l * H;
    cpu_matmul(s->wide, s->h, w->qkv_w + lH * 3 * H, w->qkv_b + lH * 3, N, H, 3 * H);
    cpu_attention(s->att, s->wide, b->len, b->n_seq, c->heads, D, s->att_work, threads);
    cpu_matmul(s->proj, s->att, w->attn_out_w + lH * H, w->attn_out_b + lH, N, H, H);
    cpu_residual_layernorm(s->h, s->h, s->proj, w->ln1_w + lH, w->ln1_b + lH, N, H, c->ln_eps);
    cpu_matmul(s->wide, s->h, w->ffn_in_w + lH * I, w->ffn_in_b + (size_t)l * I, N, H, I);
    cpu_gelu(s->wide, s->wide, (size_t)N * I);
    cpu_matmul(s->proj, s->wide, w->ffn_out_w + lH * I, w->ffn_out_b + lH, N, I, H);
    cpu_residual_layernorm(s->h, s->h, s->proj, w->ln2_w + lH, w->ln2_b + lH, N, H, c->ln_eps);
}

parley_status bert_forward(const bert_model *m, const bert_batch *b, float *intent_logits,
                           float *slot_logits)
{
    parley_status st;
    int N = 0;
    scratch s;
    if (!m || !b || !intent_logits || !slot_logits)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "bert_forward: NULL model, batch or output");
    if ((st = bert_check_batch(&m->cfg, b, &N)) != PARLEY_OK)
        return st;
    if (N == 0)
        return PARLEY_OK;
    const bert_config *c = &m->cfg;
    const bert_weights *w = &m->w;
    const int H = c->hidden, B = b->n_seq;
    int t_max = 0;
    for (int i = 0; i < B; i++)
        t_max = b->len[i] > t_max ? b->len[i] : t_max;
    const int threads = cpu_threads();
    if ((st = scratch_alloc(&s, c, N, B, t_max, threads)) != PARLEY_OK)
        return st;

    cpu_embedding(s.h, b->ids, b->len, B, w->word_emb, w->pos_emb, w->type_emb, w->emb_ln_w,
                  w->emb_ln_b, H, c->ln_eps);
    for (int l = 0; l < c->layers; l++)
        encoder_layer(m, l, b, N, &s, threads);

    // pooled (B, H) = tanh(pool_w · h[first token of each sequence] + pool_b)
    size_t first = 0;
    for (int i = 0; i < B; i++) {
        memcpy(s.cls + (size_t)i * H, s.h + first * H, (size_t)H * sizeof(float));
        first += (size_t)b->len[i];
    }
    cpu_matmul(s.pooled, s.cls, w->pool_w, w->pool_b, B, H, H);
    for (size_t i = 0; i < (size_t)B * H; i++)
        s.pooled[i] = tanhf(s.pooled[i]);
    cpu_matmul(intent_logits, s.pooled, w->intent_w, w->intent_b, B, H, c->n_intents);
    cpu_matmul(slot_logits, s.h, w->slot_w, w->slot_b, N, H, c->n_slots);
    pl_free(s.h);
    return PARLEY_OK;
}
