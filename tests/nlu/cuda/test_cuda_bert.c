/* test_cuda_bert.c — the whole model on the GPU against the CPU path (bert_forward).
 *
 * Small random models (head sizes 16, 48 and 64: lanes past D idle in the fused kernel, and
 * the flash kernel has no heads of 48, so it falls back to the GEMMs) run batches with one
 * sequence, with mixed lengths (padding inside the batch) and with lengths at the model's
 * limit, in FP32 (logits within 1e-4 relative to the CPU's), FP16 and BF16 (within 1e-2
 * and 2e-2 of the largest logit), with attention fused, as GEMMs and flash. The same batch shape
 * twice checks that a replayed CUDA graph reads the new ids. Bad batches get the CPU path's errors.
 * Exits 77 without a GPU.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/bert.h"
#include "nlu/cuda/cuda_bert.h"
#include "tests/check.h"
#include "tests/nlu/random_model.h"

static float max_abs(const float *x, size_t n)
{
    float m = 0;
    for (size_t i = 0; i < n; i++)
        m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
    return m;
}

/* Runs one batch both ways and compares. */
static void compare(const bert_model *m, cuda_bert *g, cuda_precision prec, int B, const int *len,
                    unsigned seed, const char *what)
{
    const bert_config *c = &m->cfg;
    size_t N = 0;
    for (int i = 0; i < B; i++)
        N += (size_t)len[i];
    int *ids = malloc(N * sizeof *ids);
    float *ci = malloc((size_t)B * c->n_intents * sizeof(float));
    float *cs = malloc(N * c->n_slots * sizeof(float));
    float *gi = malloc((size_t)B * c->n_intents * sizeof(float));
    float *gs = malloc(N * c->n_slots * sizeof(float));
    srand(seed);
    for (size_t i = 0; i < N; i++)
        ids[i] = rand() % c->vocab_size;
    bert_batch b = { B, len, ids };
    CHECK(bert_forward(m, &b, ci, cs) == PARLEY_OK, "%s: cpu: %s", what, parley_errmsg());
    parley_status st = cuda_bert_forward(g, &b, gi, gs);
    CHECK(st == PARLEY_OK, "%s: gpu: %s", what, parley_errmsg());
    if (st == PARLEY_OK) {
        size_t at = 0;
        double rtol = prec == CUDA_PREC_FP32 ? 1e-4 : prec == CUDA_PREC_FP16 ? 1e-2 : 2e-2;
        double ai = rtol * max_abs(ci, (size_t)B * c->n_intents);
        double as = rtol * max_abs(cs, N * c->n_slots);
        double wi = check_close(gi, ci, (size_t)B * c->n_intents, rtol, ai, &at);
        CHECK(wi <= 1, "%s %s: intent logit %zu: gpu %g cpu %g", what, cuda_precision_name(prec),
              at, gi[at], ci[at]);
        double ws = check_close(gs, cs, N * c->n_slots, rtol, as, &at);
        CHECK(ws <= 1, "%s %s: slot logit %zu: gpu %g cpu %g", what, cuda_precision_name(prec), at,
              gs[at], cs[at]);
    }
    free(ids), free(ci), free(cs), free(gi), free(gs);
}

/* Every precision and attention path, with small batches' attention-out and FFN-out products
 * split over K where they can be (widths that are multiples of 64) and whole. */
static void test_model(int H, int NH, int I, int P, float scale)
{
    test_seed(42);
    bert_model *m = test_random_model((test_shape){ 97, H, 2, NH, I, P, 5, 7 }, scale);
    CHECK(m != NULL, "model");
    if (!m)
        return;
    const cuda_attention_mode modes[] = { CUDA_ATT_FUSED, CUDA_ATT_GEMM, CUDA_ATT_FLASH };
    const char *const mode_name[] = { "fused", "gemm", "flash (gemm for fp32)" };
    for (int k = 0; k < 18; k++) {
        int p = k % 3;
        cuda_attention_mode att = modes[k / 3 % 3];
        int split_k = k < 9;
        cuda_bert *g;
        if (cuda_bert_open(m, 0, (cuda_precision)p, &g) != PARLEY_OK) {
            CHECK(0, "open %s: %s", cuda_precision_name((cuda_precision)p), parley_errmsg());
            continue;
        }
        cuda_bert_set_attention(g, att);
        cuda_bert_set_split_k(g, split_k);
        int one[] = { 9 }, mixed[] = { 7, 1, 20, 3, 13 }, full[] = { P, P - 1, 2 };
        int many[40];
        for (int i = 0; i < 40; i++)
            many[i] = 1 + (i * 37) % P;
        char what[96];
        snprintf(what, sizeof what, "H%d NH%d I%d %s attention, split K %s", H, NH, I,
                 mode_name[k / 3 % 3], split_k ? "on" : "off");
        compare(m, g, (cuda_precision)p, 1, one, 1, what);
        compare(m, g, (cuda_precision)p, 5, mixed, 2, what);
        compare(m, g, (cuda_precision)p, 5, mixed, 3, what); /* same shape: graph replay */
        compare(m, g, (cuda_precision)p, 3, full, 4, what);
        compare(m, g, (cuda_precision)p, 40, many, 5, what);

        int bad_len[] = { 3, P + 1 }, ids[64] = { 0 };
        bert_batch b = { 2, bad_len, ids };
        float il[16], sl[1024];
        CHECK(cuda_bert_forward(g, &b, il, sl) == PARLEY_ERR_INVALID_ARG &&
                      strstr(parley_errmsg(), "sequence 1"),
              "too long a sequence: %s", parley_errmsg());
        int ok_len[] = { 2 }, bad_ids[] = { 2, 97 };
        bert_batch b2 = { 1, ok_len, bad_ids };
        CHECK(cuda_bert_forward(g, &b2, il, sl) == PARLEY_ERR_INVALID_ARG &&
                      strstr(parley_errmsg(), "id 97"),
              "id out of range: %s", parley_errmsg());
        cuda_bert_close(g);
    }
    bert_model_free(m);
}

int main(void)
{
    if (cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    test_model(64, 4, 136, 64, 0.08f);   /* D = 16 */
    test_model(96, 2, 200, 128, 0.05f);  /* D = 48 */
    test_model(128, 2, 264, 96, 0.05f);  /* D = 64 */
    test_model(128, 2, 512, 128, 0.05f); /* FFN-out split over K too */
    cuda_bert *g;
    test_seed(1);
    bert_model *m = test_random_model((test_shape){ 50, 32, 1, 2, 40, 16, 3, 3 }, 0.1f);
    CHECK(m && cuda_bert_open(m, 99, CUDA_PREC_FP16, &g) == PARLEY_ERR_DEVICE &&
                  strstr(parley_errmsg(), "cuda:99"),
          "a missing device: %s", parley_errmsg());
    bert_model_free(m);
    return check_done();
}
