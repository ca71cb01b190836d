/* yaml_doc.h — a YAML document as a tree of nodes that remember where they came from.
 *
 * Every YAML reader in parley (the pipeline graph loader, domain files, nlu.yaml) goes
 * through this small API; sdk/base/yaml_doc.c is the only file that includes <yaml.h>.
 * A document is parsed whole into mapping, sequence and scalar nodes; each node keeps its
 * file, line and column (1-based, columns counted in characters like libyaml does), so
 * every later complaint reads "FILE:LINE:COL: message".
 *
 * Scope: one document per stream (a second `---` document is an error); anchors are
 * ignored and aliases (`*name`) are refused; duplicate keys in a mapping are refused; tags
 * are ignored. Scalars keep their text as written (after YAML's own unescaping and
 * folding); the typed getters below interpret that text whether it was quoted or not.
 *
 * A document is immutable after parsing: share it between threads freely.
 */
#ifndef SDK_BASE_YAML_DOC_H
#define SDK_BASE_YAML_DOC_H

#include <stddef.h>

#include "parley/status.h"
#include "sdk/base/error.h"

typedef enum yd_kind {
    YD_SCALAR = 0,
    YD_SEQ = 1,
    YD_MAP = 2,
} yd_kind;

/* How a scalar was written; yd_scalar_pos() needs it to place characters. */
typedef enum yd_style {
    YD_PLAIN = 0,
    YD_SINGLE_QUOTED = 1,
    YD_DOUBLE_QUOTED = 2,
    YD_LITERAL = 3, /* `|` block */
    YD_FOLDED = 4,  /* `>` block */
} yd_style;

typedef struct yd_doc yd_doc;
typedef struct yd_node yd_node;

struct yd_node {
    yd_kind kind;
    const char *file; /* borrowed from the document */
    int line, col;    /* 1-based start; for block scalars, the `|` or `>` indicator */
    const yd_doc *doc;
    /* YD_SCALAR */
    char *str; /* NUL-terminated value (a string holding a NUL is refused at parse time) */
    size_t len;
    yd_style style;
    size_t src_start, src_end; /* byte range of the scalar in the source text */
    /* YD_SEQ: items[0..n). YD_MAP: keys[i] (scalars) map to items[i], in file order. */
    size_t n;
    yd_node **items;
    yd_node **keys;
};

/* Parses a whole file. A syntax error fails with PARLEY_ERR_FORMAT and
 * "FILE:LINE:COL: message"; an unreadable file with PARLEY_ERR_IO. On success *out is owned
 * by the caller (yd_free). An empty document gives a NULL root. */
parley_status yd_parse_file(const char *path, yd_doc **out);
/* Same for text[0..len); `name` stands for the file in positions ("<string>" if NULL). */
parley_status yd_parse_string(const char *name, const char *text, size_t len, yd_doc **out);
/* NULL is a no-op. */
void yd_free(yd_doc *doc);

/* The root node, or NULL for an empty document. Borrowed from the document. */
const yd_node *yd_root(const yd_doc *doc);
/* The file name positions use. Borrowed. */
const char *yd_file(const yd_doc *doc);

/* "mapping", "sequence" or "scalar". */
const char *yd_kind_name(yd_kind kind);

/* Records "FILE:LINE:COL: message" at node n (pl_fail) and returns st. */
parley_status yd_fail(const yd_node *n, parley_status st, const char *fmt, ...) PL_PRINTF(3, 4);
/* Records "FILE:LINE:COL: message" at byte `offset` of scalar n's value (see yd_scalar_pos). */
parley_status yd_fail_at(const yd_node *n, size_t offset, parley_status st, const char *fmt, ...)
        PL_PRINTF(4, 5);

/* The source position of byte `offset` of scalar n's value. Exact for literal blocks (`|`),
 * for plain scalars on one line, and for quoted scalars on one line without escapes; for
 * anything else (folded blocks, multi-line flow scalars, escapes) it is the start of the
 * scalar, which still names the right node. */
void yd_scalar_pos(const yd_node *n, size_t offset, int *line, int *col);

/* The value of `key` in mapping `map`, or NULL when absent (or when map is not a mapping). */
const yd_node *yd_get(const yd_node *map, const char *key);
/* Like yd_get, but a missing key fails with PARLEY_ERR_CONFIG at the mapping. */
parley_status yd_require(const yd_node *map, const char *key, const yd_node **out);
/* Fails with PARLEY_ERR_CONFIG at the first key of `map` not in the NULL-terminated
 * `allowed` list, naming the allowed keys and the nearest one (yd_nearest). */
parley_status yd_check_keys(const yd_node *map, const char *const *allowed);

/* "Did you mean": the name among names[0..n) (NULL entries skipped) closest to a mistyped
 * `word` by the edit distance (insertions, deletions, substitutions and swaps of two
 * neighbours), when it is within a third of the name's length (at least 1, at most 3
 * edits); else NULL. Names of 64 bytes or more are never offered. yd_check_keys offers one
 * for an unknown key; the domain's names and the tool's commands and options use it too. */
const char *yd_nearest(const char *word, const char *const *names, size_t n);

/* Fails with PARLEY_ERR_CONFIG "<what> must be a <kind>, not a <kind>" unless n has `kind`. */
parley_status yd_expect(const yd_node *n, yd_kind kind, const char *what);

/* True for a scalar written as nothing, `~` or `null` (plain, not quoted). */
int yd_is_null(const yd_node *n);

/* Typed getters: each fails with PARLEY_ERR_CONFIG at n when n is not a scalar or its text
 * is not of the type (or out of [lo, hi]). The string is borrowed from the document. */
parley_status yd_str(const yd_node *n, const char **out);
parley_status yd_int(const yd_node *n, long long lo, long long hi, long long *out);
parley_status yd_double(const yd_node *n, double lo, double hi, double *out);
/* true/false, True/False, TRUE/FALSE. */
parley_status yd_bool(const yd_node *n, int *out);

#endif
