/* tokenizer.h — BERT's uncased BasicTokenizer + WordPiece, with offsets into the caller's text.
 *
 * Gives the same pieces as Hugging Face's BertTokenizer(do_lower_case=True): control
 * characters removed, whitespace normalized, CJK ideographs split into single words,
 * lower-cased, accents stripped (NFD, combining marks dropped), punctuation split, then
 * greedy longest-match-first WordPiece with "##" continuations; a word with no match, or
 * longer than 100 characters, becomes [UNK]. One deliberate difference: "[CLS]", "[MASK]"
 * and the like typed in the text are ordinary text here ("[", "cl", "##s", "]"), so user
 * input can never inject special tokens. tokenizer.c lists the known Unicode differences.
 *
 * Every piece records the whitespace-separated word of the input it came from and its byte
 * range [start, end) in the input, so callers can give slot values back as typed.
 * Stateless: safe to call from many threads with a shared vocabulary.
 */
#ifndef NLU_TOKENIZER_H
#define NLU_TOKENIZER_H

#include <stddef.h>

#include "nlu/text/vocab.h"

/* HF's max_input_chars_per_word: a longer basic token (counted in characters after
 * normalization) becomes one [UNK]. */
#define WP_MAX_WORD_CHARS 100

typedef struct wp_piece {
    int id;            /* vocabulary id */
    int word;          /* index of the whitespace-separated input word it belongs to */
    size_t start, end; /* byte range in the input text */
} wp_piece;

typedef struct wp_tokens {
    wp_piece *pieces; /* (n_pieces) without [CLS]/[SEP]; owned; NULL when n_pieces is 0 */
    int n_pieces;
    size_t *word_start, *word_end; /* (n_words) byte range of each whitespace-separated word;
                                      owned, one block: free with wp_tokens_free */
    int n_words;
} wp_tokens;

/* BERT's BasicTokenizer character classes (uncased), shared with the vocabulary learner
 * and the datasets. wp_is_space: space, \t, \n, \r, Zs, Zl, Zp. wp_is_removed: what its
 * clean-up drops (C0/C1 controls, categories Cc Cf Cs Co Cn, U+FFFD; call it on
 * non-whitespace only, as \t \n \r are Cc too). wp_is_punct: ASCII 33-47, 58-64, 91-96,
 * 123-126 and category P*. wp_is_cjk: the CJK Unified Ideograph blocks of BERT's
 * _is_chinese_char. wp_normalize: lower-cases c, decomposes it to NFD and drops category
 * Mn, writing the 0 to WP_DECOMP_CAP characters BERT keeps and returning their count. */
enum { WP_DECOMP_CAP = 8 }; /* the longest canonical decomposition is 4 code points */
int wp_is_space(uint32_t c);
int wp_is_removed(uint32_t c);
int wp_is_punct(uint32_t c);
int wp_is_cjk(uint32_t c);
int wp_normalize(uint32_t c, uint32_t out[WP_DECOMP_CAP]);

/* Tokenizes text[0..len). Words are split at the whitespace BasicTokenizer uses (space,
 * \t, \n, \r, Unicode Zs, and U+2028/U+2029, which Python's str.split() splits on); a
 * control character is removed, it does not split words.
 *
 * Offsets: a piece covers the bytes of the code points its characters came from (all the
 * characters NFD makes of one code point map to that code point's bytes). A code point that
 * gives no character (a combining mark, a removed control) is counted with the character
 * before it in the same word, so "cafe\u0301" gives "cafe" over all six bytes; [UNK] covers
 * its whole basic token.
 *
 * *out is always initialized (zeroed first), so wp_tokens_free(out) is safe after a
 * failure. Invalid UTF-8 fails with PARLEY_ERR_UTF8 naming the byte offset, and nothing is
 * allocated then; allocation failure gives PARLEY_ERR_NOMEM. On success `out` owns its
 * arrays (wp_tokens_free). A word that yields no pieces (e.g. only control characters)
 * still counts as a word. */
parley_status wp_tokenize(const wp_vocab *v, const char *text, size_t len, wp_tokens *out);
/* Frees the arrays and zeroes *t; NULL is a no-op. */
void wp_tokens_free(wp_tokens *t);

/* The public tokenizer handle (parley/nlu.h, nlu_tokenizer.c): a vocabulary, which the
 * handle owns when parley_tokenizer_open made it; the one inside a parley_nlu (nlu/nlu.c)
 * points at its model's and is never closed. */
struct parley_tokenizer {
    wp_vocab *vocab;
};

/* True when piece p of the tokenized `text` consists only of punctuation (per BERT's rules,
 * after normalization; removed characters in its range are ignored). */
int wp_is_punct_piece(const char *text, const wp_piece *p);

#endif
