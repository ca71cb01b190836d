/* parley/nlu.h — joint intent classification and slot filling with a BERT model.
 *
 * Load a model directory once with parley_nlu_open() (config.json, model.safetensors,
 * vocab.txt: see docs/models.md), then parse utterances from as many threads as you like.
 * Also here: the model's shape (parley_nlu_get_info), its WordPiece tokenizer on its own
 * (parley_tokenizer), writing a new untrained model directory (parley_nlu_model_create),
 * reading a model directory's labels without loading it (parley_nlu_labels_read),
 * and the OpenBLAS setting that speeds up the CPU path on new processors. Training is
 * not here.
 *
 * Threading: a parley_nlu is immutable after open. parley_nlu_parse() and
 * parley_nlu_parse_batch() may be called concurrently on the same handle from any number of
 * threads; each call uses its own scratch memory. parley_nlu_close() must not race with
 * any other call on the handle. Results belong to the caller and are independent of the
 * handle: they stay valid after close. The same holds for a parley_tokenizer and its
 * results.
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

/* A slot value as the parser found it in a text: where it is (bytes and words) and what was
 * typed there, beside the canonical value. A turn of a pipeline carries the name and the
 * canonical value alone, as a parley_slot (parley/dialog.h); this record is the parse
 * result's own, for callers that need the span (Rasa's /model/parse, a UI). */
typedef struct parley_nlu_slot {
    const char *slot;      /* slot name, without the B-/I- prefix */
    const char *value;     /* the text as the user typed it, text[start, end) */
    size_t start, end;     /* byte range in the parsed text */
    int word_start;        /* first word of the span (index into tags) */
    int word_end;          /* one past its last word */
    const char *canonical; /* what the value stands for: the canonical value of the training
                              data's synonym whose surface form it is (compared without case
                              or extra spaces: "Big" -> "large"), else the same text as value */
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
    int n_pieces;  /* word pieces fed to the model, [CLS] and [SEP] included (none of a
                      hesitation's) */
    int truncated; /* 1 when the text was longer than the model's positions; words
                      past the end are tagged "O" */
} parley_nlu_result;

/* Parses one utterance. Words are the whitespace-separated parts of `text`; a slot value
 * covers whole words, minus punctuation pieces at its two ends ("boston?" gives "boston").
 * Hesitations ("um", "uh", "erm", "hmm") are not read: their words are tagged "O" and the
 * rest is parsed as if they were not there, as the trainer reads its examples.
 * Invalid UTF-8 fails with PARLEY_ERR_UTF8 and the byte offset in parley_errmsg(). Scores
 * that are not finite numbers (an overflow on a GPU at fp16 or bf16) fail with
 * PARLEY_ERR_UNSUPPORTED: such a text gets no result rather than a meaningless one.
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

/* The shape of a model. */
typedef struct parley_nlu_info {
    int layers, hidden, heads, intermediate; /* the encoder (BertConfig's num_hidden_layers,
                                                hidden_size, num_attention_heads, ...) */
    int max_positions; /* the longest input in pieces, [CLS] and [SEP] included: texts are cut
                          to max_positions - 2 pieces (parley_nlu_result.truncated) */
    int type_vocab;    /* token types */
    int vocab_size;    /* WordPiece vocabulary entries */
    int n_intents;     /* intent labels */
    int n_slot_tags;   /* BIO slot tags, "O" included */
    size_t n_params;   /* FP32 parameters: every weight and bias of encoder and heads */
} parley_nlu_info;

/* Fills *out with the shape of the loaded model. Any thread. */
PARLEY_API parley_status parley_nlu_get_info(const parley_nlu *nlu, parley_nlu_info *out);

/* ---- Tokenizer ------------------------------------------------------------------------
 * The model's view of a text: BERT's uncased BasicTokenizer + WordPiece (the same pieces as
 * Hugging Face's BertTokenizer), each piece mapped back to its word and its bytes in the
 * text — for a UI that shows what the model read, for counting pieces against
 * max_positions, or for pipelines of your own. "[CLS]" typed in a text is text ("[", "cl",
 * "##s", "]"), never a special token. */

typedef struct parley_tokenizer parley_tokenizer;

/* Opens a WordPiece vocabulary (vocab.txt: one token per line; [PAD], [UNK], [CLS], [SEP]
 * and [MASK] required). On success *out is owned by the caller (parley_tokenizer_close); on
 * failure it is NULL and parley_errmsg() names the file and line. */
PARLEY_API parley_status parley_tokenizer_open(const char *vocab_path, parley_tokenizer **out);

/* NULL is a no-op. Not for the tokenizer of a parley_nlu, which its handle owns. */
PARLEY_API void parley_tokenizer_close(parley_tokenizer *tokenizer);

/* The tokenizer of a loaded model (its vocab.txt), borrowed from the handle: valid until
 * parley_nlu_close(). */
PARLEY_API const parley_tokenizer *parley_nlu_tokenizer(const parley_nlu *nlu);

typedef struct parley_token {
    const char *piece; /* the vocabulary entry: "book", "##ing", "[UNK]" */
    int id;            /* its id: its line in vocab.txt, from 0 */
    int word;          /* the whitespace-separated word of the text it belongs to */
    size_t start, end; /* its bytes in the text, [start, end) */
} parley_token;

/* A tokenized text. Every pointer inside is owned by it. */
typedef struct parley_tokens {
    int n_tokens;
    const parley_token *tokens; /* in text order; [CLS] and [SEP] are not added */
    int n_words;                /* whitespace-separated words, those that gave no piece too */
    const size_t *word_start, *word_end; /* (n_words) byte range of each word */
} parley_tokens;

/* Tokenizes text[0..len) (UTF-8; text may be NULL when len is 0). Control characters are
 * dropped, accents stripped, text lower-cased and punctuation split off; a word with no
 * match in the vocabulary, or over 100 characters, is one [UNK] covering the whole word.
 * A piece covers the bytes its characters came from (an accent dropped from "cafe\u0301"
 * still belongs to "cafe"). Invalid UTF-8 fails with PARLEY_ERR_UTF8 and the byte offset in
 * parley_errmsg(). On success *out is owned by the caller (parley_tokens_free); on failure
 * it is NULL. */
PARLEY_API parley_status parley_tokenizer_encode(const parley_tokenizer *tokenizer,
                                                 const char *text, size_t len, parley_tokens **out);

/* NULL is a no-op. */
PARLEY_API void parley_tokens_free(parley_tokens *tokens);

/* ---- New model directories ---------------------------------------------------------- */

typedef struct parley_nlu_model_params {
    /* The shape: from a Hugging Face BertConfig-style config.json (its vocab_size and labels,
     * if any, are ignored), or from the fields below, which must then all be set except
     * max_positions (0 = 512) and type_vocab (0 = 2). Not both. */
    const char *config;
    int layers, hidden, heads, intermediate, max_positions, type_vocab;
    const char *vocab;          /* vocab.txt (required): copied into the directory */
    const char *const *intents; /* (n_intents) intent labels (required) */
    int n_intents;
    const char *const *slot_tags; /* (n_slot_tags) BIO tags "B-x", "I-x"; "O" is put first
                                     when the list lacks it (may be empty) */
    int n_slot_tags;
    unsigned long long seed; /* of the random initialization; 0 is a seed like any other */
} parley_nlu_model_params;

/* Defaults for every field; a zeroed struct means the same. */
PARLEY_API parley_nlu_model_params parley_nlu_model_params_default(void);

/* Writes a new, untrained model directory `dir` (created, parents too, if missing): config.json,
 * model.safetensors (F32) and vocab.txt, initialized as BERT is (weights from normal(0,
 * 0.02), zero biases, LayerNorm weights 1, a zero [PAD] embedding) — where training starts,
 * or a model of the right shape for tests and benchmarks. The same params give the same
 * files. The directory is built beside `dir` and swapped in whole (one atomic rename), so a
 * failure leaves `dir` as it was; a `dir` holding anything but a model's files is refused
 * (PARLEY_ERR_INVALID_ARG naming the entry). params is borrowed
 * for the call; *info (may be NULL) receives the model's shape. Errors name the parameter or
 * file at fault (config.json keys as they would be written: "num_attention_heads"). Any
 * thread; not concurrently with itself on the same dir. */
PARLEY_API parley_status parley_nlu_model_create(const char *dir,
                                                 const parley_nlu_model_params *params,
                                                 parley_nlu_info *info);

/* What a model directory knows, read from its config.json alone (no weights are loaded): for
 * a dialog or a UI that checks its names against the model's. */
typedef struct parley_nlu_labels {
    int n_intents;
    const char *const *intents; /* (n_intents) as in config.json */
    int n_entities;
    const char *const *entities; /* (n_entities) the slot types of the B-/I- tags ("B-size",
                                    "I-size" -> "size"), each once, sorted bytewise */
} parley_nlu_labels;

/* Reads model_dir/config.json. On success *out is owned by the caller
 * (parley_nlu_labels_free); errors name the file (and the key at fault). Any thread. */
PARLEY_API parley_status parley_nlu_labels_read(const char *model_dir, parley_nlu_labels **out);
/* NULL is a no-op. */
PARLEY_API void parley_nlu_labels_free(parley_nlu_labels *labels);

/* ---- OpenBLAS on new CPUs ------------------------------------------------------------
 * OpenBLAS picks its kernels once, when the process loads it; a release older than the CPU
 * (0.3.21 of Debian 12 on Sapphire Rapids and later) falls back to slow SSE3 kernels, 2-3x
 * slower at the model's matrix products. Only OPENBLAS_CORETYPE in the environment of a
 * process about to start changes that. */

/* The OPENBLAS_CORETYPE value that would give this CPU faster kernels than the ones OpenBLAS
 * chose for this process ("SkylakeX", "Haswell"), or NULL when its choice is right. A
 * static string; any thread. An application acts on it before it starts (a launcher sets
 * the variable), or by setting it and executing itself again, as the parley tool does;
 * parley_nlu_open() logs a warning naming it. */
PARLEY_API const char *parley_nlu_blas_coretype(void);

#ifdef __cplusplus
}
#endif
#endif
