/* metrics.c — the metrics registry of a graph: counters, gauges and histograms as atomics,
 * their names and label sets checked, and the Prometheus text exposition format 0.0.4.
 *
 * A registry is a list of families (one name, help and type each), and each family a list
 * of series (one label set each), in the order they were registered; a series never moves
 * once made, so the pointers handed out stay valid until the registry is freed. Updates
 * touch only the series' atomics; registration and rendering walk the lists under the
 * registry's mutex. Doubles (gauges, histogram sums) live in 64-bit atomics as their bit
 * pattern, added to with a compare-and-swap loop. What the engine measures and when is
 * graph_metrics.c's; this file knows no metric by name.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/graph_impl.h"
#include "sdk/base/alloc.h"
#include "sdk/base/sync.h"

typedef enum mtype { M_COUNTER, M_GAUGE, M_HISTOGRAM } mtype;

static const char *const type_names[] = { "counter", "gauge", "histogram" };

struct pipe_counter {
    atomic_uint_least64_t v;
};

struct pipe_gauge {
    atomic_uint_least64_t bits; /* a double */
};

struct pipe_histogram {
    size_t n;                      /* finite bounds */
    double *bounds;                /* (n) strictly increasing */
    atomic_uint_least64_t *counts; /* (n + 1) per bucket, not cumulative; the last is +Inf */
    atomic_uint_least64_t sum;     /* a double */
};

typedef struct series {
    struct series *next;
    char *labels; /* "" for none */
    union {
        pipe_counter c;
        pipe_gauge g;
        pipe_histogram h;
    } u;
} series;

typedef struct family {
    struct family *next;
    char *name;
    char *help;
    mtype type;
    series *first;
    series **tail;
} family;

struct pipe_metrics {
    pthread_mutex_t mu;
    family *first;
    family **tail;
};

/* ---- values ------------------------------------------------------------------------- */

static uint64_t bits_of(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static double double_of(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static void add_double(atomic_uint_least64_t *a, double delta)
{
    uint64_t old = atomic_load_explicit(a, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(a, &old, bits_of(double_of(old) + delta),
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

void pipe_counter_add(pipe_counter *c, uint64_t n)
{
    atomic_fetch_add_explicit(&c->v, n, memory_order_relaxed);
}

uint64_t pipe_counter_get(const pipe_counter *c)
{
    return atomic_load_explicit(&((pipe_counter *)c)->v, memory_order_relaxed);
}

void pipe_gauge_set(pipe_gauge *gauge, double v)
{
    atomic_store_explicit(&gauge->bits, bits_of(v), memory_order_relaxed);
}

void pipe_gauge_add(pipe_gauge *gauge, double delta)
{
    add_double(&gauge->bits, delta);
}

double pipe_gauge_get(const pipe_gauge *gauge)
{
    return double_of(atomic_load_explicit(&((pipe_gauge *)gauge)->bits, memory_order_relaxed));
}

void pipe_histogram_observe(pipe_histogram *h, double v)
{
    size_t lo = 0, hi = h->n; /* the first bound >= v, or n (+Inf) */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->bounds[mid] >= v)
            hi = mid;
        else
            lo = mid + 1;
    }
    atomic_fetch_add_explicit(&h->counts[lo], 1, memory_order_relaxed);
    add_double(&h->sum, v);
}

/* ---- names and labels ----------------------------------------------------------------- */

static int name_char(char c, int first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !memcmp(s + n - k, suffix, k);
}

static parley_status check_name(const char *name, mtype type)
{
    if (strncmp(name, "parley_", 7) != 0)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "metric '%s': the name must start with 'parley_'",
                       name);
    for (const char *p = name; *p; p++)
        if (!name_char(*p, p == name))
            return pl_fail(PARLEY_ERR_INVALID_ARG,
                           "metric '%s': '%c' at %zu is not a letter, digit, '_' or ':'", name, *p,
                           (size_t)(p - name));
    if ((type == M_COUNTER) != ends_with(name, "_total"))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "metric '%s': %s", name,
                       type == M_COUNTER ? "a counter's name ends in '_total'"
                                         : "only a counter's name ends in '_total'");
    return PARLEY_OK;
}

/* Checks `name="value"(,name="value")*`: label names [a-zA-Z_][a-zA-Z0-9_]*, none reserved
 * (le, __*) or repeated; values escaped (\\, \", \n) with no raw newline. */
static parley_status check_labels(const char *metric, const char *labels)
{
    enum { MAX_LABELS = 16 };
    const char *names[MAX_LABELS];
    size_t lens[MAX_LABELS], n = 0;
    const char *p = labels;
    while (*p) {
        const char *start = p;
        while (name_char(*p, p == start) && *p != ':')
            p++;
        size_t len = (size_t)(p - start);
        if (!len || p[0] != '=' || p[1] != '"')
            return pl_fail(PARLEY_ERR_INVALID_ARG,
                           "metric '%s': labels '%s': expected name=\"value\" at byte %zu", metric,
                           labels, (size_t)(start - labels));
        if ((len == 2 && !memcmp(start, "le", 2)) || (len >= 2 && !memcmp(start, "__", 2)))
            return pl_fail(PARLEY_ERR_INVALID_ARG, "metric '%s': label '%.*s' is reserved", metric,
                           (int)len, start);
        for (size_t i = 0; i < n; i++)
            if (lens[i] == len && !memcmp(names[i], start, len))
                return pl_fail(PARLEY_ERR_INVALID_ARG, "metric '%s': label '%.*s' is repeated",
                               metric, (int)len, start);
        if (n == MAX_LABELS)
            return pl_fail(PARLEY_ERR_INVALID_ARG, "metric '%s': more than %d labels", metric,
                           MAX_LABELS);
        names[n] = start;
        lens[n++] = len;
        for (p += 2; *p != '"'; p++) {
            int bad =
                    !*p || *p == '\n' || (*p == '\\' && p[1] != '\\' && p[1] != '"' && p[1] != 'n');
            if (bad)
                return pl_fail(PARLEY_ERR_INVALID_ARG,
                               "metric '%s': labels '%s': label '%.*s' has %s at byte %zu", metric,
                               labels, (int)len, start,
                               *p ? "a raw newline or a bad escape" : "no closing quote",
                               (size_t)(p - labels));
            if (*p == '\\')
                p++;
        }
        p++;
        if (*p == ',' && p[1])
            p++;
        else if (*p)
            return pl_fail(PARLEY_ERR_INVALID_ARG, "metric '%s': labels '%s': %s at byte %zu",
                           metric, labels, *p == ',' ? "a ',' ends them" : "expected ','",
                           (size_t)(p - labels));
    }
    return PARLEY_OK;
}

char *pipe_metrics_label(const char *name, const char *value)
{
    size_t n = strlen(name) + 4;
    for (const char *v = value; *v; v++)
        n += (*v == '\\' || *v == '"' || *v == '\n') ? 2 : 1;
    char *s = pl_malloc(n);
    if (!s) {
        pl_nomem("the label %s", name);
        return NULL;
    }
    char *o = s + sprintf(s, "%s=\"", name);
    for (const char *v = value; *v; v++) {
        if (*v == '\\' || *v == '"' || *v == '\n')
            *o++ = '\\';
        *o++ = *v == '\n' ? 'n' : *v;
    }
    memcpy(o, "\"", 2);
    return s;
}

/* ---- the registry ---------------------------------------------------------------------- */

parley_status pipe_metrics_new(pipe_metrics **out)
{
    parley_status st;
    pipe_metrics *m = pl_calloc(1, sizeof *m);
    *out = NULL;
    if (!m)
        return pl_nomem("the metrics registry");
    if ((st = pl_mutex_init(&m->mu, "the metrics registry")) != PARLEY_OK) {
        pl_free(m);
        return st;
    }
    m->tail = &m->first;
    *out = m;
    return PARLEY_OK;
}

static void free_series(series *s, mtype type)
{
    if (type == M_HISTOGRAM) {
        pl_free(s->u.h.bounds);
        pl_free((void *)s->u.h.counts);
    }
    pl_free(s->labels);
    pl_free(s);
}

void pipe_metrics_free(pipe_metrics *m)
{
    if (!m)
        return;
    for (family *f = m->first, *next; f; f = next) {
        next = f->next;
        for (series *s = f->first, *sn; s; s = sn) {
            sn = s->next;
            free_series(s, f->type);
        }
        pl_free(f->name);
        pl_free(f->help);
        pl_free(f);
    }
    pthread_mutex_destroy(&m->mu);
    pl_free(m);
}

/* Whether a histogram's name plus a suffix it writes is `other` (or the names are equal). */
static int names_clash(const char *hist, const char *other)
{
    static const char *const suffixes[] = { "_bucket", "_sum", "_count" };
    size_t n = strlen(hist);
    if (!strcmp(hist, other))
        return 1;
    for (size_t i = 0; i < 3; i++)
        if (!strncmp(other, hist, n) && !strcmp(other + n, suffixes[i]))
            return 1;
    return 0;
}

/* The family `name` (made when new), or NULL with pl_fail detail. Under m->mu. */
static family *get_family(pipe_metrics *m, const char *name, const char *help, mtype type)
{
    for (family *f = m->first; f; f = f->next) {
        if (!strcmp(f->name, name)) {
            if (f->type != type || strcmp(f->help, help)) {
                pl_fail(PARLEY_ERR_INVALID_ARG,
                        "metric '%s': registered before as a %s with another help or type", name,
                        type_names[f->type]);
                return NULL;
            }
            return f;
        }
        if ((f->type == M_HISTOGRAM && names_clash(f->name, name)) ||
            (type == M_HISTOGRAM && names_clash(name, f->name))) {
            pl_fail(PARLEY_ERR_INVALID_ARG,
                    "metric '%s': clashes with the histogram series of '%s'", name, f->name);
            return NULL;
        }
    }
    family *f = pl_calloc(1, sizeof *f);
    if (!f || !(f->name = pl_strdup(name)) || !(f->help = pl_strdup(help))) {
        if (f)
            pl_free(f->name);
        pl_free(f);
        pl_nomem("metric '%s'", name);
        return NULL;
    }
    f->type = type;
    f->tail = &f->first;
    *m->tail = f;
    m->tail = &f->next;
    return f;
}

static parley_status init_histogram(pipe_histogram *h, const double *bounds, size_t n)
{
    h->n = n;
    h->bounds = pl_malloc((n ? n : 1) * sizeof *h->bounds);
    h->counts = pl_calloc(n + 1, sizeof *h->counts);
    if (!h->bounds || !h->counts)
        return pl_nomem("a histogram's buckets");
    memcpy(h->bounds, bounds, n * sizeof *bounds);
    return PARLEY_OK;
}

/* The series of `name` with `labels`, registered when new; NULL with pl_fail detail. */
static series *reg(pipe_graph *g, const char *name, const char *help, const char *labels,
                   mtype type, const double *bounds, size_t n)
{
    parley_status st;
    if (!g || !name || !help) {
        pl_fail(PARLEY_ERR_INVALID_ARG, "pipe_metrics: NULL argument");
        return NULL;
    }
    labels = labels ? labels : "";
    if ((st = check_name(name, type)) != PARLEY_OK ||
        (st = check_labels(name, labels)) != PARLEY_OK)
        return NULL;
    pipe_metrics *m = g->metrics;
    series *s = NULL;
    pthread_mutex_lock(&m->mu);
    family *f = get_family(m, name, help, type);
    for (s = f ? f->first : NULL; s; s = s->next)
        if (!strcmp(s->labels, labels))
            goto done;
    if (!f)
        goto done;
    if (!(s = pl_calloc(1, sizeof *s)) || !(s->labels = pl_strdup(labels)) ||
        (type == M_HISTOGRAM && init_histogram(&s->u.h, bounds, n) != PARLEY_OK)) {
        if (s)
            free_series(s, type);
        s = NULL;
        pl_nomem("metric '%s'", name);
        goto done;
    }
    *f->tail = s;
    f->tail = &s->next;
done:
    pthread_mutex_unlock(&m->mu);
    return s;
}

pipe_counter *pipe_metrics_counter(pipe_graph *g, const char *name, const char *help,
                                   const char *labels)
{
    series *s = reg(g, name, help, labels, M_COUNTER, NULL, 0);
    return s ? &s->u.c : NULL;
}

pipe_gauge *pipe_metrics_gauge(pipe_graph *g, const char *name, const char *help,
                               const char *labels)
{
    series *s = reg(g, name, help, labels, M_GAUGE, NULL, 0);
    return s ? &s->u.g : NULL;
}

pipe_histogram *pipe_metrics_histogram(pipe_graph *g, const char *name, const char *help,
                                       const char *labels, const double *bounds, size_t n)
{
    static const double seconds[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                      0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10 };
    if (!bounds && n == 0) {
        bounds = seconds;
        n = sizeof seconds / sizeof *seconds;
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(bounds[i]) || (i && bounds[i] <= bounds[i - 1])) {
            pl_fail(PARLEY_ERR_INVALID_ARG,
                    "histogram '%s': bound %zu is not finite or not above the one before",
                    name ? name : "?", i);
            return NULL;
        }
    series *s = reg(g, name, help, labels, M_HISTOGRAM, bounds, n);
    return s ? &s->u.h : NULL;
}

/* ---- the exposition format --------------------------------------------------------------- */

typedef struct text {
    char *p;
    size_t len, cap;
    int failed;
} text;

static void put(text *t, const char *fmt, ...) PL_PRINTF(2, 3);
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    for (int tries = 0; tries < 2 && !t->failed; tries++) {
        va_start(ap, fmt);
        int n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
        } else if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        } else {
            size_t cap = (t->cap + (size_t)n + 1) * 2;
            char *p = pl_realloc(t->p, cap);
            if (!p)
                t->failed = 1;
            else
                t->p = p, t->cap = cap;
        }
    }
}

/* The shortest decimal that reads back as v (whole numbers without an exponent), or NaN,
 * +Inf, -Inf. */
static const char *num(char buf[32], double v)
{
    if (isnan(v))
        return "NaN";
    if (isinf(v))
        return v > 0 ? "+Inf" : "-Inf";
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, 32, "%.0f", v);
        return buf;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

static void put_help(text *t, const family *f)
{
    put(t, "# HELP %s ", f->name);
    for (const char *c = f->help; *c; c++)
        put(t, "%s", *c == '\\' ? "\\\\" : *c == '\n' ? "\\n" : (char[]){ *c, 0 });
    put(t, "\n# TYPE %s %s\n", f->name, type_names[f->type]);
}

static void put_histogram(text *t, const char *name, const char *labels, pipe_histogram *h)
{
    char b[32];
    const char *sep = *labels ? "," : "";
    uint64_t total = 0;
    for (size_t i = 0; i <= h->n; i++) {
        total += atomic_load_explicit(&h->counts[i], memory_order_relaxed);
        put(t, "%s_bucket{%s%sle=\"%s\"} %llu\n", name, labels, sep,
            i < h->n ? num(b, h->bounds[i]) : "+Inf", (unsigned long long)total);
    }
    const char *open = *labels ? "{" : "", *close = *labels ? "}" : "";
    put(t, "%s_sum%s%s%s %s\n", name, open, labels, close,
        num(b, double_of(atomic_load_explicit(&h->sum, memory_order_relaxed))));
    put(t, "%s_count%s%s%s %llu\n", name, open, labels, close, (unsigned long long)total);
}

parley_status pipe_metrics_render(pipe_graph *g, char **out, size_t *len)
{
    if (!g || !out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "pipe_metrics_render: NULL argument");
    *out = NULL;
    pipe_metrics_sample(g);
    pipe_metrics *m = g->metrics;
    text t = { pl_malloc(4096), 0, 4096, 0 };
    t.failed = !t.p;
    pthread_mutex_lock(&m->mu);
    for (family *f = m->first; f; f = f->next) {
        put_help(&t, f);
        for (series *s = f->first; s; s = s->next) {
            char b[32];
            const char *open = *s->labels ? "{" : "", *close = *s->labels ? "}" : "";
            if (f->type == M_HISTOGRAM)
                put_histogram(&t, f->name, s->labels, &s->u.h);
            else if (f->type == M_COUNTER)
                put(&t, "%s%s%s%s %llu\n", f->name, open, s->labels, close,
                    (unsigned long long)pipe_counter_get(&s->u.c));
            else
                put(&t, "%s%s%s%s %s\n", f->name, open, s->labels, close,
                    num(b, pipe_gauge_get(&s->u.g)));
        }
    }
    pthread_mutex_unlock(&m->mu);
    if (t.failed) {
        pl_free(t.p);
        return pl_nomem("the metrics text");
    }
    *out = t.p;
    if (len)
        *len = t.len;
    return PARLEY_OK;
}
