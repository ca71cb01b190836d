/* sparse.h — sparse features of a text, beside the encoder: what they are, their vocabulary
 * (sparse.json in a model directory), and the linear maps that add them to the logits.
 *
 * A model may carry two sparse feature vectors besides BERT (config.json keys
 * "sparse_sentence_features" FS and "sparse_word_features" FW, tensors
 * "sparse_intent_classifier.weight" (NI, FS) and "sparse_slot_classifier.weight" (NS, FW)):
 *   intent logits of a text += U · x_sentence
 *   slot logits of a word's first piece += S · x_word
 * Both are linear in the weights, trained jointly with the encoder by the same loss.
 *
 * Text is read as the tokenizer reads it: words are its whitespace-separated parts (the
 * words the tagger tags); each word is normalized as BERT's uncased tokenizer does (control
 * characters dropped, lower-cased, accents stripped). Then:
 *   sentence features: its tokens (the runs of a word between punctuation characters)
 *     "w:TOKEN", bigrams of consecutive tokens "b:TOKEN TOKEN", and character n-grams of
 *     each token with boundary marks, "c:NGRAM" for n = 2..5 code points of "<TOKEN>", and
 *     "L:TABLE" / "R:NAME" for each match of a lookup table or a regex (below) that begins
 *     at a word (the same match as the word features' "L:B:" / "R:B:"); value sublinear TF
 *     times IDF, (1 + ln tf) * (ln((1 + n) / (1 + df)) + 1) with df counted over the n
 *     training texts, the row L2-normalized (sklearn's TfidfVectorizer with sublinear_tf
 *     and smooth_idf).
 *   word features, for word i and its neighbours o = -1 and +1 (prefix "O:", O one of
 *     -1, 0, +1): the normalized word "O:w:WORD", its shape "O:s:SHAPE" (from the text as
 *     typed: X upper case, x lower case, d digit, other characters as they are, runs cut to
 *     3: "Xxxx", "dd", "x.x"), "O:<s>" / "O:</s>" past either end, and "O:L:B:TABLE" /
 *     "O:L:I:TABLE" when the word begins or continues a match of a lookup table (whole
 *     words, compared without the punctuation at their ends; where the featurizer was built
 *     with lookup_slips, also within one typing slip of a value of PL_SLIP_MIN to
 *     PL_SLIP_MAX code points, sdk/base/slip.h and sparse_match.c), and
 * "O:R:B:NAME" / "O:R:I:NAME" when a match of a regex (PCRE2, case-insensitive, in the text as
 * given, sdk/base/pattern.h) begins or continues over it; for the word itself also its character
 * n-grams "0:c:NGRAM", n = 2..4 of "<WORD>" (so prefixes and suffixes). Values are 1, the row
 * L2-normalized; or, where the featurizer was built with word_norm_by_kind, normalized by kind: the
 * n-grams and the rest of the row each to norm 1/sqrt(2) (a row of one kind to 1), so a word's
 * dozen n-grams do not outweigh the word, its shape and its neighbours. Features never seen in
 * training are dropped; the norm is taken over the known ones.
 *
 * The vocabulary: every feature seen in the training texts, the most frequent first (by
 * document frequency for sentence features, by words for word features, ties by byte
 * order), capped at SF_DEFAULT_MAX_SENTENCE and SF_DEFAULT_MAX_WORD.
 *
 * sparse.json: {"format": "parley-sparse", "version": 3 (1 and 2 read as one norm per word
 *   row and exact lookups; 1 is also from before the sentence's match features),
 *   "word_norm": "row" | "kind", "lookup_slips": true | false,  (version 3)
 *   "sentence": {"features": [FS strings], "idf": [FS numbers]},
 *   "word": {"features": [FW strings]},
 *   "lookups": {"TABLE": ["value", ...], ...},   (the tables, normalized)
 *   "regexes": {"NAME": ["pattern", ...], ...}}  (as the nlu.yaml writes them)
 *
 * A featurizer is immutable once built or loaded: share it between threads freely.
 */
#ifndef NLU_SPARSE_H
#define NLU_SPARSE_H

#include <stddef.h>

#include "parley/status.h"

enum {
    SF_DEFAULT_MAX_SENTENCE = 50000,
    SF_DEFAULT_MAX_WORD = 20000,
    SF_MAX_FEATURES = 1 << 20, /* the most of either kind a file may hold */
};

typedef struct sf_featurizer sf_featurizer;

/* A named list of strings (a lookup table: name = slot type). Borrowed. */
typedef struct sf_table {
    const char *name;
    int n;
    const char *const *values;
} sf_table;

typedef struct sf_build_params {
    int max_sentence, max_word; /* caps; 0 = the defaults above */
    int n_lookups;
    const sf_table *lookups;
    int n_regexes;
    const sf_table *regexes; /* name = the regex's, values = its patterns (pattern.h) */
    int word_norm_by_kind;   /* 1: word rows normalized by kind (above) */
    int lookup_slips;        /* 1: lookup values matched within one typing slip (above) */
} sf_build_params;

/* Learns the vocabulary and IDF from texts[0..n) (valid UTF-8). *out is owned by the caller
 * (sf_free). A text that yields no feature is no error; a vocabulary may be empty. A regex
 * pattern that does not compile is PARLEY_ERR_CONFIG naming it. */
parley_status sf_build(const char *const *texts, int n, const sf_build_params *p,
                       sf_featurizer **out);
/* Reads sparse.json (see above); every value checked, errors name the file and key. */
parley_status sf_load(const char *path, sf_featurizer **out);
/* Writes f as sparse.json text into a file being written (sdk/base/files.h). */
struct pl_atomic;
parley_status sf_write(const sf_featurizer *f, struct pl_atomic *a);
/* NULL is a no-op. */
void sf_free(sf_featurizer *f);

int sf_sentence_size(const sf_featurizer *f); /* FS */
int sf_word_size(const sf_featurizer *f);     /* FW */
/* The name of feature i of a kind, for tests and inspection; NULL when out of range. */
const char *sf_sentence_name(const sf_featurizer *f, int i);
const char *sf_word_name(const sf_featurizer *f, int i);

/* Rows of sparse vectors, compressed (CSR): row r is index/value[start[r] .. start[r + 1]),
 * indices increasing. Arrays are owned by whoever filled them (sf_rows_free); a zeroed
 * sf_rows is empty and valid. */
typedef struct sf_rows {
    int n_rows;
    int *start;   /* (n_rows + 1) */
    int *index;   /* (nnz) */
    float *value; /* (nnz) */
    int cap_rows, cap_nnz;
} sf_rows;

void sf_rows_free(sf_rows *r);
/* Appends a row of n entries (index increasing, as sf_rows_check wants them). */
parley_status sf_rows_push(sf_rows *r, const int *index, const float *value, int n);
/* Appends an empty row. */
parley_status sf_rows_add_empty(sf_rows *r);
/* Appends rows [first, first + n) of src. */
parley_status sf_rows_append(sf_rows *dst, const sf_rows *src, int first, int n);

/* The features of text[0..len) (valid UTF-8): one row appended to sent, and one row per
 * whitespace-separated word appended to words; *n_words (may be NULL) is that count. */
parley_status sf_featurize(const sf_featurizer *f, const char *text, size_t len, sf_rows *sent,
                           sf_rows *words, int *n_words);

/* A run of whole words of a text that is a value of a lookup table of f, as the word
 * features "L:B:" / "L:I:" see it (sf_lookup_matches): the table's index (in
 * sf_build_params.lookups order), the run's bytes [from, to) in the text, and the value as
 * compared (its words normalized, without the punctuation at their ends, joined by single
 * spaces; valid during the call). Any status but PARLEY_OK stops the search and is returned. */
typedef parley_status (*sf_lookup_fn)(void *arg, int table, size_t from, size_t to,
                                      const char *value);
/* Calls fn for every such run of text[0..len) (valid UTF-8): by table, then by first word,
 * then by length. A featurizer built from no texts serves as a matcher of tables alone. */
parley_status sf_lookup_matches(const sf_featurizer *f, const char *text, size_t len,
                                sf_lookup_fn fn, void *arg);

/* out (n_out) += W · x[row] with W (n_out, n_feat) row-major; the indices of x must be
 * below n_feat (sf_rows_check). */
void sf_rows_gemv(const sf_rows *x, int row, const float *W, int n_out, int n_feat, float *out);
/* dW (n_out, n_feat) += d (n_out) ⊗ x[row]: the gradient of sf_rows_gemv. */
void sf_rows_outer(const sf_rows *x, int row, const float *d, int n_out, int n_feat, float *dW);
/* PARLEY_OK when x has n_rows rows, well-formed, every index in [0, n_feat) and every value
 * finite; else PARLEY_ERR_INVALID_ARG naming `what`, the row and the index. */
parley_status sf_rows_check(const sf_rows *x, int n_rows, int n_feat, const char *what);

#endif
