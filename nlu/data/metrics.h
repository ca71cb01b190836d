/* metrics.h — scoring joint intent/slot predictions against gold annotations.
 *
 * Feed a scorer one example at a time (gold and predicted intent, one BIO tag per word for
 * each), then take a report:
 *   - intent accuracy;
 *   - slot precision, recall and F1 over chunks (micro-averaged), with the conlleval rules
 *     that seqeval applies in its default (non-strict) mode: a chunk starts at B-x, or at
 *     I-x after O or after a tag of another type (an I- without a B- starts a chunk); it ends
 *     when the type changes or at O or B-. A predicted chunk counts only when its type and
 *     both boundaries equal a gold chunk's;
 *   - sentence accuracy (JointBERT's "semantic frame accuracy"): the intent is right AND
 *     the predicted tag sequence equals the gold one tag for tag;
 *   - tag accuracy (seqeval's accuracy_score): equal tags over all words;
 *   - per intent and per slot type: precision, recall, F1 and support (gold count);
 *   - confusions, most frequent first: intents (gold -> predicted, wrong ones only) and slot
 *     chunks compared on the same word span, "O" standing for "no chunk there" (gold x
 *     predicted as y; gold x missed -> O; O -> y for a spurious chunk).
 * A ratio with a zero denominator is 0, like seqeval's default.
 *
 * Labels are strings, so predictions may use labels the gold data never has. The scorer is
 * not synchronized: one thread feeds it. Rendering builds a cJSON tree or a string; it
 * never prints.
 */
#ifndef NLU_DATA_METRICS_H
#define NLU_DATA_METRICS_H

#include <stddef.h>

#include "parley/status.h"

struct cJSON;

/* One chunk: words [start, end) of type type[0..type_len) (borrowed from the tag). */
typedef struct mt_chunk {
    int start, end;
    const char *type;
    size_t type_len;
} mt_chunk;

/* Splits a BIO tag: "O" gives 'O' and an empty type; "B-x" and "I-x" give 'B' or 'I' and
 * "x". Returns 0 (and touches nothing) for anything else, an empty type included. */
int mt_tag_split(const char *tag, char *prefix, const char **type);

/* The chunks of tags[0..n) (each valid for mt_tag_split) in order; out must hold n. Returns
 * the number of chunks. */
int mt_chunks(const char *const *tags, int n, mt_chunk *out);

typedef struct mt_prf {
    long support; /* gold count */
    long predicted;
    long correct;
    double precision, recall, f1;
} mt_prf;

typedef struct mt_label {
    char *name;
    mt_prf s;
} mt_label;

typedef struct mt_confusion {
    char *gold, *pred;
    long count;
} mt_confusion;

typedef struct mt_report {
    long n_examples;
    long intent_correct;
    double intent_accuracy;
    long sentence_correct;
    double sentence_accuracy;
    long n_tags, tags_correct;
    double tag_accuracy;
    mt_prf slots; /* chunk-level, micro-averaged */
    int n_intents;
    mt_label *intents; /* every intent in gold or predictions, by name */
    int n_slot_types;
    mt_label *slot_types; /* every slot type in gold or predictions, by name */
    int n_intent_confusions;
    mt_confusion *intent_confusions; /* count descending, then gold, then predicted */
    int n_slot_confusions;
    mt_confusion *slot_confusions; /* same order */
} mt_report;

typedef struct mt_scorer mt_scorer;

parley_status mt_scorer_new(mt_scorer **out);
/* NULL is a no-op. */
void mt_scorer_free(mt_scorer *s);
/* Adds one example. Tags are borrowed for the call. A tag that is not "O", "B-x" or "I-x"
 * fails with PARLEY_ERR_INVALID_ARG and leaves the scorer as it was. */
parley_status mt_scorer_add(mt_scorer *s, const char *gold_intent, const char *pred_intent,
                            int n_words, const char *const *gold_tags,
                            const char *const *pred_tags);
/* The scores so far; *out is owned by the caller (mt_report_free). */
parley_status mt_scorer_report(const mt_scorer *s, mt_report **out);
void mt_report_free(mt_report *r);

/* The report as JSON (ratios as fractions in [0, 1]); at most max_confusions of each kind
 * (negative = all). *out is owned by the caller (cJSON_Delete). */
parley_status mt_report_json(const mt_report *r, int max_confusions, struct cJSON **out);
/* The report as a human-readable table (percentages); *out is owned by the caller
 * (pl_free). */
parley_status mt_report_table(const mt_report *r, int max_confusions, char **out);

#endif
