/* cmd_tokenize.c — `parley tokenize`: UTF-8 lines on stdin, their WordPiece pieces as JSON.
 *
 * One JSON object per input line, with each piece's token, id, word index and byte range,
 * so scripts (and tests/nlu/text/test_tokenizer_ref.py) can compare the tokenizer with other
 * implementations. A line of invalid UTF-8 gets an error object and the stream goes on.
 * It is a thin shell over the public parley_tokenizer (parley/nlu.h): no tokenizing logic
 * lives here.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "sdk/cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: parley tokenize --vocab FILE [--words]\n"
            "\n"
            "Reads UTF-8 lines on stdin and writes one JSON object per line:\n"
            "  {\"text\", \"tokens\": [\"hello\", \"##s\"], \"ids\", \"words\": [word index per "
            "piece],\n"
            "   \"start\", \"end\": [byte range of each piece in the line]}\n"
            "Words are the whitespace-separated parts of the line; [CLS] and [SEP] are not added.\n"
            "A line that is not valid UTF-8 gives {\"line\": N, \"error\": \"...\"} and the "
            "stream\n"
            "goes on. \"text\" stops at a NUL byte, if the line has one; offsets do not.\n"
            "\n"
            "  --vocab FILE  WordPiece vocabulary (vocab.txt, one token per line)\n"
            "  --words       also print \"word_start\" and \"word_end\", each word's byte range\n");
}

/* Adds an array of n numbers: the int or size_t at byte `offset` of each of n records of
 * `stride` bytes at `base` (which may be NULL when n is 0). */
static int add_numbers(cJSON *o, const char *name, const void *base, size_t offset, int n,
                       size_t stride, int is_size)
{
    cJSON *a = cJSON_AddArrayToObject(o, name);
    if (!a)
        return 0;
    for (int i = 0; i < n; i++) {
        const char *p = (const char *)base + offset + (size_t)i * stride;
        double d = is_size ? (double)*(const size_t *)p : (double)*(const int *)p;
        if (!cJSON_AddItemToArray(a, cJSON_CreateNumber(d)))
            return 0;
    }
    return 1;
}

static cJSON *tokens_json(const char *text, const parley_tokens *t, int words)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *tokens =
            cJSON_AddStringToObject(o, "text", text) ? cJSON_AddArrayToObject(o, "tokens") : NULL;
    int ok = tokens != NULL;
    for (int i = 0; ok && i < t->n_tokens; i++)
        ok = cJSON_AddItemToArray(tokens, cJSON_CreateString(t->tokens[i].piece));
    const parley_token *p = t->tokens;
    int n = t->n_tokens;
    ok = ok && add_numbers(o, "ids", p, offsetof(parley_token, id), n, sizeof *p, 0) &&
         add_numbers(o, "words", p, offsetof(parley_token, word), n, sizeof *p, 0) &&
         add_numbers(o, "start", p, offsetof(parley_token, start), n, sizeof *p, 1) &&
         add_numbers(o, "end", p, offsetof(parley_token, end), n, sizeof *p, 1);
    if (ok && words)
        ok = add_numbers(o, "word_start", t->word_start, 0, t->n_words, sizeof(size_t), 1) &&
             add_numbers(o, "word_end", t->word_end, 0, t->n_words, sizeof(size_t), 1);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The detail of a PARLEY_ERR_UTF8 says what and where ("invalid UTF-8 at byte 4 ..."). */
static cJSON *error_json(size_t line_no)
{
    cJSON *o = cJSON_CreateObject();
    if (!cJSON_AddNumberToObject(o, "line", (double)line_no) ||
        !cJSON_AddStringToObject(o, "error", parley_errmsg())) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Prints o on one line and deletes it; returns 0 when out of memory. */
static int print_json(cJSON *o)
{
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!s)
        return 0;
    puts(s);
    cJSON_free(s);
    return 1;
}

int cmd_tokenize(int argc, char **argv)
{
    const char *vocab_path = NULL;
    int words = 0, rc = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--vocab") && i + 1 < argc) {
            vocab_path = argv[++i];
        } else if (!strcmp(argv[i], "--words")) {
            words = 1;
        } else {
            static const char *const names[] = { "--vocab", "--words", "--help", NULL };
            return cli_unknown_option("tokenize", argv[i], names);
        }
    }
    if (!vocab_path) {
        fprintf(stderr, "parley tokenize: --vocab FILE is required\n");
        usage(stderr);
        return 2;
    }
    parley_tokenizer *tok;
    parley_status st = parley_tokenizer_open(vocab_path, &tok);
    if (st != PARLEY_OK)
        return cli_fail("tokenize: loading the vocabulary", st);

    char *line = NULL;
    size_t cap = 0, line_no = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, stdin)) >= 0) {
        size_t len = (size_t)got;
        line_no++;
        if (len && line[len - 1] == '\n')
            line[--len] = '\0';
        parley_tokens *t;
        st = parley_tokenizer_encode(tok, line, len, &t);
        cJSON *o = st == PARLEY_OK         ? tokens_json(line, t, words)
                   : st == PARLEY_ERR_UTF8 ? error_json(line_no)
                                           : NULL;
        parley_tokens_free(t);
        if (st != PARLEY_OK && st != PARLEY_ERR_UTF8) {
            rc = cli_fail("tokenize", st);
            break;
        }
        if (!print_json(o)) {
            fprintf(stderr, "parley tokenize: out of memory printing line %zu\n", line_no);
            rc = 1;
            break;
        }
    }
    if (ferror(stdin)) {
        perror("parley tokenize: reading stdin");
        rc = 1;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("parley tokenize: writing stdout");
        rc = 1;
    }
    free(line);
    parley_tokenizer_close(tok);
    return rc;
}
