// test_header_cxx.cc — the public headers compile as C++ and link from a C++ program.
#include "parley/parley.h"

#include <cstdio>
#include <cstring>

// A training progress callback written in C++, as an application would.
static int on_progress(const parley_train_progress *p, void *user_data)
{
    return p->event == PARLEY_TRAIN_EPOCH && user_data != nullptr;
}

int main()
{
    parley_nlu_params p = parley_nlu_params_default();
    parley_train_params t = parley_train_params_default();
    t.progress = on_progress;
    parley_eval_params e = parley_eval_params_default();
    int ok = p.top_k > 0 && std::strlen(parley_version()) > 0 &&
             std::strcmp(parley_status_str(PARLEY_ERR_IO), "PARLEY_ERR_IO: input/output error") ==
                     0 &&
             t.shape.hidden == PARLEY_AUTO /* sized to the data */ && t.progress != nullptr &&
             e.batch == 32 && parley_train_run(nullptr, nullptr) == PARLEY_ERR_INVALID_ARG;
    std::printf("%s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
