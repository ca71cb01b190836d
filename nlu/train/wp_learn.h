/* wp_learn.h — learning a WordPiece vocabulary from training text.
 *
 * For training a model from scratch, when no vocab.txt is given: the words of the training
 * texts, normalized the way the tokenizer normalizes them, are split into characters and
 * the most frequent adjacent pieces are merged until the vocabulary is full (wp_learn.c
 * describes the algorithm). The result always holds [PAD] [UNK] [CLS] [SEP] [MASK] and
 * every character seen, word-initial and as a "##" continuation, so no training word
 * becomes [UNK]. Deterministic: the same texts (in any order) give the same vocabulary.
 */
#ifndef NLU_TRAIN_WP_LEARN_H
#define NLU_TRAIN_WP_LEARN_H

#include "nlu/text/vocab.h"

enum { WP_LEARN_DEFAULT_SIZE = 8000, WP_LEARN_DEFAULT_MIN_FREQUENCY = 2 };

typedef struct wp_learn_params {
    int vocab_size;    /* tokens wanted, specials included; 0 = WP_LEARN_DEFAULT_SIZE. The
                          specials and the characters are always kept, so a text with more
                          distinct characters than this gives a larger vocabulary. */
    int min_frequency; /* a pair of pieces seen fewer times (counting word repeats) is never
                          merged, so small data gives a small vocabulary; 0 = 2 */
} wp_learn_params;

/* Learns a vocabulary from texts[0..n) (NUL-terminated UTF-8; NULL p = defaults). Invalid
 * UTF-8 fails with PARLEY_ERR_UTF8 naming the text index and byte offset. On success *out
 * is owned by the caller (wp_vocab_free); on failure it is NULL. */
parley_status wp_learn(const char *const *texts, int n, const wp_learn_params *p, wp_vocab **out);

#endif
