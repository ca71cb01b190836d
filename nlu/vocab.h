/* vocab.h — a WordPiece vocabulary (vocab.txt): token <-> id.
 *
 * One token per line, id = line number (0-based). Lookups are by exact byte string.
 * Immutable after load; safe to share between threads.
 */
#ifndef NLU_VOCAB_H
#define NLU_VOCAB_H

#include <stddef.h>

#include "parley/status.h"

typedef struct wp_vocab wp_vocab;

/* Loads `path`. Fails (naming path:line) on an empty file, an empty or duplicate token,
 * invalid UTF-8, or a missing [PAD], [UNK], [CLS], [SEP] or [MASK]. */
parley_status wp_vocab_load(const char *path, wp_vocab **out);
/* Builds a vocabulary from n tokens (copied). Same checks as wp_vocab_load. */
parley_status wp_vocab_from_tokens(const char *const *tokens, int n, wp_vocab **out);
void wp_vocab_free(wp_vocab *v);

int wp_vocab_size(const wp_vocab *v);
/* The id of token s[0..len), or -1. */
int wp_vocab_find(const wp_vocab *v, const char *s, size_t len);
/* The token of id, borrowed; NULL when out of range. */
const char *wp_vocab_token(const wp_vocab *v, int id);
/* Writes the vocabulary as vocab.txt (one token per line). */
parley_status wp_vocab_save(const wp_vocab *v, const char *path);

/* Ids of the special tokens. */
int wp_vocab_pad(const wp_vocab *v);
int wp_vocab_unk(const wp_vocab *v);
int wp_vocab_cls(const wp_vocab *v);
int wp_vocab_sep(const wp_vocab *v);
int wp_vocab_mask(const wp_vocab *v);

#endif
