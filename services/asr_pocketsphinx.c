/* asr_pocketsphinx.c — the pocketsphinx engine of services/asr.h: Debian's pocketsphinx
 * 5prealpha with the en-us acoustic model, decoding with the bot's language model (a class
 * trigram model or a grammar, asr_lang.c), and the generic English language model as a
 * fallback.
 *
 * Decoders are pooled: an utterance takes one (loading one costs about 0.1 s and 17 MB with
 * the bot's model) and gives it back when it ends, so the pool grows to the number of
 * utterances in progress at once. The class model's words come out as their compound
 * dictionary words ("soy_milk:c_4"); transcripts give them back as words ("soy milk"). When
 * the bot's model says nothing (a grammar, for speech outside it), the utterance's audio,
 * kept by its stream, is decoded again by a generic-model decoder, so such speech still gets
 * a transcript. Those are pooled too (about 100 MB each): one is loaded at start-up, and
 * the pool grows to the number of workers that ask the generic model at once, so noisy
 * utterances of many users do not wait for one another's second opinions. Each user's
 * utterance starts from the cepstral mean their last one ended with (kept for the 1,024
 * users heard most recently); a first utterance, from the mean of its own first speech
 * (asr_cmn.h), measured while its audio is held; it is also decoded again through a longer
 * and a shorter vocal tract's frequency scale (WARPS), and the scale whose path scores best
 * is kept with the user's mean (the bot's decoders are pooled by scale). A transcript
 * of the bot's model comes with a confidence, its best path's score per frame: the node
 * rejects speech the bot does not serve by it (the generic model's transcripts have none).
 * Noise lowers that score for the bot's own speech as it does for foreign speech, so a low
 * one asks the generic model for a second opinion (confidence_of). Where the noise is
 * steady (a fan, a hum: asr_denoise.h), the decoder hears the audio through a noise
 * suppressor: decided on a first utterance's held audio, and for a user's next one by
 * their last; the stream keeps the denoised audio for the other scales. Elsewhere, an
 * utterance whose speaker's words (pipe_speech_span) leave more than half a second of the
 * room around them, and whose decoding made words of that room, is decoded again on the
 * speaker's words alone. A final transcript
 * of the class model leaves out the words said well under the speaker's level
 * (asr_levels.h). When the speaker pauses, the class model says whether its words so far
 * end a request, for the source's endpoint (ps_end_hint). pocketsphinx's log is off.
 * Foreign error codes end here.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "parley_config.h"
#include "pipeline/audio.h"
#include "sdk/base/alloc.h"
#include "sdk/base/sync.h"
#include "services/asr.h"
#include "services/asr_denoise.h"
#include "services/asr_lang.h"
#include "services/asr_levels.h"

#define MODEL_DIR "/usr/share/pocketsphinx/model/en-us"

svc_ps_params svc_ps_params_default(void)
{
    return (svc_ps_params){ .hmm = MODEL_DIR "/en-us",
                            .dict = MODEL_DIR "/cmudict-en-us.dict",
                            .lm = MODEL_DIR "/en-us.lm.bin",
                            .fallback = 1,
                            .second_opinion = 1,
                            .speaker_warp = 1 };
}

#if PARLEY_HAVE_POCKETSPHINX
#include "services/asr_cmn.h" /* pocketsphinx's headers */
#include <pocketsphinx.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/err.h>
#include <sphinxbase/feat.h>

enum {
    MAX_CEP = 64,
    USER_MEANS = 1024, /* users whose cepstral mean is kept; the least recent gives way */
    MEAN_MIN_SAMPLES = PIPE_AUDIO_RATE / 2, /* an utterance shorter says too little of it */
    /* An utterance whose speaker's span (pipe_speech_span) leaves out more than this of its
     * audio, the noise before or after the speaker's words, is decoded again on the span
     * alone where the bot's model made words of that noise: the words after them went
     * wrong (bench/RESULTS.md#voice-span). */
    REDO_SPARE = PIPE_AUDIO_RATE / 2,
    REDO_PIECE = PIPE_AUDIO_RATE / 10, /* the pieces it is decoded again in */
};

/* What a user's last utterance left of the cepstral mean (their voice and channel): where
 * their next utterance starts, instead of the model's mean for everyone. */
typedef struct user_mean {
    char *user;    /* owned; NULL: a free place */
    uint64_t used; /* the engine's clock when last written */
    mfcc_t mean[MAX_CEP];
    int steady; /* their noise was steady: their next utterance is denoised (asr_denoise.h) */
    int warp;   /* the WARPS their voice is heard through */
} user_mean;

/* The generic model beside a bot's model gives second opinions on noisy speech, where its full
 * search (two more passes, up to 30,000 HMMs a frame) costs many times the bot's decoding; one
 * pass of at most 1,500 HMMs a frame decides the same for a fraction of it: the confidences
 * it gives move by 0.2-0.4 on average and none crosses the rejection's 50, for 43% less of
 * its time than 3,000 (bench/RESULTS.md#voice-noisy-pause). Its fallback transcripts
 * take the same search. */
#define GENERIC_BESIDE_BOT_HMMS "1500"

/* The frequency warps a user's voice is heard through (pocketsphinx's inverse_linear:
 * frequency f is read as f / warp): the model's own scale first, then a longer and a
 * shorter vocal tract than it fits best. A user's first utterance is decoded through each,
 * and the one whose path scores best is kept for their next ones: deep voices then read
 * as the model's average speaker, and high ones too (about three semitones either way).
 * Three warps found as many orders right as seven from 0.84 to 1.19
 * (bench/RESULTS.md#voice-speakers). */
static const float WARPS[] = { 1.0f, 0.84f, 1.19f };
enum { N_WARPS = sizeof WARPS / sizeof *WARPS };

/* Idle decoders of one model, under svc_ps.mu. */
typedef struct dec_pool {
    int bot;    /* the bot's model, else the generic one */
    float warp; /* the bot's decoders: their front end's warp (WARPS) */
    ps_decoder_t **dec;
    size_t n, cap;
} dec_pool;

struct svc_ps {
    char *hmm, *dict, *lm;
    char *bot, *bot_classdef, *bot_dict; /* NULL bot: the generic model only */
    svc_lang_kind kind;
    pthread_mutex_t mu;     /* the pools, the means */
    dec_pool bots[N_WARPS]; /* idle decoders of the bot's model, by warp */
    dec_pool generic;       /* idle decoders of the generic model */
    int has_generic;        /* the generic model decodes: without a bot's model, or as fallback */
    int second_opinion;     /* svc_ps_params' */
    int warps;              /* how many WARPS a first utterance tries (1: speaker_warp off) */
    mfcc_t cmn0[MAX_CEP];   /* a new decoder's cepstral mean (the model's cmninit) */
    int cmn_len;
    user_mean *means; /* (USER_MEANS), under mu */
    uint64_t clock;
};

typedef struct ps_stream {
    svc_ps *ps;
    char *user; /* owned; NULL: no one in particular */
    ps_decoder_t *dec;
    int warp;       /* dec's pool in ps->bots */
    int16_t *audio; /* the utterance so far, for the fallback */
    size_t n, cap;
    svc_cmn_primer *primer; /* non-NULL: the utterance waits for its first mean, audio held */
    svc_denoise *dn;        /* non-NULL: the decoder hears the audio denoised */
    int16_t *clean;         /* the denoised audio so far, where dn: what the decoder heard */
    size_t n_clean, clean_cap;
    svc_frames frames; /* the audio frame of each frame of dec (asr_levels.h) */
    size_t fed;        /* samples dec has heard */
    size_t from, to;   /* the audio the final decoding heard: all of it, or the speaker's span */
    int ended;         /* ps_end_utt was called */
    float confidence;  /* of the final transcript (ps_final), NAN: none */
} ps_stream;

/* The bot's class model as the decoder's search. */
static int set_class_model(svc_ps *ps, ps_decoder_t *dec)
{
    ngram_model_t *lm =
            ngram_model_read(ps_get_config(dec), ps->bot, NGRAM_ARPA, ps_get_logmath(dec));
    int ok = lm && ngram_model_read_classdef(lm, ps->bot_classdef) >= 0 &&
             ps_set_lm(dec, "bot", lm) >= 0 && ps_set_search(dec, "bot") >= 0;
    ngram_model_free(lm);
    return ok;
}

/* A new decoder of pool's model: the bot's (through its warp), or the generic one. */
static parley_status new_decoder(svc_ps *ps, const dec_pool *pool, ps_decoder_t **out)
{
    cmd_ln_t *cfg;
    int bot = pool->bot;
    char warp[16];
    snprintf(warp, sizeof warp, "%g", (double)pool->warp);
    if (!bot) /* beside a bot's model, its second opinion (GENERIC_BESIDE_BOT_HMMS) */
        cfg = cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", ps->hmm, "-dict", ps->dict, "-lm", ps->lm,
                          ps->bot ? "-fwdflat" : NULL, "no", "-bestpath", "no", "-maxhmmpf",
                          GENERIC_BESIDE_BOT_HMMS, NULL);
    else if (ps->kind == SVC_LANG_JSGF)
        cfg = cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", ps->hmm, "-dict", ps->bot_dict, "-jsgf",
                          ps->bot, NULL);
    else /* the class model is set after (set_class_model); the model's own scale is read
          * unwarped. pocketsphinx's voice detector keeps its own threshold (2 dB over its
          * noise estimate): at 3 it took a speaker's softer last words in an echoing room
          * for silence (bench/RESULTS.md#voice-vad) */
        cfg = cmd_ln_init(NULL, ps_args(), TRUE, "-hmm", ps->hmm, "-dict", ps->bot_dict,
                          pool->warp != 1.0f ? "-warp_params" : NULL, warp, NULL);
    *out = cfg ? ps_init(cfg) : NULL;
    if (cfg)
        cmd_ln_free_r(cfg);
    if (*out && bot && ps->kind == SVC_LANG_NGRAM && !set_class_model(ps, *out)) {
        ps_free(*out);
        *out = NULL;
    }
    if (*out && !ps->cmn_len) {
        const cmn_t *c = ps_get_feat(*out)->cmn_struct;
        if (c && c->veclen <= MAX_CEP) {
            memcpy(ps->cmn0, c->cmn_mean, (size_t)c->veclen * sizeof *c->cmn_mean);
            ps->cmn_len = c->veclen;
        }
    }
    if (!*out)
        return pl_fail(PARLEY_ERR_CONFIG,
                       "pocketsphinx cannot load acoustic model %s, dictionary %s and language "
                       "model %s (missing or broken files?)",
                       ps->hmm, bot ? ps->bot_dict : ps->dict, bot ? ps->bot : ps->lm);
    return PARLEY_OK;
}

/* An idle decoder of pool, or a new one of its model when none is. */
static parley_status pool_take(svc_ps *ps, dec_pool *pool, ps_decoder_t **out)
{
    pthread_mutex_lock(&ps->mu);
    *out = pool->n ? pool->dec[--pool->n] : NULL;
    pthread_mutex_unlock(&ps->mu);
    return *out ? PARLEY_OK : new_decoder(ps, pool, out);
}

/* Gives dec back to pool (freed when there is no room to keep it). */
static void pool_give(svc_ps *ps, dec_pool *pool, ps_decoder_t *dec)
{
    pthread_mutex_lock(&ps->mu);
    if (pool->n == pool->cap) {
        size_t cap = pool->cap ? 2 * pool->cap : 4;
        ps_decoder_t **d = pl_realloc(pool->dec, cap * sizeof *d);
        if (d) {
            pool->dec = d;
            pool->cap = cap;
        }
    }
    if (pool->n < pool->cap) {
        pool->dec[pool->n++] = dec;
        dec = NULL;
    }
    pthread_mutex_unlock(&ps->mu);
    if (dec)
        ps_free(dec);
}

/* One idle decoder in pool at start-up, so a broken model is found then. */
static parley_status load_idle(svc_ps *ps, dec_pool *pool)
{
    ps_decoder_t *dec;
    parley_status st = new_decoder(ps, pool, &dec);
    if (st == PARLEY_OK && !(pool->dec = pl_malloc(sizeof *pool->dec))) {
        ps_free(dec);
        return pl_nomem("the pocketsphinx decoders");
    }
    if (st == PARLEY_OK) {
        pool->dec[0] = dec;
        pool->n = pool->cap = 1;
    }
    return st;
}

void svc_ps_close(svc_ps *ps)
{
    if (!ps)
        return;
    for (int w = 0; w < N_WARPS; w++) {
        for (size_t i = 0; i < ps->bots[w].n; i++)
            ps_free(ps->bots[w].dec[i]);
        pl_free(ps->bots[w].dec);
    }
    for (size_t i = 0; i < ps->generic.n; i++)
        ps_free(ps->generic.dec[i]);
    for (size_t i = 0; ps->means && i < USER_MEANS; i++)
        pl_free(ps->means[i].user);
    pl_free(ps->means);
    pl_free(ps->generic.dec);
    pl_free(ps->hmm);
    pl_free(ps->dict);
    pl_free(ps->lm);
    pl_free(ps->bot);
    pl_free(ps->bot_classdef);
    pl_free(ps->bot_dict);
    pthread_mutex_destroy(&ps->mu);
    pl_free(ps);
}

static char *dup_or(const char *s, const char *def)
{
    return pl_strdup(s && *s ? s : def);
}

/* pocketsphinx logs to one FILE for the whole process, and a decoder made with -logfn opens
 * it afresh and closes the old one, which another worker's decoder may be writing to at that
 * moment (seen: free(): invalid pointer, when 50 streams made decoders on two workers at
 * once). So the log is switched off once, for every decoder, and no decoder names one. */
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void log_off(void)
{
    err_set_logfp(NULL);
}

void svc_ps_log_off(void)
{
    pthread_once(&log_once, log_off);
}

parley_status svc_ps_open(const svc_ps_params *p, svc_ps **out)
{
    parley_status st;
    svc_ps_params d = svc_ps_params_default();
    *out = NULL;
    svc_ps_log_off();
    svc_ps *ps = pl_calloc(1, sizeof *ps);
    if (!ps)
        return pl_nomem("the pocketsphinx engine");
    if ((st = pl_mutex_init(&ps->mu, "asr.pocketsphinx")) != PARLEY_OK) {
        pl_free(ps);
        return st;
    }
    ps->hmm = dup_or(p->hmm, d.hmm);
    ps->dict = dup_or(p->dict, d.dict);
    ps->lm = dup_or(p->lm, d.lm);
    ps->second_opinion = p->second_opinion;
    ps->warps = p->bot && p->bot->kind == SVC_LANG_NGRAM && p->speaker_warp ? N_WARPS : 1;
    for (int w = 0; w < N_WARPS; w++)
        ps->bots[w] = (dec_pool){ .bot = 1, .warp = WARPS[w] };
    if (p->bot) {
        ps->kind = p->bot->kind;
        ps->bot = pl_strdup(p->bot->path);
        ps->bot_classdef = pl_strdup(p->bot->classdef);
        ps->bot_dict = pl_strdup(p->bot->dict);
    }
    ps->means = pl_calloc(USER_MEANS, sizeof *ps->means);
    if (!ps->means || !ps->hmm || !ps->dict || !ps->lm ||
        (p->bot && (!ps->bot || !ps->bot_classdef || !ps->bot_dict)))
        st = pl_nomem("the pocketsphinx engine");
    /* one decoder of the bot's model now, so a broken model is found at start-up; it is made
     * first, so the cepstral mean every utterance starts from is its own */
    if (st == PARLEY_OK && ps->bot)
        st = load_idle(ps, &ps->bots[0]);
    /* the generic model: for every utterance without the bot's, else the fallback */
    ps->has_generic = !ps->bot || p->fallback;
    if (st == PARLEY_OK && ps->has_generic)
        st = load_idle(ps, &ps->generic);
    if (st != PARLEY_OK) {
        svc_ps_close(ps);
        return st;
    }
    *out = ps;
    return PARLEY_OK;
}

/* Under ps->mu: the place of user's mean, or -1. */
static int find_mean(const svc_ps *ps, const char *user)
{
    for (int i = 0; user && i < USER_MEANS; i++)
        if (ps->means[i].user && !strcmp(ps->means[i].user, user))
            return i;
    return -1;
}

/* The cepstral mean the user's last utterance ended with into mean, and 1; else the
 * model's initial one, and 0. *steady, *warp (when not NULL): whether their noise was
 * steady; the WARPS their voice is heard through (0 for a new user). */
static int kept_mean(svc_ps *ps, const char *user, mfcc_t *mean, int *steady, int *warp)
{
    pthread_mutex_lock(&ps->mu);
    int at = find_mean(ps, user);
    memcpy(mean, at >= 0 ? ps->means[at].mean : ps->cmn0, MAX_CEP * sizeof *mean);
    if (steady)
        *steady = at >= 0 && ps->means[at].steady;
    if (warp)
        *warp = at >= 0 ? ps->means[at].warp : 0;
    pthread_mutex_unlock(&ps->mu);
    return at >= 0;
}

/* Starts an utterance from `mean` (kept_mean's or a primer's): a reused decoder would
 * otherwise carry the last speaker's (measured: a second voice then went unrecognized), and
 * the model's initial mean fits no one's voice and room. */
static int start_utt(svc_ps *ps, ps_decoder_t *dec, const mfcc_t *mean)
{
    cmn_t *c = ps_get_feat(dec)->cmn_struct;
    if (c && ps->cmn_len == c->veclen)
        cmn_live_set(c, mean);
    return ps_start_utt(dec);
}

/* Keeps the mean an ended utterance of the stream's user left in its decoder, where the bot's
 * model heard words in it (ps_final gave them a confidence): an utterance of no words was a
 * hum, a clatter or the room, and its mean says nothing of the user's voice (measured: the
 * order after a hum, its words right, was rejected at the hum's mean). */
static void keep_mean(ps_stream *s)
{
    svc_ps *ps = s->ps;
    cmn_t *c = s->dec ? ps_get_feat(s->dec)->cmn_struct : NULL;
    if (!s->user || !s->ended || isnan(s->confidence) || s->n < MEAN_MIN_SAMPLES || !c ||
        c->veclen != ps->cmn_len)
        return;
    mfcc_t mean[MAX_CEP] = { 0 };
    cmn_live_get(c, mean);
    int steady = svc_noise_steady(s->audio, s->n);
    pthread_mutex_lock(&ps->mu);
    int at = find_mean(ps, s->user);
    if (at < 0) { /* a free place, else the least recently kept */
        at = 0;
        for (int i = 0; i < USER_MEANS && ps->means[at].user; i++)
            if (!ps->means[i].user || ps->means[i].used < ps->means[at].used)
                at = i;
        char *u = pl_strdup(s->user);
        if (u) {
            pl_free(ps->means[at].user);
            ps->means[at].user = u;
        } else {
            at = -1; /* no memory: the user's next utterance starts from the model's mean */
        }
    }
    if (at >= 0) {
        memcpy(ps->means[at].mean, mean, sizeof mean);
        ps->means[at].steady = steady;
        ps->means[at].warp = s->warp;
        ps->means[at].used = ++ps->clock;
    }
    pthread_mutex_unlock(&ps->mu);
}

int svc_ps_kept_mean(svc_ps *ps, const char *user, float *c0)
{
    pthread_mutex_lock(&ps->mu);
    int at = find_mean(ps, user);
    if (at >= 0)
        *c0 = (float)ps->means[at].mean[0];
    pthread_mutex_unlock(&ps->mu);
    return at >= 0;
}

/* Starts a returning user's utterance from the mean they left, denoised from its first sample
 * when their last one's noise was steady. */
static parley_status start_kept(ps_stream *s, const mfcc_t *mean, int steady)
{
    parley_status st;
    if (steady && (st = svc_denoise_new(&s->dn)) != PARLEY_OK)
        return st;
    if (start_utt(s->ps, s->dec, mean) < 0)
        return pl_fail(PARLEY_ERR_INTERNAL, "pocketsphinx: cannot start an utterance");
    return PARLEY_OK;
}

static parley_status ps_open_stream(void *engine, const char *user, void **out)
{
    parley_status st = PARLEY_OK;
    svc_ps *ps = engine;
    ps_stream *s = pl_calloc(1, sizeof *s);
    if (!s || (user && !(s->user = pl_strdup(user)))) {
        pl_free(s);
        return pl_nomem("a pocketsphinx stream");
    }
    s->ps = ps;
    s->confidence = NAN;
    if (ps->bot) {
        mfcc_t mean[MAX_CEP];
        int steady = 0, known = kept_mean(ps, s->user, mean, &steady, &s->warp);
        st = pool_take(ps, &ps->bots[s->warp], &s->dec);
        if (st == PARLEY_OK && !known)
            st = svc_cmn_primer_new(s->dec, &s->primer); /* the utterance starts primed */
        else if (st == PARLEY_OK)
            st = start_kept(s, mean, steady);
    }
    if (st != PARLEY_OK) {
        if (s->dec)
            ps_free(s->dec);
        svc_cmn_primer_free(s->primer);
        svc_denoise_free(s->dn);
        pl_free(s->user);
        pl_free(s);
        return st;
    }
    *out = s;
    return PARLEY_OK;
}

/* Room for `need` samples in *buf (holding *cap), grown by doubling from 1 s; `what` names
 * them in the error. */
static parley_status sample_room(int16_t **buf, size_t *cap, size_t need, const char *what)
{
    if (need <= *cap)
        return PARLEY_OK;
    size_t c = *cap ? 2 * *cap : 16000;
    while (c < need)
        c *= 2;
    int16_t *b = pl_realloc(*buf, c * sizeof *b);
    if (!b)
        return pl_nomem("%zu samples of %s", c, what);
    *buf = b;
    *cap = c;
    return PARLEY_OK;
}

/* The decoder's audio: pcm itself, or denoised onto the end of s->clean (*n: the samples
 * out). */
static parley_status heard(ps_stream *s, const int16_t *pcm, size_t *n, const int16_t **out)
{
    parley_status st;
    *out = pcm;
    if (!s->dn)
        return PARLEY_OK;
    if ((st = sample_room(&s->clean, &s->clean_cap, s->n_clean + *n + SVC_DENOISE_FRAME,
                          "denoised audio")) != PARLEY_OK)
        return st;
    *out = s->clean + s->n_clean;
    *n = svc_denoise_run(s->dn, pcm, *n, s->clean + s->n_clean);
    s->n_clean += *n;
    return PARLEY_OK;
}

/* Decodes n samples with the stream's decoder, noting which audio frames its new frames are
 * (asr_levels.h). The pieces stay as they came: pocketsphinx updates its running cepstral mean
 * per call, so smaller ones would decode differently. */
static parley_status decode(ps_stream *s, const int16_t *pcm, size_t n)
{
    if (n && ps_process_raw(s->dec, pcm, n, FALSE, FALSE) < 0)
        return pl_fail(PARLEY_ERR_INTERNAL, "pocketsphinx: cannot decode %zu samples", n);
    s->fed += n;
    return svc_frames_note(&s->frames, ps_get_n_frames(s->dec) - 1, s->fed, 0);
}

/* Starts the held utterance from the mean its primer measured (the model's initial one
 * when it heard too little speech), and decodes the audio held. Where the held audio's noise
 * is steady, the decoder hears it denoised from here on, its mean measured on the same. */
static parley_status start_primed(ps_stream *s)
{
    parley_status st;
    mfcc_t mean[MAX_CEP];
    size_t n = s->n;
    const int16_t *pcm = s->audio;
    if (svc_noise_steady(s->audio, s->n)) {
        svc_cmn_primer_free(s->primer);
        s->primer = NULL;
        if ((st = svc_denoise_new(&s->dn)) != PARLEY_OK ||
            (st = heard(s, s->audio, &n, &pcm)) != PARLEY_OK ||
            (st = svc_cmn_primer_new(s->dec, &s->primer)) != PARLEY_OK)
            return st;
        if (svc_cmn_primer_feed(s->primer, pcm, n) < 0)
            return pl_fail(PARLEY_ERR_INTERNAL, "pocketsphinx: the front end failed");
    }
    if (!svc_cmn_primer_mean(s->primer, mean, s->ps->cmn_len))
        kept_mean(s->ps, NULL, mean, NULL, NULL);
    svc_cmn_primer_free(s->primer);
    s->primer = NULL;
    if (start_utt(s->ps, s->dec, mean) < 0)
        return pl_fail(PARLEY_ERR_INTERNAL, "pocketsphinx: cannot start an utterance");
    return decode(s, pcm, n);
}

static parley_status ps_feed(void *stream, const int16_t *pcm, size_t n)
{
    ps_stream *s = stream;
    parley_status st = sample_room(&s->audio, &s->cap, s->n + n, "an utterance");
    if (st != PARLEY_OK)
        return st;
    memcpy(s->audio + s->n, pcm, n * sizeof *pcm);
    s->n += n;
    if (s->primer) {
        int primed = svc_cmn_primer_feed(s->primer, pcm, n);
        if (primed < 0)
            return pl_fail(PARLEY_ERR_INTERNAL, "pocketsphinx: the front end failed");
        return primed ? start_primed(s) : PARLEY_OK;
    }
    const int16_t *in;
    if (s->dec && (st = heard(s, pcm, &n, &in)) != PARLEY_OK)
        return st;
    return s->dec ? decode(s, in, n) : PARLEY_OK;
}

/* Whether a decoder word is no word of the transcript: silence, a filler or a hesitation
 * ("<sil>", "[NOISE]", "<um>": asr_lang.h). */
static int unsaid(const char *w)
{
    return *w == '<' || *w == '[';
}

/* Appends decoder word p (n bytes) to the transcript t at *o: a class member's compound word
 * "soy_milk:c_4" as "soy milk", an alternative pronunciation "with(2)" as "with". */
static void put_word(char *t, char **o, const char *p, size_t n)
{
    size_t word = 0;
    while (word < n && p[word] != ':' && p[word] != '(')
        word++;
    if (*o > t)
        *(*o)++ = ' ';
    for (size_t i = 0; i < word; i++)
        *(*o)++ = p[i] == '_' ? ' ' : p[i];
}

/* The decoder's hypothesis as words (put_word), hesitations left out. *score (when not NULL):
 * its path score. */
static parley_status hyp_copy(ps_decoder_t *dec, char **text, int32 *score)
{
    const char *h = ps_get_hyp(dec, score);
    char *t = pl_strdup(h ? h : ""), *o = t;
    if (!t)
        return pl_nomem("a transcript");
    for (const char *p = t; *p;) {
        size_t n = strcspn(p, " ");
        if (!unsaid(p))
            put_word(t, &o, p, n);
        p += n + (p[n] == ' ');
    }
    *o = 0;
    *text = t;
    return PARLEY_OK;
}

/* The words of dec's best path, silences, fillers and hesitations left out: each with its
 * frames (counted from the path's first, as svc_frames counts) into *words, and its decoder
 * word into *names (valid while dec's hypothesis is); both owned by the caller, *n of each. */
static parley_status path_words(ps_decoder_t *dec, svc_word **words, const char ***names, int *n)
{
    int k = 0, i = 0, base = -1, first, last;
    for (ps_seg_t *g = ps_seg_iter(dec); g; g = ps_seg_next(g))
        k += !unsaid(ps_seg_word(g));
    *words = pl_malloc((size_t)(k ? k : 1) * sizeof **words);
    *names = pl_malloc((size_t)(k ? k : 1) * sizeof **names);
    if (!*words || !*names) {
        pl_free(*words);
        pl_free(*names);
        return pl_nomem("a transcript of %d words", k);
    }
    for (ps_seg_t *g = ps_seg_iter(dec); g; g = ps_seg_next(g)) {
        ps_seg_frames(g, &first, &last);
        base = base < 0 ? first : base; /* the path's frames count from an offset of its own */
        if (!unsaid(ps_seg_word(g)) && i < k) {
            (*names)[i] = ps_seg_word(g);
            (*words)[i++] = (svc_word){ first - base, last - base, 1 };
        }
    }
    *n = i;
    return PARLEY_OK;
}

/* *text, the final transcript of the stream's decoder, without the words said under the
 * speaker's level (asr_levels.h): its best path's words again, each with its frames. */
static parley_status at_level(ps_stream *s, char **text)
{
    svc_word *w;
    const char **name;
    int n;
    parley_status st = path_words(s->dec, &w, &name, &n);
    if (st != PARLEY_OK)
        return st;
    size_t bytes = 1;
    for (int k = 0; k < n; k++)
        bytes += strlen(name[k]) + 1;
    char *t = pl_malloc(bytes), *o = t;
    if (!t)
        st = pl_nomem("a transcript of %d words", n);
    if (st == PARLEY_OK)
        st = svc_words_at_level(&s->frames, s->audio + s->from, s->to - s->from, w, n);
    for (int k = 0; st == PARLEY_OK && k < n; k++)
        if (w[k].keep)
            put_word(t, &o, name[k], strlen(name[k]));
    if (st == PARLEY_OK && n) { /* no path to walk: the hypothesis stays */
        *o = 0;
        pl_free(*text);
        *text = t;
        t = NULL;
    }
    pl_free(t);
    pl_free(name);
    pl_free(w);
    return st;
}

/* Whether the stream's decoding made words of the room outside [from, to) (the speaker's
 * span): words said under the speaker's level there (asr_levels.h), after which the words
 * may have gone wrong too. Where it did not, a decoding of the span alone hears the same
 * words or fewer: a long request with little silence around it gives the span a floor of
 * speech, and its softer last words fell outside. 1 when out of memory. */
static int words_outside(ps_stream *s, size_t from, size_t to)
{
    svc_word *w;
    const char **name;
    int n, out = 1;
    if (path_words(s->dec, &w, &name, &n) != PARLEY_OK)
        return 1;
    if (svc_words_at_level(&s->frames, s->audio, s->n, w, n) == PARLEY_OK) {
        int room = 0;
        for (int k = 0; k < n; k++)
            if (!w[k].keep)
                w[room++] = w[k];
        out = svc_words_outside(&s->frames, w, room, (long)(from / SVC_LEVEL_FRAME),
                                (long)(to / SVC_LEVEL_FRAME));
    }
    pl_free(name);
    pl_free(w);
    return out;
}

/* 100 plus the score of dec's best path so far (acoustic and language model together,
 * pocketsphinx's log units) per frame: how well the bot's model explains the sound. */
static float path_confidence(ps_decoder_t *dec, int32 score)
{
    int frames = ps_get_n_frames(dec);
    return 100.0f + (float)score / (float)(frames > 0 ? frames : 1);
}

/* Where the class model puts the end of a request: after words it ends with this likely or
 * more, a request is complete ("... a large latte", "... please": 0.14-0.95 on a coffee bot's
 * orders phrased unlike its examples); under END_UNLIKELY, it stops half way ("a", "with",
 * "can i get": under 0.015). Between, it may go either way (bench/RESULTS.md#voice-end-hint). */
#define END_LIKELY   0.1
#define END_UNLIKELY 0.02
/* Under this confidence the words before a pause are mostly made of noise: at a pause in
 * pizza orders with a kitchen's chatter at 12 dB, 11 of 16 partial hypotheses scored 38-45,
 * where 37 of 40 in the same orders clean scored 46-77 (bench/RESULTS.md#voice-noisy-pause). */
#define HINT_UNSURE_BELOW 45.0f

/* How the words of dec's hypothesis so far read under the bot's class model: the chance of
 * the end of the sentence after its last two words; a hesitation last is half way. Words
 * the model explains poorly (a confidence under HINT_UNSURE_BELOW) tell nothing either way.
 * Logged (debug) for `user`. */
static pipe_end_hint hint_of(ps_decoder_t *dec, const char *user)
{
    ngram_model_t *lm = ps_get_lm(dec, "bot");
    const char *w[2] = { "<s>", "<s>" };
    char word[2][256];
    int last_hesitates = 0, n = 0;
    for (ps_seg_t *g = ps_seg_iter(dec); g; g = ps_seg_next(g)) {
        const char *x = ps_seg_word(g);
        size_t len = strcspn(x, "(");
        int hesitation = 0;
        for (int i = 0; i < svc_n_hesitations; i++)
            hesitation |= strlen(svc_hesitations[i].word) == len &&
                          !strncmp(x, svc_hesitations[i].word, len);
        if (hesitation || (!unsaid(x) && len < sizeof word[0])) {
            last_hesitates = hesitation;
            if (hesitation)
                continue;
            memcpy(word[n % 2], x, len);
            word[n % 2][len] = 0;
            w[0] = w[1];
            w[1] = word[n++ % 2];
        }
    }
    if (!lm || !n)
        return PIPE_END_UNKNOWN;
    int32 score = 0;
    ps_get_hyp(dec, &score);
    float c = path_confidence(dec, score);
    double p = last_hesitates ? 0
                              : logmath_exp(ps_get_logmath(dec),
                                            ngram_probv(lm, "</s>", w[1], w[0], NULL));
    pipe_end_hint h = c < HINT_UNSURE_BELOW ? PIPE_END_UNKNOWN
                      : p >= END_LIKELY     ? PIPE_END_COMPLETE
                      : p < END_UNLIKELY    ? PIPE_END_INCOMPLETE
                                            : PIPE_END_UNKNOWN;
    pl_log(PARLEY_LOG_DEBUG,
           "asr.pocketsphinx: user '%s' paused after \"%s %s%s\" (confidence %.1f): the end "
           "%.3f likely, %s",
           user ? user : "", w[0], w[1], last_hesitates ? " (hesitating)" : "", (double)c, p,
           c < HINT_UNSURE_BELOW    ? "too unsure to tell"
           : h == PIPE_END_COMPLETE ? "a whole request"
           : h                      ? "half way"
                                    : "either");
    return h;
}

/* A first utterance that still waits for its first mean starts from the mean of the speech
 * it has so far: were the pause its end, ps_end would do the same, and its words are known
 * at once, without decoding its audio twice. */
static parley_status ps_end_hint(void *stream, pipe_end_hint *hint)
{
    ps_stream *s = stream;
    parley_status st;
    *hint = PIPE_END_UNKNOWN;
    if (!s->dec || s->ps->kind != SVC_LANG_NGRAM)
        return PARLEY_OK;
    if (s->primer && (st = start_primed(s)) != PARLEY_OK)
        return st;
    *hint = hint_of(s->dec, s->user);
    return PARLEY_OK;
}

static parley_status ps_partial(void *stream, char **text)
{
    ps_stream *s = stream;
    if (!s->dec || s->primer) { /* nothing yet: the generic model decodes at the end only, a
                                   primed utterance from its first mean on */
        *text = pl_strdup("");
        return *text ? PARLEY_OK : pl_nomem("a transcript");
    }
    return hyp_copy(s->dec, text, NULL);
}

/* Decodes the utterance again on its speaker's span [from, to) of its audio alone
 * (pipe_speech_span), from the user's kept mean or the span's own first speech. */
static parley_status redo_span(ps_stream *s, size_t from, size_t to)
{
    parley_status st;
    mfcc_t mean[MAX_CEP];
    svc_cmn_primer *p = NULL;
    const int16_t *pcm = s->dn ? s->clean : s->audio; /* what the decoder hears */
    if (!kept_mean(s->ps, s->user, mean, NULL, NULL)) {
        if ((st = svc_cmn_primer_new(s->dec, &p)) != PARLEY_OK)
            return st;
        int fed = svc_cmn_primer_feed(p, pcm + from, to - from);
        if (fed < 0 || !svc_cmn_primer_mean(p, mean, s->ps->cmn_len))
            kept_mean(s->ps, NULL, mean, NULL, NULL);
        svc_cmn_primer_free(p);
        if (fed < 0)
            return pl_fail(PARLEY_ERR_INTERNAL, "pocketsphinx: the front end failed");
    }
    svc_frames_clear(&s->frames);
    s->fed = 0;
    s->from = from;
    s->to = to;
    if (start_utt(s->ps, s->dec, mean) < 0)
        return pl_fail(PARLEY_ERR_INTERNAL, "pocketsphinx: cannot start an utterance");
    st = PARLEY_OK;
    for (size_t at = from; at < to && st == PARLEY_OK; at += REDO_PIECE)
        st = decode(s, pcm + at, to - at < REDO_PIECE ? to - at : REDO_PIECE);
    if (ps_end_utt(s->dec) < 0 && st == PARLEY_OK)
        st = pl_fail(PARLEY_ERR_INTERNAL, "pocketsphinx: cannot end the utterance");
    return st == PARLEY_OK ? svc_frames_note(&s->frames, ps_get_n_frames(s->dec) - 1, s->fed, 1)
                           : st;
}

/* Decodes a new user's utterance again through the warp w (WARPS) and keeps that decoding
 * where its path scores better per frame than the one the stream has; else the stream's
 * stays. */
static parley_status try_warp(ps_stream *s, int w)
{
    svc_ps *ps = s->ps;
    ps_decoder_t *dec;
    parley_status st = pool_take(ps, &ps->bots[w], &dec);
    if (st != PARLEY_OK)
        return st;
    int32 score = 0;
    ps_get_hyp(s->dec, &score);
    float had = path_confidence(s->dec, score);
    struct {
        ps_decoder_t *dec;
        int warp;
        svc_frames frames;
        size_t fed;
    } was = { s->dec, s->warp, s->frames, s->fed };
    s->dec = dec;
    s->warp = w;
    memset(&s->frames, 0, sizeof s->frames);
    st = redo_span(s, s->from, s->to); /* a new user: its mean measured through this warp */
    score = 0;
    ps_get_hyp(s->dec, &score);
    if (st == PARLEY_OK && path_confidence(s->dec, score) > had) {
        svc_frames_clear(&was.frames);
        pool_give(ps, &ps->bots[was.warp], was.dec);
        return PARLEY_OK;
    }
    svc_frames_clear(&s->frames);
    pool_give(ps, &ps->bots[w], dec);
    s->dec = was.dec;
    s->warp = was.warp;
    s->frames = was.frames;
    s->fed = was.fed;
    return st;
}

/* A new user's utterance long enough to tell their voice by (MEAN_MIN_SAMPLES) is decoded
 * through each warp, and the best kept (keep_mean keeps its warp for their next ones): the
 * audio the decoder heard, denoised where the noise is steady. */
static parley_status choose_warp(ps_stream *s)
{
    parley_status st = PARLEY_OK;
    mfcc_t mean[MAX_CEP];
    if (s->ps->warps < 2 || s->to - s->from < MEAN_MIN_SAMPLES ||
        kept_mean(s->ps, s->user, mean, NULL, NULL))
        return PARLEY_OK;
    for (int w = 1; w < s->ps->warps && st == PARLEY_OK; w++)
        st = try_warp(s, w);
    return st;
}

static parley_status ps_end(void *stream)
{
    ps_stream *s = stream;
    parley_status st;
    if (s->primer && (st = start_primed(s)) != PARLEY_OK)
        return st;
    if (s->dn && s->clean) { /* the last part of a frame, as it came */
        size_t k = svc_denoise_flush(s->dn, s->clean + s->n_clean);
        s->n_clean += k;
        if ((st = decode(s, s->clean + s->n_clean - k, k)) != PARLEY_OK)
            return st;
    }
    s->ended = 1;
    s->to = s->n;
    if (s->dec && ps_end_utt(s->dec) < 0)
        return pl_fail(PARLEY_ERR_INTERNAL, "pocketsphinx: cannot end the utterance");
    if (s->dec &&
        (st = svc_frames_note(&s->frames, ps_get_n_frames(s->dec) - 1, s->fed, 1)) != PARLEY_OK)
        return st;
    size_t from, to;
    if (!s->dec || s->ps->kind != SVC_LANG_NGRAM)
        return PARLEY_OK;
    /* In steady noise the decoder heard the room denoised, and its span again gained nothing
     * (bench/RESULTS.md#voice-speakers) */
    if (!s->dn && pipe_speech_span(s->audio, s->n, 0, &from, &to) &&
        from + (s->n - to) > REDO_SPARE && words_outside(s, from, to) &&
        (st = redo_span(s, from, to)) != PARLEY_OK)
        return st;
    return choose_warp(s);
}

/* The whole utterance through the generic model; *score (when not NULL): its best path's
 * score per frame. */
static parley_status decode_generic(ps_stream *s, char **text, float *score)
{
    svc_ps *ps = s->ps;
    ps_decoder_t *dec;
    parley_status st = pool_take(ps, &ps->generic, &dec);
    if (st != PARLEY_OK)
        return st;
    mfcc_t mean[MAX_CEP];
    kept_mean(ps, s->user, mean, NULL, NULL);
    if (start_utt(ps, dec, mean) < 0 ||
        ps_process_raw(dec, s->audio + s->from, s->to - s->from, FALSE, TRUE) < 0 ||
        ps_end_utt(dec) < 0)
        st = pl_fail(PARLEY_ERR_INTERNAL, "pocketsphinx: the generic model failed on %zu samples",
                     s->to - s->from);
    int32 path = 0;
    if (st == PARLEY_OK)
        st = hyp_copy(dec, text, &path);
    if (score) {
        int frames = ps_get_n_frames(dec);
        *score = (float)path / (float)(frames > 0 ? frames : 1);
    }
    pool_give(ps, &ps->generic, dec);
    return st;
}

/* Under this, the bot model's path score alone cannot tell its own speech in noise from
 * speech it does not serve, and the generic model is asked (confidence_of). */
#define SECOND_OPINION_BELOW 60.0f
/* Where a second opinion puts a transcript the bot's model and the generic one explain
 * equally well: the asr.pocketsphinx node's default reject_below. */
#define SECOND_OPINION_EVEN 50.0f

/* The confidence of the bot model's transcript (0..100), from its best path's score (acoustic
 * and language model together, pocketsphinx's log units) over the stream's frames: 100 plus
 * the score per frame. Speech the bot does not serve, forced through its model, takes a worse
 * path; so does its own speech in noise. Under SECOND_OPINION_BELOW, when the generic model
 * is loaded, the utterance is decoded again by it: the confidence is then 50 plus the margin
 * per frame by which the bot's path scores better than the generic model's, under 60. Its
 * own speech in noise still fits the bot's model as well as general English; foreign speech
 * fits general English far better. Synthesized orders and real librivox: bench/RESULTS.md,
 * "Voice" (#voice-second-opinion). */
static float confidence_of(ps_stream *s, int32 score)
{
    float c = path_confidence(s->dec, score), generic;
    char *text = NULL;
    if (c < SECOND_OPINION_BELOW && s->ps->second_opinion && s->ps->has_generic && s->n &&
        decode_generic(s, &text, &generic) == PARLEY_OK) {
        c = SECOND_OPINION_EVEN + (c - 100.0f) - generic;
        c = c < SECOND_OPINION_BELOW ? c : SECOND_OPINION_BELOW - 0.1f;
    }
    pl_free(text);
    return c < 0 ? 0 : c > 100 ? 100 : c;
}

static parley_status ps_final(void *stream, char **text)
{
    parley_status st;
    ps_stream *s = stream;
    *text = NULL;
    s->confidence = NAN;
    if (s->dec) {
        int32 score = 0;
        if ((st = hyp_copy(s->dec, text, &score)) != PARLEY_OK)
            return st;
        if ((*text)[0])
            s->confidence = confidence_of(s, score);
        if ((*text)[0] && s->ps->kind == SVC_LANG_NGRAM && (st = at_level(s, text)) != PARLEY_OK) {
            pl_free(*text);
            *text = NULL;
            return st;
        }
        if ((*text)[0] || !s->ps->has_generic)
            return st;
        pl_free(*text);
        *text = NULL;
    }
    if (s->n)
        return decode_generic(s, text, NULL);
    *text = pl_strdup(""); /* no audio: no words */
    return *text ? PARLEY_OK : pl_nomem("a transcript");
}

static float ps_confidence(void *stream)
{
    return ((ps_stream *)stream)->confidence;
}

static void ps_close_stream(void *stream)
{
    ps_stream *s = stream;
    svc_ps *ps = s->ps;
    if (s->dec && !s->ended && !s->primer) /* an utterance dropped half-way */
        ps_end_utt(s->dec);
    svc_cmn_primer_free(s->primer);
    svc_denoise_free(s->dn);
    pl_free(s->clean);
    keep_mean(s);
    if (s->dec)
        pool_give(ps, &ps->bots[s->warp], s->dec);
    pl_free(s->audio);
    svc_frames_clear(&s->frames);
    pl_free(s->user);
    pl_free(s);
}

const svc_asr_engine svc_ps_engine = {
    .name = "asr.pocketsphinx",
    .open = ps_open_stream,
    .feed = ps_feed,
    .partial = ps_partial,
    .end_hint = ps_end_hint,
    .end = ps_end,
    .final = ps_final,
    .confidence = ps_confidence,
    .close = ps_close_stream,
};

#else /* built without pocketsphinx */

parley_status svc_ps_open(const svc_ps_params *p, svc_ps **out)
{
    (void)p;
    *out = NULL;
    return pl_fail(PARLEY_ERR_NOT_BUILT, "asr.pocketsphinx: built without pocketsphinx");
}

void svc_ps_close(svc_ps *ps)
{
    (void)ps;
}

int svc_ps_kept_mean(svc_ps *ps, const char *user, float *c0)
{
    (void)ps, (void)user, (void)c0;
    return 0;
}

const svc_asr_engine svc_ps_engine = { .name = "asr.pocketsphinx" };

#endif
