/* batch.c — word pieces in, logits out: the sequences the model reads ([CLS], a text's
 * pieces, [SEP]), packed into one bert_batch, run, and their logits handed back one
 * sequence at a time.
 *
 * Everything that runs the model on text goes through here — the parley_nlu API (nlu.c),
 * the trainer's scoring (train/train.c), pretraining's encoding (train/pretrain.c), the
 * `parley bench` tool — so where a sequence starts, how long text is cut and that slot
 * logits are read after [CLS] are written once; the sparse features' logits are added here
 * (bert_sparse.c), whatever device ran the encoder. It neither tokenizes (callers bring
 * wp_tokens) nor decides anything from the logits (the callers' callbacks do).
 */
#include <string.h>

#include "nlu/bert.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

int bert_seq_len(const bert_config *c, const wp_tokens *tk)
{
    int room = c->max_positions - 2;
    return (tk->n_pieces < room ? tk->n_pieces : room) + 2;
}

void bert_seq_write(const bert_model *m, const wp_tokens *tk, int *ids)
{
    int len = bert_seq_len(&m->cfg, tk);
    ids[0] = wp_vocab_cls(m->vocab);
    for (int p = 0; p < len - 2; p++)
        ids[1 + p] = tk->pieces[p].id;
    ids[len - 1] = wp_vocab_sep(m->vocab);
}

parley_status bert_pack(const bert_model *m, const wp_tokens *tk, int n, bert_packed *out)
{
    const bert_config *c = &m->cfg;
    size_t n_tok = 0;
    memset(out, 0, sizeof *out);
    if (!(out->len = pl_malloc((size_t)n * sizeof *out->len)))
        goto nomem;
    for (int i = 0; i < n; i++) {
        out->len[i] = bert_seq_len(c, &tk[i]);
        n_tok += (size_t)out->len[i];
    }
    out->ids = pl_malloc(n_tok * sizeof *out->ids); // (N)
    out->intent_logits =
            pl_malloc((size_t)n * c->n_intents * sizeof *out->intent_logits);    // (B, NI)
    out->slot_logits = pl_malloc(n_tok * c->n_slots * sizeof *out->slot_logits); // (N, NS)
    if (!out->ids || !out->intent_logits || !out->slot_logits)
        goto nomem;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        bert_seq_write(m, &tk[i], out->ids + at);
        at += (size_t)out->len[i];
    }
    out->batch = (bert_batch){ n, out->len, out->ids };
    return PARLEY_OK;
nomem:
    bert_packed_free(out);
    return pl_nomem("a batch of %d sequences", n);
}

void bert_packed_free(bert_packed *p)
{
    pl_free(p->len);
    pl_free(p->ids);
    pl_free(p->intent_logits);
    pl_free(p->slot_logits);
    memset(p, 0, sizeof *p);
}

/* Adds the sparse features' logits of texts[0..n) to p's (a model that has them). */
static parley_status add_sparse(const bert_model *m, const char *const *texts, const wp_tokens *tk,
                                int n, bert_packed *p)
{
    parley_status st = PARLEY_OK;
    bert_sparse_batch x = { 0 };
    if (!texts)
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "bert_run_pieces: the model has sparse features and no texts were given");
    for (int i = 0; i < n && st == PARLEY_OK; i++)
        st = bert_sparse_rows(m, texts[i], &tk[i], &x);
    if (st == PARLEY_OK)
        bert_sparse_logits(m, &x, p->intent_logits, p->slot_logits);
    bert_sparse_batch_free(&x);
    return st;
}

parley_status bert_run_pieces(const bert_model *m, const char *const *texts, const wp_tokens *tk,
                              int n, bert_forward_fn fwd, void *fwd_ctx, bert_logits_fn each,
                              void *each_ctx)
{
    const size_t NI = (size_t)m->cfg.n_intents, NS = (size_t)m->cfg.n_slots;
    bert_packed p;
    parley_status st = bert_pack(m, tk, n, &p);
    if (st != PARLEY_OK)
        return st;
    st = fwd ? fwd(fwd_ctx, &p.batch, p.intent_logits, p.slot_logits)
             : bert_forward(m, &p.batch, p.intent_logits, p.slot_logits);
    if (st == PARLEY_OK && m->sparse)
        st = add_sparse(m, texts, tk, n, &p);
    size_t first = 0; /* sequence i's [CLS] */
    for (int i = 0; i < n && st == PARLEY_OK; i++) {
        st = each(each_ctx, i, &tk[i], p.len[i] - 2, p.intent_logits + (size_t)i * NI,
                  p.slot_logits + (first + 1) * NS);
        first += (size_t)p.len[i];
    }
    bert_packed_free(&p);
    return st;
}
