/* model_dump.c — a test tool: loads a model directory and saves it again (F32, "bert."
 * prefix), so a Python test can compare what the C loader read against its own reading
 * of the same files. With --tensors it widens the float tensors of one safetensors file to
 * F32 (sft_read_f32) and writes them to another, values the model loader would refuse
 * (NaN, infinities, huge) included, so the widening itself can be checked bit for bit.
 * Usage: model_dump IN_DIR OUT_DIR | model_dump --tensors IN_FILE OUT_FILE.
 * Not installed, not part of the SDK.
 */
#include <stdio.h>
#include <string.h>

#include "nlu/model/model.h"
#include "nlu/model/safetensors.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"

/* Copies the F32, F16 and BF16 tensors of `in` to `out` as F32, in name order. */
static parley_status widen(const char *in, const char *out)
{
    parley_status st;
    sft_file *f = NULL;
    sft_wtensor *wt = NULL;
    pl_atomic a = { 0 };
    int n = 0;
    if ((st = sft_open(in, &f)) != PARLEY_OK)
        goto done;
    wt = pl_calloc((size_t)f->n_tensors, sizeof *wt);
    if (!wt) {
        st = pl_nomem("the tensor list");
        goto done;
    }
    for (int i = 0; i < f->n_tensors; i++) {
        const sft_tensor *t = &f->tensors[i];
        if (t->dtype != SFT_F32 && t->dtype != SFT_F16 && t->dtype != SFT_BF16)
            continue;
        float *data = pl_malloc((t->numel ? t->numel : 1) * sizeof *data);
        wt[n] = (sft_wtensor){ .name = t->name, .ndim = t->ndim, .data = data };
        memcpy(wt[n++].shape, t->shape, sizeof t->shape);
        if (!data) {
            st = pl_nomem("%s", t->name);
            goto done;
        }
        if ((st = sft_read_f32(f, t, data)) != PARLEY_OK)
            goto done;
    }
    if ((st = pl_atomic_begin(&a, out)) != PARLEY_OK ||
        (st = sft_write_f32(&a, wt, n)) != PARLEY_OK)
        goto done;
    st = pl_atomic_commit(&a);
done:
    pl_atomic_abort(&a);
    for (int i = 0; wt && i < n; i++)
        pl_free((void *)wt[i].data);
    pl_free(wt);
    sft_close(f);
    return st;
}

int main(int argc, char **argv)
{
    bert_model *m = NULL;
    parley_status st;
    int tensors = argc == 4 && !strcmp(argv[1], "--tensors");
    if (argc != 3 && !tensors) {
        fprintf(stderr,
                "usage: model_dump IN_DIR OUT_DIR | model_dump --tensors IN_FILE OUT_FILE\n");
        return 2;
    }
    if (tensors)
        st = widen(argv[2], argv[3]);
    else if ((st = bert_model_load(argv[1], &m)) == PARLEY_OK)
        st = bert_model_save(m, argv[2]);
    if (st != PARLEY_OK) {
        fprintf(stderr, "model_dump: %s: %s\n", parley_status_str(st), parley_errmsg());
        bert_model_free(m);
        return 1;
    }
    if (m)
        printf("%zu parameters\n", m->n_params);
    bert_model_free(m);
    return 0;
}
