/* bert.h — the BERT encoder and joint heads, forward pass on the CPU.
 *
 * Sequences are packed without padding: a batch of B sequences of lengths len[b] is N =
 * sum(len) tokens in a row; attention stays within each sequence. This is equivalent to a
 * padded batch with an attention mask, and cheaper when lengths differ.
 * Position ids restart at 0 for each sequence; token type ids are all 0.
 */
#ifndef NLU_BERT_H
#define NLU_BERT_H

#include "nlu/model.h"

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

/* Sets the thread count used by the math (OpenBLAS and OpenMP); 0 = all cores. Process-wide:
 * it applies to calls from every thread. The GEMMs use all of them; the other ops only when
 * big enough to gain from it (see nlu/cpu/threads.c). */
void bert_set_threads(int threads);

#endif
