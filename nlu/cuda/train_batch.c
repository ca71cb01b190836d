/* train_batch.c — the GPU trainer's per-batch integers (train_batch.h), built on the host:
 * copies of the batch and its labels, per-sequence offsets, and the token groupings of the
 * embedding backward by a stable counting sort.
 */
#include <string.h>

#include "nlu/cuda/train_batch.h"

/* Sorts tokens[0..n) into order by key[token], keeping the tokens' order within a key (a
 * counting sort over keys in [0, n_keys)); start (groups + 1) and row (groups) receive
 * where each non-empty key's tokens begin and the key. Returns the number of groups.
 * count is n_keys + 1 ints of scratch. */
static int group_by(const int *key, const int *tokens, int n, int n_keys, int *order, int *start,
                    int *row, int *count)
{
    memset(count, 0, ((size_t)n_keys + 1) * sizeof *count);
    for (int i = 0; i < n; i++)
        count[key[tokens[i]] + 1]++;
    for (int k = 0; k < n_keys; k++)
        count[k + 1] += count[k];
    int groups = 0;
    for (int k = 0; k < n_keys; k++)
        if (count[k + 1] > count[k]) {
            start[groups] = count[k];
            row[groups++] = k;
        }
    start[groups] = n;
    for (int i = 0; i < n; i++)
        order[count[key[tokens[i]]]++] = tokens[i];
    return groups;
}

size_t cuda_batch_bound(int N, int B)
{
    /* ids, positions, slots (3N); intents, sequence triples, first rows (5B); by id and by
     * position at most N + (N + 1) + N each; all N + 2 + 1 */
    return 10 * (size_t)N + 5 * (size_t)B + 8;
}

size_t cuda_batch_scratch(const bert_config *c, int N)
{
    const size_t keys =
            (size_t)(c->vocab_size > c->max_positions ? c->vocab_size : c->max_positions);
    return 2 * (keys + 1) + (size_t)N;
}

/* Groups tokens (n of them) by key into buf at *at, moving the rows from scratch into
 * place; advances *at. */
static cuda_batch_grouping group_into(int *buf, size_t *at, const int *key, const int *tokens,
                                      int n, int n_keys, int *rows, int *count)
{
    cuda_batch_grouping g = { .order = *at, .start = *at + (size_t)n };
    g.n = group_by(key, tokens, n, n_keys, buf + g.order, buf + g.start, rows, count);
    g.row = g.start + (size_t)g.n + 1;
    memcpy(buf + g.row, rows, (size_t)g.n * sizeof *rows);
    *at = g.row + (size_t)g.n;
    return g;
}

void cuda_batch_build(const bert_config *c, int pad_id, const bert_batch *b, const bert_labels *y,
                      int N, int *buf, int *scratch, cuda_batch_layout *out)
{
    const int B = b->n_seq, V = c->vocab_size, P = c->max_positions, keys = V > P ? V : P;
    int *count = scratch, *rows = count + keys + 1, *tok = rows + keys + 1;
    cuda_batch_layout l = {
        .ids = 0, .pos = (size_t)N, .slot = 2 * (size_t)N, .intent = 3 * (size_t)N
    };
    l.seq = l.intent + (size_t)B;
    l.cls = l.seq + 3 * (size_t)B;
    int *ids = buf + l.ids, *pos = buf + l.pos, *seq = buf + l.seq, *cls = buf + l.cls;
    memcpy(ids, b->ids, (size_t)N * sizeof *ids);
    memcpy(buf + l.slot, y->slot, (size_t)N * sizeof *buf);
    memcpy(buf + l.intent, y->intent, (size_t)B * sizeof *buf);
    size_t probs = 0;
    for (int s = 0, first = 0; s < B; s++) {
        const int T = b->len[s];
        for (int i = 0; i < T; i++)
            pos[first + i] = i;
        seq[s] = first;
        seq[B + s] = T;
        seq[2 * B + s] = (int)probs;
        cls[s] = first;
        probs += (size_t)c->heads * (size_t)T * (size_t)T;
        first += T;
    }
    size_t at = l.cls + (size_t)B;
    int n_tok = 0; /* [PAD] adds nothing to its word row */
    for (int i = 0; i < N; i++)
        if (ids[i] != pad_id)
            tok[n_tok++] = i;
    l.by_id = group_into(buf, &at, ids, tok, n_tok, V, rows, count);
    for (int i = 0; i < N; i++)
        tok[i] = i;
    l.by_pos = group_into(buf, &at, pos, tok, N, P, rows, count);
    l.all = (cuda_batch_grouping){
        .order = at, .start = at + (size_t)N, .row = at + (size_t)N + 2, .n = 1
    };
    memcpy(buf + l.all.order, tok, (size_t)N * sizeof *tok);
    buf[l.all.start] = 0;
    buf[l.all.start + 1] = N;
    buf[l.all.row] = 0;
    l.used = l.all.row + 1;
    *out = l;
}
