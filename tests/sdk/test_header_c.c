/* test_header_c.c — the public headers compile as strict C99 with every warning on, and
 * each header's defaults link and read as documented. */
#include "parley/parley.h"

int main(void)
{
    parley_nlu_params p = parley_nlu_params_default();
    parley_train_params t = parley_train_params_default();
    parley_pretrain_params pt = parley_pretrain_params_default();
    parley_eval_params e = parley_eval_params_default();
    parley_train_event first = PARLEY_TRAIN_START;
    int ok = p.top_k > 0 && t.epochs == PARLEY_AUTO /* sized to the data */ &&
             t.shape.layers == PARLEY_AUTO && pt.train.shape.layers == 4 && !t.data &&
             !t.progress && pt.train.epochs == 10 && pt.mask_prob > 0 && e.batch == 32 &&
             !e.on_example && first == 0 && parley_train_default_lr(1) < parley_train_default_lr(0);
    return ok ? 0 : 1;
}
