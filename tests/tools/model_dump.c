/* model_dump.c — a test tool: loads a model directory and saves it again (F32, "bert."
 * prefix), so a Python test can compare what the C loader read against its own reading
 * of the same files. Usage: model_dump IN_DIR OUT_DIR. Not installed, not part of the SDK.
 */
#include <stdio.h>

#include "nlu/model.h"

int main(int argc, char **argv)
{
    bert_model *m = NULL;
    parley_status st;
    if (argc != 3) {
        fprintf(stderr, "usage: model_dump IN_DIR OUT_DIR\n");
        return 2;
    }
    if ((st = bert_model_load(argv[1], &m)) != PARLEY_OK ||
        (st = bert_model_save(m, argv[2])) != PARLEY_OK) {
        fprintf(stderr, "model_dump: %s: %s\n", parley_status_str(st), parley_errmsg());
        bert_model_free(m);
        return 1;
    }
    printf("%zu parameters\n", m->n_params);
    bert_model_free(m);
    return 0;
}
