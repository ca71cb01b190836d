/* sound_key.c — how folded English text sounds, as a string to compare by edit distance, and
 * that distance (slot_values.h). The matcher compares a recognizer's near miss with the values
 * a slot knows by both: "like roast" is three edits from "light roast" in letters, one in
 * sound.
 */
#include <string.h>

#include "nlu/model/slot_values.h"
#include "sdk/base/alloc.h"

static int vowel(char c)
{
    return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
}

static int letter(char c)
{
    return c >= 'a' && c <= 'z';
}

/* The key letters of one word w[0..n) (lower-case ASCII letters) appended at out; none for
 * no letters (w is then not read: a number's digits come between words). */
static size_t word_key(const char *w, size_t n, char *out)
{
    size_t o = 0, i = 0;
    if (!n)
        return 0;
#define AT(k) ((size_t)(k) < n ? w[k] : '\0')
    /* silent first letters: KN, GN, PN, WR, AE */
    if (n > 1 && ((strchr("kgp", w[0]) && w[1] == 'n') || (w[0] == 'w' && w[1] == 'r') ||
                  (w[0] == 'a' && w[1] == 'e')))
        i = 1;
    if (w[0] == 'x') {
        out[o++] = 'S';
        i = 1;
    } else if (w[0] == 'w' && AT(1) == 'h') {
        out[o++] = 'W';
        i = 2;
    }
    for (; i < n; i++) {
        const char c = w[i], prev = i ? w[i - 1] : '\0', next = AT(i + 1);
        if (c == prev && c != 'c')
            continue;
        char k = '\0';
        switch (c) {
        case 'a':
        case 'e':
        case 'i':
        case 'o':
        case 'u': k = i == 0 ? 'A' : '\0'; break;
        case 'b': k = prev == 'm' && i + 1 == n ? '\0' : 'B'; break;
        case 'c':
            if (next == 'h' || (next == 'i' && AT(i + 2) == 'a'))
                k = prev == 's' && next == 'h' ? 'K' : 'X';
            else if (next == 'i' || next == 'e' || next == 'y')
                k = prev == 's' ? '\0' : 'S';
            else
                k = 'K';
            break;
        case 'd': k = next == 'g' && strchr("eiy", AT(i + 2) ? AT(i + 2) : '#') ? 'J' : 'T'; break;
        case 'g':
            if (next == 'h' && !vowel(AT(i + 2)))
                k = '\0'; /* light, night */
            else if (next == 'n' && (i + 2 == n || (AT(i + 2) == 'e' && AT(i + 3) == 'd')))
                k = '\0'; /* sign, signed */
            else if (prev == 'd' && strchr("eiy", next ? next : '#'))
                k = '\0'; /* the DG of edge is J already */
            else
                k = next && strchr("eiy", next) ? 'J' : 'K';
            break;
        case 'h': k = (vowel(next) && !strchr("cgpst", prev ? prev : '#')) ? 'H' : '\0'; break;
        case 'k': k = prev == 'c' ? '\0' : 'K'; break;
        case 'p': k = next == 'h' ? 'F' : 'P'; break;
        case 'q': k = 'K'; break;
        case 's':
            k = next == 'h' || (next == 'i' && (AT(i + 2) == 'o' || AT(i + 2) == 'a')) ? 'X' : 'S';
            break;
        case 't':
            if (next == 'i' && (AT(i + 2) == 'o' || AT(i + 2) == 'a'))
                k = 'X';
            else if (next == 'h')
                k = '0';
            else
                k = next == 'c' && AT(i + 2) == 'h' ? '\0' : 'T';
            break;
        case 'v': k = 'F'; break;
        case 'w':
        case 'y': k = vowel(next) ? (char)(c - 'a' + 'A') : '\0'; break;
        case 'x':
            out[o++] = 'K';
            k = 'S';
            break;
        case 'z': k = 'S'; break;
        default: k = (char)(c - 'a' + 'A'); /* f j l m n r */
        }
        if (k)
            out[o++] = k;
    }
#undef AT
    return o;
}

char *bert_sound_key(const char *folded)
{
    size_t len = strlen(folded);
    char *out = pl_malloc(2 * len + 1), *word = pl_malloc(len + 1);
    size_t o = 0;
    if (!out || !word) {
        pl_free(out);
        pl_free(word);
        return NULL;
    }
    for (size_t i = 0; i < len;) {
        size_t n = 0;
        for (; i < len && (letter(folded[i]) || (folded[i] >= '0' && folded[i] <= '9')); i++)
            if (letter(folded[i]))
                word[n++] = folded[i];
            else {
                o += word_key(word, n, out + o);
                n = 0;
                out[o++] = folded[i];
            }
        o += word_key(word, n, out + o);
        while (i < len && !letter(folded[i]) && !(folded[i] >= '0' && folded[i] <= '9'))
            i++;
    }
    out[o] = '\0';
    pl_free(word);
    return out;
}

int bert_edit_distance(const char *a, size_t na, const char *b, size_t nb, int bound)
{
    if (bound < 0)
        return 0;
    if ((na > nb ? na - nb : nb - na) > (size_t)bound)
        return bound + 1;
    if (na > nb) { /* the row over the shorter string */
        const char *t = a;
        a = b;
        b = t;
        size_t tn = na;
        na = nb;
        nb = tn;
    }
    int row[BERT_DISTANCE_MAX + 1];
    if (nb > BERT_DISTANCE_MAX)
        return bound + 1;
    for (size_t i = 0; i <= na; i++)
        row[i] = (int)i;
    for (size_t j = 1; j <= nb; j++) {
        int diag = row[0], least;
        row[0] = least = (int)j;
        for (size_t i = 1; i <= na; i++) {
            int up = row[i];
            int v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v)
                v = up + 1;
            if (row[i - 1] + 1 < v)
                v = row[i - 1] + 1;
            row[i] = v;
            diag = up;
            if (v < least)
                least = v;
        }
        if (least > bound)
            return bound + 1; /* every later row is at least as far */
    }
    return row[na] <= bound ? row[na] : bound + 1;
}
