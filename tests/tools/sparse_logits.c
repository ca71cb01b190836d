/* sparse_logits.c — a test tool: runs texts through bert_run_pieces (the path every caller
 * of the model takes) on a model with sparse features, and writes what Python needs to
 * recompute the logits with the torch reference.
 *
 *     sparse_logits MODEL_DIR OUT_JSON < texts.txt
 *
 * One text per stdin line. OUT_JSON: {"seqs": [{"ids": [T], "words": [T] (the word of each
 * token, -1 for [CLS] and [SEP]), "intent": [NI], "slot": [[NS] per piece after [CLS]],
 * "sent": [[feature, value], ...], "tok": [[[feature, value], ...] per token]}, ...]}, the
 * rows those of bert_sparse_rows. tests/nlu/sparse/test_sparse_ref.py compares. Exit status
 * 0, or 1 with the reason on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/bert.h"

enum { MAX_TEXTS = 64 };

typedef struct out {
    FILE *f;
    const bert_model *m;
    const bert_sparse_batch *x;
    size_t first_tok; /* [CLS] of the sequence being written */
} out;

static void write_row(FILE *f, const sf_rows *r, int row)
{
    fputc('[', f);
    for (int k = r->start[row]; k < r->start[row + 1]; k++)
        fprintf(f, "%s[%d, %.9g]", k > r->start[row] ? ", " : "", r->index[k], (double)r->value[k]);
    fputc(']', f);
}

static parley_status write_seq(void *ctx, int i, const wp_tokens *tk, int n_pieces,
                               const float *intent_logits, const float *slot_logits)
{
    out *o = ctx;
    const int NI = o->m->cfg.n_intents, NS = o->m->cfg.n_slots, T = n_pieces + 2;
    int ids[T];
    bert_seq_write(o->m, tk, ids);
    fprintf(o->f, "%s{\"ids\": [", i ? ",\n" : "");
    for (int t = 0; t < T; t++)
        fprintf(o->f, "%s%d", t ? ", " : "", ids[t]);
    fputs("], \"words\": [-1", o->f);
    for (int p = 0; p < n_pieces; p++)
        fprintf(o->f, ", %d", tk->pieces[p].word);
    fputs(", -1], \"intent\": [", o->f);
    for (int k = 0; k < NI; k++)
        fprintf(o->f, "%s%.9g", k ? ", " : "", (double)intent_logits[k]);
    fputs("], \"slot\": [", o->f);
    for (int p = 0; p < n_pieces; p++) {
        fputs(p ? ", [" : "[", o->f);
        for (int k = 0; k < NS; k++)
            fprintf(o->f, "%s%.9g", k ? ", " : "", (double)slot_logits[(size_t)p * NS + k]);
        fputc(']', o->f);
    }
    fputs("], \"sent\": ", o->f);
    write_row(o->f, &o->x->sent, i);
    fputs(", \"tok\": [", o->f);
    for (int t = 0; t < T; t++) {
        if (t)
            fputs(", ", o->f);
        write_row(o->f, &o->x->tok, (int)o->first_tok + t);
    }
    fputs("]}", o->f);
    o->first_tok += (size_t)T;
    return PARLEY_OK;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s MODEL_DIR OUT_JSON < texts.txt\n", argv[0]);
        return 1;
    }
    bert_model *m = NULL;
    char *texts[MAX_TEXTS], line[4096];
    wp_tokens tk[MAX_TEXTS];
    bert_sparse_batch x = { 0 };
    int n = 0;
    parley_status st = bert_model_load(argv[1], &m);
    while (st == PARLEY_OK && n < MAX_TEXTS && fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        texts[n] = strdup(line);
        if ((st = wp_tokenize(m->vocab, line, strlen(line), &tk[n])) == PARLEY_OK)
            st = bert_sparse_rows(m, line, &tk[n], &x);
        n++;
    }
    FILE *f = st == PARLEY_OK ? fopen(argv[2], "w") : NULL;
    out o = { f, m, &x, 0 };
    if (f) {
        fputs("{\"seqs\": [\n", f);
        st = bert_run_pieces(m, (const char *const *)texts, tk, n, NULL, NULL, write_seq, &o);
        fputs("]}\n", f);
        if (fclose(f) != 0)
            st = PARLEY_ERR_IO;
    }
    int rc = st == PARLEY_OK && f ? 0 : 1;
    if (rc)
        fprintf(stderr, "sparse_logits: %s: %s\n", parley_status_str(st), parley_errmsg());
    for (int i = 0; i < n; i++) {
        free(texts[i]);
        wp_tokens_free(&tk[i]);
    }
    bert_sparse_batch_free(&x);
    bert_model_free(m);
    return rc;
}
