/* audio_hint.h — (private to pipeline/) the graph's board of segmenters by user: where a
 * recognizer's word on a user's pause (pipe_seg_hint, pipeline/audio.h) finds the segmenter
 * that holds that pause.
 *
 * A segmenter (audio.c) adds its entry when it opens and removes it when it closes; a hint
 * is stored in the entry as one atomic word, so the segmenter reads it without a lock on
 * every frame of a pause. The board's lock guards its lists: a hint is written under it, so
 * an entry is never written after its removal, and a segmenter that reads faster than real
 * time (a file) may wait under it for the hint a live stream would have by then.
 */
#ifndef PIPELINE_AUDIO_HINT_H
#define PIPELINE_AUDIO_HINT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/audio.h"

typedef struct pipe_hint_entry {
    const char *user; /* borrowed from the segmenter */
    /* the last hint: the utterance's number (low 24 bits), the samples of it the recognizer
     * had heard (32 bits) and the pipe_end_hint (8 bits); 0 when none */
    _Atomic uint64_t hint;
    struct pipe_hint_entry *next;
} pipe_hint_entry;

typedef struct pipe_hint_board pipe_hint_board;

/* An empty board; *out owned by the caller (pipe_hint_board_free). */
parley_status pipe_hint_board_new(pipe_hint_board **out);
/* After every entry was removed. NULL is a no-op. */
void pipe_hint_board_free(pipe_hint_board *b);
/* Adds e (owned by its segmenter, which keeps it in place until removal). Any thread. */
void pipe_hint_board_add(pipe_hint_board *b, pipe_hint_entry *e);
void pipe_hint_board_remove(pipe_hint_board *b, pipe_hint_entry *e);

/* The hint (a pipe_end_hint) e holds for utterance utt, given on at least `samples` of it;
 * -1 when it holds none such. Lock-free. */
int pipe_hint_read(const pipe_hint_entry *e, uint32_t utt, size_t samples);
/* pipe_hint_read, waiting up to timeout_ms for such a hint to come. */
int pipe_hint_wait(pipe_hint_board *b, const pipe_hint_entry *e, uint32_t utt, size_t samples,
                   int timeout_ms);
/* Forgets e's hint (a new utterance starts). */
void pipe_hint_clear(pipe_hint_entry *e);

#endif
