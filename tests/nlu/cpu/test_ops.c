/* test_ops.c — every CPU op of the forward pass against its plain reference, then the whole
 * forward pass against the references composed, then bert_forward's input checks.
 *
 * First the vectorizable exp and normal CDF of kernels.h against double libm. Shapes are
 * random and include odd sizes (1, 3, 17, 63, 65...) and batches of sequences of different
 * lengths. GELU, LayerNorm and attention run with 1 and 2 threads, which must agree bit for
 * bit (every output element is computed by one thread in a fixed order). Max differences are
 * printed. Tolerances are stated per op, relative to the scale of what is being summed.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/bert.h"
#include "nlu/cpu/kernels.h"
#include "nlu/cpu/ops.h"
#include "nlu/model/model.h"
#include "tests/check.h"
#include "tests/nlu/random_model.h"

static int irand(int lo, int hi)
{
    return lo + (int)(test_urand() * (hi - lo + 1));
}
static const int odd_sizes[] = { 1, 2, 3, 17, 31, 63, 64, 65, 127, 128 };
static int odd_size(int max)
{
    int s;
    do
        s = odd_sizes[irand(0, (int)(sizeof odd_sizes / sizeof *odd_sizes) - 1)];
    while (s > max);
    return s;
}

static float *rand_buf(size_t n, float scale)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)((test_urand() * 2 - 1) * scale);
    return p;
}

static double max_abs_diff(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        m = isnan(d) || d > m ? (isnan(d) ? INFINITY : d) : m;
    }
    return m;
}

static double max_abs(const float *a, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fabs(a[i]) > m ? fabs(a[i]) : m;
    return m;
}

/* The ops with 1 and with 2 threads must give the same bits. */
static const int thread_counts[] = { 1, 2 };

/* exp and the normal CDF to a few float ulps, relative, over the ranges the ops use (the
 * normal CDF down to -13, below which it is denormal or zero in float). */
static void test_vecmath(void)
{
    double worst_exp = 0, worst_cdf = 0, worst_gelu_abs = 0;
    for (int i = 0; i <= 200000; i++) {
        float x = -87.0f + 175.0f * (float)i / 200000.0f;
        double e = exp((double)x);
        worst_exp = fmax(worst_exp, fabs(cpu_expf(x) - e) / e);
        float y = -13.0f + 27.0f * (float)i / 200000.0f;
        double phi = 0.5 * erfc(-(double)y / sqrt(2.0));
        worst_cdf = fmax(worst_cdf, fabs(cpu_normal_cdf(y) - phi) / phi);
        worst_gelu_abs = fmax(worst_gelu_abs, fabs(y * cpu_normal_cdf(y) - y * phi));
    }
    printf("cpu_expf: max relative error %.3g on [-87, 88]\n", worst_exp);
    printf("cpu_normal_cdf: max relative error %.3g on [-13, 14]; gelu max absolute error %.3g\n",
           worst_cdf, worst_gelu_abs);
    CHECK(worst_exp < 4 * FLT_EPSILON, "expf error %g", worst_exp);
    CHECK(worst_cdf < 1e-6, "normal cdf error %g", worst_cdf);
    CHECK(worst_gelu_abs < 1e-6, "gelu absolute error %g", worst_gelu_abs);
    CHECK(cpu_normal_cdf(0.0f) == 0.5f, "Phi(0) = %g", cpu_normal_cdf(0.0f));
    CHECK(cpu_normal_cdf(40.0f) == 1.0f && cpu_normal_cdf(-40.0f) >= 0.0f &&
                  cpu_normal_cdf(-40.0f) < 1e-37f,
          "Phi saturates: %g %g", cpu_normal_cdf(40.0f), cpu_normal_cdf(-40.0f));
    CHECK(fabs(cpu_exp_sum(-80.0f, 0.25f) - exp(-79.75)) < 4 * FLT_EPSILON * exp(-79.75),
          "exp(a + b) keeps b's digits: %g vs %g", cpu_exp_sum(-80.0f, 0.25f), exp(-79.75));
}

/* exp at the edges of float and beyond: defined for every input (under UBSan a NaN once
 * reached a float-to-int conversion and overflowed), with libm's limits. */
static void test_exp_limits(void)
{
    /* Near overflow and at the bottom of the normal floats: within a few ulps of libm. */
    double worst = 0;
    for (int i = 0; i <= 20000; i++) {
        float x = 88.0f + 0.72f * (float)i / 20000.0f, y = -87.0f - 0.33f * (float)i / 20000.0f;
        double ex = exp((double)x), ey = exp((double)y);
        worst = fmax(worst, fmax(fabs(cpu_expf(x) - ex) / ex, fabs(cpu_expf(y) - ey) / ey));
    }
    CHECK(worst < 4 * FLT_EPSILON, "exp on [88, 88.72] and [-87.33, -87]: relative error %g",
          worst);
    CHECK(cpu_expf(88.7f) < INFINITY && cpu_expf(88.75f) == INFINITY &&
                  cpu_expf(89.5f) == INFINITY && cpu_expf(1e30f) == INFINITY &&
                  cpu_expf(INFINITY) == INFINITY,
          "overflow to inf: %g %g", cpu_expf(88.7f), cpu_expf(88.75f));
    /* Below the normal floats: 0 (no subnormals, which cost ten times as much). */
    CHECK(cpu_expf(-87.33f) >= FLT_MIN && cpu_expf(-87.34f) == 0.0f && cpu_expf(-1000.0f) == 0.0f &&
                  cpu_expf(-INFINITY) == 0.0f,
          "flush to 0: %g %g", cpu_expf(-87.33f), cpu_expf(-87.34f));
    CHECK(isnan(cpu_expf(NAN)) && isnan(cpu_exp_sum(INFINITY, -INFINITY)) &&
                  isnan(cpu_exp_sum(1.0f, NAN)) && isnan(cpu_exp_sum(NAN, -INFINITY)),
          "NaN in, NaN out");
    CHECK(cpu_exp_sum(1e30f, -1e30f) == 1.0f && cpu_exp_sum(FLT_MAX, FLT_MAX) == INFINITY &&
                  cpu_exp_sum(-FLT_MAX, -FLT_MAX) == 0.0f,
          "huge a with b: %g", cpu_exp_sum(1e30f, -1e30f));
    CHECK(cpu_normal_cdf(-INFINITY) == 0.0f && cpu_normal_cdf(INFINITY) == 1.0f &&
                  isnan(cpu_normal_cdf(NAN)),
          "Phi at the infinities and NaN: %g %g", cpu_normal_cdf(-INFINITY),
          cpu_normal_cdf(INFINITY));
}

/* |fast - ref| <= 1e-5 * (sum_k |x_k w_k| + |bias|) per element: the scale of the dot
 * product, so the bound holds whatever the signs and sizes. */
static void test_matmul(void)
{
    double worst = 0, worst_ratio = 0;
    for (int rep = 0; rep < 40; rep++) {
        int M = odd_size(128), IC = odd_size(128), OC = odd_size(128);
        if (rep == 0)
            M = IC = OC = 1;
        int with_bias = rep % 2;
        float *x = rand_buf((size_t)M * IC, 1), *w = rand_buf((size_t)OC * IC, 1);
        float *bias = with_bias ? rand_buf((size_t)OC, 1) : NULL;
        float *ref = rand_buf((size_t)M * OC, 1), *out = rand_buf((size_t)M * OC, 1);
        cpu_matmul_ref(ref, x, w, bias, M, IC, OC);
        cpu_matmul(out, x, w, bias, M, IC, OC);
        for (int i = 0; i < M; i++)
            for (int o = 0; o < OC; o++) {
                double scale = bias ? fabs(bias[o]) : 0;
                for (int k = 0; k < IC; k++)
                    scale += fabs((double)x[(size_t)i * IC + k] * w[(size_t)o * IC + k]);
                double d = fabs((double)out[(size_t)i * OC + o] - ref[(size_t)i * OC + o]);
                worst = fmax(worst, d);
                worst_ratio = fmax(worst_ratio, d / (1e-5 * scale + 1e-30));
            }
        free(x), free(w), free(bias), free(ref), free(out);
    }
    printf("matmul: max |diff| %.3g, %.3g of the tolerance\n", worst, worst_ratio);
    CHECK(worst_ratio <= 1, "matmul off by %g of its tolerance", worst_ratio);
}

/* |fast - ref| <= 2e-5 * (|ref| + max|w| + max|b|): outputs are O(w) + b. */
static void test_layernorm(void)
{
    double worst = 0;
    int same_bits = 1;
    for (int rep = 0; rep < 40; rep++) {
        int M = odd_size(65), C = rep % 5 == 0 ? 768 : odd_size(128);
        int residual = rep % 2;
        size_t n = (size_t)M * C;
        /* An offset mean checks the two-pass variance. */
        float *x = rand_buf(n, 3), *r = residual ? rand_buf(n, 1) : NULL;
        for (size_t i = 0; i < n; i++)
            x[i] += 100.0f;
        /* Rows of two close values test the same cancellation at its worst. */
        float *w = rand_buf((size_t)C, 2), *b = rand_buf((size_t)C, 1), *ref = rand_buf(n, 1);
        float *out[2] = { rand_buf(n, 1), rand_buf(n, 1) };
        float eps = rep % 3 ? 1e-12f : 1e-5f;
        cpu_layernorm_ref(ref, x, r, w, b, M, C, eps);
        for (int t = 0; t < 2; t++) {
            cpu_set_threads(thread_counts[t]);
            if (residual)
                cpu_residual_layernorm(out[t], x, r, w, b, M, C, eps);
            else
                cpu_layernorm(out[t], x, w, b, M, C, eps);
        }
        same_bits &= !memcmp(out[0], out[1], n * sizeof(float));
        double scale = max_abs(w, (size_t)C) + max_abs(b, (size_t)C);
        size_t at = 0;
        double excess = check_close(out[0], ref, n, 2e-5, 2e-5 * scale, &at);
        worst = fmax(worst, max_abs_diff(out[0], ref, n));
        CHECK(excess <= 1, "layernorm M=%d C=%d residual=%d: element %zu is %g vs %g", M, C,
              residual, at, out[0][at], ref[at]);
        /* In place, as bert_forward runs it on the residual stream. */
        if (residual) {
            cpu_residual_layernorm(x, x, r, w, b, M, C, eps);
            CHECK(!memcmp(x, out[0], n * sizeof(float)), "in-place residual layernorm differs");
        }
        free(x), free(r), free(w), free(b), free(ref), free(out[0]), free(out[1]);
    }
    cpu_set_threads(0);
    printf("layernorm: max |diff| %.3g\n", worst);
    CHECK(same_bits, "layernorm with 1 and 2 threads differs");
}

/* |fast - ref| <= 1e-6 * |ref| + 1e-30 (see test_vecmath). */
static void test_gelu(void)
{
    static const size_t sizes[] = { 1, 3, 17, 4095, 4096, 4097, 3 * 4096 + 5, 100000 };
    double worst = 0;
    int same_bits = 1;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        float *x = rand_buf(n, 8), *ref = rand_buf(n, 1);
        float *out[2] = { rand_buf(n, 1), rand_buf(n, 1) };
        x[0] = 0.0f;
        if (n > 3)
            x[1] = -1e-30f, x[2] = 30.0f, x[3] = -30.0f;
        cpu_gelu_ref(ref, x, n);
        for (int t = 0; t < 2; t++) {
            cpu_set_threads(thread_counts[t]);
            cpu_gelu(out[t], x, n);
        }
        same_bits &= !memcmp(out[0], out[1], n * sizeof(float));
        size_t at = 0;
        double excess = check_close(out[0], ref, n, 1e-6, 1e-30, &at);
        CHECK(excess <= 1, "gelu n=%zu: gelu(%g) = %g vs %g", n, x[at], out[0][at], ref[at]);
        worst = fmax(worst, max_abs_diff(out[0], ref, n));
        cpu_gelu(x, x, n);
        CHECK(!memcmp(x, out[0], n * sizeof(float)), "in-place gelu differs");
        free(x), free(ref), free(out[0]), free(out[1]);
    }
    cpu_set_threads(0);
    printf("gelu: max |diff| %.3g\n", worst);
    CHECK(same_bits, "gelu with 1 and 2 threads differs");
}

static int sum_len(const int *len, int B)
{
    int n = 0;
    for (int b = 0; b < B; b++)
        n += len[b];
    return n;
}

static float *attention_run(const float *qkv, const int *len, int B, int NH, int D, int threads)
{
    int t_max = 0;
    for (int b = 0; b < B; b++)
        t_max = len[b] > t_max ? len[b] : t_max;
    size_t n_out = (size_t)sum_len(len, B) * NH * D;
    float *out = rand_buf(n_out, 1);
    float *scratch = malloc(cpu_attention_scratch(t_max, D, threads) * sizeof(float));
    cpu_attention(out, qkv, len, B, NH, D, scratch, threads);
    free(scratch);
    return out;
}

/* Outputs are convex combinations of value rows: |fast - ref| <= 1e-5 * max|v|. */
static void test_attention(void)
{
    static const int lens[] = { 1, 2, 3, 17, 32, 33, 63, 65, 128 };
    static const int heads[] = { 1, 3, 4, 12 };
    static const int dims[] = { 1, 3, 16, 17, 64 };
    double worst = 0;
    int same_bits = 1;
    for (int rep = 0; rep < 30; rep++) {
        int B = rep == 0 ? 1 : irand(1, 6);
        int NH = heads[irand(0, 3)], D = dims[irand(0, 4)];
        int len[6];
        for (int b = 0; b < B; b++)
            len[b] = lens[irand(0, 8)];
        if (rep == 0)
            len[0] = 1;
        if (rep == 1) { /* big enough for every thread (cpu_threads_for) */
            B = 6, NH = 12, D = 64;
            for (int b = 0; b < B; b++)
                len[b] = 128 - b;
        }
        int N = sum_len(len, B), H = NH * D;
        /* Large scores (scale 4) make the softmax peaked, which the max subtraction needs. */
        float *qkv = rand_buf((size_t)N * 3 * H, rep % 3 ? 1.0f : 4.0f);
        float *ref = rand_buf((size_t)N * H, 1);
        cpu_attention_ref(ref, qkv, len, B, NH, D);
        float *out1 = attention_run(qkv, len, B, NH, D, 1);
        float *out2 = attention_run(qkv, len, B, NH, D, 2);
        same_bits &= !memcmp(out1, out2, (size_t)N * H * sizeof(float));
        size_t at = 0;
        double excess = check_close(out2, ref, (size_t)N * H, 0,
                                    1e-5 * max_abs(qkv, (size_t)N * 3 * H), &at);
        CHECK(excess <= 1, "attention B=%d NH=%d D=%d: element %zu is %g vs %g", B, NH, D, at,
              out2[at], ref[at]);
        worst = fmax(worst, max_abs_diff(out2, ref, (size_t)N * H));
        /* Attention stays within a sequence: changing the last sequence's tokens leaves the
         * others' outputs unchanged. */
        if (B > 1) {
            int last = len[B - 1];
            for (size_t i = (size_t)(N - last) * 3 * H; i < (size_t)N * 3 * H; i++)
                qkv[i] += 1.0f;
            float *out3 = attention_run(qkv, len, B, NH, D, 2);
            CHECK(!memcmp(out3, out2, (size_t)(N - last) * H * sizeof(float)),
                  "attention leaks across sequences (B=%d)", B);
            CHECK(memcmp(out3 + (size_t)(N - last) * H, out2 + (size_t)(N - last) * H,
                         (size_t)last * H * sizeof(float)),
                  "the changed sequence's output did not change");
            free(out3);
        }
        free(qkv), free(ref), free(out1), free(out2);
    }
    printf("attention: max |diff| %.3g\n", worst);
    CHECK(same_bits, "attention with 1 and 2 threads differs");
}

static void test_embedding(void)
{
    const int V = 37, P = 65, TT = 2, H = 48;
    int len[] = { 1, 65, 7, 2 }, B = 4, N = sum_len(len, B);
    float *word = rand_buf((size_t)V * H, 1), *pos = rand_buf((size_t)P * H, 1);
    float *type = rand_buf((size_t)TT * H, 1), *w = rand_buf(H, 2), *b = rand_buf(H, 1);
    int *ids = malloc((size_t)N * sizeof *ids);
    for (int i = 0; i < N; i++)
        ids[i] = irand(0, V - 1);
    float *ref = rand_buf((size_t)N * H, 1), *out = rand_buf((size_t)N * H, 1);
    cpu_embedding_ref(ref, ids, len, B, word, pos, type, w, b, H, 1e-12f);
    cpu_embedding(out, ids, len, B, word, pos, type, w, b, H, 1e-12f);
    printf("embedding: max |diff| %.3g\n", max_abs_diff(out, ref, (size_t)N * H));
    CHECK(check_close(out, ref, (size_t)N * H, 2e-5, 2e-5 * 3, NULL) <= 1, "embedding");
    /* Positions restart per sequence: the third sequence's first token equals a batch of it
     * alone. */
    float *one = rand_buf(H, 1);
    cpu_embedding(one, ids + 66, len, 1, word, pos, type, w, b, H, 1e-12f);
    CHECK(!memcmp(one, out + (size_t)66 * H, H * sizeof(float)), "positions restart per sequence");
    free(word), free(pos), free(type), free(w), free(b), free(ids), free(ref), free(out), free(one);
}

/* The forward pass built from the reference ops, in double where they are. */
static void forward_ref(const bert_model *m, const bert_batch *bt, float *intent, float *slot)
{
    const bert_config *c = &m->cfg;
    const bert_weights *w = &m->w;
    const int H = c->hidden, I = c->intermediate, B = bt->n_seq, N = sum_len(bt->len, B);
    float *h = malloc(sizeof(float) * N * H), *qkv = malloc(sizeof(float) * N * 3 * H);
    float *att = malloc(sizeof(float) * N * H), *proj = malloc(sizeof(float) * N * H);
    float *ffn = malloc(sizeof(float) * N * I), *cls = malloc(sizeof(float) * B * H);
    float *pooled = malloc(sizeof(float) * B * H);
    cpu_embedding_ref(h, bt->ids, bt->len, B, w->word_emb, w->pos_emb, w->type_emb, w->emb_ln_w,
                      w->emb_ln_b, H, c->ln_eps);
    for (int l = 0; l < c->layers; l++) {
        size_t lH = (size_t)l * H;
        cpu_matmul_ref(qkv, h, w->qkv_w + lH * 3 * H, w->qkv_b + 3 * lH, N, H, 3 * H);
        cpu_attention_ref(att, qkv, bt->len, B, c->heads, H / c->heads);
        cpu_matmul_ref(proj, att, w->attn_out_w + lH * H, w->attn_out_b + lH, N, H, H);
        cpu_layernorm_ref(h, h, proj, w->ln1_w + lH, w->ln1_b + lH, N, H, c->ln_eps);
        cpu_matmul_ref(ffn, h, w->ffn_in_w + lH * I, w->ffn_in_b + (size_t)l * I, N, H, I);
        cpu_gelu_ref(ffn, ffn, (size_t)N * I);
        cpu_matmul_ref(proj, ffn, w->ffn_out_w + lH * I, w->ffn_out_b + lH, N, I, H);
        cpu_layernorm_ref(h, h, proj, w->ln2_w + lH, w->ln2_b + lH, N, H, c->ln_eps);
    }
    for (int b = 0, first = 0; b < B; first += bt->len[b], b++)
        memcpy(cls + (size_t)b * H, h + (size_t)first * H, sizeof(float) * H);
    cpu_matmul_ref(pooled, cls, w->pool_w, w->pool_b, B, H, H);
    for (int i = 0; i < B * H; i++)
        pooled[i] = (float)tanh(pooled[i]);
    cpu_matmul_ref(intent, pooled, w->intent_w, w->intent_b, B, H, c->n_intents);
    cpu_matmul_ref(slot, h, w->slot_w, w->slot_b, N, H, c->n_slots);
    free(h), free(qkv), free(att), free(proj), free(ffn), free(cls), free(pooled);
}

/* Weights of order 0.5 and LayerNorm gains around 1 give logits of order 1, so the comparison
 * is sensitive (BERT's 0.02 init gives tiny ones). */
static bert_model *random_model(int V, int H, int L, int NH, int I, int P)
{
    bert_model *m = test_random_model((test_shape){ V, H, L, NH, I, P, 5, 7 }, 0.5);
    CHECK(m != NULL, "random model");
    return m;
}

/* |fast - ref| <= 1e-4 * max|ref| + 1e-4 * |ref|, the tolerance used against torch too. */
static void test_forward(void)
{
    static const int shapes[][5] = {
        /* H, L, NH, I, P */
        { 32, 2, 4, 64, 40 },
        { 48, 2, 3, 80, 17 },
        { 64, 3, 1, 64, 130 },
    };
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        const int *s = shapes[k];
        bert_model *m = random_model(50, s[0], s[1], s[2], s[3], s[4]);
        if (!m)
            continue;
        int len[7], B = k == 0 ? 1 : 7;
        for (int b = 0; b < B; b++)
            len[b] = b == 0 ? s[4] : irand(1, s[4]);
        int N = sum_len(len, B);
        int *ids = malloc(sizeof(int) * N);
        for (int i = 0; i < N; i++)
            ids[i] = irand(0, 49);
        bert_batch bt = { B, len, ids };
        float *intent = rand_buf((size_t)B * 5, 1), *slot = rand_buf((size_t)N * 7, 1);
        float *intent_ref = rand_buf((size_t)B * 5, 1), *slot_ref = rand_buf((size_t)N * 7, 1);
        parley_status st = bert_forward(m, &bt, intent, slot);
        CHECK(st == PARLEY_OK, "bert_forward: %s", parley_errmsg());
        forward_ref(m, &bt, intent_ref, slot_ref);
        double ti = 1e-4 * max_abs(intent_ref, (size_t)B * 5),
               ts = 1e-4 * max_abs(slot_ref, (size_t)N * 7);
        printf("forward H%d L%d NH%d I%d, %d sequences: max |diff| intent %.3g slot %.3g "
               "(max |ref| %.3g %.3g)\n",
               s[0], s[1], s[2], s[3], B, max_abs_diff(intent, intent_ref, (size_t)B * 5),
               max_abs_diff(slot, slot_ref, (size_t)N * 7), ti * 1e4, ts * 1e4);
        CHECK(check_close(intent, intent_ref, (size_t)B * 5, 1e-4, ti, NULL) <= 1, "intent logits");
        CHECK(check_close(slot, slot_ref, (size_t)N * 7, 1e-4, ts, NULL) <= 1, "slot logits");
        CHECK(ti > 1e-5 && ts > 1e-5, "logits are not degenerate");

        /* A sequence in a batch gives what it gives alone (packing, restarted positions). */
        int last = len[B - 1];
        bert_batch alone = { 1, &len[B - 1], ids + N - last };
        float one_intent[5], *one_slot = rand_buf((size_t)last * 7, 1);
        CHECK(bert_forward(m, &alone, one_intent, one_slot) == PARLEY_OK, "alone");
        CHECK(check_close(one_intent, intent + (B - 1) * 5, 5, 1e-5, 1e-5, NULL) <= 1 &&
                      check_close(one_slot, slot + (size_t)(N - last) * 7, (size_t)last * 7, 1e-5,
                                  1e-5, NULL) <= 1,
              "a sequence alone differs from the same sequence in a batch");
        free(ids), free(intent), free(slot), free(intent_ref), free(slot_ref), free(one_slot);
        bert_model_free(m);
    }
}

static int fail_after = -1;
static void *failing_malloc(size_t n, void *ud)
{
    (void)ud;
    return fail_after-- == 0 ? NULL : malloc(n);
}
static void *failing_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    return realloc(p, n);
}
static void plain_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

static void test_forward_errors(void)
{
    bert_model *m = random_model(20, 16, 1, 2, 32, 8);
    if (!m)
        return;
    int ids[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, len[2] = { 4, 5 };
    float intent[10], slot[100];
    bert_batch ok = { 2, len, ids };
    CHECK(bert_forward(m, &ok, intent, slot) == PARLEY_OK, "valid batch: %s", parley_errmsg());
    ids[6] = 20;
    CHECK(bert_forward(m, &ok, intent, slot) == PARLEY_ERR_INVALID_ARG &&
                  strstr(parley_errmsg(), "token 2 of sequence 1 has id 20"),
          "id = V: %s", parley_errmsg());
    ids[6] = -1;
    CHECK(bert_forward(m, &ok, intent, slot) == PARLEY_ERR_INVALID_ARG, "negative id");
    ids[6] = 7;
    int long_len[1] = { 9 };
    bert_batch too_long = { 1, long_len, ids };
    CHECK(bert_forward(m, &too_long, intent, slot) == PARLEY_ERR_INVALID_ARG &&
                  strstr(parley_errmsg(), "sequence 0 has 9 tokens; the model takes 1 to 8"),
          "length > P: %s", parley_errmsg());
    int zero_len[2] = { 4, 0 };
    bert_batch empty_seq = { 2, zero_len, ids };
    CHECK(bert_forward(m, &empty_seq, intent, slot) == PARLEY_ERR_INVALID_ARG, "length 0");
    bert_batch none = { 0, NULL, NULL };
    CHECK(bert_forward(m, &none, intent, slot) == PARLEY_OK, "an empty batch is a no-op");
    CHECK(bert_forward(m, NULL, intent, slot) == PARLEY_ERR_INVALID_ARG, "NULL batch");

    parley_allocator a = { failing_malloc, failing_realloc, plain_free, NULL };
    parley_set_allocator(&a);
    fail_after = 0;
    parley_status st = bert_forward(m, &ok, intent, slot);
    parley_set_allocator(NULL);
    CHECK(st == PARLEY_ERR_NOMEM, "allocation failure gives NOMEM: %d", st);
    bert_model_free(m);
}

int main(void)
{
    /* Read by cpu_threads_for on first use: with it, ops go parallel at test sizes, so the
     * 1-thread / 2-thread comparisons compare something. */
    setenv("OMP_WAIT_POLICY", "passive", 1);
    CHECK(cpu_threads_for(1 << 20, 1 << 19) == (cpu_threads() < 2 ? 1 : 2) &&
                  cpu_threads_for(1000, 1 << 19) == 1,
          "cpu_threads_for: %d %d", cpu_threads_for(1 << 20, 1 << 19),
          cpu_threads_for(1000, 1 << 19));
    bert_set_threads(0);
    test_vecmath();
    test_exp_limits();
    test_matmul();
    test_layernorm();
    test_gelu();
    test_attention();
    test_embedding();
    test_forward();
    test_forward_errors();
    return check_done();
}
