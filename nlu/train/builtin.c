/* builtin.c — the built-in replies of the conventional intents (builtin.h).
 *
 * Each list holds replies that answer on their own, whatever the bot: no domain words. They
 * were written for parley; bench/RESULTS.md#fewshot-13 scores them on the
 * sample bots' test sentences, those the lists hold and those they do not. There is no list
 * for cancel: what it cancels, and whether "stop" is one, is each bot's own (a list with
 * "never mind", "scratch that" and "stop", tried, was no better on the sentences the lists
 * do not hold, and worse on the smart-home bot's).
 */
#include <string.h>

#include "nlu/train/builtin.h"
#include "sdk/base/error.h"

enum { BUILTIN_MAX_WORDS = 8 }; /* the most words of one reply below */

/* Each intent's replies, separated by '|'. */
static const struct {
    const char *intent, *replies;
} lists[] = {
    { "greet",
      "hi|hello|hey|hey there|hi there|hello there|good morning|good afternoon|good evening|"
      "howdy|hiya|greetings|morning|hi again|hello again|how are you|how's it going|"
      "what's up|heya|evening" },
    { "goodbye",
      "bye|goodbye|bye now|see ya|see you soon|see you around|later|talk soon|take care|"
      "farewell|so long|i'm off|i have to go|gotta go|i'm leaving now|good bye|bye for now|"
      "until next time|have a good one|that's it for today|i'm done here|night|bye bye" },
    { "affirm",
      "yes|yeah|yep|yup|sure|of course|correct|that's right|right|exactly|absolutely|"
      "definitely|ok|okay|sounds good|that's correct|yes please|indeed|affirmative|uh huh|"
      "perfect|go ahead|do it|that works|fine by me|alright|you got it|sure thing|why not|"
      "yes it is" },
    { "deny", "no|nope|nah|no thanks|not really|never|no way|not at all|negative|absolutely not|"
              "i don't think so|that's wrong|that's not right|incorrect|no it isn't|not that|don't|"
              "please don't|no thank you|not now|i'd rather not|definitely not|wrong" },
    { "thank_you",
      "thanks|thank you|thanks a lot|many thanks|thank you so much|thanks a bunch|cheers|"
      "much appreciated|i appreciate it|thx|thank you very much|great thanks|awesome thanks|"
      "thanks a million|appreciate the help|thanks for your help|thanks again" },
};

int train_builtin_on(parley_switch want, int n_examples)
{
    return want != PARLEY_SWITCH_AUTO ? want == PARLEY_SWITCH_ON : train_few_written(n_examples);
}

/* Adds reply[0..len) (words split at single spaces) to ds as an untagged example of
 * intent. */
static parley_status add_reply(ds_dataset *ds, const char *reply, size_t len, int intent,
                               int *added)
{
    const char *words[BUILTIN_MAX_WORDS];
    size_t lens[BUILTIN_MAX_WORDS];
    const int tags[BUILTIN_MAX_WORDS] = { 0 }; /* all O */
    int n = 0, appended;
    for (size_t at = 0; at < len && n < BUILTIN_MAX_WORDS; n++) {
        const char *w = reply + at;
        const char *end = memchr(w, ' ', len - at);
        lens[n] = end ? (size_t)(end - w) : len - at;
        words[n] = w;
        at += lens[n] + 1;
    }
    parley_status st =
            ds_add(ds, n, words, lens, tags, intent, 0, NULL, DS_DROP_SAME_TEXT, NULL, &appended);
    if (st == PARLEY_OK && appended) {
        ds->examples[ds->n_examples - 1].untagged = 1;
        (*added)++;
    }
    return st;
}

parley_status train_add_builtin(ds_dataset *ds, int *added, train_notes *notes)
{
    parley_status st = PARLEY_OK;
    char names[128] = "";
    *added = 0;
    for (size_t l = 0; l < sizeof lists / sizeof lists[0] && st == PARLEY_OK; l++) {
        const int intent = ds_intent_index(ds, lists[l].intent);
        if (intent < 0)
            continue;
        for (const char *r = lists[l].replies; *r && st == PARLEY_OK;) {
            const size_t len = strcspn(r, "|");
            st = add_reply(ds, r, len, intent, added);
            r += len + (r[len] == '|');
        }
        strcat(strcat(names, names[0] ? ", " : ""), lists[l].intent);
    }
    if (st == PARLEY_OK && names[0])
        train_note(notes,
                   "builtin %d: common replies (\"yep\", \"nah\", \"see ya\") added to %s "
                   "(--builtin off: none)",
                   *added, names);
    return st;
}
