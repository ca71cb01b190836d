/* test_ops_backward.c — every backward op of nlu/cpu/ops_backward.h against central finite
 * differences of an independent double-precision forward written here, and the fast op
 * against its _ref; plus the dropout masks' statistics and determinism.
 *
 * Each op's gradient is checked as the gradient of the scalar sum(out * R) for a random R
 * (R plays dout), over all of the op's inputs at once. Finite differences in double with
 * h = 1e-5 err by O(h^2 f''') ~ 1e-10 plus rounding 1e-16/h ~ 1e-11, far below float
 * rounding of the analytic gradients (~1e-7 relative), so the tolerance is float rounding:
 * max |g - g_fd| <= 1e-5 * max|g_fd| + 1e-6 (a few ulps times the depth of the sums).
 * Fast against _ref: the same bound. Threads 1, 2 and 3 must agree bit for bit on the ops
 * that do not call BLAS (every sum runs in a fixed order); some cases are big enough that
 * the ops do wake 3 threads (cpu_threads_for). Max differences are printed.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/cpu/ops.h"
#include "nlu/cpu/ops_backward.h"
#include "tests/check.h"
#include "tests/nlu/random_model.h"

static float *rand_buf(size_t n, float scale)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)((test_urand() * 2 - 1) * scale);
    return p;
}

static float *zero_buf(size_t n)
{
    return calloc(n ? n : 1, sizeof(float));
}

/* The tolerance of the header: |a - b| <= 1e-5 * max|b| + 1e-6 everywhere. Prints and
 * returns whether it holds. */
static int close_to(const char *what, const float *a, const double *b, size_t n)
{
    double scale = 0, worst = 0;
    for (size_t i = 0; i < n; i++)
        scale = fabs(b[i]) > scale ? fabs(b[i]) : scale;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        worst = isnan(d) || d > worst ? (isnan(d) ? INFINITY : d) : worst;
    }
    int ok = worst <= 1e-5 * scale + 1e-6;
    printf("  %-40s max|diff| %.3g (scale %.3g)%s\n", what, worst, scale, ok ? "" : "  FAIL");
    return ok;
}

static int close_to_f(const char *what, const float *a, const float *b, size_t n)
{
    double *bd = malloc((n ? n : 1) * sizeof *bd);
    for (size_t i = 0; i < n; i++)
        bd[i] = b[i];
    int ok = close_to(what, a, bd, n);
    free(bd);
    return ok;
}

/* A scalar function of n doubles, and the finite-difference gradient of it. */
typedef double (*scalar_fn)(const double *theta, void *ctx);

static void fd_gradient(scalar_fn f, void *ctx, const float *theta_f, size_t n, double *g)
{
    double *theta = malloc(n * sizeof *theta);
    for (size_t i = 0; i < n; i++)
        theta[i] = theta_f[i];
    for (size_t i = 0; i < n; i++) {
        const double h = 1e-5, t = theta[i];
        theta[i] = t + h;
        double up = f(theta, ctx);
        theta[i] = t - h;
        double down = f(theta, ctx);
        theta[i] = t;
        g[i] = (up - down) / (2 * h);
    }
    free(theta);
}

static const int thread_counts[] = { 1, 2, 3 };
enum { N_THREADS = sizeof thread_counts / sizeof thread_counts[0] };

/* ---- matmul ---------------------------------------------------------------------------- */

typedef struct mm_ctx {
    int M, IC, OC;
    const float *R;
} mm_ctx;

// theta = [inp (M, IC), w (OC, IC), bias (OC)]
static double mm_loss(const double *th, void *vctx)
{
    const mm_ctx *c = vctx;
    const double *inp = th, *w = inp + c->M * c->IC, *bias = w + c->OC * c->IC;
    double s = 0;
    for (int i = 0; i < c->M; i++)
        for (int o = 0; o < c->OC; o++) {
            double acc = bias[o];
            for (int k = 0; k < c->IC; k++)
                acc += inp[i * c->IC + k] * w[o * c->IC + k];
            s += acc * c->R[i * c->OC + o];
        }
    return s;
}

static void test_matmul(int M, int IC, int OC)
{
    printf("matmul backward M %d IC %d OC %d\n", M, IC, OC);
    const size_t n_in = (size_t)M * IC, n_w = (size_t)OC * IC, n = n_in + n_w + OC;
    float *theta = rand_buf(n, 1.0f), *R = rand_buf((size_t)M * OC, 1.0f);
    float *g = malloc(n * sizeof *g), *g_ref = malloc(n * sizeof *g_ref);
    double *g_fd = malloc(n * sizeof *g_fd);
    mm_ctx ctx = { M, IC, OC, R };
    /* Accumulation: dw and dbias start from a known value, dinp too with accumulate = 1. */
    float *start = rand_buf(n, 0.5f);
    for (int acc = 0; acc <= 1; acc++) {
        memcpy(g, start, n * sizeof *g);
        memcpy(g_ref, start, n * sizeof *g);
        cpu_matmul_backward(g, g + n_in, g + n_in + n_w, R, theta, theta + n_in, M, IC, OC, acc);
        cpu_matmul_backward_ref(g_ref, g_ref + n_in, g_ref + n_in + n_w, R, theta, theta + n_in, M,
                                IC, OC, acc);
        CHECK(close_to_f(acc ? "fast vs ref (accumulating dinp)" : "fast vs ref", g, g_ref, n),
              "matmul fast vs ref");
        if (M * IC * OC <= 4096) {
            fd_gradient(mm_loss, &ctx, theta, n, g_fd);
            for (size_t i = 0; i < n; i++)
                g_fd[i] += i >= n_in || acc ? start[i] : 0.0;
            CHECK(close_to("fast vs finite differences", g, g_fd, n), "matmul vs fd");
        }
    }
    /* No dinp, no bias: only dw is touched. */
    memcpy(g, start, n * sizeof *g);
    cpu_matmul_backward(NULL, g + n_in, NULL, R, theta, theta + n_in, M, IC, OC, 0);
    CHECK(!memcmp(g, start, n_in * sizeof *g) &&
                  !memcmp(g + n_in + n_w, start + n_in + n_w, (size_t)OC * sizeof *g),
          "NULL dinp and dbias are skipped");
    /* The bias sums do not depend on the thread count. */
    float *db[N_THREADS];
    for (int t = 0; t < N_THREADS; t++) {
        cpu_set_threads(thread_counts[t]);
        db[t] = zero_buf(OC);
        float *dw = zero_buf(n_w);
        cpu_matmul_backward(NULL, dw, db[t], R, theta, theta + n_in, M, IC, OC, 0);
        free(dw);
        CHECK(!memcmp(db[t], db[0], (size_t)OC * sizeof(float)), "bias sums with %d threads",
              thread_counts[t]);
    }
    for (int t = 0; t < N_THREADS; t++)
        free(db[t]);
    cpu_set_threads(0);
    free(theta), free(R), free(g), free(g_ref), free(g_fd), free(start);
}

/* ---- layernorm ------------------------------------------------------------------------- */

typedef struct ln_ctx {
    int M, C;
    float eps;
    const float *R;
} ln_ctx;

// theta = [inp (M, C), w (C), b (C)]
static double ln_loss(const double *th, void *vctx)
{
    const ln_ctx *c = vctx;
    const double *inp = th, *w = inp + c->M * c->C, *b = w + c->C;
    double s = 0;
    for (int i = 0; i < c->M; i++) {
        const double *x = inp + i * c->C;
        double mean = 0, var = 0;
        for (int k = 0; k < c->C; k++)
            mean += x[k] / c->C;
        for (int k = 0; k < c->C; k++)
            var += (x[k] - mean) * (x[k] - mean) / c->C;
        for (int k = 0; k < c->C; k++)
            s += ((x[k] - mean) / sqrt(var + c->eps) * w[k] + b[k]) * c->R[i * c->C + k];
    }
    return s;
}

static void test_layernorm(int M, int C, int with_fd)
{
    printf("layernorm backward M %d C %d\n", M, C);
    const float eps = 1e-5f;
    const size_t nx = (size_t)M * C, n = nx + 2 * (size_t)C;
    /* Rows with an offset and a spread, as residual streams have. */
    float *theta = rand_buf(n, 1.0f), *R = rand_buf(nx, 1.0f);
    for (size_t i = 0; i < nx; i++)
        theta[i] = theta[i] * 3.0f + 0.7f;
    float *g = zero_buf(n), *g_ref = zero_buf(n),
          *scratch = malloc(cpu_layernorm_backward_scratch(M, C) * sizeof(float));
    ln_ctx ctx = { M, C, eps, R };
    cpu_layernorm_backward(g, g + nx, g + nx + C, R, theta, theta + nx, M, C, eps, scratch);
    cpu_layernorm_backward_ref(g_ref, g_ref + nx, g_ref + nx + C, R, theta, theta + nx, M, C, eps);
    CHECK(close_to_f("fast vs ref", g, g_ref, n), "layernorm fast vs ref");
    if (with_fd) {
        double *g_fd = malloc(n * sizeof *g_fd);
        fd_gradient(ln_loss, &ctx, theta, n, g_fd);
        CHECK(close_to("fast vs finite differences", g, g_fd, n), "layernorm vs fd");
        CHECK(close_to("ref vs finite differences", g_ref, g_fd, n), "layernorm ref vs fd");
        free(g_fd);
    }
    /* In place (dinp = dout), and the same bits for every thread count. */
    for (int t = 0; t < N_THREADS; t++) {
        cpu_set_threads(thread_counts[t]);
        float *h = zero_buf(n);
        memcpy(h, R, nx * sizeof *h);
        cpu_layernorm_backward(h, h + nx, h + nx + C, h, theta, theta + nx, M, C, eps, scratch);
        CHECK(!memcmp(h, g, n * sizeof *h), "layernorm in place with %d threads is identical",
              thread_counts[t]);
        free(h);
    }
    cpu_set_threads(0);
    free(theta), free(R), free(g), free(g_ref), free(scratch);
}

/* ---- gelu ------------------------------------------------------------------------------ */

static double gelu_d(double x)
{
    return x * 0.5 * erfc(-x / sqrt(2.0));
}

static void test_gelu(void)
{
    printf("gelu backward\n");
    const size_t n = 20000;
    float *x = malloc(n * sizeof *x), *R = rand_buf(n, 1.0f);
    for (size_t i = 0; i < n; i++)
        x[i] = -10.0f + 20.0f * (float)i / (float)n;
    float *g = zero_buf(n), *g_ref = zero_buf(n);
    double *g_fd = malloc(n * sizeof *g_fd);
    cpu_gelu_backward(g, x, R, n);
    cpu_gelu_backward_ref(g_ref, x, R, n);
    for (size_t i = 0; i < n; i++) {
        const double h = 1e-5;
        g_fd[i] = R[i] * (gelu_d(x[i] + h) - gelu_d(x[i] - h)) / (2 * h);
    }
    CHECK(close_to_f("fast vs ref", g, g_ref, n), "gelu fast vs ref");
    CHECK(close_to("fast vs finite differences", g, g_fd, n), "gelu vs fd");
    memcpy(g_ref, R, n * sizeof *g_ref);
    cpu_gelu_backward(g_ref, x, g_ref, n);
    CHECK(!memcmp(g, g_ref, n * sizeof *g), "gelu backward in place is identical");
    free(x), free(R), free(g), free(g_ref), free(g_fd);
}

/* ---- softmax cross-entropy ------------------------------------------------------------- */

typedef struct xent_ctx {
    int M, C;
    const int *labels;
    float scale;
} xent_ctx;

static double xent_loss(const double *x, void *vctx)
{
    const xent_ctx *c = vctx;
    double s = 0;
    for (int i = 0; i < c->M; i++) {
        if (c->labels[i] < 0)
            continue;
        double m = -INFINITY, sum = 0;
        for (int k = 0; k < c->C; k++)
            m = x[i * c->C + k] > m ? x[i * c->C + k] : m;
        for (int k = 0; k < c->C; k++)
            sum += exp(x[i * c->C + k] - m);
        s += c->scale * (log(sum) + m - x[i * c->C + c->labels[i]]);
    }
    return s;
}

static void test_xent(int M, int C)
{
    printf("softmax cross-entropy M %d C %d\n", M, C);
    const size_t n = (size_t)M * C;
    float *x = rand_buf(n, 4.0f), *g = zero_buf(n), *g_ref = zero_buf(n);
    float *loss = zero_buf(M), *loss_ref = zero_buf(M);
    int *labels = malloc((size_t)M * sizeof *labels);
    for (int i = 0; i < M; i++)
        labels[i] = i % 3 == 1 ? -1 : (int)(test_urand() * C);
    x[0] = 80.0f; /* a large logit must not overflow */
    xent_ctx ctx = { M, C, labels, 0.37f };
    cpu_softmax_xent(g, loss, x, labels, M, C, ctx.scale);
    cpu_softmax_xent_ref(g_ref, loss_ref, x, labels, M, C, ctx.scale);
    CHECK(close_to_f("gradient fast vs ref", g, g_ref, n), "xent fast vs ref");
    CHECK(close_to_f("row losses fast vs ref", loss, loss_ref, M), "xent loss fast vs ref");
    double *g_fd = malloc(n * sizeof *g_fd), total = 0;
    fd_gradient(xent_loss, &ctx, x, n, g_fd);
    CHECK(close_to("fast vs finite differences", g, g_fd, n), "xent vs fd");
    for (int i = 0; i < M; i++)
        total += ctx.scale * loss[i];
    double *xd = malloc(n * sizeof *xd);
    for (size_t i = 0; i < n; i++)
        xd[i] = x[i];
    double exact = xent_loss(xd, &ctx);
    CHECK(fabs(total - exact) <= 1e-5 * fabs(exact) + 1e-6, "total loss %.9g vs %.9g", total,
          exact);
    int unscored_zero = 1;
    for (int i = 0; i < M; i++)
        for (int k = 0; k < C && labels[i] < 0; k++)
            unscored_zero = unscored_zero && g[(size_t)i * C + k] == 0.0f && loss[i] == 0.0f;
    CHECK(unscored_zero, "unscored rows have zero loss and gradient");
    free(x), free(g), free(g_ref), free(loss), free(loss_ref), free(labels), free(g_fd), free(xd);
}

/* ---- attention ------------------------------------------------------------------------- */

typedef struct att_ctx {
    const int *len;
    int B, NH, D;
    float p;
    uint64_t key;
    const float *R;
} att_ctx;

/* sum(out * R) of the training forward in double, the mask drawn by the same hash. */
static double att_loss(const double *qkv, void *vctx)
{
    const att_ctx *c = vctx;
    const int H = c->NH * c->D, H3 = 3 * H;
    const uint32_t thr = cpu_dropout_threshold(c->p);
    double s = 0;
    size_t tok = 0, prob = 0;
    for (int b = 0; b < c->B; b++) {
        const int T = c->len[b];
        for (int h = 0; h < c->NH; h++, prob += (size_t)T * T)
            for (int i = 0; i < T; i++) {
                double P[T], m = -INFINITY, sum = 0;
                for (int j = 0; j < T; j++) {
                    double dot = 0;
                    for (int d = 0; d < c->D; d++)
                        dot += qkv[(tok + i) * H3 + h * c->D + d] *
                               qkv[(tok + j) * H3 + H + h * c->D + d];
                    P[j] = dot / sqrt((double)c->D);
                    m = P[j] > m ? P[j] : m;
                }
                for (int j = 0; j < T; j++)
                    sum += P[j] = exp(P[j] - m);
                for (int j = 0; j < T; j++) {
                    double keep = c->p <= 0 ? 1.0
                                  : cpu_dropout_bits(c->key, prob + (size_t)i * T + j) >= thr
                                          ? 1.0 / (1.0 - c->p)
                                          : 0.0;
                    for (int d = 0; d < c->D; d++)
                        s += P[j] / sum * keep * qkv[(tok + j) * H3 + 2 * H + h * c->D + d] *
                             c->R[(tok + i) * H + h * c->D + d];
                }
            }
        tok += (size_t)T;
    }
    return s;
}

static void test_attention(const int *len, int B, int NH, int D, float p, int with_fd)
{
    printf("attention B %d NH %d D %d dropout %g\n", B, NH, D, p);
    const int H = NH * D;
    size_t N = 0;
    int t_max = 0;
    for (int b = 0; b < B; b++) {
        N += (size_t)len[b];
        t_max = len[b] > t_max ? len[b] : t_max;
    }
    const uint64_t key = cpu_dropout_key(42, 7);
    const size_t nq = N * 3 * H, no = N * H, np = cpu_attention_probs_size(len, B, NH);
    float *qkv = rand_buf(nq, 1.5f), *R = rand_buf(no, 1.0f);
    float *out = zero_buf(no), *out_ref = zero_buf(no), *probs = zero_buf(np);
    float *g = zero_buf(nq), *g_ref = zero_buf(nq);
    float *scratch = malloc(cpu_attention_train_scratch(t_max, D, 3) * sizeof(float));

    cpu_attention_train(out, probs, qkv, len, B, NH, D, p, key, scratch, 3);
    cpu_attention_train_ref(out_ref, qkv, len, B, NH, D, p, key);
    CHECK(close_to_f("forward vs ref", out, out_ref, no), "attention forward vs ref");
    if (p == 0.0f) {
        cpu_attention_ref(out_ref, qkv, len, B, NH, D);
        CHECK(close_to_f("forward vs the inference ref", out, out_ref, no),
              "attention train forward vs inference ref");
    }
    /* Every probability row sums to 1. */
    double worst_row = 0;
    for (size_t at = 0, b = 0; b < (size_t)B; b++)
        for (int r = 0; r < NH * len[b]; r++, at += (size_t)len[b]) {
            double s = 0;
            for (int j = 0; j < len[b]; j++)
                s += probs[at + j];
            worst_row = fmax(worst_row, fabs(s - 1.0));
        }
    CHECK(worst_row < 1e-5, "probability rows sum to 1 (worst %.3g)", worst_row);

    cpu_attention_backward(g, R, qkv, probs, len, B, NH, D, p, key, scratch, 3);
    cpu_attention_backward_ref(g_ref, R, qkv, len, B, NH, D, p, key);
    CHECK(close_to_f("backward fast vs ref", g, g_ref, nq), "attention backward fast vs ref");
    if (with_fd) {
        att_ctx ctx = { len, B, NH, D, p, key, R };
        double *g_fd = malloc(nq * sizeof *g_fd);
        fd_gradient(att_loss, &ctx, qkv, nq, g_fd);
        CHECK(close_to("backward vs finite differences", g, g_fd, nq), "attention vs fd");
        CHECK(close_to("backward ref vs finite differences", g_ref, g_fd, nq),
              "attention ref vs fd");
        free(g_fd);
    }
    for (int t = 0; t < N_THREADS; t++) {
        float *o2 = zero_buf(no), *g2 = zero_buf(nq);
        cpu_attention_train(o2, probs, qkv, len, B, NH, D, p, key, scratch, thread_counts[t]);
        cpu_attention_backward(g2, R, qkv, probs, len, B, NH, D, p, key, scratch, thread_counts[t]);
        CHECK(!memcmp(o2, out, no * sizeof *o2) && !memcmp(g2, g, nq * sizeof *g2),
              "attention with %d threads is identical", thread_counts[t]);
        free(o2), free(g2);
    }
    free(qkv), free(R), free(out), free(out_ref), free(probs), free(g), free(g_ref), free(scratch);
}

/* ---- embedding ------------------------------------------------------------------------- */

static void test_embedding(void)
{
    printf("embedding backward\n");
    enum { V = 11, P = 9, TT = 2, H = 37, B = 3 };
    const int len[B] = { 4, 9, 1 }, pad = 0;
    int ids[14];
    for (int i = 0; i < 14; i++)
        ids[i] = i % 5 == 2 ? 6 : (int)(test_urand() * V); /* id 6 repeats; id 0 (pad) may occur */
    ids[3] = pad;
    float *word = rand_buf(V * H, 1), *pos = rand_buf(P * H, 1), *type = rand_buf(TT * H, 1);
    float *sum = zero_buf(14 * H), *dsum = rand_buf(14 * H, 1);
    cpu_embedding_sum(sum, ids, len, B, word, pos, type, H);
    /* The sum matches cpu_embedding before its LayerNorm: compare through LayerNorm. */
    float *ln_w = rand_buf(H, 1), *ln_b = rand_buf(H, 1), *a = zero_buf(14 * H),
          *b = zero_buf(14 * H);
    cpu_embedding(a, ids, len, B, word, pos, type, ln_w, ln_b, H, 1e-12f);
    cpu_layernorm(b, sum, ln_w, ln_b, 14, H, 1e-12f);
    CHECK(!memcmp(a, b, 14 * H * sizeof(float)), "embedding sum + LayerNorm = cpu_embedding");

    /* The gradient of sum(sum * dsum) is a scatter-add; the fast and the reference paths
     * must agree, touch no unused row, and skip the pad id in the word table. */
    const size_t n = (V + P + TT) * H;
    float *g = rand_buf(n, 1), *g_ref = malloc(n * sizeof(float)),
          *start = malloc(n * sizeof(float));
    memcpy(g_ref, g, n * sizeof(float));
    memcpy(start, g, n * sizeof(float));
    cpu_embedding_backward(g, g + V * H, g + (V + P) * H, dsum, ids, len, B, H, pad);
    cpu_embedding_backward_ref(g_ref, g_ref + V * H, g_ref + (V + P) * H, dsum, ids, len, B, H,
                               pad);
    CHECK(close_to_f("fast vs ref", g, g_ref, n), "embedding backward fast vs ref");
    double *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++)
        want[i] = start[i];
    for (int bb = 0, t0 = 0; bb < B; t0 += len[bb], bb++)
        for (int t = 0; t < len[bb]; t++)
            for (int c = 0; c < H; c++) {
                double d = dsum[(size_t)(t0 + t) * H + c];
                if (ids[t0 + t] != pad)
                    want[(size_t)ids[t0 + t] * H + c] += d;
                want[(size_t)(V + t) * H + c] += d;
                want[(size_t)(V + P) * H + c] += d;
            }
    CHECK(close_to("fast vs the scatter written out", g, want, n), "embedding backward exact");
    CHECK(!memcmp(g + (V + P + 1) * H, start + (V + P + 1) * H, H * sizeof(float)) &&
                  !memcmp(g + pad * H, start + pad * H, H * sizeof(float)),
          "token type 1 and the pad row are untouched");
    free(word), free(pos), free(type), free(sum), free(dsum), free(ln_w), free(ln_b), free(a);
    free(b), free(g), free(g_ref), free(start), free(want);
}

/* ---- dropout --------------------------------------------------------------------------- */

static void test_dropout(void)
{
    printf("dropout\n");
    const size_t n = 1 << 20;
    const float p = 0.1f;
    float *x = rand_buf(n, 1.0f), *y = zero_buf(n), *z = zero_buf(n);
    for (size_t i = 0; i < n; i++)
        x[i] = x[i] == 0.0f ? 1.0f : x[i];
    const uint64_t key = cpu_dropout_key(1234, 5);
    cpu_dropout(y, x, NULL, n, p, key, 0);
    size_t kept = 0, exact = 0;
    for (size_t i = 0; i < n; i++) {
        kept += y[i] != 0.0f;
        exact += y[i] == 0.0f || y[i] == x[i] * (1.0f / (1.0f - p));
    }
    /* The kept fraction is binomial: 5 standard deviations of n trials. */
    double frac = (double)kept / n, sd = sqrt(p * (1 - p) / n);
    printf("  kept %.5f of %zu (expected %.2f, sd %.2g)\n", frac, n, 1 - p, sd);
    CHECK(fabs(frac - (1 - p)) < 5 * sd, "kept fraction %.5f", frac);
    CHECK(exact == n, "kept elements are scaled by exactly 1/(1-p) (%zu of %zu)", exact, n);

    /* Same key: same mask, for any thread count and any split of the tensor. */
    for (int t = 0; t < N_THREADS; t++) {
        cpu_set_threads(thread_counts[t]);
        cpu_dropout(z, x, NULL, 1000, p, key, 0);
        cpu_dropout(z + 1000, x + 1000, NULL, n - 1000, p, key, 1000);
        CHECK(!memcmp(y, z, n * sizeof *y), "same mask with %d threads and a split",
              thread_counts[t]);
    }
    cpu_set_threads(0);
    /* Another key (seed or tensor): another mask, about as different as two random ones. */
    const uint64_t keys[] = { cpu_dropout_key(1235, 5), cpu_dropout_key(1234, 6) };
    for (int k = 0; k < 2; k++) {
        cpu_dropout(z, x, NULL, n, p, keys[k], 0);
        size_t differ = 0;
        for (size_t i = 0; i < n; i++)
            differ += (y[i] == 0.0f) != (z[i] == 0.0f);
        double want = 2 * p * (1 - p);
        CHECK(fabs((double)differ / n - want) < 0.01,
              "another key differs in %.4f of elements "
              "(random masks: %.2f)",
              (double)differ / n, want);
    }
    /* The residual form adds (maybe as one fused multiply-add: to an ulp), and p = 0 passes
     * through unchanged. */
    float *r = rand_buf(n, 1.0f);
    cpu_dropout(z, x, r, n, p, key, 0);
    size_t sum_ok = 0;
    for (size_t i = 0; i < n; i++)
        sum_ok += fabsf(z[i] - (r[i] + y[i])) <= 2.4e-7f * (fabsf(r[i]) + fabsf(y[i]));
    CHECK(sum_ok == n, "res + dropout(x)");
    cpu_dropout(z, x, NULL, n, 0.0f, key, 0);
    CHECK(!memcmp(z, x, n * sizeof *x), "p = 0 copies");
    CHECK(cpu_dropout_threshold(0.0f) == 0 && cpu_dropout_threshold(0.5f) == 0x80000000u,
          "thresholds");
    /* The mask bits are uniform: each of 16 bins of the top 4 bits holds about 1/16. */
    size_t bins[16] = { 0 };
    for (size_t i = 0; i < n; i++)
        bins[cpu_dropout_bits(key, i) >> 28]++;
    double chi2 = 0, e = n / 16.0;
    for (int k = 0; k < 16; k++)
        chi2 += (bins[k] - e) * (bins[k] - e) / e;
    CHECK(chi2 < 50, "mask bits uniform (chi2 %.1f on 15 degrees of freedom)", chi2);
    free(x), free(y), free(z), free(r);
}

int main(void)
{
    test_seed(0x2545f4914f6cdd1dull);
    test_matmul(5, 7, 3);
    test_matmul(9, 17, 13);
    test_matmul(130, 65, 70);
    test_matmul(3000, 33, 70); /* enough work for 3 threads */
    test_layernorm(3, 5, 1);
    test_layernorm(7, 37, 1);
    test_layernorm(100, 96, 0);
    test_layernorm(1000, 64, 0); /* enough work for 3 threads */
    test_gelu();
    test_xent(10, 7);
    test_xent(200, 33);
    const int len1[] = { 3, 1, 5 };
    test_attention(len1, 3, 2, 3, 0.0f, 1);
    test_attention(len1, 3, 2, 3, 0.3f, 1);
    const int len2[] = { 37, 2, 20, 64 };
    test_attention(len2, 4, 3, 16, 0.0f, 0);
    test_attention(len2, 4, 3, 16, 0.1f, 0);
    const int len3[] = { 64, 100, 37, 128 }; /* enough work for 3 threads */
    test_attention(len3, 4, 4, 16, 0.1f, 0);
    test_embedding();
    test_dropout();
    return check_done();
}
