/* test_cuda_ops.cu — every CUDA kernel of nlu/cuda/ops.cuh against its CPU reference.
 *
 * Each op runs on random data of odd and even sizes in FP32 storage (within 1e-4 relative,
 * the CPU references being exact to double) and in FP16 and BF16 (within 1e-2 and 3e-2 of
 * the output's scale). Layouts differ on purpose: the GPU pads each sequence to T rows, the
 * CPU packs them, so the tests also check that padding rows never leak into real ones.
 * Exits 77 where no CUDA device exists.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#include "nlu/cuda/ops.cuh"
extern "C" {
#include "nlu/cpu/ops.h"
#include "nlu/cuda/cuda_bert.h"
#include "tests/check.h"
}

typedef std::vector<float> vec;

static vec rnd(size_t n, float lo, float hi)
{
    vec v(n);
    for (auto &x : v)
        x = lo + (hi - lo) * (rand() / (float)RAND_MAX);
    return v;
}

template <typename S>
static S host_from(float x);
template <>
float host_from<float>(float x)
{
    return x;
}
template <>
__half host_from<__half>(float x)
{
    return __float2half_rn(x);
}
template <>
__nv_bfloat16 host_from<__nv_bfloat16>(float x)
{
    return __float2bfloat16_rn(x);
}
static float host_to(float x)
{
    return x;
}
static float host_to(__half x)
{
    return __half2float(x);
}
static float host_to(__nv_bfloat16 x)
{
    return __bfloat162float(x);
}

/* Device copies, freed at exit of the test that made them (the process ends soon after). */
template <typename S>
static S *up(const vec &v)
{
    std::vector<S> h(v.size());
    for (size_t i = 0; i < v.size(); i++)
        h[i] = host_from<S>(v[i]);
    S *d = NULL;
    cudaMalloc(&d, h.size() * sizeof(S) + 1);
    cudaMemcpy(d, h.data(), h.size() * sizeof(S), cudaMemcpyHostToDevice);
    return d;
}

static int *up_int(const std::vector<int> &v)
{
    int *d = NULL;
    cudaMalloc(&d, v.size() * sizeof(int) + 1);
    cudaMemcpy(d, v.data(), v.size() * sizeof(int), cudaMemcpyHostToDevice);
    return d;
}

template <typename S>
static vec down(const S *d, size_t n)
{
    std::vector<S> h(n);
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "kernel: %s",
          cudaGetErrorString(cudaGetLastError()));
    cudaMemcpy(h.data(), d, n * sizeof(S), cudaMemcpyDeviceToHost);
    vec v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = host_to(h[i]);
    return v;
}

template <typename S>
static double tol()
{
    return sizeof(S) == 4                                        ? 1e-4
           : sizeof(S) == 2 && cuda_type<S>::value == CUDA_R_16F ? 1e-2
                                                                 : 3e-2;
}

template <typename S>
static const char *name()
{
    return sizeof(S) == 4 ? "fp32" : cuda_type<S>::value == CUDA_R_16F ? "fp16" : "bf16";
}

/* got vs want, relative to each value for FP32 and to the largest for the 16-bit types. */
template <typename S>
static void same(const vec &got, const vec &want, const char *op, int a)
{
    double scale = 0;
    for (float x : want)
        scale = fabs(x) > scale ? fabs(x) : scale;
    size_t at = 0;
    double w = check_close(got.data(), want.data(), want.size(), tol<S>(), tol<S>() * scale, &at);
    CHECK(w <= 1, "%s %s (%d): element %zu: gpu %g cpu %g", op, name<S>(), a, at, got[at],
          want[at]);
}

/* Sequences of lengths len padded to T: packed index of (b, t) rows, -1 for padding. */
static std::vector<int> packed_rows(const std::vector<int> &len, int T)
{
    std::vector<int> rows(len.size() * T, -1);
    for (size_t b = 0, at = 0; b < len.size(); at += len[b], b++)
        for (int t = 0; t < len[b]; t++)
            rows[b * T + t] = (int)(at + t);
    return rows;
}

template <typename S>
static void test_embedding(int H, std::vector<int> len, int T)
{
    const int V = 53, P = T, B = (int)len.size();
    vec word = rnd((size_t)V * H, -1, 1), pos = rnd((size_t)P * H, -1, 1);
    vec type = rnd(2 * (size_t)H, -1, 1), w = rnd(H, 0.5, 1.5), b = rnd(H, -0.5, 0.5);
    std::vector<int> rows = packed_rows(len, T), ids_pad(rows.size(), 0), ids;
    for (size_t r = 0; r < rows.size(); r++)
        if (rows[r] >= 0)
            ids_pad[r] = rand() % V;
    for (size_t r = 0; r < rows.size(); r++)
        if (rows[r] >= 0)
            ids.push_back(ids_pad[r]);
    vec want(ids.size() * H);
    cpu_embedding_ref(want.data(), ids.data(), len.data(), B, word.data(), pos.data(), type.data(),
                      w.data(), b.data(), H, 1e-12f);
    S *out = up<S>(vec(rows.size() * H));
    cuda_embedding<S>(out, up_int(ids_pad), B * T, T, up<float>(word), up<float>(pos),
                      up<float>(type), up<float>(w), up<float>(b), H, 1e-12f, 0);
    vec all = down(out, rows.size() * H), got(want.size());
    for (size_t r = 0; r < rows.size(); r++)
        if (rows[r] >= 0)
            std::copy(all.begin() + r * H, all.begin() + (r + 1) * H, got.begin() + rows[r] * H);
    same<S>(got, want, "embedding", H);
}

template <typename S>
static void test_residual_layernorm(int M, int H)
{
    vec h = rnd((size_t)M * H, -2, 2), x = rnd((size_t)M * H, -2, 2), bias = rnd(H, -1, 1);
    vec w = rnd(H, 0.5, 1.5), b = rnd(H, -0.5, 0.5), xb = x, want((size_t)M * H);
    for (size_t i = 0; i < xb.size(); i++)
        xb[i] += bias[i % H];
    cpu_layernorm_ref(want.data(), xb.data(), h.data(), w.data(), b.data(), M, H, 1e-12f);
    S *dh = up<S>(h);
    cuda_bias_residual_layernorm<S>(dh, up<S>(x), up<float>(bias), up<float>(w), up<float>(b), M, H,
                                    1e-12f, 0);
    same<S>(down(dh, want.size()), want, "bias_residual_layernorm", H);
}

template <typename S>
static void test_pointwise(int M, int n)
{
    vec x = rnd((size_t)M * n, -4, 4), bias = rnd(n, -1, 1), xb = x, gelu(x.size()), th(x.size());
    for (size_t i = 0; i < xb.size(); i++) {
        xb[i] += bias[i % n];
        th[i] = (float)tanh((double)xb[i]);
    }
    cpu_gelu_ref(gelu.data(), xb.data(), xb.size());
    S *d = up<S>(x);
    cuda_bias_gelu<S>(d, up<float>(bias), M, n, 0);
    same<S>(down(d, x.size()), gelu, "bias_gelu", n);
    d = up<S>(x);
    cuda_bias_tanh<S>(d, up<float>(bias), M, n, 0);
    same<S>(down(d, x.size()), th, "bias_tanh", n);
}

template <typename S>
static void test_bias_add(int M, int n)
{
    vec x = rnd((size_t)M * n, -4, 4), bias = rnd(n, -1, 1), want = x;
    for (size_t i = 0; i < want.size(); i++)
        want[i] += bias[i % n];
    S *d = up<S>(x);
    cuda_bias_add<S>(d, up<float>(bias), M, n, 0);
    same<S>(down(d, x.size()), want, "bias_add", n);
}

enum att_path { ATT_FUSED, ATT_GEMM, ATT_FLASH };
static const char *const att_name[] = { "attention", "attention_gemm", "attention_flash" };

template <typename S>
static void test_attention(int NH, int D, std::vector<int> len, int T, att_path path)
{
    const int H = NH * D, B = (int)len.size();
    std::vector<int> rows = packed_rows(len, T);
    vec qkv = rnd(rows.size() * 3 * H, -1.5, 1.5), bias = rnd(3 * (size_t)H, -0.5, 0.5);
    size_t N = 0;
    for (int l : len)
        N += l;
    vec packed(N * 3 * H), want(N * H);
    for (size_t r = 0; r < rows.size(); r++)
        if (rows[r] >= 0)
            for (int i = 0; i < 3 * H; i++)
                packed[(size_t)rows[r] * 3 * H + i] = qkv[r * 3 * H + i] + bias[i];
    cpu_attention_ref(want.data(), packed.data(), len.data(), B, NH, D);
    S *out = up<S>(vec(rows.size() * H, 7.0f));
    S *dq = NULL; /* the flash and GEMM paths take QKV with its bias added */
    if (path != ATT_FUSED) {
        dq = up<S>(qkv);
        cuda_bias_add<S>(dq, up<float>(bias), B * T, 3 * H, 0);
    }
    if (path == ATT_FUSED) {
        size_t smem = cuda_attention_smem<S>(T, D);
        CHECK(cuda_attention_prepare<S>(smem) == PARLEY_OK, "prepare: %s", parley_errmsg());
        cuda_attention<S>(out, up<S>(qkv), up<float>(bias), up_int(len), B, T, NH, D, 0);
    } else if (path == ATT_FLASH) {
        cuda_attention_flash<S>(out, dq, up_int(len), B, T, NH, D, 0);
    } else {
        cublasHandle_t h;
        cublasCreate(&h);
        const size_t sc = (size_t)B * NH * T * T;
        const void **ptrs = NULL;
        cudaMalloc((void **)&ptrs, 6 * (size_t)B * NH * sizeof(void *));
        float *scores = up<float>(vec(sc));
        S *probs = up<S>(vec(sc, 7.0f)); /* every value must be written */
        cuda_attention_pointers<S>(ptrs, out, dq, scores, probs, B, T, NH, D, 0);
        CHECK(cuda_attention_gemm<S>(h, ptrs, scores, probs, up_int(len), B, T, NH, D, 0) ==
                      PARLEY_OK,
              "attention_gemm: %s", parley_errmsg());
        down(out, 1); /* finish before the handle goes */
        cublasDestroy(h);
    }
    vec all = down(out, rows.size() * H), got(want.size());
    for (size_t r = 0; r < rows.size(); r++) {
        if (rows[r] >= 0)
            std::copy(all.begin() + r * H, all.begin() + (r + 1) * H, got.begin() + rows[r] * H);
        else
            for (int i = 0; i < H; i++)
                CHECK(all[r * H + i] == 0.0f, "%s %s: padding row %zu not zero", att_name[path],
                      name<S>(), r);
    }
    same<S>(got, want, att_name[path], D);
}

template <typename S>
static void test_linear(int M, int IC, int OC, int f32_out)
{
    vec x = rnd((size_t)M * IC, -1, 1), w = rnd((size_t)OC * IC, -1, 1), want((size_t)M * OC);
    cpu_matmul_ref(want.data(), x.data(), w.data(), NULL, M, IC, OC);
    cublasHandle_t h;
    cublasCreate(&h);
    void *y = f32_out ? (void *)up<float>(want) : (void *)up<S>(want);
    CHECK(cuda_linear<S>(h, y, f32_out, up<S>(x), IC, up<S>(w), M, IC, OC) == PARLEY_OK,
          "linear: %s", parley_errmsg());
    same<S>(f32_out ? down((float *)y, want.size()) : down((S *)y, want.size()), want, "linear",
            IC);
    cublasDestroy(h);
}

/* cuda_linear_bias against the CPU's x · w^T + bias; where cuBLASLt offers no algorithm the
 * call must say so (PARLEY_ERR_UNSUPPORTED) without touching y, and the model falls back. */
template <typename S>
static void test_linear_bias(int M, int IC, int OC, int f32_out)
{
    vec x = rnd((size_t)M * IC, -1, 1), w = rnd((size_t)OC * IC, -1, 1), bias = rnd(OC, -1, 1);
    vec want((size_t)M * OC), before((size_t)M * OC, 7.0f);
    cpu_matmul_ref(want.data(), x.data(), w.data(), bias.data(), M, IC, OC);
    cublasLtHandle_t lt;
    CHECK(cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS, "cublasLtCreate");
    void *ws = NULL;
    cudaMalloc(&ws, CUDA_BLAS_WORKSPACE);
    void *y = f32_out ? (void *)up<float>(before) : (void *)up<S>(before);
    const void *b = f32_out ? (const void *)up<float>(bias) : (const void *)up<S>(bias);
    parley_status st = cuda_linear_bias<S>(lt, ws, CUDA_BLAS_WORKSPACE, y, f32_out, up<S>(x), IC,
                                           up<S>(w), b, M, IC, OC, 0);
    vec got = f32_out ? down((float *)y, want.size()) : down((S *)y, want.size());
    printf("linear_bias %s %d x %d -> %d%s: %s\n", name<S>(), M, IC, OC,
           f32_out ? " (f32 out)" : "",
           st == PARLEY_OK ? "cuBLASLt epilogue" : "cuda_linear + cuda_bias_add");
    CHECK(st == PARLEY_OK || st == PARLEY_ERR_UNSUPPORTED, "linear_bias: %s", parley_errmsg());
    if (st == PARLEY_OK)
        same<S>(got, want, "linear_bias", IC);
    else
        same<S>(got, before, "linear_bias (unsupported leaves y)", IC);
    cudaFree(ws);
    cublasLtDestroy(lt);
}

/* cuda_linear_split_k against the CPU's x · w^T, its FP32 slices summed here; then the
 * LayerNorm kernel that sums them against the CPU's bias + residual + LayerNorm. */
template <typename S>
static void test_linear_split_k(int M, int K, int N, int splits)
{
    vec x = rnd((size_t)M * K, -1, 1), w = rnd((size_t)N * K, -1, 1), bias = rnd(N, -1, 1);
    vec want((size_t)M * N);
    cpu_matmul_ref(want.data(), x.data(), w.data(), NULL, M, K, N);
    cublasHandle_t blas;
    cublasCreate(&blas);
    float *y = up<float>(vec((size_t)splits * M * N, 7.0f));
    CHECK(cuda_linear_split_k<S>(blas, y, up<S>(x), K, up<S>(w), M, K, N, splits) == PARLEY_OK,
          "linear_split_k %s: %s", name<S>(), parley_errmsg());
    vec all = down(y, (size_t)splits * M * N), got((size_t)M * N, 0.0f);
    for (int p = 0; p < splits; p++)
        for (size_t i = 0; i < got.size(); i++)
            got[i] += all[p * got.size() + i];
    same<S>(got, want, "linear_split_k", K);
    vec h = rnd((size_t)M * N, -2, 2), lw = rnd(N, 0.5, 1.5), lb = rnd(N, -0.5, 0.5);
    vec xb = got, ln((size_t)M * N);
    for (size_t i = 0; i < xb.size(); i++)
        xb[i] += bias[i % N];
    cpu_layernorm_ref(ln.data(), xb.data(), h.data(), lw.data(), lb.data(), M, N, 1e-12f);
    S *dh = up<S>(h);
    cuda_partials_residual_layernorm<S>(dh, y, splits, up<float>(bias), up<float>(lw),
                                        up<float>(lb), M, N, 1e-12f, 0);
    same<S>(down(dh, ln.size()), ln, "partials_residual_layernorm", N);
    cublasDestroy(blas);
}

template <typename S>
static void test_all(void)
{
    test_embedding<S>(40, { 5, 1, 12 }, 16);
    test_embedding<S>(768, { 128, 77 }, 128);
    /* Odd widths take the one-value-per-thread kernels; widths of whole 128-bit words the
     * vectorized ones (LayerNorm: a block per row under 1,024 rows, a warp per row from 1,100
     * rows; 1100 rows: more than one launch's rows for the element-wise kernels, so each
     * block strides). */
    test_residual_layernorm<S>(7, 100);
    test_residual_layernorm<S>(5, 104);
    test_residual_layernorm<S>(6, 256);
    test_residual_layernorm<S>(33, 768);
    test_residual_layernorm<S>(3, 1024);
    test_residual_layernorm<S>(9, 2048);
    test_residual_layernorm<S>(1100, 104);  /* a warp per row: 1 word a lane, lanes idle */
    test_residual_layernorm<S>(1100, 768);  /* 3 (FP16/BF16) or 6 (FP32) words a lane */
    test_residual_layernorm<S>(1024, 2048); /* 8 words a lane; FP32: past the warp kernel */
    test_pointwise<S>(13, 129);
    test_pointwise<S>(1100, 2304);
    for (att_path p : { ATT_FUSED, ATT_GEMM }) {
        test_attention<S>(3, 16, { 9, 1, 32, 17 }, 32, p);
        test_attention<S>(2, 24, { 40, 3 }, 40, p);
        test_attention<S>(12, 64, { 128, 100, 5 }, 128, p);
    }
    /* the GEMM path's softmax: rows in registers up to 512 keys, then read again */
    test_attention<S>(2, 16, { 200, 37 }, 200, ATT_GEMM);
    test_attention<S>(2, 16, { 300, 300 }, 300, ATT_GEMM);
    test_attention<S>(2, 16, { 600, 1 }, 600, ATT_GEMM);
    /* the flash kernel (FP16, BF16): every head size it has; one key tile and several, a
     * last tile cut short, query blocks past the length, T not a multiple of 64; blocks of
     * one warp where the grid is small (all but the last), of four where it fills the GPU */
    CHECK(cuda_attention_flash_supported<S>(64) == (sizeof(S) == 2), "flash %s: supported",
          name<S>());
    CHECK(!cuda_attention_flash_supported<S>(24), "flash %s: heads of 24", name<S>());
    if (cuda_attention_flash_supported<S>(64)) {
        test_attention<S>(3, 16, { 9, 1, 32, 17 }, 32, ATT_FLASH);
        test_attention<S>(2, 32, { 40, 3 }, 40, ATT_FLASH);
        test_attention<S>(12, 64, { 128, 100, 5, 65 }, 128, ATT_FLASH);
        test_attention<S>(4, 128, { 72, 33, 1 }, 72, ATT_FLASH);
        test_attention<S>(2, 64, { 200, 37, 129 }, 200, ATT_FLASH);
        test_attention<S>(2, 16, { 600, 1 }, 600, ATT_FLASH);
        std::vector<int> many(48);
        for (size_t i = 0; i < many.size(); i++)
            many[i] = 1 + (int)(i * 53 % 128);
        test_attention<S>(12, 64, many, 128, ATT_FLASH);
    }
    test_linear<S>(5, 40, 7, 0);
    test_linear<S>(64, 768, 3072, 0);
    test_linear<S>(9, 256, 73, 1);
    test_linear_bias<S>(128, 768, 2304, 0); /* BERT-base's QKV at batch 1, sequence 128 */
    test_linear_bias<S>(5, 40, 7, 0);
    test_linear_bias<S>(128, 768, 73, 1); /* the slot head */
    test_linear_bias<S>(1, 768, 7, 1);    /* the intent head */
    /* split over K: BERT-base's attention-out and FFN-out at batch 1, sequence 128 as
     * bert.cu cuts them; rows not a multiple of 64, one slice */
    test_linear_split_k<S>(128, 768, 768, 4);
    test_linear_split_k<S>(128, 3072, 768, 4);
    test_linear_split_k<S>(100, 3072, 768, 6);
    test_linear_split_k<S>(9, 128, 192, 2);
    test_linear_split_k<S>(5, 64, 64, 1);
}

int main(void)
{
    if (cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    srand(3);
    test_all<float>();
    test_all<__half>();
    test_all<__nv_bfloat16>();
    test_bias_add<float>(11, 73);
    test_bias_add<__half>(5, 40);
    return check_done();
}
