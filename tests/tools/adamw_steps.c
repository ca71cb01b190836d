/* adamw_steps.c — runs adamw_step for tests/nlu/train/test_adamw.py.
 *
 * Usage: adamw_steps IN OUT. IN (little-endian): int64 n, int64 steps, float32 lr, beta1,
 * beta2, eps, weight_decay, uint8 decay[n], float32 params[n], float32 grads[steps][n].
 * OUT: float32 params[n], m[n], v[n] after the steps (t = 1 .. steps).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nlu/train/bert_train.h"

static int read_all(FILE *f, void *p, size_t size, size_t n)
{
    return fread(p, size, n, f) == n;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s IN OUT\n", argv[0]);
        return 1;
    }
    FILE *f = fopen(argv[1], "rb");
    int64_t n, steps;
    float hp[5];
    if (!f || !read_all(f, &n, sizeof n, 1) || !read_all(f, &steps, sizeof steps, 1) ||
        !read_all(f, hp, sizeof *hp, 5) || n <= 0 || steps <= 0) {
        fprintf(stderr, "%s: bad header\n", argv[1]);
        return 1;
    }
    unsigned char *decay = malloc((size_t)n);
    float *p = malloc((size_t)n * sizeof *p), *g = malloc((size_t)n * sizeof *g);
    float *m = calloc((size_t)n, sizeof *m), *v = calloc((size_t)n, sizeof *v);
    if (!read_all(f, decay, 1, (size_t)n) || !read_all(f, p, sizeof *p, (size_t)n)) {
        fprintf(stderr, "%s: truncated\n", argv[1]);
        return 1;
    }
    adamw_params ap = {
        .lr = hp[0], .beta1 = hp[1], .beta2 = hp[2], .eps = hp[3], .weight_decay = hp[4]
    };
    for (long t = 1; t <= steps; t++) {
        if (!read_all(f, g, sizeof *g, (size_t)n)) {
            fprintf(stderr, "%s: truncated at step %ld\n", argv[1], t);
            return 1;
        }
        adamw_step(p, g, m, v, decay, (size_t)n, t, &ap);
    }
    fclose(f);
    FILE *o = fopen(argv[2], "wb");
    if (!o || fwrite(p, sizeof *p, (size_t)n, o) != (size_t)n ||
        fwrite(m, sizeof *m, (size_t)n, o) != (size_t)n ||
        fwrite(v, sizeof *v, (size_t)n, o) != (size_t)n || fclose(o) != 0) {
        perror(argv[2]);
        return 1;
    }
    free(decay), free(p), free(g), free(m), free(v);
    return 0;
}
