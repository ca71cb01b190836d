/* tokenizer.h — BERT's uncased BasicTokenizer + WordPiece, with offsets into the caller's text.
 *
 * Gives the same pieces as Hugging Face's BertTokenizer(do_lower_case=True): control
 * characters removed, whitespace normalized, CJK ideographs split into single words,
 * lower-cased, accents stripped (NFD, combining marks dropped), punctuation split, then
 * greedy longest-match-first WordPiece with "##" continuations; a word with no match, or
 * longer than 100 characters, becomes [UNK].
 *
 * Every piece records the whitespace-separated word of the input it came from and its byte
 * range [start, end) in the input, so callers can give slot values back as typed.
 * Stateless: safe to call from many threads with a shared vocabulary.
 */
#ifndef NLU_TOKENIZER_H
#define NLU_TOKENIZER_H

#include <stddef.h>

#include "nlu/vocab.h"

typedef struct wp_piece {
    int id;           /* vocabulary id */
    int word;         /* index of the whitespace-separated input word it belongs to */
    size_t start, end;/* byte range in the input text */
} wp_piece;

typedef struct wp_tokens {
    wp_piece *pieces; /* (n_pieces) without [CLS]/[SEP]; owned */
    int n_pieces;
    size_t *word_start, *word_end; /* (n_words) byte range of each whitespace-separated word; owned */
    int n_words;
} wp_tokens;

/* Tokenizes text[0..len). Invalid UTF-8 fails with PARLEY_ERR_UTF8 naming the byte offset;
 * nothing is allocated then. On success `out` owns its arrays (wp_tokens_free). A word that
 * yields no pieces (e.g. only control characters) still counts as a word. */
parley_status wp_tokenize(const wp_vocab *v, const char *text, size_t len, wp_tokens *out);
void wp_tokens_free(wp_tokens *t);

/* True when piece p of `t` in `text` consists only of punctuation (per BERT's rules). */
int wp_is_punct_piece(const char *text, const wp_piece *p);

#endif
