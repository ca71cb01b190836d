/* vocab.h — a WordPiece vocabulary (vocab.txt): token <-> id.
 *
 * One token per line, id = line number (0-based); a "\r\n" line end counts as "\n" and the
 * last line needs no newline. Lookups are by exact byte string through an open-addressing
 * hash table, with no allocation per lookup.
 * Immutable after load; safe to share between threads.
 */
#ifndef NLU_VOCAB_H
#define NLU_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "parley/status.h"

typedef struct wp_vocab wp_vocab;

/* Loads `path`. Fails (naming path:line) on an empty file, an empty or duplicate token,
 * a NUL, a lone "\r" or invalid UTF-8 in a token, or a missing [PAD], [UNK], [CLS], [SEP] or
 * [MASK]. On success *out is owned by the caller (wp_vocab_free); on failure it is NULL. */
parley_status wp_vocab_load(const char *path, wp_vocab **out);
/* Builds a vocabulary from n tokens (copied; id = index). Same checks as wp_vocab_load
 * ("\n" in a token is refused too), errors name the index ("token 7"). */
parley_status wp_vocab_from_tokens(const char *const *tokens, int n, wp_vocab **out);
/* NULL is a no-op. */
void wp_vocab_free(wp_vocab *v);

int wp_vocab_size(const wp_vocab *v);
/* The id of token s[0..len), or -1. */
int wp_vocab_find(const wp_vocab *v, const char *s, size_t len);
/* The id of s[0..len) when `continuation` is 0, of "##" s[0..len) when it is 1; or -1.
 * WordPiece asks for continuations without building the prefixed string. */
int wp_vocab_find_piece(const wp_vocab *v, int continuation, const char *s, size_t len);
/* The longest token in bytes, not counting a "##" prefix: no longer string can match. */
size_t wp_vocab_max_len(const wp_vocab *v);
/* The token of id, borrowed, NUL-terminated; NULL when out of range. */
const char *wp_vocab_token(const wp_vocab *v, int id);
/* Writes the vocabulary as vocab.txt (one token per line, "\n" line ends). */
parley_status wp_vocab_save(const wp_vocab *v, const char *path);

/* Ids of the special tokens. */
int wp_vocab_pad(const wp_vocab *v);
int wp_vocab_unk(const wp_vocab *v);
int wp_vocab_cls(const wp_vocab *v);
int wp_vocab_sep(const wp_vocab *v);
int wp_vocab_mask(const wp_vocab *v);

/* Strict UTF-8 decoding shared by the vocabulary and the tokenizer. Decodes the sequence
 * at s[0..len) (len >= 1) into *cp and returns its length (1..4). Returns 0 for an invalid
 * sequence (stray continuation byte, bad lead byte, truncated sequence, overlong form,
 * surrogate, above U+10FFFF) and points *why at a static description of the problem. */
int wp_utf8_next(const unsigned char *s, size_t len, uint32_t *cp, const char **why);

#endif
