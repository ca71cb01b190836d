/* nlu_tokenizer.c — the public tokenizer API (parley_tokenizer in parley/nlu.h).
 *
 * A thin face over tokenizer.c and vocab.c: it opens vocabularies and lays each result out
 * in one allocation, piece strings included, so that a result is freed with one call and
 * outlives its tokenizer. The tokenizing itself is wp_tokenize's; nothing here decides
 * what a piece is.
 */
#include <string.h>

#include "nlu/text/tokenizer.h"
#include "parley/nlu.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

parley_status parley_tokenizer_open(const char *vocab_path, parley_tokenizer **out)
{
    parley_tokenizer *t;
    parley_status st;
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_tokenizer_open: out is NULL");
    *out = NULL;
    if (!vocab_path)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_tokenizer_open: vocab_path is NULL");
    if (!(t = pl_calloc(1, sizeof *t)))
        return pl_nomem("opening %s", vocab_path);
    if ((st = wp_vocab_load(vocab_path, &t->vocab)) != PARLEY_OK) {
        pl_free(t);
        return st;
    }
    *out = t;
    return PARLEY_OK;
}

void parley_tokenizer_close(parley_tokenizer *tokenizer)
{
    if (!tokenizer)
        return;
    wp_vocab_free(tokenizer->vocab);
    pl_free(tokenizer);
}

/* Copies tk (of the vocabulary v) into one block: the parley_tokens, then its tokens, the
 * word ranges and the piece strings. */
static parley_status copy_tokens(const wp_vocab *v, const wp_tokens *tk, parley_tokens **out)
{
    size_t P = (size_t)tk->n_pieces, W = (size_t)tk->n_words, chars = 0;
    for (size_t p = 0; p < P; p++)
        chars += strlen(wp_vocab_token(v, tk->pieces[p].id)) + 1;
    parley_tokens *r =
            pl_malloc(sizeof *r + P * sizeof(parley_token) + 2 * W * sizeof(size_t) + chars);
    if (!r)
        return pl_nomem("the tokens of a text of %d pieces", tk->n_pieces);
    parley_token *tokens = (parley_token *)(r + 1);
    size_t *word_start = (size_t *)(tokens + P), *word_end = word_start + W;
    char *s = (char *)(word_end + W);
    for (size_t p = 0; p < P; p++) {
        const wp_piece *pc = &tk->pieces[p];
        const char *piece = wp_vocab_token(v, pc->id);
        size_t n = strlen(piece) + 1;
        tokens[p] = (parley_token){ memcpy(s, piece, n), pc->id, pc->word, pc->start, pc->end };
        s += n;
    }
    if (W) {
        memcpy(word_start, tk->word_start, W * sizeof *word_start);
        memcpy(word_end, tk->word_end, W * sizeof *word_end);
    }
    *r = (parley_tokens){ tk->n_pieces, tokens, tk->n_words, word_start, word_end };
    *out = r;
    return PARLEY_OK;
}

parley_status parley_tokenizer_encode(const parley_tokenizer *tokenizer, const char *text,
                                      size_t len, parley_tokens **out)
{
    wp_tokens tk;
    parley_status st;
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_tokenizer_encode: out is NULL");
    *out = NULL;
    if (!tokenizer || (!text && len))
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_tokenizer_encode: NULL %s",
                       tokenizer ? "text" : "tokenizer");
    if ((st = wp_tokenize(tokenizer->vocab, text ? text : "", len, &tk)) != PARLEY_OK)
        goto fail;
    st = copy_tokens(tokenizer->vocab, &tk, out);
fail:
    wp_tokens_free(&tk);
    return st;
}

void parley_tokens_free(parley_tokens *tokens)
{
    pl_free(tokens); /* one block holds everything (see copy_tokens) */
}
