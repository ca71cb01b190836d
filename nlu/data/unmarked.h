/* unmarked.h — values of a lookup table that an example holds without marking them.
 *
 * "how big is a large" under an intent, with `large` in the lookup table `size` and not
 * marked there, teaches the tagger that a size after "a" at a sentence's end is no slot,
 * against the table: `parley check` warns (through parley_data_read). Words are compared
 * by the sparse features' own matcher (nlu/sparse/sparse.h, sf_lookup_matches): whole words,
 * normalized as the tokenizer does (lower-cased, accents stripped), without the punctuation
 * at their ends.
 */
#ifndef NLU_DATA_UNMARKED_H
#define NLU_DATA_UNMARKED_H

#include "nlu/data/dataset.h"

/* One value found. */
typedef struct ds_unmarked {
    int example;       /* index into ds->examples */
    const char *table; /* the table's name, borrowed from the data set */
    char *value;       /* the value as compared (normalized words joined by single spaces) */
} ds_unmarked;

/* Every run of untagged words of an example of ds that is a value of one of its lookup
 * tables, in example and word order (the longest value where several start at a word).
 * *out (NULL when *n is 0) is the caller's to free with ds_unmarked_free. Any thread. */
parley_status ds_unmarked_values(const ds_dataset *ds, ds_unmarked **out, int *n);
/* Frees list[0..n) and their values; NULL is a no-op. */
void ds_unmarked_free(ds_unmarked *list, int n);

#endif
