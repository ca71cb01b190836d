/* kinds.c — the table of node kinds a graph may name (see kinds.h).
 *
 * Kinds are defined in their own modules (services/, nlu/, dialog/) and listed here by
 * their extern names; this file holds no node of its own. Adding a kind = one extern
 * line and one table entry.
 */
#include <string.h>

#include "parley_config.h"
#include "sdk/lib/kinds.h"

extern const pipe_kind svc_kind_stdin, svc_kind_stdout, svc_kind_api, svc_kind_asr_stub;
extern const pipe_kind svc_kind_ws_server;
extern const pipe_kind svc_kind_asr_pocketsphinx, svc_kind_audio_gst, svc_kind_audio_out;
extern const pipe_kind svc_kind_tts_espeak, svc_kind_tts_flite;
extern const pipe_kind svc_kind_api_stdin, svc_kind_api_stdout;
extern const pipe_kind nlu_kind_bert;
extern const pipe_kind dm_kind_frames;

const pipe_kind *const lib_kinds[] = {
    &svc_kind_stdin,
    &svc_kind_stdout,
    &svc_kind_api,
    &svc_kind_asr_stub,
    &nlu_kind_bert,
    &dm_kind_frames,
    &svc_kind_ws_server,
#if PARLEY_HAVE_POCKETSPHINX
    &svc_kind_asr_pocketsphinx, /* built with pocketsphinx only */
#endif
#if PARLEY_HAVE_GSTREAMER
    &svc_kind_audio_gst, /* built with GStreamer only */
    &svc_kind_audio_out,
#endif
#if PARLEY_HAVE_ESPEAK
    &svc_kind_tts_espeak, /* built with espeak-ng only */
#endif
#if PARLEY_HAVE_FLITE
    &svc_kind_tts_flite, /* built with flite only */
#endif
    NULL,
};

const pipe_kind *const lib_kinds_text_io[] = {
    &svc_kind_api_stdin, &svc_kind_api_stdout, &svc_kind_asr_stub,
    &nlu_kind_bert,      &dm_kind_frames,      NULL,
};

const pipe_kind *lib_kind_find(const char *name)
{
    for (size_t i = 0; lib_kinds[i]; i++)
        if (!strcmp(lib_kinds[i]->name, name))
            return lib_kinds[i];
    return NULL;
}
