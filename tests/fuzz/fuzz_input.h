/* fuzz_input.h — what every libFuzzer harness here shares: a scratch folder for the inputs
 * whose entry point reads a path, and the check that aborts on a broken promise.
 *
 * fuzz_dir() is $PARLEY_FUZZ_TMP/PID when PARLEY_FUZZ_TMP is set (tests/fuzz/run_fuzz.sh
 * points it into the build folder, so a crash leaves its files there), else a fresh
 * /tmp/parley-fuzz-XXXXXX made once per process and removed at a normal exit.
 * fuzz_expect_refusal() holds a failed load to the library's promise: a status with a
 * message, never PARLEY_ERR_INTERNAL.
 * fuzz_write() puts the input there under a fixed name, replacing the last one. FUZZ_EXPECT
 * aborts with a message, so libFuzzer keeps the input as a crash. Not a test kit:
 * tests/check.h is for the unit tests.
 */
#ifndef TESTS_FUZZ_FUZZ_INPUT_H
#define TESTS_FUZZ_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parley/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_EXPECT(cond, ...)                                                  \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            abort();                                                            \
        }                                                                       \
    } while (0)

static char fuzz_tmp[512];
static int fuzz_tmp_ours;

static inline void fuzz_cleanup(void)
{
    char cmd[600];
    if (fuzz_tmp_ours && snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_tmp) < (int)sizeof cmd)
        (void)!system(cmd);
}

static inline const char *fuzz_dir(void)
{
    if (fuzz_tmp[0])
        return fuzz_tmp;
    const char *env = getenv("PARLEY_FUZZ_TMP");
    if (env && *env) {
        snprintf(fuzz_tmp, sizeof fuzz_tmp, "%s/%ld", env, (long)getpid());
        char cmd[600];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s'", fuzz_tmp);
        FUZZ_EXPECT(system(cmd) == 0, "cannot make %s", fuzz_tmp);
    } else {
        snprintf(fuzz_tmp, sizeof fuzz_tmp, "/tmp/parley-fuzz-XXXXXX");
        FUZZ_EXPECT(mkdtemp(fuzz_tmp) != NULL, "mkdtemp");
        fuzz_tmp_ours = 1;
        atexit(fuzz_cleanup);
    }
    return fuzz_tmp;
}

/* A failed load must say why: a status that is not a bug (PARLEY_ERR_INTERNAL), with a
 * message. */
static inline void fuzz_expect_refusal(parley_status st)
{
    FUZZ_EXPECT(st > PARLEY_OK && st < PARLEY_ERR_INTERNAL, "status %d: %s", (int)st,
                parley_errmsg());
    FUZZ_EXPECT(parley_errmsg() && *parley_errmsg(), "status %d without a message", (int)st);
}

/* Writes data to fuzz_dir()/name (replaced) and returns its path (static storage). */
static inline const char *fuzz_write(const char *name, const uint8_t *data, size_t size)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    FILE *f = fopen(path, "wb");
    FUZZ_EXPECT(f != NULL, "cannot write %s", path);
    FUZZ_EXPECT(fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write %s", path);
    return path;
}

#endif
