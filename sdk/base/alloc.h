/* alloc.h — the library's allocation entry points, routed through parley_set_allocator().
 *
 * Every heap allocation in parley goes through these so tests can fail the Nth one and
 * check that each failure is clean. They never abort: callers handle NULL.
 */
#ifndef SDK_BASE_ALLOC_H
#define SDK_BASE_ALLOC_H

#include <stddef.h>

void *pl_malloc(size_t n);
void *pl_calloc(size_t count, size_t size); /* zeroed; NULL on overflow */
void *pl_realloc(void *p, size_t n);
void pl_free(void *p);
char *pl_strdup(const char *s);
char *pl_strndup(const char *s, size_t n);

/* How many allocations have failed on this thread so far. Code that calls a library which
 * hides the cause of its failures (cJSON answers NULL both for bad JSON and for no memory)
 * compares it before and after the call to tell the two apart. */
unsigned long pl_alloc_failures(void);

#endif
