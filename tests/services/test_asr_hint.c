/* test_asr_hint.c — how the pocketsphinx engine reads the words before a pause for the
 * source's endpoint (svc_asr_engine.end_hint, services/asr_pocketsphinx.c), over real speech
 * (pocketsphinx-testdata's goforward.raw) through a three-line robot bot's class model whose
 * examples include "go forward ten meters". Each part is a new user's (the hint starts their
 * first mean):
 * - all of it: a whole request;
 * - its first 1.6 s, "go forward ten": half way (the bot never ends a request so);
 * - its first 1.2 s, "go forward": either (the bot ends "turn left" so, not "go forward").
 * Whether words the model explains poorly are left unread (HINT_UNSURE_BELOW) is measured
 * by bench/voice_latency.py --room, not here: this small bot explains any sound well.
 * Skips (77) without the recording.
 *
 * Usage: test_asr_hint TMPDIR
 */
#include <stdio.h>

#include "tests/check.h"
#include "tests/services/asr_move_bot.h"

static int16_t pcm[16000 * 10];

static pipe_end_hint hint_after(svc_ps *ps, const char *user, size_t n)
{
    void *s;
    pipe_end_hint h = (pipe_end_hint)-1;
    parley_status st = svc_ps_engine.open(ps, user, &s);
    CHECK(st == PARLEY_OK, "open: %s", parley_errmsg());
    if (st != PARLEY_OK)
        return h;
    for (size_t at = 0; at < n; at += 1600)
        svc_ps_engine.feed(s, pcm + at, n - at < 1600 ? n - at : 1600);
    CHECK(svc_ps_engine.end_hint(s, &h) == PARLEY_OK, "end_hint: %s", parley_errmsg());
    svc_ps_engine.close(s);
    return h;
}

int main(int argc, char **argv)
{
    size_t n = move_bot_recording(pcm, sizeof pcm / sizeof *pcm, argc);
    if (!n)
        return 77;
    svc_ps *ps = move_bot_open(argv[1], "hint");
    if (!ps)
        return check_done();
    static const struct {
        const char *user, *words;
        size_t n;
        pipe_end_hint want;
    } parts[] = { { "all", "go forward ten meters", 0, PIPE_END_COMPLETE },
                  { "three", "go forward ten", 16000 * 16 / 10, PIPE_END_INCOMPLETE },
                  { "two", "go forward", 16000 * 12 / 10, PIPE_END_UNKNOWN } };
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        pipe_end_hint h = hint_after(ps, parts[i].user, parts[i].n ? parts[i].n : n);
        CHECK(h == parts[i].want, "\"%s\": hint %d, want %d", parts[i].words, (int)h,
              (int)parts[i].want);
    }
    svc_ps_close(ps);
    return check_done();
}
