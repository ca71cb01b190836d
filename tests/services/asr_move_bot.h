/* asr_move_bot.h — the pocketsphinx engine with a class model of a three-line robot bot
 * ("go forward ten meters", pocketsphinx-testdata's goforward.raw), and one utterance heard
 * through it: what the engine tests over real speech share.
 */
#ifndef TESTS_SERVICES_ASR_MOVE_BOT_H
#define TESTS_SERVICES_ASR_MOVE_BOT_H

#include <stdio.h>

#include "services/asr.h"
#include "tests/check.h"

#define GOFORWARD "/usr/share/pocketsphinx/test/data/goforward.raw"

/* The engine over the bot's model, its nlu.yaml and cache written under dir with names
 * starting with tag; NULL (and a failed check) if it cannot be made. */
static svc_ps *move_bot_open(const char *dir, const char *tag)
{
    char nlu[1024], cache[1024];
    snprintf(nlu, sizeof nlu, "%s/%s-nlu.yaml", dir, tag);
    snprintf(cache, sizeof cache, "%s/%s-cache", dir, tag);
    FILE *y = fopen(nlu, "w");
    CHECK(y != NULL, "cannot write %s", nlu);
    if (!y)
        return NULL;
    fputs("version: \"3.1\"\nnlu:\n  - intent: move\n    examples: |\n"
          "      - go [forward](direction) [ten](distance) meters\n"
          "      - turn [left](direction)\n      - go [back](direction) [two](distance) meters\n",
          y);
    fclose(y);
    svc_ps_params p = svc_ps_params_default();
    svc_lang_info info;
    svc_ps *ps = NULL;
    CHECK(svc_lang_build(nlu, p.dict, cache, SVC_LANG_NGRAM, &info) == PARLEY_OK, "build: %s",
          parley_errmsg());
    p.bot = &info;
    CHECK(svc_ps_open(&p, &ps) == PARLEY_OK, "open: %s", parley_errmsg());
    return ps;
}

/* One utterance of user through the engine, fed in 100 ms pieces; its transcript (owned),
 * or NULL. */
static char *hear(svc_ps *ps, const char *user, const int16_t *pcm, size_t n)
{
    void *s;
    char *text = NULL;
    if (svc_ps_engine.open(ps, user, &s) != PARLEY_OK)
        return NULL;
    for (size_t at = 0; at < n; at += 1600)
        svc_ps_engine.feed(s, pcm + at, n - at < 1600 ? n - at : 1600);
    if (svc_ps_engine.end(s) != PARLEY_OK || svc_ps_engine.final(s, &text) != PARLEY_OK)
        text = NULL;
    svc_ps_engine.close(s);
    return text;
}

#endif
