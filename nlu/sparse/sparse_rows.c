/* sparse_rows.c — rows of sparse feature vectors (CSR, sparse.h's sf_rows) and the two
 * linear maps the model applies to them: W · x into logits, and its gradient d ⊗ x into W's.
 *
 * It knows nothing of text or of what the features mean (sparse.c).
 */
#include <math.h>
#include <string.h>

#include "nlu/sparse/sparse_impl.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

/* ---- rows ------------------------------------------------------------------------------ */

void sf_rows_free(sf_rows *r)
{
    pl_free(r->start);
    pl_free(r->index);
    pl_free(r->value);
    memset(r, 0, sizeof *r);
}

/* Room for `rows` more rows and `nnz` more entries. */
static parley_status rows_reserve(sf_rows *r, int rows, int nnz)
{
    int used = r->start ? r->start[r->n_rows] : 0;
    if (!r->start || r->n_rows + rows + 1 > r->cap_rows) {
        int cap = r->cap_rows ? r->cap_rows : 64;
        while (cap < r->n_rows + rows + 1)
            cap *= 2;
        int *s = pl_realloc(r->start, (size_t)cap * sizeof *s);
        if (!s)
            return pl_nomem("sparse features: %d rows", cap);
        if (!r->start)
            s[0] = 0;
        r->start = s;
        r->cap_rows = cap;
    }
    if (used + nnz > r->cap_nnz) {
        int cap = r->cap_nnz ? r->cap_nnz : 1024;
        while (cap < used + nnz)
            cap *= 2;
        int *ix = pl_realloc(r->index, (size_t)cap * sizeof *ix);
        if (ix)
            r->index = ix;
        float *v = ix ? pl_realloc(r->value, (size_t)cap * sizeof *v) : NULL;
        if (!v)
            return pl_nomem("sparse features: %d entries", cap);
        r->value = v;
        r->cap_nnz = cap;
    }
    return PARLEY_OK;
}

parley_status sf_rows_push(sf_rows *r, const int *index, const float *value, int n)
{
    parley_status st = rows_reserve(r, 1, n);
    if (st != PARLEY_OK)
        return st;
    int at = r->start[r->n_rows];
    if (n > 0) { /* an empty row passes NULL, which memcpy may not take even for 0 bytes */
        memcpy(r->index + at, index, (size_t)n * sizeof *index);
        memcpy(r->value + at, value, (size_t)n * sizeof *value);
    }
    r->start[++r->n_rows] = at + n;
    return PARLEY_OK;
}

parley_status sf_rows_add_empty(sf_rows *r)
{
    return sf_rows_push(r, NULL, NULL, 0);
}

parley_status sf_rows_append(sf_rows *dst, const sf_rows *src, int first, int n)
{
    for (int i = first; i < first + n; i++) {
        int a = src->start[i], b = src->start[i + 1];
        parley_status st = sf_rows_push(dst, src->index + a, src->value + a, b - a);
        if (st != PARLEY_OK)
            return st;
    }
    return PARLEY_OK;
}

void sf_rows_gemv(const sf_rows *x, int row, const float *W, int n_out, int n_feat, float *out)
{
    for (int k = x->start[row]; k < x->start[row + 1]; k++) {
        const float v = x->value[k];
        const float *col = W + x->index[k];
        for (int o = 0; o < n_out; o++)
            out[o] += col[(size_t)o * n_feat] * v;
    }
}

void sf_rows_outer(const sf_rows *x, int row, const float *d, int n_out, int n_feat, float *dW)
{
    for (int k = x->start[row]; k < x->start[row + 1]; k++) {
        const float v = x->value[k];
        float *col = dW + x->index[k];
        for (int o = 0; o < n_out; o++)
            col[(size_t)o * n_feat] += d[o] * v;
    }
}

parley_status sf_rows_check(const sf_rows *x, int n_rows, int n_feat, const char *what)
{
    if (!x || x->n_rows != n_rows || (n_rows > 0 && !x->start))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "%s: %d rows of sparse features for %d", what,
                       x ? x->n_rows : 0, n_rows);
    for (int r = 0; r < n_rows; r++) {
        if (x->start[r + 1] < x->start[r])
            return pl_fail(PARLEY_ERR_INVALID_ARG, "%s: row %d ends before it starts", what, r);
        for (int k = x->start[r]; k < x->start[r + 1]; k++)
            if (x->index[k] < 0 || x->index[k] >= n_feat || !isfinite(x->value[k]))
                return pl_fail(PARLEY_ERR_INVALID_ARG,
                               "%s: row %d has feature %d = %g; the model has %d features", what, r,
                               x->index[k], (double)x->value[k], n_feat);
    }
    return PARLEY_OK;
}
