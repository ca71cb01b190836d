/* train_batch.c — the GPU trainer's per-batch integers (train_batch.h), built on the host:
 * copies of the batch and its labels, per-sequence offsets, the token groupings of the
 * embedding backward by a stable counting sort, and the sparse rows with their entries
 * grouped by feature the same way.
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

static size_t nnz(const sf_rows *r)
{
    return r->n_rows ? (size_t)(r->start[r->n_rows] - r->start[0]) : 0;
}

/* The most keys a grouping sorts by: ids, positions or sparse features. */
static int n_keys(const bert_config *c)
{
    int keys = c->vocab_size > c->max_positions ? c->vocab_size : c->max_positions;
    keys = c->sparse_sent > keys ? c->sparse_sent : keys;
    return c->sparse_word > keys ? c->sparse_word : keys;
}

size_t cuda_batch_bound(int N, int B, const bert_sparse_batch *x)
{
    /* ids, positions, slots (3N); intents, sequence triples, first rows (5B); by id and by
     * position at most N + (N + 1) + N each; all N + 2 + 1; per kind of sparse rows (rows + 1)
     * + 3 nnz, and its grouping at most nnz + (nnz + 1) + nnz */
    const size_t sparse = x ? 6 * (nnz(&x->sent) + nnz(&x->tok)) + (size_t)B + (size_t)N + 4 : 0;
    return 10 * (size_t)N + 5 * (size_t)B + 8 + sparse;
}

size_t cuda_batch_scratch(const bert_config *c, int N, const bert_sparse_batch *x)
{
    const int keys = n_keys(c);
    const size_t entries = x ? nnz(&x->sent) + nnz(&x->tok) : 0;
    return 2 * ((size_t)keys + 1) + (size_t)N + entries;
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

/* Writes the rows r (of features [0, n_feat)) into buf at *at, and advances *at. */
static cuda_batch_sparse sparse_into(int *buf, size_t *at, const sf_rows *r, int n_feat, int *rows,
                                     int *count, int *entries)
{
    const int first = r->start[0];
    cuda_batch_sparse x = { .start = *at, .rows = r->n_rows, .nnz = (int)nnz(r) };
    x.index = x.start + (size_t)x.rows + 1;
    x.value = x.index + (size_t)x.nnz;
    x.entry_row = x.value + (size_t)x.nnz;
    for (int i = 0; i <= x.rows; i++)
        buf[x.start + (size_t)i] = r->start[i] - first;
    if (x.nnz) { /* rows without entries may have no arrays at all */
        memcpy(buf + x.index, r->index + first, (size_t)x.nnz * sizeof *buf);
        memcpy(buf + x.value, r->value + first, (size_t)x.nnz * sizeof *r->value);
    }
    for (int i = 0; i < x.rows; i++)
        for (int k = r->start[i]; k < r->start[i + 1]; k++)
            buf[x.entry_row + (size_t)(k - first)] = i;
    for (int e = 0; e < x.nnz; e++)
        entries[e] = e;
    *at = x.entry_row + (size_t)x.nnz;
    x.by_feature = group_into(buf, at, buf + x.index, entries, x.nnz, n_feat, rows, count);
    return x;
}

void cuda_batch_build(const bert_config *c, int pad_id, const bert_batch *b, const bert_labels *y,
                      int N, int *buf, int *scratch, cuda_batch_layout *out)
{
    const int B = b->n_seq, V = c->vocab_size, P = c->max_positions, keys = n_keys(c);
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
    at = l.all.row + 1;
    l.sparse = (c->sparse_sent || c->sparse_word) && y->sparse;
    if (l.sparse) {
        l.sent = sparse_into(buf, &at, &y->sparse->sent, c->sparse_sent, rows, count, tok);
        l.word = sparse_into(buf, &at, &y->sparse->tok, c->sparse_word, rows, count, tok);
    }
    l.used = at;
    *out = l;
}
