/* asr.c — the public recognizer of parley/asr.h over services/asr.h: the model build, the
 * pocketsphinx engine, whole-file transcription. Nothing of its own but argument checks.
 */
#include <math.h>
#include <string.h>

#include "parley/asr.h"
#include "sdk/base/alloc.h"
#include "services/asr.h"

struct parley_asr {
    svc_ps *ps;
    float confidence; /* of the last transcript */
};

/* What the public params ask of the bot's model; q: the recognizer's models. */
static svc_lang_params lang_params(const parley_asr_params *p, const svc_ps_params *q)
{
    return (svc_lang_params){
        .kind = p->language == PARLEY_ASR_GRAMMAR ? SVC_LANG_JSGF : SVC_LANG_NGRAM,
        .dict = q->dict,
        .cache_dir = p->cache_dir,
        .generic_weight = p->generic_weight,
        .generic_lm = q->lm,
        .lexicon = p->lexicon,
    };
}

parley_status parley_asr_build(const parley_asr_params *p, parley_asr_model *out)
{
    parley_status st;
    svc_lang_info g;
    if (!p || !p->nlu_yaml || !out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_asr_build: NULL argument");
    svc_ps_params q = svc_ps_params_default();
    svc_lang_params lp = lang_params(p, &q);
    if ((st = svc_lang_build(p->nlu_yaml, &lp, &g)) != PARLEY_OK)
        return st;
    *out = (parley_asr_model){ p->language, g.sentences, g.classes, g.values,
                               g.dropped,   g.guessed,   g.cached,  "" };
    memcpy(out->path, g.path, sizeof out->path);
    return PARLEY_OK;
}

parley_status parley_asr_open(const parley_asr_params *p, parley_asr **out)
{
    parley_status st;
    svc_lang_info g;
    svc_ps_params q = svc_ps_params_default();
    if (!p || !out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_asr_open: NULL argument");
    *out = NULL;
    q.fallback = !p->no_fallback;
    q.speaker_warp = !p->no_speaker_warp;
    if (p->nlu_yaml) {
        svc_lang_params lp = lang_params(p, &q);
        if ((st = svc_lang_build(p->nlu_yaml, &lp, &g)) != PARLEY_OK)
            return st;
        q.bot = &g;
    }
    parley_asr *a = pl_calloc(1, sizeof *a);
    if (!a)
        return pl_nomem("a recognizer");
    if ((st = svc_ps_open(&q, &a->ps)) != PARLEY_OK) {
        pl_free(a);
        return st;
    }
    *out = a;
    return PARLEY_OK;
}

parley_status parley_asr_transcribe_file(parley_asr *asr, const char *path, char **text)
{
    if (!asr || !path || !text)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_asr_transcribe_file: NULL argument");
    asr->confidence = NAN;
    return svc_asr_transcribe_file(&svc_ps_engine, asr->ps, path, text, &asr->confidence);
}

float parley_asr_confidence(const parley_asr *asr)
{
    return asr ? asr->confidence : NAN;
}

void parley_asr_text_free(char *text)
{
    pl_free(text);
}

void parley_asr_close(parley_asr *asr)
{
    if (!asr)
        return;
    svc_ps_close(asr->ps);
    pl_free(asr);
}
