/* embedding.c — BERT's input embeddings: word + position + token type, then LayerNorm.
 *
 * Sequences are packed, so a token's position is its index within its own sequence; token
 * types are all 0 (parley feeds single sentences). The ids are trusted here: bert_forward
 * checks them against the vocabulary and the lengths against the position table first.
 * The sum itself is cpu_embedding_sum (embedding_backward.c), shared with training, which
 * keeps the sum as the LayerNorm's input.
 */
#include "nlu/cpu/ops.h"
#include "nlu/cpu/ops_backward.h"

// out (N, H) <- ids (N), len (B), word (V, H), pos (P, H), type (TT, H)
void cpu_embedding(float *out, const int *ids, const int *len, int B, const float *word,
                   const float *pos, const float *type, const float *ln_w, const float *ln_b, int H,
                   float eps)
{
    cpu_embedding_sum(out, ids, len, B, word, pos, type, H);
    size_t n = 0;
    for (int b = 0; b < B; b++)
        n += (size_t)len[b];
    cpu_layernorm(out, out, ln_w, ln_b, (int)n, H, eps);
}

void cpu_embedding_ref(float *out, const int *ids, const int *len, int B, const float *word,
                       const float *pos, const float *type, const float *ln_w, const float *ln_b,
                       int H, float eps)
{
    size_t n = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < len[b]; t++, n++)
            for (int c = 0; c < H; c++)
                out[n * H + c] = (float)((double)word[(size_t)ids[n] * H + c] +
                                         pos[(size_t)t * H + c] + type[c]);
    cpu_layernorm_ref(out, out, NULL, ln_w, ln_b, (int)n, H, eps);
}
