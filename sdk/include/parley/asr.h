/* parley/asr.h — offline speech recognition specialized to a bot, outside a graph: what the
 * asr.pocketsphinx node does, for `parley asr` and applications.
 *
 * parley_asr_grammar_build() builds the JSGF grammar of a bot's nlu.yaml (README, "Voice":
 * sentence patterns with slot classes, numbers spelled out, words missing from the
 * pronunciation dictionary dropped with a warning) into a cache folder, or finds it there;
 * parley_asr_open() loads pocketsphinx with it (or with the generic English model alone),
 * and parley_asr_transcribe_file() decodes an audio file (any format GStreamer reads).
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

typedef struct parley_asr_grammar {
    int sentences;   /* sentence patterns */
    int classes;     /* slot classes */
    int values;      /* slot values in them */
    int dropped;     /* phrases dropped for words missing from the dictionary */
    int cached;      /* 1: it was in the cache already */
    char path[4096]; /* the JSGF file (its dictionary is beside it, .dict) */
} parley_asr_grammar;

/* Builds or finds the grammar of nlu_yaml in cache_dir (NULL or "": ~/.cache/parley/asr,
 * see the README). Errors name the file (FILE:LINE:COL for YAML). */
PARLEY_API parley_status parley_asr_grammar_build(const char *nlu_yaml, const char *cache_dir,
                                                  parley_asr_grammar *out);

typedef struct parley_asr parley_asr;

typedef struct parley_asr_params {
    const char *nlu_yaml;  /* the bot's examples; NULL: the generic English model only */
    const char *cache_dir; /* where grammars are cached (NULL: the default) */
    int no_fallback;       /* 1: speech the grammar cannot match gives no words */
} parley_asr_params;

/* Loads the recognizer (a grammar built first when nlu_yaml is set). *out owned by the
 * caller (parley_asr_close). */
PARLEY_API parley_status parley_asr_open(const parley_asr_params *p, parley_asr **out);
/* The transcript of a whole file (lower-case words; "" when nothing was recognized); *text
 * is owned by the caller: parley_asr_text_free(). */
PARLEY_API parley_status parley_asr_transcribe_file(parley_asr *asr, const char *path, char **text);
PARLEY_API void parley_asr_text_free(char *text);
/* NULL is a no-op. */
PARLEY_API void parley_asr_close(parley_asr *asr);

#ifdef __cplusplus
}
#endif

#endif
