/* parley/nlu.h — joint intent classification and slot filling with a BERT model.
 *
 * Load a model directory once with parley_nlu_open() (config.json, model.safetensors,
 * vocab.txt: see the README), then parse utterances from as many threads as you like.
 *
 * Threading: a parley_nlu is immutable after open. parley_nlu_parse() and
 * parley_nlu_parse_batch() may be called concurrently on the same handle from any number of
 * threads; each call uses its own scratch memory. parley_nlu_close() must not race with
 * any other call on the handle. Results belong to the caller and are independent of the
 * handle: they stay valid after close.
 */
#ifndef PARLEY_NLU_H
#define PARLEY_NLU_H

#include <stddef.h>

#include "parley/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct parley_nlu parley_nlu;

typedef struct parley_nlu_params {
    int threads; /* CPU threads for one call's math; 0 = all cores */
    int top_k;   /* intents kept in parley_nlu_result.top; 0 = 5 (capped at the label count) */
    const char *device;    /* "auto", "cpu" or "cuda:N"; NULL = "auto": the first GPU when one
                              works (the choice is logged), else the CPU */
    const char *precision; /* GPU storage: "fp16" (NULL), "bf16" or "fp32"; FP32 accumulation */
} parley_nlu_params;

/* Defaults for every field; a zeroed struct means the same. */
PARLEY_API parley_nlu_params parley_nlu_params_default(void);

/* Opens `model_dir`. On success *out is owned by the caller (parley_nlu_close). On failure
 * *out is NULL and parley_errmsg() names the file and, for weights, the tensor. `params`
 * may be NULL for defaults. */
PARLEY_API parley_status parley_nlu_open(const char *model_dir, const parley_nlu_params *params,
                                         parley_nlu **out);

/* NULL is a no-op. */
PARLEY_API void parley_nlu_close(parley_nlu *nlu);

typedef struct parley_nlu_intent {
    const char *label; /* intent name */
    float prob;        /* softmax probability */
} parley_nlu_intent;

typedef struct parley_nlu_slot {
    const char *slot;  /* slot name, without the B-/I- prefix */
    const char *value; /* the text as the user typed it, text[start, end) */
    size_t start, end; /* byte range in the parsed text */
    int word_start;    /* first word of the span (index into tags) */
    int word_end;      /* one past its last word */
} parley_nlu_slot;

/* One parsed utterance. Every pointer inside is owned by the result. */
typedef struct parley_nlu_result {
    const char *text;   /* a copy of the input */
    const char *intent; /* best intent, the same as top[0].label */
    float confidence;   /* its probability */
    int n_top;
    const parley_nlu_intent *top; /* best first */
    int n_slots;
    const parley_nlu_slot *slots; /* in text order */
    int n_words;                  /* whitespace-separated words of the text */
    const char *const *tags;      /* (n_words) one BIO tag per word, repaired ("O", "B-x", "I-x") */
    const size_t *word_start, *word_end; /* (n_words) byte range of each word */
    int n_pieces;  /* word pieces fed to the model, [CLS] and [SEP] included */
    int truncated; /* 1 when the text was longer than the model's positions; words
                      past the end are tagged "O" */
} parley_nlu_result;

/* Parses one utterance. Words are the whitespace-separated parts of `text`; a slot value
 * covers whole words, minus punctuation pieces at its two ends ("boston?" gives "boston").
 * Invalid UTF-8 fails with PARLEY_ERR_UTF8 and the byte offset in parley_errmsg().
 * On success *out is owned by the caller (parley_nlu_result_free). */
PARLEY_API parley_status parley_nlu_parse(parley_nlu *nlu, const char *text,
                                          parley_nlu_result **out);

/* Parses n utterances in one pass through the model (faster per utterance than n calls).
 * out must hold n pointers; on success each is owned by the caller. If any text fails,
 * nothing is returned (all out[i] are NULL) and parley_errmsg() names the index. */
PARLEY_API parley_status parley_nlu_parse_batch(parley_nlu *nlu, const char *const *texts, size_t n,
                                                parley_nlu_result **out);

/* NULL is a no-op. */
PARLEY_API void parley_nlu_result_free(parley_nlu_result *result);

/* Labels of the loaded model, borrowed from the handle (valid until close). */
PARLEY_API int parley_nlu_intent_count(const parley_nlu *nlu);
PARLEY_API const char *parley_nlu_intent_label(const parley_nlu *nlu, int i);
PARLEY_API int parley_nlu_slot_tag_count(const parley_nlu *nlu);
PARLEY_API const char *parley_nlu_slot_tag(const parley_nlu *nlu, int i);

#ifdef __cplusplus
}
#endif
#endif
