/* gst_audio.c — GStreamer sources and sinks for the audio nodes (services/gst_audio.h).
 *
 * No main loop: the source polls its appsink with a timeout and pops the bus between pulls;
 * the sink pushes one buffer into an appsrc, ends the stream and waits on the bus for EOS
 * or an error. gst_init runs once per process (GStreamer allows no more).
 */
#include <stdio.h>
#include <string.h>

#include "parley_config.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "services/gst_audio.h"

#if PARLEY_HAVE_GSTREAMER
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <pthread.h>

#define CAPS "audio/x-raw,format=S16LE,rate=%d,channels=1,layout=interleaved"

struct svc_gst_src {
    char *desc;
    GstElement *pipe;
    GstAppSink *sink;
    GstBus *bus;
    GstSample *sample; /* the one whose samples were handed out */
    GstMapInfo map;
    int mapped;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void)
{
    gst_init(NULL, NULL);
}

/* An error message from the bus, or NULL. */
static parley_status bus_error(GstBus *bus, const char *desc, int *eos)
{
    GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    if (!m)
        return PARLEY_OK;
    parley_status st = PARLEY_OK;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS) {
        *eos = 1;
    } else {
        GError *err = NULL;
        gchar *dbg = NULL;
        gst_message_parse_error(m, &err, &dbg);
        st = pl_fail(PARLEY_ERR_IO, "GStreamer '%s': %s (%s)", desc, err ? err->message : "error",
                     GST_OBJECT_NAME(GST_MESSAGE_SRC(m)));
        g_clear_error(&err);
        g_free(dbg);
    }
    gst_message_unref(m);
    return st;
}

/* Parses and links `text`; errors name `desc`. */
static parley_status launch(const char *text, const char *desc, GstElement **out)
{
    GError *err = NULL;
    pthread_once(&init_once, init);
    *out = gst_parse_launch_full(text, NULL, GST_PARSE_FLAG_FATAL_ERRORS, &err);
    if (!*out || err) {
        parley_status st = pl_fail(PARLEY_ERR_CONFIG, "GStreamer '%s': %s", desc,
                                   err ? err->message : "cannot build the pipeline");
        g_clear_error(&err);
        if (*out)
            gst_object_unref(*out);
        *out = NULL;
        return st;
    }
    return PARLEY_OK;
}

/* Sets the pipeline playing; a refusal comes with the bus's reason. */
static parley_status play(GstElement *pipe, GstBus *bus, const char *desc)
{
    int eos = 0;
    if (gst_element_set_state(pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE)
        return PARLEY_OK;
    parley_status st = bus_error(bus, desc, &eos);
    return st != PARLEY_OK ? st : pl_fail(PARLEY_ERR_IO, "GStreamer '%s': cannot start", desc);
}

parley_status svc_gst_src_open(const char *desc, int sync, svc_gst_src **out)
{
    parley_status st;
    *out = NULL;
    size_t len = strlen(desc) + 256;
    char *text = pl_malloc(len);
    svc_gst_src *s = pl_calloc(1, sizeof *s);
    if (!text || !s || !(s->desc = pl_strdup(desc))) {
        pl_free(text);
        svc_gst_src_close(s);
        return pl_nomem("a GStreamer source");
    }
    snprintf(text, len,
             "%s ! audioconvert ! audioresample ! " CAPS
             " ! appsink name=parley_sink sync=%s max-buffers=64",
             desc, 16000, sync ? "true" : "false");
    st = launch(text, desc, &s->pipe);
    pl_free(text);
    if (st == PARLEY_OK) {
        s->sink = GST_APP_SINK(gst_bin_get_by_name(GST_BIN(s->pipe), "parley_sink"));
        s->bus = gst_element_get_bus(s->pipe);
        st = play(s->pipe, s->bus, desc);
    }
    if (st != PARLEY_OK) {
        svc_gst_src_close(s);
        return st;
    }
    *out = s;
    return PARLEY_OK;
}

static void release(svc_gst_src *s)
{
    if (s->mapped)
        gst_buffer_unmap(gst_sample_get_buffer(s->sample), &s->map);
    if (s->sample)
        gst_sample_unref(s->sample);
    s->sample = NULL;
    s->mapped = 0;
}

parley_status svc_gst_src_pull(svc_gst_src *s, const int16_t **pcm, size_t *n, int *eos)
{
    parley_status st;
    *n = 0;
    *eos = 0;
    release(s);
    if ((st = bus_error(s->bus, s->desc, eos)) != PARLEY_OK)
        return st;
    s->sample = gst_app_sink_try_pull_sample(s->sink, 100 * GST_MSECOND);
    if (!s->sample) {
        *eos = *eos || gst_app_sink_is_eos(s->sink);
        return bus_error(s->bus, s->desc, eos);
    }
    *eos = 0;
    GstBuffer *buf = gst_sample_get_buffer(s->sample);
    if (buf && gst_buffer_map(buf, &s->map, GST_MAP_READ)) {
        s->mapped = 1;
        *pcm = (const int16_t *)s->map.data;
        *n = s->map.size / 2;
    }
    return PARLEY_OK;
}

void svc_gst_src_close(svc_gst_src *s)
{
    if (!s)
        return;
    release(s);
    if (s->pipe)
        gst_element_set_state(s->pipe, GST_STATE_NULL);
    if (s->sink)
        gst_object_unref(s->sink);
    if (s->bus)
        gst_object_unref(s->bus);
    if (s->pipe)
        gst_object_unref(s->pipe);
    pl_free(s->desc);
    pl_free(s);
}

parley_status svc_gst_sink_play(const char *desc, const int16_t *pcm, size_t n, int rate)
{
    parley_status st;
    GstElement *pipe = NULL;
    size_t len = strlen(desc) + 256;
    char *text = pl_malloc(len);
    if (!text)
        return pl_nomem("a GStreamer sink");
    snprintf(text, len,
             "appsrc name=parley_src caps=" CAPS " format=time ! audioconvert ! "
             "audioresample ! %s",
             rate, desc);
    st = launch(text, desc, &pipe);
    pl_free(text);
    if (st != PARLEY_OK)
        return st;
    GstElement *src = gst_bin_get_by_name(GST_BIN(pipe), "parley_src");
    GstBus *bus = gst_element_get_bus(pipe);
    if ((st = play(pipe, bus, desc)) == PARLEY_OK) {
        GstBuffer *buf = gst_buffer_new_memdup(pcm, n * sizeof *pcm);
        GST_BUFFER_PTS(buf) = 0;
        GST_BUFFER_DURATION(buf) = gst_util_uint64_scale(n, GST_SECOND, (guint64)rate);
        gst_app_src_push_buffer(GST_APP_SRC(src), buf); /* takes buf */
        gst_app_src_end_of_stream(GST_APP_SRC(src));
        GstMessage *m = gst_bus_timed_pop_filtered(
                bus, 30 * GST_SECOND + gst_util_uint64_scale(n, GST_SECOND, (guint64)rate),
                GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
        if (!m) {
            st = pl_fail(PARLEY_ERR_IO, "GStreamer '%s': no end of stream", desc);
        } else {
            if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
                GError *err = NULL;
                gst_message_parse_error(m, &err, NULL);
                st = pl_fail(PARLEY_ERR_IO, "GStreamer '%s': %s", desc,
                             err ? err->message : "error");
                g_clear_error(&err);
            }
            gst_message_unref(m);
        }
    }
    gst_element_set_state(pipe, GST_STATE_NULL);
    gst_object_unref(src);
    gst_object_unref(bus);
    gst_object_unref(pipe);
    return st;
}

parley_status svc_gst_read_file(const char *path, int16_t **pcm, size_t *n)
{
    parley_status st;
    svc_gst_src *s = NULL;
    *pcm = NULL;
    *n = 0;
    size_t cap = 0;
    char desc[4200];
    gchar *quoted = g_strescape(path, NULL);
    snprintf(desc, sizeof desc, "filesrc location=\"%s\" ! decodebin", quoted);
    g_free(quoted);
    if ((st = svc_gst_src_open(desc, 0, &s)) != PARLEY_OK)
        return st;
    for (int eos = 0; !eos && st == PARLEY_OK;) {
        const int16_t *p;
        size_t k;
        if ((st = svc_gst_src_pull(s, &p, &k, &eos)) != PARLEY_OK || !k)
            continue;
        if (*n + k > cap) {
            cap = (*n + k) * 2;
            int16_t *t = pl_realloc(*pcm, cap * sizeof *t);
            if (!t) {
                st = pl_nomem("the samples of %s", path);
                break;
            }
            *pcm = t;
        }
        memcpy(*pcm + *n, p, k * sizeof *p);
        *n += k;
    }
    svc_gst_src_close(s);
    if (st != PARLEY_OK) {
        pl_free(*pcm);
        *pcm = NULL;
        *n = 0;
    }
    return st;
}

#else /* built without GStreamer */

static parley_status not_built(void)
{
    return pl_fail(PARLEY_ERR_NOT_BUILT, "built without GStreamer");
}

parley_status svc_gst_src_open(const char *desc, int sync, svc_gst_src **out)
{
    (void)desc, (void)sync;
    *out = NULL;
    return not_built();
}

parley_status svc_gst_src_pull(svc_gst_src *s, const int16_t **pcm, size_t *n, int *eos)
{
    (void)s, (void)pcm, (void)eos;
    *n = 0;
    return not_built();
}

void svc_gst_src_close(svc_gst_src *s)
{
    (void)s;
}

parley_status svc_gst_sink_play(const char *desc, const int16_t *pcm, size_t n, int rate)
{
    (void)desc, (void)pcm, (void)n, (void)rate;
    return not_built();
}

parley_status svc_gst_read_file(const char *path, int16_t **pcm, size_t *n)
{
    (void)path, (void)pcm, (void)n;
    return not_built();
}

#endif
