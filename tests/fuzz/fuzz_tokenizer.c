/* fuzz_tokenizer.c — libFuzzer target for the WordPiece tokenizer (nlu/text/tokenizer.c).
 *
 * Any byte string must either fail with PARLEY_ERR_UTF8 or give pieces and words that are
 * consistent (ranges inside the text and inside their word, in order, valid ids); a
 * violation aborts so libFuzzer keeps the input. The vocabulary is a fixed small list that
 * exercises "##" continuations, punctuation, CJK and jamo. Built only with clang
 * (tests/fuzz/meson.build); it is not part of the default gcc build.
 */
#include <stdint.h>
#include <stdlib.h>

#include "nlu/text/tokenizer.h"

static const char *const tokens[] = {
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "a",
    "##a",
    "b",
    "##b",
    "ab",
    "##ab",
    "hello",
    "##s",
    ",",
    ".",
    "!",
    "'",
    "`",
    "\xe4\xb8\xad",
    "\xe1\x84\x92",
    "##\xe1\x85\xa1",
    "##\xe1\x86\xab",
    "\xcf\x83",
    "##",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static wp_vocab *v;
    if (!v && wp_vocab_from_tokens(tokens, (int)(sizeof tokens / sizeof *tokens), &v) != PARLEY_OK)
        abort();
    const char *text = (const char *)data;
    wp_tokens t;
    parley_status st = wp_tokenize(v, text, size, &t);
    if (st != PARLEY_OK) {
        if (st != PARLEY_ERR_UTF8 || t.pieces || t.word_start)
            abort();
        return 0;
    }
    for (int w = 0; w < t.n_words; w++)
        if (t.word_start[w] >= t.word_end[w] || t.word_end[w] > size ||
            (w && t.word_end[w - 1] >= t.word_start[w]))
            abort();
    for (int i = 0; i < t.n_pieces; i++) {
        const wp_piece *p = &t.pieces[i];
        if (p->id < 0 || p->id >= wp_vocab_size(v) || p->word < 0 || p->word >= t.n_words ||
            p->start >= p->end || p->start < t.word_start[p->word] ||
            p->end > t.word_end[p->word] || (i && (p->word < p[-1].word || p->start < p[-1].start)))
            abort();
        (void)wp_is_punct_piece(text, p);
    }
    wp_tokens_free(&t);
    return 0;
}
