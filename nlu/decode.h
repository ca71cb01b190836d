/* decode.h — from model logits to decisions: intent ranking and BIO slot spans.
 *
 * Slot tags are predicted per word piece; a word takes the tag of its first piece (the
 * convention the trainer uses), chosen jointly over the sentence so that the tags are valid
 * BIO. nlu_bio_spans still repairs any tag sequence (an I-x that does not continue an x span
 * opens one, as conlleval reads it). Pure functions, no allocation, thread-safe.
 */
#ifndef NLU_DECODE_H
#define NLU_DECODE_H

#include "parley/status.h"
#include "nlu/text/tokenizer.h"

enum { NLU_TAG_O = 0, NLU_TAG_B = 1, NLU_TAG_I = 2 };

/* The slot tag set of a model, split into BIO kind and slot type. */
typedef struct nlu_tagset {
    int n_tags;
    signed char *kind; /* (n_tags) NLU_TAG_O/B/I */
    int *type;         /* (n_tags) index into type_names; -1 for O */
    int n_types;
    char **type_names; /* (n_types) slot names without prefix; owned */
    int o_tag;         /* tag id of "O" */
    size_t max_name;   /* longest type name, in bytes */
} nlu_tagset;

/* Parses tags ("O", "B-x", "I-x"). Anything else, or no "O", is PARLEY_ERR_CONFIG. */
parley_status nlu_tagset_init(nlu_tagset *ts, char *const *tags, int n_tags);
void nlu_tagset_clear(nlu_tagset *ts);
/* The index of slot type `name` in ts->type_names, or -1. */
int nlu_tagset_type(const nlu_tagset *ts, const char *name);

/* The index of the first of x[0..n) that is NaN or infinite, or n when all are finite:
 * scores that are not numbers decide nothing (a NaN confidence passes every threshold). */
size_t nlu_first_nonfinite(const float *x, size_t n);

/* Softmax of logits (n) / temperature (<= 0 means 1) into prob (n). */
void nlu_softmax(const float *logits, int n, float temperature, float *prob);

/* Softmax of logits (n) / temperature (<= 0 means 1: the model's intent_temperature, see
 * nlu/model/model.h), then the k most probable in order: idx (k), prob (k). Every inference path
 * turns intent logits into confidences here, so a calibrated model answers alike in all. */
void nlu_top_k(const float *logits, int n, float temperature, int k, int *idx, float *prob);

/* A slot span over words [w0, w1). */
typedef struct nlu_span {
    int type;
    int w0, w1;
} nlu_span;

/* Per word, a tag from its first piece's logits: slot_logits (n_pieces, NS) for the pieces
 * given (without [CLS]); words with no piece get the O tag. word_tag: (n_words). The tags are
 * the most probable sequence that is valid BIO (Viterbi over the pieces' log-softmax: an I-x
 * only after B-x or I-x), not each word's own argmax: on SNIPS dev the constraint moved
 * slot F1 from 91.0 to 92.7 (bench/train_decode_probe.py). prior (NS), when not NULL, is
 * how likely each tag is to be one the intent takes (bert_slot_prior, nlu/model/model.h: 1 for O):
 * a word's probability of tag t becomes p(t) * prior[t] and the rest of it goes to O (a
 * slot type the intent does not take means no slot of its there). On SNIPS with 10 / 50
 * examples per intent that raised slot F1 from 33.1 / 55.9 to 38.9 / 60.5 (bench/RESULTS.md).
 * scratch holds nlu_word_tags_scratch(n_words, NS) bytes, aligned for floats and ints. */
size_t nlu_word_tags_scratch(int n_words, int n_tags);
void nlu_word_tags(const nlu_tagset *ts, const float *prior, const float *slot_logits,
                   const wp_piece *pieces, int n_pieces, int n_words, int *word_tag, void *scratch);

/* Reads word tags as BIO with repair and returns the number of spans written to `spans`
 * (at most n_words). kind_out, type_out: (n_words), the repaired reading: an I-x that
 * continues no x span reads as B-x. */
int nlu_bio_spans(const nlu_tagset *ts, const int *word_tag, int n_words, signed char *kind_out,
                  int *type_out, nlu_span *spans);

#endif
