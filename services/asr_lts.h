/* asr_lts.h — letter to sound: a pronunciation guessed from a word's spelling, for the words
 * of a bot that the recognizer's dictionary lacks ("hiya", "frappuccino", "macchiato"), so no
 * phrase of the bot is dropped for want of one. Internal to services/.
 *
 * espeak-ng reads the word as American English (its own rules and exception lists) and
 * its phonemes are mapped to the 39 ARPAbet phones of the CMU dictionary that the
 * pocketsphinx en-us acoustic model uses (stress and syllable marks dropped; a flap or a
 * glottal stop becomes T, a syllabic consonant AH and the consonant). Without espeak-ng in
 * the build there is no guess.
 *
 * Threading: any thread (it takes the process's espeak lock, services/espeak.h).
 */
#ifndef SERVICES_ASR_LTS_H
#define SERVICES_ASR_LTS_H

/* The word's phones separated by single spaces ("HH AY AH"), owned; NULL when espeak-ng is
 * not built or cannot start, memory ran out, or a phoneme has no ARPAbet counterpart (logged
 * at debug level). `word` is one lower-case word, UTF-8. */
char *svc_lts_guess(const char *word);

#endif
