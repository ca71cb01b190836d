/* gst_audio.h — GStreamer for the audio nodes: a source description read as 16 kHz mono
 * 16-bit samples, and a sink description fed with samples. The only place GStreamer's
 * errors (GError, bus messages) become a parley_status.
 *
 * A source is `DESC ! audioconvert ! audioresample ! audio/x-raw,S16LE,16000,mono !
 * appsink`: pulling waits at most 100 ms at a time and checks the bus between pulls, so an
 * upstream error (a missing file, a decode error) is an error naming the description, never
 * a hang. A sink is `appsrc ! audioconvert ! audioresample ! DESC`, fed whole buffers and
 * drained to its end (for `wavenc ! filesink`, the file is complete when the call returns).
 *
 * Without GStreamer every call answers PARLEY_ERR_NOT_BUILT. One object, one thread.
 */
#ifndef SERVICES_GST_AUDIO_H
#define SERVICES_GST_AUDIO_H

#include <stddef.h>
#include <stdint.h>

#include "parley/status.h"

typedef struct svc_gst_src svc_gst_src;

/* Builds and starts the source pipeline; a bad description (unknown element, bad syntax) or
 * a failure to start is an error naming `desc`. `sync`: pace a file in real time. */
parley_status svc_gst_src_open(const char *desc, int sync, svc_gst_src **out);
/* The next samples (borrowed until the next call): *n > 0, or *n == 0 with *eos set at the
 * end of the stream, or *n == 0 and nothing yet (a live source; call again). Errors name
 * the description and GStreamer's message. */
parley_status svc_gst_src_pull(svc_gst_src *s, const int16_t **pcm, size_t *n, int *eos);
void svc_gst_src_close(svc_gst_src *s);

/* Plays or writes n samples at `rate` through the sink description `desc`, to its end. */
parley_status svc_gst_sink_play(const char *desc, const int16_t *pcm, size_t n, int rate);

/* A whole file (any format GStreamer decodes) as 16 kHz mono samples, owned by the caller. */
parley_status svc_gst_read_file(const char *path, int16_t **pcm, size_t *n);

#endif
