/* alloc.c — the replaceable allocator (parley_set_allocator) and pl_malloc and friends.
 *
 * The default is the C library's allocator. Tests install one that fails the Nth call to
 * prove every allocation failure is handled; cJSON is pointed at the same functions so its
 * allocations fail the same way.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

static parley_allocator current;
static int custom;
static _Thread_local unsigned long failures;

unsigned long pl_alloc_failures(void)
{
    return failures;
}

void *pl_malloc(size_t n)
{
    if (n == 0)
        n = 1;
    void *p = custom ? current.malloc_fn(n, current.user_data) : malloc(n);
    failures += !p;
    return p;
}

void *pl_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    void *p = pl_malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void *pl_realloc(void *p, size_t n)
{
    if (n == 0)
        n = 1;
    void *q = custom ? current.realloc_fn(p, n, current.user_data) : realloc(p, n);
    failures += !q;
    return q;
}

void pl_free(void *p)
{
    if (!p)
        return;
    if (custom)
        current.free_fn(p, current.user_data);
    else
        free(p);
}

char *pl_strndup(const char *s, size_t n)
{
    char *d = pl_malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *pl_strdup(const char *s)
{
    return pl_strndup(s, strlen(s));
}

static void *cjson_malloc(size_t n)
{
    return pl_malloc(n);
}

parley_status parley_set_allocator(const parley_allocator *a)
{
    if (a && (!a->malloc_fn || !a->realloc_fn || !a->free_fn))
        return pl_fail(PARLEY_ERR_INVALID_ARG,
                       "parley_set_allocator: all three functions must be set");
    if (a) {
        current = *a;
        custom = 1;
        cJSON_Hooks hooks = { cjson_malloc, pl_free };
        cJSON_InitHooks(&hooks);
    } else {
        custom = 0;
        cJSON_InitHooks(NULL);
    }
    return PARLEY_OK;
}
