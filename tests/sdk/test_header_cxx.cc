// test_header_cxx.cc — the public headers compile as C++ and link from a C++ program.
#include "parley/parley.h"

#include <cstdio>
#include <cstring>

int main()
{
    parley_nlu_params p = parley_nlu_params_default();
    int ok =
            p.top_k > 0 && std::strlen(parley_version()) > 0 &&
            std::strcmp(parley_status_str(PARLEY_ERR_IO), "PARLEY_ERR_IO: input/output error") == 0;
    std::printf("%s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
