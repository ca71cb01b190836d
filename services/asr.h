/* asr.h — speech recognition: the engine interface, the node machinery every ASR kind
 * shares, the bot-specialized grammar, and one-shot transcription for `parley asr`.
 *
 * An engine (asr.stub's scripted transcripts, asr.pocketsphinx) is a vtable over streams:
 * open a stream for one utterance, feed it 16 kHz samples, ask for the hypothesis so far,
 * end it, take the final transcript, close it. svc_asr drives one engine for a node: it
 * keeps one stream per user (the utterance in progress), feeds the PIPE_T_AUDIO pieces of
 * pipeline/audio.h in order, sends partial hypotheses (at most every `partial_ms`) out of a
 * `partial` port when one is linked, tells the source how the words before each pause read
 * (so a request heard whole ends sooner, one stopped half way later: pipe_seg_hint), and
 * turns an utterance's last piece into its text turn
 * (sending its transcript out of `partial` too, with utt_end set: the "final" for display;
 * an utterance the source drops after partials were sent gets an empty one, utt_end
 * PIPE_UTT_DROPPED, so a display can clear what it showed).
 * Text turns pass through unchanged, so typed and spoken turns share the graph. An engine
 * may say how sure it is of a transcript; under the node's threshold the text turn is marked
 * rejected, so the dialog answers with its fallback instead of serving a wrong sentence.
 *
 * The bot's language model (asr_lang.c) is built from its nlu.yaml: every example becomes a
 * sentence pattern with its slot values replaced by a class of all the values that slot
 * has (in examples, lookup tables and synonyms), numbers are spelled out, words without a
 * pronunciation drop the phrase that holds them (with a warning). By default the patterns
 * train a class trigram model, so phrasings recombine; a JSGF grammar of the exact patterns
 * is the alternative. It is cached on disk under a name that hashes the nlu.yaml, so a
 * changed file builds a new one, with a dictionary of its words only (a decoder loads it
 * in a fraction of the memory).
 *
 * Threading: an engine's open() may run on any worker; one stream is used by one thread at a
 * time (svc_asr guarantees it: a user's pieces reach one worker). svc_asr guards its table.
 */
#ifndef SERVICES_ASR_H
#define SERVICES_ASR_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/audio.h"
#include "pipeline/node.h"

typedef struct svc_asr_engine {
    const char *name; /* the node kind: "asr.pocketsphinx" */
    /* A stream for one utterance of `user` (borrowed; NULL: no one in particular, a file):
     * an engine may carry what it learned of a user's voice and channel from one utterance
     * to the next. *stream owned by svc_asr until close. */
    parley_status (*open)(void *engine, const char *user, void **stream);
    parley_status (*feed)(void *stream, const int16_t *pcm, size_t n);
    /* The hypothesis so far, "" when none; *text owned by the caller. May be NULL. */
    parley_status (*partial)(void *stream, char **text);
    /* How the words heard so far read (*hint): whether a request of the bot could end after
     * them (pipeline/audio.h), asked when the speaker pauses. May be NULL: the engine cannot
     * tell, and the endpoint is the source's silence_ms. A failure fails the utterance. */
    parley_status (*end_hint)(void *stream, pipe_end_hint *hint);
    /* End of the utterance's audio. */
    parley_status (*end)(void *stream);
    /* The utterance's transcript after end (lower-case words, a slot value as the bot's
     * examples write it with the class model: "12 baker street"; "" when nothing was
     * heard); *text owned by the caller. */
    parley_status (*final)(void *stream, char **text);
    /* After final: how sure the engine is that the transcript is what was said, from 0 to
     * 100 (asr.pocketsphinx: docs/voice.md); NAN when it cannot say for this utterance. May
     * be NULL: the engine never can. */
    float (*confidence)(void *stream);
    void (*close)(void *stream);
} svc_asr_engine;

/* The ports of every ASR kind, in this order. */
enum { SVC_ASR_IN = 0, SVC_ASR_TEXT = 1, SVC_ASR_PARTIAL = 2 };
extern const pipe_port_spec svc_asr_ports[];

typedef struct svc_asr svc_asr;

/* Drives `engine` (borrowed; its streams are closed by svc_asr_free) for `node`. An utterance
 * whose confidence is under reject_below (0: none is) becomes a rejected text turn
 * (pipe_msg.asr_rejected): its transcript still goes out as the display's final. One of no
 * words fails its turn, unanswered (pipe_msg.no_answer) where its source cut it by itself. */
parley_status svc_asr_new(const svc_asr_engine *vt, void *engine, long partial_ms,
                          float reject_below, svc_asr **out);
/* Closes every stream still open. NULL is a no-op. */
void svc_asr_free(svc_asr *a);
/* A kind's process(): owns msg. Engine failures fail that turn (an utterance's last piece)
 * or drop the utterance (an earlier piece: its last piece then fails). */
parley_status svc_asr_process(svc_asr *a, pipe_node *node, pipe_msg *msg);

/* ---- The bot's language model, built from nlu.yaml (asr_lang.c) --------------------- */

typedef enum svc_lang_kind {
    SVC_LANG_NGRAM, /* a class trigram model: every phrasing recombines with every value */
    SVC_LANG_JSGF,  /* a grammar of the examples' exact patterns with slot classes */
} svc_lang_kind;

typedef struct svc_lang_info {
    svc_lang_kind kind;
    int sentences;       /* sentence patterns */
    int classes;         /* slot classes */
    int values;          /* slot values in them */
    int dropped;         /* phrases dropped for words without a pronunciation */
    int guessed;         /* words pronounced from their spelling */
    int cached;          /* 1: the files were there already */
    char path[4096];     /* the model: NAME-HASH.lm (ARPA) or NAME-HASH.gram (JSGF) */
    char classdef[4096]; /* its classes, NAME-HASH.classdef (n-gram model only) */
    char dict[4096];     /* its words' pronunciations, NAME-HASH.dict */
} svc_lang_info;

/* What svc_lang_build makes of an nlu.yaml. */
typedef struct svc_lang_params {
    svc_lang_kind kind;
    const char *dict;      /* the pronunciation dictionary */
    const char *cache_dir; /* NULL or "": $XDG_CACHE_HOME/parley/asr, else
                              $HOME/.cache/parley/asr, else /tmp/parley-asr */
    /* The share (0 to 0.5) of the class model's probability mass given to the generic
     * language model's most frequent words that the bot's sentences lack, so speech outside
     * the bot ("just", "gonna") has words of its own; 0: none (kind NGRAM only). */
    double generic_weight;
    const char *generic_lm; /* the generic language model they come from (weight above 0) */
    /* The bot's own pronunciations (asr_lexicon.c), heard before the dictionary's; NULL or
     * "": none. */
    const char *lexicon;
} svc_lang_params;

/* Builds (or finds in p->cache_dir) the language model p describes for the nlu.yaml at
 * `nlu`. Errors name the file (FILE:LINE:COL for YAML). */
parley_status svc_lang_build(const char *nlu, const svc_lang_params *p, svc_lang_info *info);

/* ---- pocketsphinx (asr_pocketsphinx.c) ------------------------------------------------- */

typedef struct svc_ps svc_ps;

typedef struct svc_ps_params {
    const char *hmm;          /* acoustic model folder (NULL: Debian's en-us) */
    const char *dict;         /* pronunciation dictionary (NULL: Debian's cmudict-en-us.dict) */
    const char *lm;           /* the generic language model for the fallback (NULL: en-us.lm.bin) */
    const svc_lang_info *bot; /* the bot's model (svc_lang_build), or NULL: the generic one only */
    int fallback;       /* 1: an utterance the bot's model cannot match goes to the generic model */
    int second_opinion; /* 1 (and fallback): a low confidence asks the generic model again
                           (asr_pocketsphinx.c); 0 where nothing is rejected by it */
    int speaker_warp;   /* 1 (the class model): a user's first utterance is heard through a
                           few frequency warps, the best kept for their next ones (deep and
                           high voices; asr_pocketsphinx.c) */
} svc_ps_params;

/* The asr.pocketsphinx node's default reject_below: most general English speech (synthesized,
 * and real librivox recordings) scores under it; most of the bots' own sentences, and the
 * real recorded card-game commands, above (bench/RESULTS.md, "Voice"). */
#define SVC_PS_REJECT_BELOW "50"
/* The paths of Debian's en-us model (pocketsphinx-en-us) for NULL fields. */
svc_ps_params svc_ps_params_default(void);
/* Loads the models (not built: PARLEY_ERR_NOT_BUILT). *out owned by the caller. */
parley_status svc_ps_open(const svc_ps_params *p, svc_ps **out);
void svc_ps_close(svc_ps *ps);
/* Switches pocketsphinx's log (one for the whole process) off, for good; svc_ps_open does.
 * Any thread. */
void svc_ps_log_off(void);
/* The engine whose `engine` argument is an svc_ps. */
extern const svc_asr_engine svc_ps_engine;
/* The first coefficient (the log energy) of the cepstral mean kept for user's next
 * utterance: 1 with *c0 set, 0 when none is kept (no utterance of half a second yet, or the
 * user gave way to 1,024 more recent ones). Any thread. */
int svc_ps_kept_mean(svc_ps *ps, const char *user, float *c0);

/* Transcribes a whole audio file (any format GStreamer decodes) as one request with one
 * engine: opens a stream, feeds it the file's speech at 16 kHz (from its first utterance to
 * its last, as pipe_speech_span finds them: the noise around is not heard), returns the
 * final transcript (owned by the caller) and, when confidence is not NULL, the engine's
 * confidence in it (NAN: none). */
parley_status svc_asr_transcribe_file(const svc_asr_engine *vt, void *engine, const char *path,
                                      char **text, float *confidence);

#endif
