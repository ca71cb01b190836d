/* asr_cmn.c — the first cepstral mean of a speaker measured on their own first speech
 * (asr_cmn.h). The front end is sphinxbase's, made from the decoder's configuration, so its
 * voice detector passes the frames the decoder's would, and its cepstra are the decoder's.
 */
#include <sphinxbase/ckd_alloc.h>
#include <sphinxbase/fe.h>

#include "sdk/base/alloc.h"
#include "services/asr_cmn.h"

enum {
    CHUNK = 64,      /* frames asked of the front end per call */
    MIN_FRAMES = 20, /* fewer speech frames say nothing of the mean */
    MAX_CEPLEN = 64,
};

struct svc_cmn_primer {
    fe_t *fe;
    mfcc_t **cep; /* (CHUNK, ceplen) */
    int ceplen, frames, flushed;
    double sum[MAX_CEPLEN];
};

parley_status svc_cmn_primer_new(ps_decoder_t *dec, svc_cmn_primer **out)
{
    svc_cmn_primer *p = pl_calloc(1, sizeof *p);
    if (!p)
        return pl_nomem("a cepstral mean primer");
    p->fe = fe_init_auto_r(ps_get_config(dec));
    p->ceplen = p->fe ? fe_get_output_size(p->fe) : 0;
    if (!p->fe || p->ceplen <= 0 || p->ceplen > MAX_CEPLEN || fe_start_utt(p->fe) < 0 ||
        !(p->cep = (mfcc_t **)ckd_calloc_2d(CHUNK, (size_t)p->ceplen, sizeof(mfcc_t)))) {
        svc_cmn_primer_free(p);
        return pl_fail(PARLEY_ERR_INTERNAL, "pocketsphinx: cannot make a front end");
    }
    *out = p;
    return PARLEY_OK;
}

void svc_cmn_primer_free(svc_cmn_primer *p)
{
    if (!p)
        return;
    if (p->cep)
        ckd_free_2d(p->cep);
    if (p->fe)
        fe_free(p->fe);
    pl_free(p);
}

static void add_frames(svc_cmn_primer *p, int n)
{
    for (int i = 0; i < n && p->frames < SVC_CMN_PRIME_FRAMES; i++, p->frames++)
        for (int k = 0; k < p->ceplen; k++)
            p->sum[k] += p->cep[i][k];
}

int svc_cmn_primer_feed(svc_cmn_primer *p, const int16_t *pcm, size_t n)
{
    const int16 *at = pcm;
    while (p->frames < SVC_CMN_PRIME_FRAMES && n) {
        int32 got = CHUNK;
        if (fe_process_frames(p->fe, &at, &n, p->cep, &got, NULL) < 0)
            return -1;
        add_frames(p, got);
        if (!got)
            break; /* what is left is less than a frame: kept by the front end */
    }
    return p->frames >= SVC_CMN_PRIME_FRAMES;
}

int svc_cmn_primer_mean(svc_cmn_primer *p, mfcc_t *mean, int veclen)
{
    if (!p->flushed && p->frames < SVC_CMN_PRIME_FRAMES) { /* the front end's last frame */
        int32 got = 0;
        p->flushed = 1;
        if (fe_end_utt(p->fe, p->cep[0], &got) >= 0)
            add_frames(p, got);
    }
    if (p->frames < MIN_FRAMES || veclen != p->ceplen)
        return 0;
    for (int k = 0; k < veclen; k++)
        mean[k] = (mfcc_t)(p->sum[k] / p->frames);
    return 1;
}
