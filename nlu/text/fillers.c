/* fillers.c — hesitations left out of the model's input (fillers.h). */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "nlu/text/fillers.h"

static const char *const FILLERS[] = { "um", "umm", "uh", "uhh", "uhm", "erm", "hmm" };

int wp_is_filler(const char *word, size_t len)
{
    size_t a = 0, b = len;
    while (a < b && ispunct((unsigned char)word[a]))
        a++;
    while (b > a && ispunct((unsigned char)word[b - 1]))
        b--;
    for (size_t i = 0; i < sizeof FILLERS / sizeof *FILLERS; i++)
        if (strlen(FILLERS[i]) == b - a && !strncasecmp(word + a, FILLERS[i], b - a))
            return 1;
    return 0;
}

int wp_drop_fillers(const char *text, wp_tokens *tk)
{
    int kept = 0, word = -1, filler = 0;
    for (int p = 0; p < tk->n_pieces; p++) {
        const wp_piece *pc = &tk->pieces[p];
        if (pc->word != word) {
            word = pc->word;
            filler = wp_is_filler(text + tk->word_start[word],
                                  tk->word_end[word] - tk->word_start[word]);
        }
        if (!filler)
            tk->pieces[kept++] = *pc;
    }
    int dropped = tk->n_pieces - kept;
    tk->n_pieces = kept;
    return dropped;
}
