/* slot_values.h — the values a model's slot types take in its training data, and what a slot
 * value near one of them resolves to (slot_values.c; the sound key, sound_key.c).
 *
 * Recognizers and typing hand the NLU near misses of values the bot knows: "soy" for "soy
 * milk", "like roast" for "light roast", "twelve baker street" where the examples write
 * "12 baker street". The trainer records per slot type the values the bot knows (the values
 * its examples tag, its lookup table, the synonyms of those values: nlu/train/slot_values.h)
 * in config.json:
 *
 *   "slot_values": {"address": {"digits": true, "values": ["12 Baker Street", ...]},
 *                   "city": {"open": true, "values": [...]}}
 *
 * "digits": most values hold a number in digits, and more than hold one in words; "open":
 * the data held more than BERT_SLOT_VALUES_MAX values, and only the first are kept, or the
 * bot does not list them (nlu/train/slot_values.h). A model
 * without the key takes its canonical values from its synonyms alone.
 *
 * At parse a span whose text is no synonym's surface form (those map first) is resolved
 * against its slot type's values, compared as synonyms compare (bert_synonym_fold):
 *   1. a value the slot knows stays as said;
 *   2. where the values write digits, number words become digits (sdk/base/numwords.h), and
 *      the rest goes on with that text;
 *   3. the span's words as a run of at least half the words of exactly one longer value (3
 *      bytes at least: "soy" → "soy milk"); two such values leave it as said;
 *   4. the value nearest by character edit distance, within 1 edit from 4 bytes, 2 from 12, 3
 *      from 20 (of the span); else the value nearest by edit distance between sound keys
 *      (bert_sound_key), exactly equal from 3 key letters, within 1 from 5, with the letters
 *      within half the span's length. The nearest must be one value (or values that stand
 *      for one canonical value); a tie leaves the span as said.
 * In 3 and 4 a value must hold the span's digits, in order: "december the 6th" is not near
 * "december the 5th". An open slot skips 3 and 4: a value beyond those kept, or one the bot
 * never listed, could be meant.
 * A resolved value is reported as its synonym's canonical value when it is a surface form.
 * Before that, a span whose words are only another slot type's value may move to that type
 * (bert_slot_values_owner, below).
 * Short spans never move by distance: "tea" is one edit from "pea" and from "ten".
 *
 * Threading: built on one thread (loading a model), then read-only.
 */
#ifndef NLU_MODEL_SLOT_VALUES_H
#define NLU_MODEL_SLOT_VALUES_H

#include <stddef.h>

#include "parley/status.h"
#include "sdk/base/names.h"

/* The most values kept per slot type. Matching compares a span with each value (two edit
 * distances of a few dozen bytes each: 0.2 ms a span for 5,000 values on a 2-core
 * EPYC VM), and a lookup
 * table of a million values would make config.json tens of megabytes; 5,000 hold every slot
 * type of the sample bots, SNIPS and ATIS whole, and a value list a person writes. */
#define BERT_SLOT_VALUES_MAX 5000

/* One slot type's values. */
typedef struct bert_known {
    char *slot; /* the slot type; owned */
    int n;
    char **values;  /* (n) as written; owned */
    char **folded;  /* (n) folded (bert_synonym_fold); owned */
    char **keys;    /* (n) sound keys (bert_sound_key); owned */
    pl_names ix;    /* folded -> index */
    int open;       /* more values than BERT_SLOT_VALUES_MAX, or values the bot does not list */
    int digits;     /* the values write numbers as digits */
    size_t longest; /* the longest value, in bytes */
} bert_known;

/* Every slot type's values: config.json "slot_values"; empty (n 0) when the key is absent. */
typedef struct bert_slot_values {
    int n;
    bert_known *slots; /* (n) owned */
    pl_names ix;       /* slot type -> index */
} bert_slot_values;

/* The values of slot type `slot`, added when new; NULL when out of memory. The pointer is
 * good until the next slot type is added. */
bert_known *bert_slot_values_of(bert_slot_values *v, const char *slot);
/* The values of slot type `slot`, or NULL when it has none. */
const bert_known *bert_slot_values_find(const bert_slot_values *v, const char *slot);
/* Adds value[0..len) to k (a value that folds to one k has, or to nothing, is not added; past
 * BERT_SLOT_VALUES_MAX values k becomes open instead). */
parley_status bert_known_add(bert_known *k, const char *value, size_t len);
parley_status bert_slot_values_copy(bert_slot_values *dst, const bert_slot_values *src);
void bert_slot_values_clear(bert_slot_values *v);
/* The longest value of any slot type, in bytes. */
size_t bert_slot_values_longest(const bert_slot_values *v);

struct cJSON;
/* Reads "slot_values" (j) into out; `where` names the file in errors. */
parley_status bert_slot_values_read(const struct cJSON *j, const char *where,
                                    bert_slot_values *out);
/* The object "slot_values" is written as, or NULL when out of memory. */
struct cJSON *bert_slot_values_json(const bert_slot_values *v);

struct bert_synonyms;
/* *out: what text[0..len), a span of k's slot type that is no synonym's surface form,
 * resolves to as described above (owned by the caller, pl_free; never longer than
 * max(len, bert_slot_values_longest, the synonyms' longest canonical value) bytes), or NULL
 * when it stays as said. syn maps a resolved surface form to its canonical value. Fails
 * only when out of memory. */
parley_status bert_known_resolve(const bert_known *k, const struct bert_synonyms *syn,
                                 const char *text, size_t len, char **out);

/* *owner: the slot type a span tagged as k's belongs to by its words, or NULL when it stays
 * k's. The span text[0..len) is no value k knows but exactly a value of one other slot type
 * (folded as synonyms compare), and the two types are listed (neither open) and share no
 * value: "a hot chocolate medium please" with "medium" tagged as the roast is the size, when
 * the roasts are "medium roast", "dark roast"... Types that share values ("from boston", "to
 * boston") are told apart by their context alone, and a value of two other types by neither,
 * so those spans stay. Fails only when out of memory. */
parley_status bert_slot_values_owner(const bert_slot_values *v, const bert_known *k,
                                     const char *text, size_t len, const bert_known **owner);

/* ---- The sound key (sound_key.c) ---- */
/* A reduction of folded English text to how it sounds, after Metaphone: vowels kept only
 * at a word's start (as A), letters that sound alike made one (C K Q → K, and C before E I
 * Y → S, PH → F, V → F, Z → S, D → T, TH → 0, SH and CH → X), silent letters dropped (the
 * GH of "light", the K of "knee", the W and Y not before a vowel), doubled letters once,
 * the spaces between words dropped ("light roast" → LTRST, "like roast" → LKRST); digits
 * stay, other characters go. Owned by the caller (pl_free), NULL when out of memory. */
char *bert_sound_key(const char *folded);
/* The longest strings bert_edit_distance compares, in bytes. */
#define BERT_DISTANCE_MAX 64
/* The Levenshtein distance between a[0..na) and b[0..nb) when it is at most `bound`, else
 * bound + 1 (also when either is longer than BERT_DISTANCE_MAX). */
int bert_edit_distance(const char *a, size_t na, const char *b, size_t nb, int bound);

#endif
