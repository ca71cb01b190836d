/* bert.h — the BERT encoder and joint heads: the forward pass on the CPU (bert.c), and the
 * batches every caller of a forward pass builds from word pieces (batch.c).
 *
 * Sequences are packed without padding: a batch of B sequences of lengths len[b] is N =
 * sum(len) tokens in a row; attention stays within each sequence. This is equivalent to a
 * padded batch with an attention mask, and cheaper when lengths differ.
 * Position ids restart at 0 for each sequence; token type ids are all 0.
 * Neither part tokenizes text (nlu/text/tokenizer.h) or turns logits into labels (decode.h).
 */
#ifndef NLU_BERT_H
#define NLU_BERT_H

#include "nlu/model/model.h"
#include "nlu/sparse/sparse.h"
#include "nlu/text/tokenizer.h"

typedef struct bert_batch {
    int n_seq;      /* B */
    const int *len; /* (B) tokens per sequence, [CLS] and [SEP] included, 1..P */
    const int *ids; /* (N) token ids, sequences one after another */
} bert_batch;

/* Runs the model. intent_logits: (B, NI); slot_logits: (N, NS). Thread-safe for a shared
 * model: all scratch memory belongs to the call (one allocation, sized from N). Fails only
 * on allocation failure or a batch that breaks the model's limits (id out of range, length
 * 0 or above P), with a message naming the sequence and token. A batch of 0 sequences does
 * nothing. */
parley_status bert_forward(const bert_model *m, const bert_batch *b, float *intent_logits,
                           float *slot_logits);

/* Checks a batch against a model's limits (c->vocab_size, c->max_positions: lengths 1..P,
 * ids in range) and counts its tokens into *n_tokens (N). The error names the sequence and
 * token. bert_forward and the GPU path both start with it. */
parley_status bert_check_batch(const bert_config *c, const bert_batch *b, int *n_tokens);
/* The part of that check every caller shares: the lengths and ids of b's sequences (b->len and
 * b->ids present), with the token count. The error detail starts with `who` (the caller's
 * name: "bert_forward", "bert_train_step"). */
parley_status bert_check_pieces(const bert_config *c, const bert_batch *b, const char *who,
                                int *n_tokens);

/* Sets the thread count used by the math (OpenBLAS and OpenMP); 0 = all cores. Process-wide:
 * it applies to calls from every thread. The GEMMs use all of them; the other ops only when
 * big enough to gain from it (see nlu/cpu/threads.c). */
void bert_set_threads(int threads);

/* ---- batch.c: word pieces in, logits out ----------------------------------------------
 * The model reads a text as [CLS], its pieces, [SEP]; a text with more pieces than fit in
 * P positions is cut to its first P - 2. */

/* Tokens of the sequence for tk: bert_seq_len(c, tk) = min(tk->n_pieces, P - 2) + 2. */
int bert_seq_len(const bert_config *c, const wp_tokens *tk);
/* Writes that sequence's bert_seq_len(&m->cfg, tk) ids to ids. */
void bert_seq_write(const bert_model *m, const wp_tokens *tk, int *ids);

/* A batch of such sequences and room for its logits; every array is owned (bert_packed_free). */
typedef struct bert_packed {
    bert_batch batch;     /* the B sequences, N tokens: points at len and ids */
    int *len;             /* (B) */
    int *ids;             /* (N) */
    float *intent_logits; /* (B, NI) for a forward pass to fill */
    float *slot_logits;   /* (N, NS) */
} bert_packed;

/* Packs the sequences of tk[0..n) into *out (zeroed first, so bert_packed_free(out) is safe
 * after a failure, which is only an allocation's). */
parley_status bert_pack(const bert_model *m, const wp_tokens *tk, int n, bert_packed *out);
/* Frees the arrays and zeroes *p. */
void bert_packed_free(bert_packed *p);

/* A forward pass with bert_forward's contract, run elsewhere (nlu.c: on the model's GPU). */
typedef parley_status (*bert_forward_fn)(void *ctx, const bert_batch *b, float *intent_logits,
                                         float *slot_logits);
/* Receives sequence i's logits: intent_logits (NI), and slot_logits (n_pieces, NS) for
 * tk->pieces[0..n_pieces), [CLS] and [SEP] left out. Borrowed for the call. */
typedef parley_status (*bert_logits_fn)(void *ctx, int i, const wp_tokens *tk, int n_pieces,
                                        const float *intent_logits, const float *slot_logits);

/* The one way from word pieces to logits: packs tk[0..n) (bert_pack), runs the forward pass
 * (fwd(fwd_ctx, ...), or bert_forward on m when fwd is NULL), adds the sparse features'
 * logits of texts[i] (the text tk[i] was tokenized from) when the model has them, then calls
 * each(each_ctx, i, ...) for i = 0..n-1 in order. texts may be NULL for a model without
 * sparse features. Stops at the first failure and returns it. */
parley_status bert_run_pieces(const bert_model *m, const char *const *texts, const wp_tokens *tk,
                              int n, bert_forward_fn fwd, void *fwd_ctx, bert_logits_fn each,
                              void *each_ctx);

/* ---- bert_sparse.c: the sparse features of a packed batch (nlu/sparse/sparse.h) ---------------
 * The sentence features of sequence b add U · x to its intent logits; the word features of
 * word w add S · x to the slot logits of w's first piece, the piece that carries its tag;
 * [CLS], [SEP], later pieces and the words cut off by max_positions get none. The CPU adds
 * them after any forward pass (the GPU's too), and the trainer inside its step, from the
 * same rows. */
typedef struct bert_sparse_batch {
    sf_rows sent; /* (B rows) over FS */
    sf_rows tok;  /* (N rows) over FW: one per token of the packed batch */
} bert_sparse_batch;

/* Appends the rows of one sequence: text[0..strlen) tokenized into tk gives 1 sentence row
 * and bert_seq_len(&m->cfg, tk) token rows. m must have sparse features. */
parley_status bert_sparse_rows(const bert_model *m, const char *text, const wp_tokens *tk,
                               bert_sparse_batch *x);
/* PARLEY_OK when x fits a batch of B sequences and N tokens of model config c. */
parley_status bert_sparse_check(const bert_config *c, const bert_sparse_batch *x, int B, int N);
/* intent_logits (B, NI) += U · sent (= U · sent for a config with intent_sparse_only),
 * slot_logits (N, NS) += S · tok. */
void bert_sparse_logits(const bert_model *m, const bert_sparse_batch *x, float *intent_logits,
                        float *slot_logits);
/* The gradients of U and S into g (laid out as the model's weights), from those of the
 * logits: d_intent (B, NI), d_slot (N, NS). */
void bert_sparse_backward(const bert_model *m, const bert_sparse_batch *x, const float *d_intent,
                          const float *d_slot, bert_weights *g);
void bert_sparse_batch_free(bert_sparse_batch *x);

#endif
