/* fillers.h — the hesitations people put in a request ("um", "uh", "erm", "hmm"): words
 * that carry nothing the NLU reads. The model's input leaves their pieces out, in training
 * and in parsing alike, so "a large uh dark roast" reaches the encoder as "a large dark
 * roast": a bot trained on ten examples without them would otherwise read the stranger
 * word as part of a slot value ("uh" tagged as the drink). The words themselves stay, with
 * no pieces, so they are tagged O and a result still gives one tag per word of the text.
 *
 * Only words that are nothing but a hesitation count ("um", "Uh,", "hmm..."): words some
 * domain uses ("er" for an emergency room, "mm" for millimetres, "oh" for zero) are not in
 * the list. Pure functions; thread-safe.
 */
#ifndef NLU_TEXT_FILLERS_H
#define NLU_TEXT_FILLERS_H

#include <stddef.h>

#include "nlu/text/tokenizer.h"

/* 1 when word[0..len) is a hesitation, ignoring ASCII case and the ASCII punctuation
 * around it. */
int wp_is_filler(const char *word, size_t len);

/* Removes from tk (a tokenization of text) the pieces of every word that is a hesitation;
 * the words, their ranges and the other pieces stay, in order. Answers how many pieces went. */
int wp_drop_fillers(const char *text, wp_tokens *tk);

#endif
