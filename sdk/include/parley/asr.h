/* parley/asr.h — offline speech recognition specialized to a bot, outside a graph: what the
 * asr.pocketsphinx node does, for `parley asr` and applications.
 *
 * parley_asr_build() builds the language model of a bot's nlu.yaml (docs/voice.md: its
 * sentence patterns with slot classes, as a class trigram model or a JSGF grammar; numbers
 * spelled out; words without a pronunciation dropped with a warning) into a cache folder, or
 * finds it there; parley_asr_open() loads pocketsphinx with it (or with the generic English
 * model alone),
 * and parley_asr_transcribe_file() decodes an audio file (any format GStreamer reads);
 * parley_asr_confidence() says how sure it was.
 * Without pocketsphinx or GStreamer in the build these answer PARLEY_ERR_NOT_BUILT.
 *
 * Threading: a parley_asr may be used by one thread at a time; open one per thread.
 */
#ifndef PARLEY_ASR_H
#define PARLEY_ASR_H

#include "parley/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the recognizer listens for: a class trigram model of the examples' patterns, where
 * phrasings recombine (the default), or a grammar of their exact patterns. */
typedef enum parley_asr_language {
    PARLEY_ASR_NGRAM = 0,
    PARLEY_ASR_GRAMMAR = 1,
} parley_asr_language;

typedef struct parley_asr_model {
    parley_asr_language language;
    int sentences;   /* sentence patterns */
    int classes;     /* slot classes */
    int values;      /* slot values in them */
    int dropped;     /* phrases dropped for words without a pronunciation */
    int guessed;     /* words pronounced from their spelling */
    int cached;      /* 1: it was in the cache already */
    char path[4096]; /* the model: .lm (ARPA) or .gram (JSGF); its .dict is beside it */
} parley_asr_model;

typedef struct parley_asr parley_asr;

typedef struct parley_asr_params {
    const char *nlu_yaml;  /* the bot's examples; NULL: the generic English model only */
    const char *cache_dir; /* where language models are cached (NULL: the default) */
    parley_asr_language language;
    int no_fallback; /* 1: speech the bot's model cannot match gives no words */
    /* The share (0 to 0.5) of the class model's probability given to the generic English
     * model's 300 most frequent words that the bot lacks, so speech outside the bot ("just",
     * "gonna") is heard as its own words; 0 (the default): none, as in noise they take the
     * place of the bot's words (docs/voice.md). */
    double generic_weight;
    /* The bot's own pronunciations: a file in the pronunciation dictionary's format, one
     * "word PHONES" a line ("grande G R AA N D EY"), heard before the dictionary's or, for a
     * word it lacks, before the guess from the spelling; NULL or "": none (docs/voice.md). */
    const char *lexicon;
    /* 1: each file is heard through the model's own frequency scale only; 0 (the default):
     * also through a longer and a shorter vocal tract's, the best kept, so deep and high
     * voices are heard as well as the model's average speaker (docs/voice.md). */
    int no_speaker_warp;
} parley_asr_params;

/* Builds or finds the language model of p->nlu_yaml (required) in p->cache_dir (NULL or "":
 * ~/.cache/parley/asr, see docs/voice.md). Errors name the file (FILE:LINE:COL for YAML). */
PARLEY_API parley_status parley_asr_build(const parley_asr_params *p, parley_asr_model *out);

/* Loads the recognizer (the bot's model built first when nlu_yaml is set). *out owned by the
 * caller (parley_asr_close). */
PARLEY_API parley_status parley_asr_open(const parley_asr_params *p, parley_asr **out);
/* The transcript of a whole file (lower-case words; "" when nothing was recognized); *text
 * is owned by the caller: parley_asr_text_free(). */
PARLEY_API parley_status parley_asr_transcribe_file(parley_asr *asr, const char *path, char **text);
/* How sure the recognizer is of the last transcript parley_asr_transcribe_file() gave, from 0
 * to 100: 100 plus the bot model's best path score per 10 ms frame; under 60, when the
 * generic model is loaded, 50 plus the margin per frame by which the bot model's path beats
 * the generic model's (so under 50: general English fits the sound better). The
 * asr.pocketsphinx node rejects an utterance under its reject_below (default 50;
 * docs/voice.md). NAN when there is none: no bot model, the generic model's fallback
 * transcript, no words, a failed call, or NULL. */
PARLEY_API float parley_asr_confidence(const parley_asr *asr);
PARLEY_API void parley_asr_text_free(char *text);
/* NULL is a no-op. */
PARLEY_API void parley_asr_close(parley_asr *asr);

#ifdef __cplusplus
}
#endif

#endif
