/* asr_levels.c — the speaker's level and the room's (asr_levels.h says what stays, and why).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "services/asr_levels.h"

parley_status svc_frames_note(svc_frames *m, int kept, size_t fed, int ended)
{
    if (kept <= 0 || (size_t)kept <= m->n)
        return PARLEY_OK;
    if ((size_t)kept > m->cap) {
        size_t cap = (size_t)kept + 512; /* 5 s more: one growth per 5 s of speech */
        int *due = pl_realloc(m->due, cap * sizeof *due);
        if (!due)
            return pl_nomem("%zu frame positions", cap);
        m->due = due;
        m->cap = cap;
    }
    long newest = (long)(fed / SVC_LEVEL_FRAME) - 1 - (ended ? 0 : SVC_LEVEL_LOOKAHEAD);
    for (size_t i = m->n; i < (size_t)kept; i++)
        m->due[i] = (int)(newest > 0 ? newest : 0);
    m->n = (size_t)kept;
    return PARLEY_OK;
}

void svc_frames_clear(svc_frames *m)
{
    pl_free(m->due);
    memset(m, 0, sizeof *m);
}

/* The audio frame of each of m's frames into at (m->n): backwards from the last, each one
 * before the next; a burst of frames the voice detector held back comes out at once, and its
 * frames are the ones just before. */
static void place(const svc_frames *m, int *at)
{
    for (size_t i = m->n; i-- > 0;)
        at[i] = i + 1 < m->n && at[i + 1] - 1 < m->due[i] ? at[i + 1] - 1 : m->due[i];
}

/* The level (dB) of audio frame f: its mean power over the decoder's window. */
static float frame_db(const int16_t *pcm, size_t n, long f)
{
    size_t a = (size_t)f * SVC_LEVEL_FRAME, b = a + SVC_LEVEL_WINDOW;
    if (a >= n)
        return -INFINITY;
    b = b < n ? b : n;
    double sum = 0;
    for (size_t i = a; i < b; i++)
        sum += (double)pcm[i] * pcm[i];
    return (float)(10.0 * log10(sum / (double)(b - a) + 1.0));
}

static int by_value(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The loudest tenth of a word's frames [first, last], audio frames at (n_at): the level of its
 * 90th percentile; -INFINITY for a word of no frames at knows. scratch holds n_at floats. */
static float word_level(const int *at, size_t n_at, const int16_t *pcm, size_t n, const svc_word *w,
                        float *scratch)
{
    int k = 0;
    for (int f = w->first < 0 ? 0 : w->first; f <= w->last && (size_t)f < n_at; f++)
        scratch[k++] = frame_db(pcm, n, at[f]);
    if (!k)
        return -INFINITY;
    qsort(scratch, (size_t)k, sizeof *scratch, by_value);
    return scratch[(k * 9) / 10 < k ? (k * 9) / 10 : k - 1];
}

/* The level of the quietest tenth of the audio's frames: its noise. scratch holds them. */
static float noise_floor(const int16_t *pcm, size_t n, float *scratch)
{
    size_t frames = n / SVC_LEVEL_FRAME;
    for (size_t f = 0; f < frames; f++)
        scratch[f] = frame_db(pcm, n, (long)f);
    qsort(scratch, frames, sizeof *scratch, by_value);
    return frames ? scratch[frames / 10] : -INFINITY;
}

/* Whether a word of `level` is the room's, `under` dB under the loudest word `top`: that far
 * under and near the noise (in a quiet room a soft word is still the speaker's). */
static int room(float level, float top, float floor, float under)
{
    return isfinite(level) && level < top - under && level < floor + SVC_LEVEL_FLOOR_DB;
}

parley_status svc_words_at_level(const svc_frames *m, const int16_t *pcm, size_t n, svc_word *words,
                                 int n_words)
{
    for (int i = 0; i < n_words; i++)
        words[i].keep = 1;
    if (n_words < 2 || !m->n)
        return PARLEY_OK;
    size_t room_for = m->n > n / SVC_LEVEL_FRAME ? m->n : n / SVC_LEVEL_FRAME;
    float *scratch = pl_malloc((room_for + (size_t)n_words) * sizeof *scratch);
    int *at = pl_malloc(m->n * sizeof *at);
    if (!scratch || !at) {
        pl_free(scratch);
        pl_free(at);
        return pl_nomem("the levels of %d words", n_words);
    }
    place(m, at);
    float *level = scratch + room_for, top = -INFINITY;
    for (int i = 0; i < n_words; i++) {
        level[i] = word_level(at, m->n, pcm, n, &words[i], scratch);
        top = level[i] > top ? level[i] : top;
    }
    float floor = noise_floor(pcm, n, scratch);
    for (int i = 0; i < n_words; i++)
        if (room(level[i], top, floor, SVC_LEVEL_GAP_DB))
            words[i].keep = 0;
    for (int i = 0;
         i < n_words && (!words[i].keep || room(level[i], top, floor, SVC_LEVEL_EDGE_DB)); i++)
        words[i].keep = 0;
    for (int i = n_words - 1;
         i >= 0 && (!words[i].keep || room(level[i], top, floor, SVC_LEVEL_EDGE_DB)); i--)
        words[i].keep = 0;
    pl_free(scratch);
    pl_free(at);
    return PARLEY_OK;
}

int svc_words_outside(const svc_frames *m, const svc_word *words, int n_words, long first,
                      long last)
{
    if (!n_words || !m->n)
        return 0;
    int *at = pl_malloc(m->n * sizeof *at), out = 0;
    if (!at)
        return 1;
    place(m, at);
    for (int i = 0; i < n_words && !out; i++) {
        size_t a = words[i].first < 0 ? 0 : (size_t)words[i].first;
        size_t b = words[i].last < 0 ? 0 : (size_t)words[i].last;
        b = b < m->n ? b : m->n - 1;
        out = a <= b && (at[a] < first - SVC_LEVEL_PLACED || at[b] > last + SVC_LEVEL_PLACED);
    }
    pl_free(at);
    return out;
}
