/* asr_test_kind.h — a node kind "test.asr" that drives svc_asr (services/asr_node.c) over an
 * engine a test writes, the pieces those engines share, and the kinds table that puts it
 * beside the library's: what the tests of the ASR node without a recognizer share.
 */
#ifndef TESTS_SERVICES_ASR_TEST_KIND_H
#define TESTS_SERVICES_ASR_TEST_KIND_H

#include <string.h>

#include "sdk/base/alloc.h"
#include "sdk/lib/kinds.h"
#include "services/asr.h"

static inline parley_status test_asr_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    (void)port;
    return svc_asr_process(state, node, msg);
}

static inline void test_asr_destroy(void *state)
{
    svc_asr_free(state);
}

/* What the tests' engines share: a stream of `size` zeroed bytes into *out; an end with
 * nothing to do; a copy of `words` as the transcript or hypothesis into *text. */
static inline parley_status test_asr_stream_new(size_t size, void **out)
{
    *out = pl_calloc(1, size);
    return *out ? PARLEY_OK : pl_nomem("a test engine's stream");
}

static inline parley_status test_asr_end(void *stream)
{
    (void)stream;
    return PARLEY_OK;
}

static inline parley_status test_asr_words(const char *words, char **text)
{
    *text = pl_strdup(words);
    return *text ? PARLEY_OK : pl_nomem("a transcript");
}

/* The kind whose create() is `create_fn` (it makes the svc_asr over the test's engine). */
#define TEST_ASR_KIND(create_fn, what)                                                    \
    {                                                                                     \
        .name = "test.asr", .doc = (what), .ports = svc_asr_ports, .create = (create_fn), \
        .process = test_asr_process, .destroy = test_asr_destroy                          \
    }

/* lib_kinds, then the NULL-ended `extra`, into kinds (room for cap, NULL-ended); 0 when it
 * does not fit. */
static inline int test_kinds_with(const pipe_kind **kinds, size_t cap,
                                  const pipe_kind *const *extra)
{
    size_t n = 0, k = 0;
    while (lib_kinds[n])
        n++;
    while (extra[k])
        k++;
    if (n + k + 1 > cap)
        return 0;
    memcpy(kinds, lib_kinds, n * sizeof *kinds);
    memcpy(kinds + n, extra, (k + 1) * sizeof *kinds);
    return 1;
}

#endif
