/* bert_logits.c — a test tool: runs bert_forward on token-id sequences and writes the logits.
 *
 *     bert_logits MODEL_DIR OUT_FILE [THREADS] < ids.txt
 *
 * Reads one sequence per stdin line (space-separated token ids), runs them all as one packed
 * batch, and writes OUT_FILE as raw little-endian float32: the intent logits (B, NI) then the
 * slot logits (N, NS), N the total token count. tests/nlu/test_bert_ref.py compares them with
 * the PyTorch reference. It is not a user-facing command (that is `parley nlu`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/bert.h"
#include "nlu/model/model.h"

/* Appends *v to a growing int array; exits on allocation failure (a test tool). */
static void push(int **a, size_t *n, size_t *cap, int v)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        *a = realloc(*a, *cap * sizeof **a);
        if (!*a) {
            fprintf(stderr, "bert_logits: out of memory\n");
            exit(1);
        }
    }
    (*a)[(*n)++] = v;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: bert_logits MODEL_DIR OUT_FILE [THREADS] < ids.txt\n");
        return 2;
    }
    bert_set_threads(argc == 4 ? atoi(argv[3]) : 0);
    bert_model *m = NULL;
    if (bert_model_load(argv[1], &m) != PARLEY_OK) {
        fprintf(stderr, "bert_logits: %s\n", parley_errmsg());
        return 1;
    }
    int *ids = NULL, *len = NULL;
    size_t n_ids = 0, cap_ids = 0, n_seq = 0, cap_seq = 0;
    char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        size_t before = n_ids;
        for (char *p = strtok(line, " \t\r\n"); p; p = strtok(NULL, " \t\r\n"))
            push(&ids, &n_ids, &cap_ids, atoi(p));
        if (n_ids > before)
            push(&len, &n_seq, &cap_seq, (int)(n_ids - before));
    }
    const size_t ni = (size_t)m->cfg.n_intents, ns = (size_t)m->cfg.n_slots;
    float *out = malloc((n_seq * ni + n_ids * ns + 1) * sizeof *out);
    bert_batch b = { (int)n_seq, len, ids };
    int rc = 1;
    if (!out)
        fprintf(stderr, "bert_logits: out of memory\n");
    else if (bert_forward(m, &b, out, out + n_seq * ni) != PARLEY_OK)
        fprintf(stderr, "bert_logits: %s\n", parley_errmsg());
    else {
        FILE *f = fopen(argv[2], "wb");
        size_t n = n_seq * ni + n_ids * ns;
        int ok = f && fwrite(out, sizeof *out, n, f) == n;
        ok = f && fclose(f) == 0 && ok;
        if (ok)
            rc = 0;
        else
            fprintf(stderr, "bert_logits: cannot write %s\n", argv[2]);
    }
    free(out);
    free(ids);
    free(len);
    bert_model_free(m);
    return rc;
}
