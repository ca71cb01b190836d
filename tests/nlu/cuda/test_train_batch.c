/* test_train_batch.c — the GPU trainer's per-batch integers (nlu/cuda/train_batch.h), built
 * on the host and so checked here in every build, GPU or not.
 *
 * Random batches (one to seven sequences, lengths 1 to the model's limit, [PAD] ids among
 * them): the copies of ids, positions and labels; each sequence's first token, length and
 * attention-probabilities offset; the pooler's rows; each grouping lists every token it
 * should exactly once (no [PAD] in the id grouping), by increasing key, in token order within
 * a key; nothing is written past cuda_batch_bound. Then the groupings used the way the GPU's
 * segment-sum kernel uses them give the CPU embedding backward's gradients. With sparse
 * features (more sentence features than ids, to size the scratch by them): the rows, values
 * and each entry's row are copied as they were, and the grouping by feature, used the way
 * sparse.cu uses it, gives sf_rows_outer's gradients.
 */
#include <stdlib.h>
#include <string.h>

#include "nlu/bert.h"
#include "nlu/cpu/ops_backward.h"
#include "nlu/cuda/train_batch.h"
#include "tests/check.h"

enum { V = 50, P = 16, NH = 2, H = 8, PAD = 0, GUARD = 64 };

/* Checks grouping g of the tokens whose key (n_keys possible) passes `want`. */
static void check_grouping(const int *buf, const cuda_batch_grouping *g, const int *key, int N,
                           const int *want, const char *what)
{
    const int *order = buf + g->order, *start = buf + g->start, *row = buf + g->row;
    int *seen = calloc((size_t)N, sizeof *seen), n_want = 0;
    for (int t = 0; t < N; t++)
        n_want += want[t];
    CHECK(start[0] == 0 && start[g->n] == n_want, "%s: starts 0 .. %d, want %d", what, start[g->n],
          n_want);
    for (int k = 0; k < g->n; k++) {
        CHECK(k == 0 || row[k] > row[k - 1], "%s: group %d's key %d after %d", what, k, row[k],
              k ? row[k - 1] : -1);
        CHECK(start[k + 1] > start[k], "%s: group %d is empty", what, k);
        for (int i = start[k]; i < start[k + 1]; i++) {
            const int t = order[i];
            CHECK(t >= 0 && t < N && want[t] && key[t] == row[k], "%s: token %d in group of key %d",
                  what, t, row[k]);
            CHECK(i == start[k] || t > order[i - 1], "%s: tokens out of order in group %d", what,
                  k);
            if (t >= 0 && t < N)
                seen[t]++;
        }
    }
    for (int t = 0; t < N; t++)
        CHECK(seen[t] == want[t], "%s: token %d listed %d times", what, t, seen[t]);
    free(seen);
}

/* table rows row[k] += the sum of rows[order[start[k] .. start[k+1])] (the GPU kernel's work). */
static void segment_sum(float *table, const float *rows, const int *buf,
                        const cuda_batch_grouping *g)
{
    const int *order = buf + g->order, *start = buf + g->start, *row = buf + g->row;
    for (int k = 0; k < g->n; k++)
        for (int c = 0; c < H; c++) {
            float acc = 0;
            for (int i = start[k]; i < start[k + 1]; i++)
                acc += rows[(size_t)order[i] * H + c];
            table[(size_t)row[k] * H + c] += acc;
        }
}

/* Random rows (n of them) of up to 5 features of n_feat, few distinct ones. */
static void random_rows(sf_rows *r, int n, int n_feat)
{
    for (int i = 0; i < n; i++) {
        int idx[5], k = 0;
        float val[5];
        for (int f = rand() % 4; f < n_feat && k < rand() % 6; f += 1 + rand() % 9) {
            idx[k] = f;
            val[k++] = (float)rand() / (float)RAND_MAX - 0.5f;
        }
        CHECK(sf_rows_push(r, idx, val, k) == PARLEY_OK, "rows");
    }
}

/* The sparse part x of a layout: the copies, and the gradient of an (n_out, n_feat) map by
 * the grouping (sparse.cu's work) against sf_rows_outer. */
static void check_sparse(const int *buf, const cuda_batch_sparse *l, const sf_rows *x, int n_feat,
                         unsigned seed, const char *what)
{
    enum { OUT = 3 };
    const int nnz = x->start[x->n_rows];
    CHECK(l->rows == x->n_rows && l->nnz == nnz, "seed %u: %s: %d rows, %d entries", seed, what,
          l->rows, l->nnz);
    CHECK(!memcmp(buf + l->start, x->start, ((size_t)x->n_rows + 1) * sizeof *x->start) &&
                  (!nnz || (!memcmp(buf + l->index, x->index, (size_t)nnz * sizeof *x->index) &&
                            !memcmp(buf + l->value, x->value, (size_t)nnz * sizeof *x->value))),
          "seed %u: %s: copies", seed, what);
    int *row = malloc(((size_t)nnz + 1) * sizeof *row),
        *all = malloc(((size_t)nnz + 1) * sizeof *all);
    for (int r = 0; r < x->n_rows; r++)
        for (int k = x->start[r]; k < x->start[r + 1]; k++)
            row[k] = r, all[k] = 1;
    CHECK(!memcmp(buf + l->entry_row, row, (size_t)nnz * sizeof *row), "seed %u: %s: entry rows",
          seed, what);
    check_grouping(buf, &l->by_feature, x->index, nnz, all, what);
    float *d = malloc(((size_t)x->n_rows * OUT + 1) * sizeof *d);
    float *want = calloc((size_t)OUT * n_feat, sizeof *want),
          *got = calloc((size_t)OUT * n_feat, sizeof *got);
    for (int i = 0; i < x->n_rows * OUT; i++)
        d[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    for (int r = 0; r < x->n_rows; r++)
        sf_rows_outer(x, r, d + (size_t)r * OUT, OUT, n_feat, want);
    const cuda_batch_grouping *g = &l->by_feature;
    const int *order = buf + g->order, *start = buf + g->start, *feat = buf + g->row;
    const float *value = (const float *)(buf + l->value);
    for (int k = 0; k < g->n; k++)
        for (int o = 0; o < OUT; o++)
            for (int i = start[k]; i < start[k + 1]; i++)
                got[(size_t)o * n_feat + feat[k]] +=
                        d[(size_t)buf[l->entry_row + order[i]] * OUT + o] * value[order[i]];
    size_t at = 0;
    CHECK(check_close(got, want, (size_t)OUT * n_feat, 1e-5, 1e-6, &at) <= 1,
          "seed %u: %s: gradient %zu", seed, what, at);
    free(row), free(all), free(d), free(want), free(got);
}

static void one_batch(const bert_config *c, unsigned seed)
{
    srand(seed);
    const int B = 1 + rand() % 7;
    int len[7], N = 0;
    for (int s = 0; s < B; s++)
        N += len[s] = 1 + rand() % P;
    int *ids = malloc((size_t)N * sizeof *ids), *slot = malloc((size_t)N * sizeof *slot), intent[7];
    for (int t = 0; t < N; t++) {
        ids[t] = rand() % 4 == 0 ? PAD : rand() % 12; /* few ids: groups of several tokens */
        slot[t] = rand() % 5 - 1;
    }
    for (int s = 0; s < B; s++)
        intent[s] = rand() % 3;
    bert_batch b = { B, len, ids };
    bert_sparse_batch x = { 0 };
    if (c->sparse_sent) {
        random_rows(&x.sent, B, c->sparse_sent);
        random_rows(&x.tok, N, c->sparse_word);
    }
    bert_labels y = { intent, slot, 1.0f, c->sparse_sent ? &x : NULL, NULL };
    const size_t bound = cuda_batch_bound(N, B, y.sparse);
    int *buf = malloc((bound + GUARD) * sizeof *buf),
        *scratch = malloc(cuda_batch_scratch(c, N, y.sparse) * sizeof *scratch);
    for (size_t i = 0; i < bound + GUARD; i++)
        buf[i] = -7777;
    cuda_batch_layout l;
    cuda_batch_build(c, PAD, &b, &y, N, buf, scratch, &l);
    CHECK(l.used <= bound, "seed %u: %zu ints used, bound %zu", seed, l.used, bound);
    for (size_t i = bound; i < bound + GUARD; i++)
        CHECK(buf[i] == -7777, "seed %u: written past the bound at %zu", seed, i);
    CHECK(!memcmp(buf + l.ids, ids, (size_t)N * sizeof *ids) &&
                  !memcmp(buf + l.slot, slot, (size_t)N * sizeof *slot) &&
                  !memcmp(buf + l.intent, intent, (size_t)B * sizeof *intent),
          "seed %u: copies", seed);
    int first = 0, probs = 0, *is_tok = malloc((size_t)N * sizeof *is_tok),
        *all = malloc((size_t)N * sizeof *all);
    for (int s = 0; s < B; s++) {
        const int *seq = buf + l.seq;
        CHECK(seq[s] == first && seq[B + s] == len[s] && seq[2 * B + s] == probs &&
                      buf[l.cls + s] == first,
              "seed %u: sequence %d: first %d len %d probs %d", seed, s, seq[s], seq[B + s],
              seq[2 * B + s]);
        for (int i = 0; i < len[s]; i++)
            CHECK(buf[l.pos + first + i] == i, "seed %u: position of token %d", seed, first + i);
        first += len[s];
        probs += NH * len[s] * len[s];
    }
    for (int t = 0; t < N; t++) {
        is_tok[t] = ids[t] != PAD;
        all[t] = 1;
    }
    check_grouping(buf, &l.by_id, ids, N, is_tok, "by id");
    check_grouping(buf, &l.by_pos, buf + l.pos, N, all, "by position");
    int *zero = calloc((size_t)N, sizeof *zero);
    check_grouping(buf, &l.all, zero, N, all, "all");
    CHECK(l.sparse == (c->sparse_sent > 0), "seed %u: sparse rows %d", seed, l.sparse);
    if (l.sparse) {
        check_sparse(buf, &l.sent, &x.sent, c->sparse_sent, seed, "sentence features");
        check_sparse(buf, &l.word, &x.tok, c->sparse_word, seed, "word features");
    }
    bert_sparse_batch_free(&x);

    /* The groupings drive the embedding backward as the CPU computes it. */
    float *dsum = malloc((size_t)N * H * sizeof *dsum);
    float *gw[2], *gp[2], *gt[2];
    for (int k = 0; k < 2; k++) {
        gw[k] = calloc((size_t)V * H, sizeof(float));
        gp[k] = calloc((size_t)P * H, sizeof(float));
        gt[k] = calloc(2 * H, sizeof(float));
    }
    for (size_t i = 0; i < (size_t)N * H; i++)
        dsum[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    cpu_embedding_backward(gw[0], gp[0], gt[0], dsum, ids, len, B, H, PAD);
    segment_sum(gw[1], dsum, buf, &l.by_id);
    segment_sum(gp[1], dsum, buf, &l.by_pos);
    segment_sum(gt[1], dsum, buf, &l.all);
    size_t at = 0;
    CHECK(check_close(gw[1], gw[0], (size_t)V * H, 1e-5, 1e-6, &at) <= 1, "seed %u: word grad %zu",
          seed, at);
    CHECK(check_close(gp[1], gp[0], (size_t)P * H, 1e-5, 1e-6, &at) <= 1,
          "seed %u: position grad %zu", seed, at);
    CHECK(check_close(gt[1], gt[0], 2 * H, 1e-5, 1e-6, &at) <= 1, "seed %u: type grad %zu", seed,
          at);
    for (int k = 0; k < 2; k++)
        free(gw[k]), free(gp[k]), free(gt[k]);
    free(dsum), free(zero), free(is_tok), free(all), free(buf), free(scratch), free(ids),
            free(slot);
}

int main(void)
{
    bert_config c = { .vocab_size = V,
                      .hidden = H,
                      .layers = 1,
                      .heads = NH,
                      .intermediate = 16,
                      .max_positions = P,
                      .type_vocab = 2,
                      .ln_eps = 1e-12f };
    for (unsigned seed = 1; seed <= 300; seed++)
        one_batch(&c, seed);
    c.sparse_sent = 3 * V, c.sparse_word = 9;
    for (unsigned seed = 301; seed <= 600; seed++)
        one_batch(&c, seed);
    return check_done();
}
