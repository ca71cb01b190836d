/* fuzz_lexicon.c — libFuzzer target for a bot's own pronunciations (services/asr_lexicon.c:
 * the asr.pocketsphinx node's `lexicon` file).
 *
 * The input is a lexicon file's text, read against a small dictionary whose phones are AA AH B D
 * EY G IY N R. A refusal must carry a message. A lexicon that loads must keep
 * svc_lexicon_load's promises: its text is "word PHONES" lines, "word(K) PHONES" for a word's
 * K-th, every phone one of the dictionary's; each word's lines stand together, found by the
 * index at its first line; no word has upper-case letters.
 */
#include <ctype.h>
#include <string.h>

#include "sdk/base/alloc.h"
#include "services/asr_lang.h"
#include "tests/fuzz/fuzz_input.h"

static const char DICT[] = "a AH\nbad B AA D\nbig B IY G\nbrand B R AA N D\ngrey G R EY\n";

/* Whether phones[0, n) are all the dictionary's, one space apart. */
static int known_phones(const char *p, size_t n)
{
    static const char *const known[] = { "AA", "AH", "B", "D", "EY", "G", "IY", "N", "R" };
    for (size_t at = 0; at < n;) {
        size_t len = strcspn(p + at, " \n");
        len = len < n - at ? len : n - at;
        int ok = 0;
        for (size_t k = 0; k < sizeof known / sizeof *known; k++)
            ok |= strlen(known[k]) == len && !strncmp(known[k], p + at, len);
        if (!ok)
            return 0;
        at += len + 1;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *src = malloc(size + 1); /* the file's text, as svc_lang_build reads it */
    if (!src)
        return 0;
    memcpy(src, data, size);
    src[size] = '\0';
    char *text = NULL;
    pl_names ix = { 0 };
    parley_status st = svc_lexicon_load("lexicon.txt", src, DICT, &text, &ix);
    free(src);
    if (st != PARLEY_OK) {
        fuzz_expect_refusal(st);
        FUZZ_EXPECT(!text, "a refused lexicon gives no text");
        return 0;
    }
    FUZZ_EXPECT(text, "a loaded lexicon has a text");
    const char *prev = NULL;
    size_t prev_len = 0;
    int k = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        FUZZ_EXPECT(end, "every line ends with a newline");
        size_t word = strcspn(line, " (");
        FUZZ_EXPECT(word > 0 && word < (size_t)(end - line), "a word, then its phones");
        for (size_t i = 0; i < word; i++)
            FUZZ_EXPECT(!isupper((unsigned char)line[i]), "word lower-cased");
        int same = prev && prev_len == word && !strncmp(prev, line, word);
        k = same ? k + 1 : 1;
        const char *ph = line + word;
        if (k > 1) {
            char want[32];
            snprintf(want, sizeof want, "(%d) ", k);
            FUZZ_EXPECT(!strncmp(ph, want, strlen(want)), "line %d of a word numbered", k);
            ph += strlen(want);
        } else {
            FUZZ_EXPECT(*ph == ' ', "a word's first line unnumbered");
            ph++;
            FUZZ_EXPECT(pl_names_find(&ix, line, word) == (int)(line - text),
                        "the index finds a word at its first line");
        }
        FUZZ_EXPECT(known_phones(ph, (size_t)(end - ph)), "phones the dictionary's: %.*s",
                    (int)(end - ph), ph);
        prev = line;
        prev_len = word;
        line = end + 1;
    }
    pl_names_free(&ix);
    pl_free(text);
    return 0;
}
