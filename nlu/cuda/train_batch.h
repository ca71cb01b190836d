/* train_batch.h — the integers the GPU trainer copies to the device for one batch, laid
 * out on the host in plain C (so the host tests check them in every build).
 *
 * One int buffer holds, one after another: the ids, positions and slot labels of the N
 * packed tokens; the B intent labels; per sequence its first token, length and the offset
 * of its attention probabilities (NH blocks of T x T, as cpu_attention_train lays them out);
 * each sequence's first token again (the pooler's rows); and three groupings of tokens
 * for the embedding backward, each as (order, start, row): the non-[PAD] tokens grouped by
 * id, all tokens grouped by position, and all tokens as one group (the type row 0). A
 * grouping lists tokens by key, in increasing token order within a key; group k holds
 * order[start[k] .. start[k+1]) and adds into table row row[k]. So every table row is
 * summed by one thread block, in token order, without atomics.
 *
 * A model with sparse features adds, for its sentence rows and then its word rows, the rows
 * of the batch (bert_sparse_batch) as start (rows + 1), index and value (one per entry; the
 * value's float bits in an int's room), each entry's row, and the entries grouped by
 * feature (row[k] = the feature), entries in row order within a feature: each sparse
 * weight's gradient is summed by one thread, in row order, as on the CPU.
 */
#ifndef NLU_CUDA_TRAIN_BATCH_H
#define NLU_CUDA_TRAIN_BATCH_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>

#include "nlu/bert.h"
#include "nlu/bert_step.h"

/* Where each part starts in the buffer (offsets in ints), and the group counts. */
typedef struct cuda_batch_grouping {
    size_t order, start, row;
    int n; /* groups */
} cuda_batch_grouping;

/* One kind of sparse rows: where its parts start, its rows and entries. */
typedef struct cuda_batch_sparse {
    size_t start, index, value, entry_row;
    cuda_batch_grouping by_feature;
    int rows, nnz;
} cuda_batch_sparse;

typedef struct cuda_batch_layout {
    size_t ids, pos, slot, intent, seq, cls;
    cuda_batch_grouping by_id, by_pos, all;
    int sparse; /* the sentence and word rows below were written */
    cuda_batch_sparse sent, word;
    size_t used; /* ints written */
} cuda_batch_layout;

/* Ints the buffer needs for N tokens of B sequences with sparse rows x (NULL: none; an upper
 * bound), and the ints of host scratch cuda_batch_build needs for a model of config c. */
size_t cuda_batch_bound(int N, int B, const bert_sparse_batch *x);
size_t cuda_batch_scratch(const bert_config *c, int N, const bert_sparse_batch *x);

/* Fills buf (cuda_batch_bound ints) for a batch bert_train_check accepted: N tokens, NH heads,
 * [PAD] id pad_id (-1: none), the sparse rows of y when c has sparse features, and writes
 * where everything went to *out. scratch holds cuda_batch_scratch ints. */
void cuda_batch_build(const bert_config *c, int pad_id, const bert_batch *b, const bert_labels *y,
                      int N, int *buf, int *scratch, cuda_batch_layout *out);

#ifdef __cplusplus
}
#endif

#endif
