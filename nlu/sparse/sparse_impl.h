/* sparse_impl.h — the featurizer's insides, shared by sparse.c (features), sparse_match.c
 * (lookup and regex matches), sparse_rows.c (CSR rows) and sparse_io.c (sparse.json).
 * Nothing outside those files includes it; the interface is sparse.h.
 */
#ifndef NLU_SPARSE_IMPL_H
#define NLU_SPARSE_IMPL_H

#include <stdint.h>

#include "nlu/sparse/sparse.h"
#include "sdk/base/names.h"
#include "sdk/base/pattern.h"

enum {
    SF_SENT_NGRAM_MIN = 2, /* character n-grams of a sentence token, in code points */
    SF_SENT_NGRAM_MAX = 5,
    SF_WORD_NGRAM_MIN = 2, /* of a word, for the tagger */
    SF_WORD_NGRAM_MAX = 4,
    SF_BEGINS = 1, /* a lookup match begins at the word */
    SF_CONTINUES = 2,
};

/* Names → indices over owned copies, with a count per name (for learning). */
typedef struct sf_strtab {
    pl_names ix;
    char **names; /* (n) owned */
    int *count;   /* (n) */
    int n, cap;
} sf_strtab;

/* Adds s[0..len) unless present; *id is its index either way. */
parley_status sf_strtab_add(sf_strtab *t, const char *s, size_t len, int *id);
int sf_strtab_find(const sf_strtab *t, const char *s, size_t len);
void sf_strtab_free(sf_strtab *t);

/* The most values a lookup table may list (docs/limits.md): a bound on what a model costs
 * every process that loads it, checked when a table is added (training or loading). */
enum { SF_MAX_LOOKUP_VALUES = 1000000 };

/* An open-addressing index of 32-bit entries (0: an empty place), at most 3/4 full. */
typedef struct sf_index {
    uint32_t *slot; /* (mask + 1) */
    size_t mask, n;
} sf_index;

/* A lookup table: its values normalized (the word cores joined by single spaces), in a few
 * blocks (sparse_lookup.c). */
typedef struct sf_lookup {
    char *name;  /* owned */
    char *bytes; /* the values end to end, each NUL-terminated, in the order added */
    size_t len, cap;
    size_t *at; /* (n) where value i begins in bytes */
    int n, cap_at;
    sf_index values; /* value numbers (entries: sparse_lookup.c) */
    sf_index slips;  /* where the featurizer allows slips: each value of PL_SLIP_MIN to
                      * PL_SLIP_MAX code points with one code point (not a space) left out,
                      * as the value's number and that code point's byte */
    int max_words;   /* the most words a value has */
} sf_lookup;

/* Adds value s[0..len) of `words` words to l unless it is there, with its slips when `slips`
 * is set; at most SF_MAX_LOOKUP_VALUES values (the caller's check). PARLEY_ERR_NOMEM. */
parley_status sf_lookup_add(sf_lookup *l, const char *s, size_t len, int words, int slips);
/* Makes room in l's indexes for `values` more values of `bytes` bytes together (with
 * `slips`, their slips: at most one a byte), so a table given whole is indexed without
 * growing. PARLEY_ERR_NOMEM. */
parley_status sf_lookup_reserve(sf_lookup *l, size_t values, size_t bytes, int slips);
/* Whether s[0..len) is a value of l; whether it is one of l's slips (a value less a code
 * point). */
int sf_lookup_has(const sf_lookup *l, const char *s, size_t len);
int sf_lookup_has_slip(const sf_lookup *l, const char *s, size_t len);
/* Value i of l, NUL-terminated (borrowed). */
const char *sf_lookup_value(const sf_lookup *l, int i);
/* Frees what l holds, its name too, and zeroes it. */
void sf_lookup_free(sf_lookup *l);

/* A regex of the nlu.yaml: its patterns as written, and compiled. */
typedef struct sf_regex {
    char *name; /* owned */
    int n;
    char **sources;    /* (n) owned */
    pl_pattern **pats; /* (n) owned */
} sf_regex;

struct sf_featurizer {
    sf_strtab sent, word;  /* the vocabularies (counts unused once built) */
    float *idf;            /* (sent.n) */
    int word_norm_by_kind; /* 1: word rows normalized by kind (sparse.h) */
    int lookup_slips;      /* 1: lookup values matched within one typing slip (sparse.h) */
    int n_lookups, n_regexes;
    sf_lookup *lookups; /* (n_lookups) */
    sf_regex *regexes;  /* (n_regexes) */
};

/* A growing NUL-terminated byte buffer. */
typedef struct sf_buf {
    char *data;
    size_t len, cap;
} sf_buf;

/* A whitespace-separated word of a text: byte ranges in sf_text's buffers. */
typedef struct sf_word {
    size_t o0, o1; /* in the text as given */
    size_t n0, n1; /* normalized */
    size_t c0, c1; /* its core: normalized, without punctuation at either end */
    size_t s0, s1; /* its shape */
} sf_word;

/* A text read for featurizing; reusable from one text to the next (sf_text_free). */
typedef struct sf_text {
    sf_buf norm, shape, key, alt; /* alt: key with a code point left out */
    sf_word *words;
    int n_words, cap_words;
    unsigned char *flags; /* (n_words, n_lookups + n_regexes) SF_BEGINS | SF_CONTINUES */
    size_t cap_flags;
} sf_text;

/* Reads text[0..len) into words (no matching). */
parley_status sf_text_read(sf_text *t, const char *text, size_t len);
/* sf_text_read, then the matches of f's lookup tables and regexes (sf_text_match). */
parley_status sf_text_analyze(const sf_featurizer *f, sf_text *t, const char *text, size_t len);
void sf_text_free(sf_text *t);
/* Appends s[0..n) to b, NUL-terminated. */
parley_status sf_buf_put(sf_buf *b, const char *s, size_t n);

/* ---- sparse_match.c ---- */
/* t->flags of text[0..len), read into t: where a lookup value (whole words, their cores)
 * or a regex match (any overlap with a word's bytes) begins and continues. A regex search
 * that passes pl_pattern's cost limits ends that pattern's matches in the text (the same
 * text always gives the same features); only running out of memory fails. */
parley_status sf_text_match(const sf_featurizer *f, sf_text *t, const char *text, size_t len);
void sf_matchers_free(sf_featurizer *f);

/* The features of one row as they are composed: mapped into tab (added when build is set,
 * dropped when unknown otherwise). The first failure stays in st. */
typedef struct sf_emit {
    sf_strtab *tab;
    int build;
    sf_buf name, padded;
    int *ids, *counts; /* (cap_ids) */
    float *vals;       /* (cap_ids) */
    int n_ids, cap_ids;
    parley_status st;
} sf_emit;

void sf_emit_sentence(sf_emit *e, const sf_featurizer *f, const sf_text *t);
void sf_emit_word(sf_emit *e, const sf_featurizer *f, const sf_text *t, int w);
/* Sorts and merges e->ids, counting repeats into e->counts; returns the distinct count. */
int sf_emit_unique(sf_emit *e);
void sf_emit_free(sf_emit *e);

/* An empty featurizer with room for n_lookups tables and n_regexes regexes; a table added
 * to it (values normalized as they go in), a regex (its patterns compiled: one that does not
 * compile is PARLEY_ERR_CONFIG naming the regex, the pattern and the byte). */
parley_status sf_featurizer_new(int n_lookups, int n_regexes, sf_featurizer **out);
parley_status sf_featurizer_add_lookup(sf_featurizer *f, const char *name, int n,
                                       const char *const *values);
parley_status sf_featurizer_add_regex(sf_featurizer *f, const char *name, int n,
                                      const char *const *patterns);

#endif
