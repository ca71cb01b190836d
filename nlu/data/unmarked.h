/* unmarked.h — values of a lookup table that an example holds without marking them.
 *
 * "how big is a large" under an intent, with `large` in the lookup table `size` and not
 * marked there, teaches the tagger that a size after "a" at a sentence's end is no slot,
 * against the table: `parley check` warns (through parley_data_read). Words are compared
 * as the sparse features compare lookup values (nlu/sparse.h): whole words, lower-cased,
 * without the punctuation at their ends; here in ASCII only.
 */
#ifndef NLU_DATA_UNMARKED_H
#define NLU_DATA_UNMARKED_H

#include "nlu/data/dataset.h"

/* One value found: example index, the table's name and the value as the table lists it
 * (both borrowed from the data set). */
typedef struct ds_unmarked {
    int example;
    const char *table, *value;
} ds_unmarked;

/* Every run of untagged words of an example of ds that is a value of one of its lookup
 * tables, in example and word order (the longest value where several start at a word).
 * *out (may be NULL when *n is 0) is the caller's to pl_free. Any thread. */
parley_status ds_unmarked_values(const ds_dataset *ds, ds_unmarked **out, int *n);

#endif
