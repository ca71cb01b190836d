/* test_header_c.c — the public headers compile as strict C99 with every warning on. */
#include "parley/parley.h"

int main(void)
{
    parley_nlu_params p = parley_nlu_params_default();
    return p.top_k > 0 ? 0 : 1;
}
