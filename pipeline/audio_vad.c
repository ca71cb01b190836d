/* audio_vad.c — the noise-adapted speech detector of pipeline/audio_vad.h: levels in dB,
 * a running average over PIPE_VAD_SMOOTH frames, a histogram of the last PIPE_VAD_WINDOW
 * averaged levels for the floor and the speech level. The average is taken in dB rather
 * than in power so that a loud click moves it little and the lag after speech stops is the
 * same whatever the levels (about half the average's width). The threshold's rule and its
 * measurements: bench/RESULTS.md#voice-endpoint.
 */
#include <math.h>
#include <string.h>

#include "pipeline/audio_vad.h"

void pipe_vad_init(pipe_vad *v, int min_rms)
{
    memset(v, 0, sizeof *v);
    v->min_db = (float)(20 * log10((double)min_rms));
}

float pipe_vad_level(const pipe_vad *v)
{
    return v->level;
}

void pipe_vad_rewind(pipe_vad *v)
{
    memset(v->recent, 0, sizeof v->recent);
    v->sum = 0;
    v->recent_at = v->recent_n = 0;
}

int pipe_vad_bin(float level)
{
    int bin = (int)lroundf(level * 2);
    return bin < 0 ? 0 : bin >= PIPE_VAD_BINS ? PIPE_VAD_BINS - 1 : bin;
}

float pipe_vad_percentile(const uint32_t *hist, size_t total, double p)
{
    size_t want = (size_t)ceil(p * (double)total), seen = 0;
    for (int b = 0; b < PIPE_VAD_BINS; b++)
        if ((seen += hist[b]) >= want)
            return b / 2.0f;
    return (PIPE_VAD_BINS - 1) / 2.0f;
}

int pipe_vad_frame(pipe_vad *v, const int16_t *frame, int n)
{
    double e = 0;
    for (int i = 0; i < n; i++)
        e += (double)frame[i] * frame[i];
    float db = (float)(10 * log10(e / (n > 0 ? n : 1) + 1));
    /* far under the minimum all is silence alike: digital silence's 0 dB would weigh on the
     * average as much as speech does and slow its rise when speech resumes */
    if (db < v->min_db - PIPE_VAD_QUIET_DB)
        db = v->min_db - PIPE_VAD_QUIET_DB;

    if (v->recent_n == PIPE_VAD_SMOOTH)
        v->sum -= v->recent[v->recent_at];
    else
        v->recent_n++;
    v->recent[v->recent_at] = db;
    v->sum += db;
    v->recent_at = (v->recent_at + 1) % PIPE_VAD_SMOOTH;
    if (v->recent_at == 0) { /* keeps the float sum from drifting */
        v->sum = 0;
        for (int i = 0; i < v->recent_n; i++)
            v->sum += v->recent[i];
    }
    float level = v->level = v->sum / v->recent_n;

    int bin = pipe_vad_bin(level);
    if (v->window_n == PIPE_VAD_WINDOW)
        v->hist[v->window[v->window_at]]--;
    else
        v->window_n++;
    v->window[v->window_at] = (uint8_t)bin;
    v->hist[bin]++;
    v->window_at = (v->window_at + 1) % PIPE_VAD_WINDOW;

    float floor = pipe_vad_percentile(v->hist, (size_t)v->window_n, 0.10),
          speech = pipe_vad_percentile(v->hist, (size_t)v->window_n, 0.90);
    float margin = (speech - floor) / 2;
    margin = margin < PIPE_VAD_MIN_DB   ? PIPE_VAD_MIN_DB
             : margin > PIPE_VAD_MAX_DB ? PIPE_VAD_MAX_DB
                                        : margin;
    float threshold = floor + margin > v->min_db ? floor + margin : v->min_db;
    return level >= threshold;
}
