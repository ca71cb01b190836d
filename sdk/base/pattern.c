/* pattern.c — patterns over PCRE2, with every cost bounded (see pattern.h).
 *
 * PCRE2's own match limit counts steps per start position, so a value of L bytes could
 * cost L times the limit. The step budget here covers the whole search instead: the
 * pattern is compiled with an automatic callout before every item, and the callout counts
 * (every backtrack leads to one) and stops the search when the budget is spent. PCRE2's
 * match, depth and heap limits are set too, through a match context. Memory goes through
 * parley's allocator. This file knows nothing about slots, turns or features.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>

#include "sdk/base/pattern.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

struct pl_pattern {
    pcre2_general_context *gc; /* parley's allocator, for the code and every search */
    pcre2_code *code;
};

/* Case-insensitive UTF-8 (invalid sequences in a value never match), `$` only at the end,
 * no \C, and a callout before every item for the step budget. */
static const uint32_t compile_options = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_CASELESS |
                                        PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_BACKSLASH_C |
                                        PCRE2_AUTO_CALLOUT;

static void *gc_malloc(PCRE2_SIZE n, void *data)
{
    (void)data;
    return pl_malloc(n);
}

static void gc_free(void *p, void *data)
{
    (void)data;
    pl_free(p);
}

/* PCRE2's words for an error code, in buf. */
static const char *error_text(int code, PCRE2_UCHAR *buf, size_t cap)
{
    if (pcre2_get_error_message(code, buf, cap) < 0)
        snprintf((char *)buf, cap, "PCRE2 error %d", code);
    return (const char *)buf;
}

/* The status and detail of a failed pcre2_compile() of len bytes; sets *where. */
static parley_status compile_error(int err, PCRE2_SIZE offset, size_t len, size_t *where)
{
    PCRE2_UCHAR msg[256];
    *where = offset;
    switch (err) {
    case PCRE2_ERROR_HEAP_FAILED: return pl_nomem("compiling a pattern");
    case PCRE2_ERROR_PATTERN_STRING_TOO_LONG:
        *where = 0;
        return pl_fail(PARLEY_ERR_CONFIG, "%zu bytes, longer than the %d a pattern may have", len,
                       PL_PATTERN_MAX_BYTES);
    case PCRE2_ERROR_PARENTHESES_NEST_TOO_DEEP:
        return pl_fail(PARLEY_ERR_CONFIG, "parentheses nested deeper than the %d levels allowed",
                       PL_PATTERN_MAX_NEST);
    case PCRE2_ERROR_PATTERN_TOO_LARGE:
        return pl_fail(PARLEY_ERR_CONFIG,
                       "too large once compiled (PCRE2 allows about 64 K code units; a count "
                       "such as {1,100} on a group copies the group that many times)");
    case PCRE2_ERROR_BACKSLASH_C_CALLER_DISABLED:
        return pl_fail(PARLEY_ERR_CONFIG, "\\C (one byte of a character) is not allowed");
    default: return pl_fail(PARLEY_ERR_CONFIG, "%s", error_text(err, msg, sizeof msg));
    }
}

parley_status pl_pattern_compile(const char *src, size_t len, pl_pattern **out, size_t *where)
{
    *out = NULL;
    *where = 0;
    pcre2_compile_context *cc = NULL;
    parley_status st = PARLEY_OK;
    pl_pattern *p = pl_calloc(1, sizeof *p);
    if (!p || !(p->gc = pcre2_general_context_create(gc_malloc, gc_free, NULL)) ||
        !(cc = pcre2_compile_context_create(p->gc))) {
        st = pl_nomem("compiling a pattern");
        goto fail;
    }
    pcre2_set_max_pattern_length(cc, PL_PATTERN_MAX_BYTES);
    pcre2_set_parens_nest_limit(cc, PL_PATTERN_MAX_NEST);
    int err;
    PCRE2_SIZE offset;
    p->code = pcre2_compile((PCRE2_SPTR)src, len, compile_options, &err, &offset, cc);
    if (!p->code) {
        st = compile_error(err, offset, len, where);
        goto fail;
    }
    pcre2_compile_context_free(cc);
    *out = p;
    return PARLEY_OK;
fail:
    pcre2_compile_context_free(cc);
    pl_pattern_free(p);
    return st;
}

/* The automatic callout: one step of the search; a negative answer ends it. */
static int count_step(pcre2_callout_block *block, void *data)
{
    (void)block;
    unsigned long *steps = data;
    return ++*steps > PL_PATTERN_MAX_STEPS ? PCRE2_ERROR_CALLOUT : 0;
}

parley_status pl_pattern_match(const pl_pattern *p, const char *value, size_t len, int *found)
{
    size_t span[2];
    return pl_pattern_find(p, value, len, 0, found, span);
}

parley_status pl_pattern_find(const pl_pattern *p, const char *value, size_t len, size_t from,
                              int *found, size_t span[2])
{
    *found = 0;
    unsigned long steps = 0;
    parley_status st = PARLEY_OK;
    pcre2_match_data *md = pcre2_match_data_create(1, p->gc);
    pcre2_match_context *mc = pcre2_match_context_create(p->gc);
    if (!md || !mc) {
        st = pl_nomem("matching a pattern");
        goto done;
    }
    pcre2_set_match_limit(mc, PL_PATTERN_MAX_STEPS);
    pcre2_set_depth_limit(mc, PL_PATTERN_MAX_DEPTH);
    pcre2_set_heap_limit(mc, PL_PATTERN_MAX_HEAP_KIB);
    pcre2_set_callout(mc, count_step, &steps);
    int rc = pcre2_match(p->code, (PCRE2_SPTR)value, len, from, 0, md, mc);
    switch (rc) {
    case PCRE2_ERROR_NOMATCH: break;
    case PCRE2_ERROR_NOMEMORY: st = pl_nomem("matching a pattern"); break;
    case PCRE2_ERROR_CALLOUT:
    case PCRE2_ERROR_MATCHLIMIT:
        st = pl_fail(PARLEY_ERR_UNSUPPORTED,
                     "the pattern needs more than the %d steps a search may take on this value",
                     PL_PATTERN_MAX_STEPS);
        break;
    case PCRE2_ERROR_DEPTHLIMIT:
        st = pl_fail(PARLEY_ERR_UNSUPPORTED,
                     "the pattern needs more than the %d nested backtracking points a search "
                     "may use on this value",
                     PL_PATTERN_MAX_DEPTH);
        break;
    case PCRE2_ERROR_HEAPLIMIT:
        st = pl_fail(PARLEY_ERR_UNSUPPORTED,
                     "the pattern needs more than the %d KiB a search may use on this value",
                     PL_PATTERN_MAX_HEAP_KIB);
        break;
    default:
        if (rc >= 0) {
            const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            *found = 1;
            span[0] = ov[0];
            span[1] = ov[1] > ov[0] ? ov[1] : ov[0];
        } else {
            PCRE2_UCHAR msg[256];
            st = pl_fail(PARLEY_ERR_INTERNAL, "matching a pattern: %s",
                         error_text(rc, msg, sizeof msg));
        }
    }
done:
    pcre2_match_context_free(mc);
    pcre2_match_data_free(md);
    return st;
}

void pl_pattern_free(pl_pattern *p)
{
    if (!p)
        return;
    pcre2_code_free(p->code);
    pcre2_general_context_free(p->gc);
    pl_free(p);
}
