/* asr_lts.c — a word's pronunciation guessed by espeak-ng, in ARPAbet (asr_lts.h).
 *
 * espeak_TextToPhonemes gives espeak's ASCII phoneme names with a separator between them
 * ("h|'aI|@" for "hiya"); each name, less its stress marks, is looked up in the table
 * below: the phonemes espeak-ng's en-us voice uses, each as one or more ARPAbet phones.
 */
#include <stdio.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/strbuf.h"
#include "services/asr_lts.h"
#include "services/espeak.h"

#include <espeak-ng/speak_lib.h>

#define SEP '|'

/* Each espeak phoneme name, a space, its ARPAbet phones: the consonants, the vowels, then a
 * pause ("_"), which says nothing. */
static const char *const phones[] = {
    "p P",      "b B",     "t T",       "d D",       "k K",     "g G",       "f F",   "v V",
    "T TH",     "D DH",    "s S",       "z Z",       "S SH",    "Z ZH",      "h HH",  "tS CH",
    "dZ JH",    "m M",     "n N",       "N NG",      "l L",     "r R",       "r- R",  "w W",
    "j Y",      "x K",     "C HH",      "W W",       "l/ L",    "t# T",      "d# D",  "? T",
    "z# Z",     "s# S",    "n- AH N",   "m- AH M",   "l- AH L", "@L AH L",   "n^ N",  "a AE",
    "aa AE",    "a# AH",   "A AA",      "A: AA",     "A@ AA R", "0 AA",      "0: AO", "V AH",
    "@ AH",     "@2 AH",   "@5 AH",     "@- AH",     "3 ER",    "3: ER",     "E EH",  "e EH",
    "e@ EH R",  "eI EY",   "I IH",      "I2 IH",     "I# IH",   "i IY",      "i: IY", "i@ IH R",
    "i@3 IH R", "aI AY",   "aI@ AY ER", "aI3 AY ER", "aU AW",   "aU@ AW ER", "O AO",  "O: AO",
    "O@ AO R",  "o@ AO R", "OI OY",     "o OW",      "oU OW",   "oU# OW",    "U UH",  "U@ UH R",
    "u UW",     "u: UW",   "IR IH R",   "VR ER",     "O2 AO",   "t2 T",      "_ "
};

/* The ARPAbet of one espeak phoneme name [p, p + n) less its stress marks; NULL when there is
 * none; "" for a mark alone (nothing to say). */
static const char *arpabet(const char *p, size_t n)
{
    while (n && strchr("',;%=", *p))
        p++, n--;
    if (!n)
        return "";
    for (size_t i = 0; i < sizeof phones / sizeof *phones; i++)
        if (!strncmp(phones[i], p, n) && phones[i][n] == ' ')
            return phones[i] + n + 1;
    return NULL;
}

char *svc_lts_guess(const char *word)
{
    if (svc_espeak_lock() != PARLEY_OK)
        return NULL;
    pl_strbuf o = { 0 };
    int ok = espeak_SetVoiceByName("en-us") == EE_OK;
    for (const void *text = word; ok && text;) {
        const char *ph = espeak_TextToPhonemes(&text, espeakCHARS_UTF8, SEP << 8);
        for (const char *p = ph; ok && p && *p;) {
            size_t n = strcspn(p, "| \n");
            const char *a = arpabet(p, n);
            if (!a) {
                pl_log(PARLEY_LOG_DEBUG, "asr: '%s': espeak-ng's phoneme '%.*s' has no ARPAbet",
                       word, (int)n, p);
                ok = 0;
            } else if (*a) {
                pl_strbuf_printf(&o, "%s%s", o.len ? " " : "", a);
            }
            p += n + (p[n] != 0);
        }
    }
    svc_espeak_unlock();
    if (!ok || o.failed || !o.len) {
        pl_free(o.s);
        return NULL;
    }
    return o.s;
}
