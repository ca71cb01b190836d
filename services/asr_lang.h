/* asr_lang.h — the bot's spoken language as the recognizer's builders share it: what people
 * say to the bot, read from its nlu.yaml by asr_lang.c, rendered as a class n-gram language
 * model (asr_ngram.c) or a JSGF grammar (asr_jsgf.c). Internal to services/.
 *
 * A sentence pattern is an example's spoken words separated by single spaces, each slot value
 * replaced by its class, "<c_N>" for slot N. A class holds every value that slot takes (in
 * the examples, its lookup table, the synonyms of those values), each as spoken words and
 * as one compound dictionary word that the class model names: the value as the bot writes
 * it, lower-cased, its words joined by '_', then ":c_N" ("12_baker_street:c_0", said
 * "twelve baker street"), so a transcript gives a slot value back as the examples write it
 * (digits where they write digits). Words
 * are lower-cased, numbers spelled out, and every word has a pronunciation: from the
 * dictionary, or guessed from its spelling (espeak-ng) when the dictionary lacks it.
 *
 * A slot whose examples tag a value in the plural (a value that is another's with its last
 * word's plural ending: "lattes" beside "latte") has two classes: its values in the singular,
 * class N, and every one of them in the plural, class n_slots + N ("mochas", "flat whites"),
 * each pattern naming the one its example's value is in. So the model learns which words
 * take a plural ("two large <lattes>") and which a singular ("a large <latte>"), and a short
 * "a" is not heard as "two" before a singular.
 *
 * Threading: a svc_lang is built and read by one thread.
 */
#ifndef SERVICES_ASR_LANG_H
#define SERVICES_ASR_LANG_H

#include "sdk/base/names.h"
#include "sdk/base/strbuf.h"

/* Distinct strings (owned), found by name. */
typedef struct svc_strset {
    char **s;
    int n;
    pl_names ix;
} svc_strset;

/* Adds s (taken) unless present; 0 on allocation failure (s is freed). */
int svc_strset_add(svc_strset *set, char *s);
void svc_strset_free(svc_strset *set);

typedef struct svc_lang {
    const char *source;    /* the nlu.yaml (borrowed) */
    int n_slots;           /* slot types */
    int n_classes;         /* 2 per slot type: its values, then (from n_slots on) their
                              plurals; many empty */
    char *const *slot;     /* (n_slots) slot type names (borrowed from the data set) */
    svc_strset *classes;   /* (n_classes) values as spoken words */
    svc_strset *members;   /* (n_classes) their compound words, index for index */
    svc_strset sentences;  /* patterns */
    svc_strset generic;    /* words of the generic model mixed in (svc_lang_params), most
                              frequent first; none when its weight is 0 */
    double *generic_p;     /* (generic.n) their log10 probabilities among themselves */
    double generic_weight; /* their share of the class model's mass */
    int dropped;           /* phrases dropped: a word could be neither found nor guessed */
    int guessed;           /* words pronounced from their spelling */
} svc_lang;

/* Hesitations people put anywhere in a request ("um", "uh", "hmm"): the class model lets
 * them in between any two words without losing the words' context (asr_ngram.c), the
 * dictionary pronounces them, and transcripts leave them out. Their words are in angle
 * brackets, "<um>", so no word of a bot is ever taken for one. */
typedef struct svc_hesitation {
    const char *word, *phones;
} svc_hesitation;
extern const svc_hesitation svc_hesitations[];
extern const int svc_n_hesitations;

/* The generic language model's (at `lm`, any format sphinxbase reads) `n` most frequent
 * words that take(ctx, word) accepts, most frequent first, added to *words; *log10p (owned,
 * one per word) their log10 probabilities renormalized to sum to 1 among themselves.
 * Errors name the file; PARLEY_ERR_NOT_BUILT without pocketsphinx (asr_generic_none.c). */
parley_status svc_generic_words(const char *lm, int n, int (*take)(void *ctx, const char *word),
                                void *ctx, svc_strset *words, double **log10p);

/* asr_lexicon.c — reads the bot's own pronunciations, the text src of the file at `path`
 * (the dictionary's format; src is the caller's, cut up on the way), into *text (owned:
 * "word PHONES\nword(2) PHONES\n...", each word's lines together, words lower-cased) and
 * *ix (each word → its first line's offset in *text; names borrowed from it); every phone
 * must be one the dictionary text `dict` uses. Errors name FILE:LINE (path). */
parley_status svc_lexicon_load(const char *path, char *src, const char *dict, char **text,
                               pl_names *ix);
/* The largest lexicon file read. */
enum { SVC_LEXICON_MAX = 1 << 24 };

/* Renderers: owned text or NULL when memory ran out. */
char *svc_lang_jsgf(const svc_lang *l);
/* The class trigram model in ARPA form (interpolated Kneser-Ney); class tags are "[c_N]";
 * the generic words, if any, among its unigrams with their weight. */
char *svc_lang_arpa(const svc_lang *l);
/* The classes' members in sphinxbase's class definition form, each as its compound word. */
char *svc_lang_classdef(const svc_lang *l);

#endif
