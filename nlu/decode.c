/* decode.c — intent ranking and BIO slot decoding (see decode.h).
 *
 * This file turns numbers into decisions only; it knows nothing of text or results. The
 * public result is assembled in nlu.c.
 */
#include <math.h>
#include <string.h>

#include "nlu/decode.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

void nlu_tagset_clear(nlu_tagset *ts)
{
    if (ts->type_names)
        for (int i = 0; i < ts->n_types; i++)
            pl_free(ts->type_names[i]);
    pl_free(ts->type_names);
    pl_free(ts->kind);
    pl_free(ts->type);
    memset(ts, 0, sizeof *ts);
}

int nlu_tagset_type(const nlu_tagset *ts, const char *name)
{
    for (int i = 0; i < ts->n_types; i++)
        if (!strcmp(ts->type_names[i], name))
            return i;
    return -1;
}

parley_status nlu_tagset_init(nlu_tagset *ts, char *const *tags, int n_tags)
{
    parley_status st = PARLEY_ERR_NOMEM;
    memset(ts, 0, sizeof *ts);
    ts->n_tags = n_tags;
    ts->o_tag = -1;
    ts->kind = pl_calloc((size_t)n_tags, sizeof *ts->kind);
    ts->type = pl_calloc((size_t)n_tags, sizeof *ts->type);
    /* At most one type per tag, so n_tags bounds both arrays. */
    ts->type_names = pl_calloc((size_t)n_tags, sizeof *ts->type_names);
    if (!ts->kind || !ts->type || !ts->type_names)
        goto fail;
    for (int i = 0; i < n_tags; i++) {
        const char *t = tags[i];
        if (!strcmp(t, "O")) {
            ts->kind[i] = NLU_TAG_O;
            ts->type[i] = -1;
            ts->o_tag = i;
            continue;
        }
        if ((t[0] != 'B' && t[0] != 'I') || t[1] != '-' || !t[2]) {
            st = pl_fail(PARLEY_ERR_CONFIG, "slot tag \"%s\" is not O, B-<slot> or I-<slot>", t);
            goto fail;
        }
        ts->kind[i] = t[0] == 'B' ? NLU_TAG_B : NLU_TAG_I;
        int ty = nlu_tagset_type(ts, t + 2);
        if (ty < 0) {
            ty = ts->n_types;
            if (!(ts->type_names[ty] = pl_strdup(t + 2)))
                goto fail;
            ts->n_types++;
            size_t len = strlen(t + 2);
            if (len > ts->max_name)
                ts->max_name = len;
        }
        ts->type[i] = ty;
    }
    if (ts->o_tag < 0) {
        st = pl_fail(PARLEY_ERR_CONFIG, "slot tags lack \"O\"");
        goto fail;
    }
    return PARLEY_OK;
fail:
    if (st == PARLEY_ERR_NOMEM)
        pl_fail(st, "out of memory reading slot tags");
    nlu_tagset_clear(ts);
    return st;
}

size_t nlu_first_nonfinite(const float *x, size_t n)
{
    size_t i = 0;
    while (i < n && isfinite(x[i]))
        i++;
    return i;
}

/* The softmax of logits (n) / temperature, as p(i) = exp((logits[i] - mx) * inv_t) / sum:
 * fills mx and inv_t and returns sum. */
static double softmax_terms(const float *logits, int n, float temperature, float *mx, double *inv_t)
{
    *inv_t = temperature > 0 ? 1.0 / temperature : 1.0;
    *mx = logits[0];
    for (int i = 1; i < n; i++)
        *mx = logits[i] > *mx ? logits[i] : *mx;
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += exp(((double)logits[i] - *mx) * *inv_t);
    return sum;
}

void nlu_softmax(const float *logits, int n, float temperature, float *prob)
{
    float mx;
    double inv_t, sum = softmax_terms(logits, n, temperature, &mx, &inv_t);
    for (int i = 0; i < n; i++)
        prob[i] = (float)(exp(((double)logits[i] - mx) * inv_t) / sum);
}

void nlu_top_k(const float *logits, int n, float temperature, int k, int *idx, float *prob)
{
    float mx;
    double inv_t, sum = softmax_terms(logits, n, temperature, &mx, &inv_t);
    /* Selection by repeated scans: k and n are small (tens of intents). */
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int i = 0; i < n; i++) {
            int taken = 0;
            for (int q = 0; q < j && !taken; q++)
                taken = idx[q] == i;
            if (!taken && (best < 0 || logits[i] > logits[best]))
                best = i;
        }
        idx[j] = best;
        prob[j] = (float)(exp(((double)logits[best] - mx) * inv_t) / sum);
    }
}

size_t nlu_word_tags_scratch(int n_words, int n_tags)
{
    /* emissions (W, NS) floats, back-pointers (W, NS) ints, two score rows (NS) floats */
    return ((size_t)n_words * n_tags * 2 + 2 * (size_t)n_tags) * sizeof(float);
}

/* Whether tag `cur` may follow tag `prev` (-1: the sentence start) in BIO. */
static int bio_allowed(const nlu_tagset *ts, int prev, int cur)
{
    if (ts->kind[cur] != NLU_TAG_I)
        return 1;
    return prev >= 0 && ts->kind[prev] != NLU_TAG_O && ts->type[prev] == ts->type[cur];
}

void nlu_word_tags(const nlu_tagset *ts, const float *prior, const float *slot_logits,
                   const wp_piece *pieces, int n_pieces, int n_words, int *word_tag, void *scratch)
{
    const int NS = ts->n_tags;
    if (n_words <= 0)
        return;
    float *emit = scratch;                            // (W, NS) log-probabilities
    int *back = (int *)(emit + (size_t)n_words * NS); // (W, NS) best previous tag
    float *score = (float *)(back + (size_t)n_words * NS), *next = score + NS; // (NS) each
    for (int w = 0; w < n_words; w++) /* a word without pieces is O */
        for (int t = 0; t < NS; t++)
            emit[(size_t)w * NS + t] = t == ts->o_tag ? 0.0f : -INFINITY;
    int prev_word = -1;
    for (int p = 0; p < n_pieces; p++) {
        if (pieces[p].word == prev_word || pieces[p].word >= n_words)
            continue;
        prev_word = pieces[p].word;
        const float *row = slot_logits + (size_t)p * NS; // (NS)
        float mx = row[0], sum = 0.0f;
        for (int t = 1; t < NS; t++)
            mx = row[t] > mx ? row[t] : mx;
        for (int t = 0; t < NS; t++)
            sum += expf(row[t] - mx);
        const float lse = mx + logf(sum);
        float *e = emit + (size_t)prev_word * NS;
        for (int t = 0; t < NS; t++)
            e[t] = row[t] - lse;
        if (!prior)
            continue;
        float o_prob = expf(e[ts->o_tag]); /* what the intent does not take goes to O */
        for (int t = 0; t < NS; t++) {
            if (t == ts->o_tag)
                continue;
            const float a = prior[t] < 0.0f ? 0.0f : prior[t] > 1.0f ? 1.0f : prior[t];
            o_prob += expf(e[t]) * (1.0f - a);
            e[t] = a > 0.0f ? e[t] + logf(a) : -INFINITY;
        }
        e[ts->o_tag] = logf(o_prob);
    }
    for (int t = 0; t < NS; t++)
        score[t] = bio_allowed(ts, -1, t) ? emit[t] : -INFINITY;
    for (int w = 1; w < n_words; w++) {
        for (int t = 0; t < NS; t++) {
            int best = -1;
            float bs = -INFINITY;
            for (int u = 0; u < NS; u++)
                if (score[u] > bs && bio_allowed(ts, u, t))
                    bs = score[u], best = u;
            next[t] = bs + emit[(size_t)w * NS + t];
            back[(size_t)w * NS + t] = best < 0 ? ts->o_tag : best;
        }
        memcpy(score, next, (size_t)NS * sizeof *score);
    }
    int t = ts->o_tag;
    for (int u = 0; u < NS; u++)
        if (score[u] > score[t])
            t = u;
    for (int w = n_words - 1; w >= 0; w--) {
        word_tag[w] = t;
        t = back[(size_t)w * NS + t];
    }
}

int nlu_bio_spans(const nlu_tagset *ts, const int *word_tag, int n_words, signed char *kind_out,
                  int *type_out, nlu_span *spans)
{
    int n = 0;
    for (int w = 0; w < n_words; w++) {
        int t = word_tag[w];
        int kind = ts->kind[t], type = ts->type[t];
        if (kind == NLU_TAG_I && !(n > 0 && spans[n - 1].w1 == w && spans[n - 1].type == type))
            kind = NLU_TAG_B; /* an I- that continues nothing opens a span */
        kind_out[w] = (signed char)kind;
        type_out[w] = type;
        if (kind == NLU_TAG_B)
            spans[n++] = (nlu_span){ type, w, w + 1 };
        else if (kind == NLU_TAG_I)
            spans[n - 1].w1 = w + 1;
    }
    return n;
}
