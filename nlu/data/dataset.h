/* dataset.h — annotated NLU examples in memory: text, words, one BIO tag per word, intent.
 *
 * Two readers fill it:
 *   - Rasa-style nlu.yaml (nlu/data/rasa.c): intents with annotated examples
 *     "fly to [boston](city)" or "[two]{"entity": "count", "value": "2"}", synonyms, lookup
 *     tables and regexes. Errors give FILE:LINE:COL of the exact character.
 *   - a JointBERT folder (nlu/data/jointbert.c): seq.in (words), seq.out (one BIO tag per
 *     word), label (the intent; ATIS's joined intents like "atis_airfare#atis_flight" stay one
 *     label). Errors give FILE:LINE.
 *
 * Words are the whitespace-separated parts of the text (space, tab, CR, LF, Unicode Zs and
 * U+2028/U+2029: what nlu/text/tokenizer.c splits at), so a model parsing ds_example.text sees
 * exactly these words.
 * An example's text is its words joined by single spaces.
 *
 * Labels: intents and slot types are sorted by byte order (strcmp), so adding or moving
 * examples in a file never renumbers the others. Slot tags are "O" (index 0), then for slot
 * type s (index into slots) "B-s" at 1 + 2s and "I-s" at 2 + 2s: every slot seen gets both.
 *
 * Duplicates (same text, tags and intent as an earlier example) are counted in
 * n_duplicates. The Rasa reader drops them (a repeat in hand-written data trains nothing);
 * the JointBERT reader keeps them, so public splits load with their published sizes (SNIPS
 * train 13,084, ATIS train 4,478).
 *
 * Synonyms, canonical values and regexes are kept as data for later stages: the trainer adds
 * synonyms' surface forms to lookup tables and records them in the model
 * (nlu/train/synonyms.h). Lookup tables feed ds_augment_lookups(), and lookup tables and
 * regexes the sparse features' matches (nlu/sparse/sparse.h).
 *
 * A dataset is not synchronized: build it on one thread, then read it from any.
 */
#ifndef NLU_DATA_DATASET_H
#define NLU_DATA_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "parley/status.h"
#include "sdk/base/names.h"

typedef struct ds_span {
    int start, end; /* words [start, end) */
    int slot;       /* index into ds_dataset.slots */
    char *value;    /* canonical value from {"value": ...}, or NULL; owned */
} ds_span;

typedef struct ds_example {
    char *text; /* words joined by single spaces; owned */
    int n_words;
    char **words;   /* (n_words) NUL-terminated, pointing into one owned block */
    int *tags;      /* (n_words) index into ds_dataset.tags */
    int intent;     /* index into ds_dataset.intents */
    int variant_of; /* the example this variant or copy was made from (augment.c,
                       lowercase.c); -1 for an example of the data */
    int n_spans;
    ds_span *spans; /* annotated slot values in word order (JointBERT: the tag chunks) */
    int untagged;   /* 1: its words carry no slot annotation (background sentences, whose
                       tags are all O): training scores its intent only */
} ds_example;

/* A named list of strings: a synonym (name = canonical value, values = what maps to it), a
 * lookup table (name = slot type), a regex (name, values = patterns). */
typedef struct ds_values {
    char *name;
    int n;
    char **values;
} ds_values;

struct ds_seen;

typedef struct ds_dataset {
    char *source; /* the path it was loaded from */
    int n_examples;
    ds_example *examples; /* (n_examples) */
    int n_intents;
    char **intents; /* (n_intents) sorted */
    int n_slots;
    char **slots; /* (n_slots) slot types without prefix, sorted */
    int n_tags;
    char **tags; /* (n_tags = 1 + 2 * n_slots) "O", "B-s0", "I-s0", "B-s1", ... */
    int n_synonyms, n_lookups, n_regexes;
    ds_values *synonyms, *lookups, *regexes;
    int n_duplicates; /* see above: dropped (Rasa) or kept (JointBERT) */
    /* private */
    int cap_examples;
    int finished;
    pl_names intent_ix, slot_ix; /* name -> index while the data set is built */
    struct ds_seen *seen;
} ds_dataset;

/* Loads `path`: a directory is read as a JointBERT folder, a .yaml or .yml file as Rasa
 * nlu.yaml. On success *out is owned by the caller (ds_free). */
parley_status ds_load(const char *path, ds_dataset **out);
parley_status ds_load_rasa(const char *path, ds_dataset **out);
/* Rasa text in memory; `name` stands for the file in error positions. */
parley_status ds_load_rasa_string(const char *name, const char *text, size_t len, ds_dataset **out);
parley_status ds_load_jointbert(const char *dir, ds_dataset **out);
/* NULL is a no-op. */
void ds_free(ds_dataset *ds);

/* Index of an intent, slot type or tag by name in a finished data set (ds_finish), or -1. */
int ds_intent_index(const ds_dataset *ds, const char *name);
int ds_slot_index(const ds_dataset *ds, const char *name);
int ds_tag_index(const ds_dataset *ds, const char *tag);
/* The lookup table for slot type `slot`, or NULL. */
const ds_values *ds_lookup_for(const ds_dataset *ds, const char *slot);

/* Data augmentation by slot-value substitution (nlu/data/augment.c). For each example
 * present now that has a span of a slot type S with a lookup table S, it makes up to
 * per_example_max new examples, each replacing every such span by a value drawn from its
 * table (whole words; the new spans get B-/I- tags and no canonical value). New texts that
 * already exist are skipped; at most 4 * per_example_max draws are tried per example. The
 * draws come from a PRNG seeded with `seed` and walk examples in order, so a seed gives the
 * same result every time. A variant's variant_of is the example it was made from. *added
 * (may be NULL) receives the number of examples appended. */
parley_status ds_augment_lookups(ds_dataset *ds, int per_example_max, uint64_t seed, int *added);

/* The same with values drawn from the data itself: a span of slot type S in an example of
 * intent I takes a value that a written example of I (variant_of -1) tags as S, where I's
 * examples give S at least two different values. For data without lookup tables: the
 * values an intent's examples show are read in each other's sentences, so a model learns
 * the words around a value rather than the value. */
parley_status ds_augment_own_values(ds_dataset *ds, int per_example_max, uint64_t seed, int *added);

/* Appends a copy of written example `example` whose span number `span` holds `value` (words
 * joined by single spaces; tagged B-/I-, no canonical value) instead of its words, unless
 * the data has that text (*appended 0); the copy's variant_of is the example. For the
 * trainer's synonym copies (nlu/train/synonyms.h). */
parley_status ds_add_span_variant(ds_dataset *ds, int example, int span, const char *value,
                                  int *appended);

/* Lower-case copies (nlu/data/lowercase.c): for each example present now, not untagged, with
 * a capital in a word of a slot value, a copy with every word lower-cased (tags, spans and
 * canonical values as they were), unless that text exists already. A copy's variant_of is
 * the written example the original was (itself, or the one its lookup variant came from).
 * *added (may be NULL) receives the number of copies appended. */
parley_status ds_augment_lowercase(ds_dataset *ds, int *added);

/* The index of intent `name` in a finished data set, added in its sorted place when new:
 * the examples of the intents after it are renumbered (nothing else holds intent indices
 * before training). For examples a trainer adds to the data (nlu/train/background.c). */
parley_status ds_add_intent(ds_dataset *ds, const char *name, int *id);

/* ---- building, for the readers (nlu/data_*.c) -------------------------------------- */

/* An empty dataset for `source`. */
parley_status ds_new(const char *source, ds_dataset **out);
/* Ids of an intent or slot type, added when new. Before ds_finish they are provisional:
 * tags built from them are 0, 1 + 2 * slot_id, 2 + 2 * slot_id. After ds_finish the label
 * lists are fixed: a new name fails with PARLEY_ERR_NOT_FOUND. */
parley_status ds_intern_intent(ds_dataset *ds, const char *name, size_t len, int *id);
parley_status ds_intern_slot(ds_dataset *ds, const char *name, size_t len, int *id);

typedef enum ds_add_result {
    DS_ADDED = 0,     /* a new text */
    DS_DUPLICATE = 1, /* same text, tags and intent as an earlier example */
    DS_CONFLICT = 2,  /* same text as an earlier example, other tags or intent: added */
} ds_add_result;

typedef enum ds_dup_policy {
    DS_KEEP_ALL = 0,        /* append duplicates too (they are still counted) */
    DS_DROP_DUPLICATES = 1, /* skip exact duplicates */
    DS_DROP_SAME_TEXT = 2,  /* skip any text already present (augmentation) */
} ds_dup_policy;

/* Appends an example made of words[i][0..lens[i]) (copied; each a non-empty run without
 * whitespace), its tags and spans (copied, values included), unless `policy` skips it.
 * Duplicates are counted in n_duplicates, except under DS_DROP_SAME_TEXT (synthetic
 * examples). *result (may be NULL) tells what the
 * example was; *appended (may be NULL) whether it was appended. */
parley_status ds_add(ds_dataset *ds, int n_words, const char *const *words, const size_t *lens,
                     const int *tags, int intent, int n_spans, const ds_span *spans,
                     ds_dup_policy policy, ds_add_result *result, int *appended);

/* Appends `value` to the list named `name` in *list (creating it). With dedupe set, a value
 * already in that list is not added again. */
parley_status ds_values_add(ds_values **list, int *n, const char *name, const char *value,
                            int dedupe);

/* Sorts the labels, renumbers every example, builds the tag names. Call once, after the
 * last ds_intern_*; ds_add stays usable afterwards with final ids. */
parley_status ds_finish(ds_dataset *ds);

/* Byte length of the whitespace character at s[i] (space, tab, CR, LF, Unicode Zs, U+2028,
 * U+2029), or 0. s must be valid UTF-8. It must agree with the tokenizer's word split. */
size_t ds_space_len(const char *s, size_t i, size_t len);

#endif
