/* cmd_model.c — `parley model init`: writes a randomly initialized model directory.
 *
 * The shape comes from flags or from a BertConfig-style JSON file, the vocabulary from a
 * vocab.txt, the labels from comma-separated lists. The model is what training starts from;
 * this command does not train (that is `parley train`) and does not read examples. It is a
 * shell over parley_nlu_model_create (parley/nlu.h): the flags become its params.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: parley model init (--config FILE | --layers N --hidden N --heads N "
               "--intermediate N\n"
               "                          [--max-positions N] [--type-vocab N])\n"
               "                         --vocab FILE --intents A,B,... --slots B-x,I-x,... "
               "[--seed N] --out DIR\n"
               "\n"
               "Writes a model directory (config.json, model.safetensors, vocab.txt) with BERT's "
               "random\n"
               "initialization, ready for training.\n"
               "\n"
               "  --config FILE        take the shape from a Hugging Face BertConfig-style "
               "config.json\n"
               "                       (its labels and vocab_size, if any, are replaced)\n"
               "  --layers N           encoder layers (num_hidden_layers)\n"
               "  --hidden N           hidden size; a multiple of --heads\n"
               "  --heads N            attention heads\n"
               "  --intermediate N     feed-forward size (usually 4 x hidden)\n"
               "  --max-positions N    longest input in word pieces (default 512)\n"
               "  --type-vocab N       token types (default 2)\n"
               "  --vocab FILE         WordPiece vocab.txt; sets vocab_size\n"
               "  --intents A,B,...    intent labels\n"
               "  --slots B-x,I-x,...  BIO slot tags; \"O\" is added first when not given\n"
               "  --seed N             random seed (default 1)\n"
               "  --out DIR            the directory to write (created if missing)\n");
}

/* Splits a comma list in place into at most cap items; returns the count. */
static int split_commas(char *s, const char **items, int cap)
{
    int n = 0;
    for (char *p = s; n < cap; p++) {
        items[n++] = p;
        p = strchr(p, ',');
        if (!p)
            break;
        *p = '\0';
    }
    return n;
}

static int count_commas(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == ',';
    return n;
}

typedef struct init_args {
    const char *config, *vocab, *intents, *slots, *out;
    int layers, hidden, heads, intermediate, max_positions, type_vocab, seed;
} init_args;

/* Returns 0, or the exit code for a usage error. */
static int parse_args(int argc, char **argv, init_args *a)
{
    static const struct {
        const char *opt;
        size_t str_off, int_off; /* one of them is meaningful, the other is NONE */
        long lo;
    } opts[] = {
#define NONE      ((size_t)-1)
#define STR(o, f) { o, offsetof(init_args, f), NONE, 0 }
#define INT(o, f, lo)                       \
    {                                       \
        o, NONE, offsetof(init_args, f), lo \
    }
        STR("--config", config),
        STR("--vocab", vocab),
        STR("--intents", intents),
        STR("--slots", slots),
        STR("--out", out),
        INT("--layers", layers, 1),
        INT("--hidden", hidden, 1),
        INT("--heads", heads, 1),
        INT("--intermediate", intermediate, 1),
        INT("--max-positions", max_positions, 1),
        INT("--type-vocab", type_vocab, 1),
        INT("--seed", seed, 0),
#undef STR
#undef INT
    };
    enum { N_OPTS = sizeof opts / sizeof opts[0] };
    for (int i = 2; i < argc; i += 2) {
        size_t k = 0;
        while (k < N_OPTS && strcmp(argv[i], opts[k].opt))
            k++;
        if (k == N_OPTS || i + 1 >= argc) {
            const char *names[N_OPTS + 2] = { "--help" };
            for (size_t j = 0; j < N_OPTS; j++)
                names[1 + j] = opts[j].opt;
            return cli_unknown_option("model init", argv[i], names);
        }
        if (opts[k].str_off != NONE)
            *(const char **)((char *)a + opts[k].str_off) = argv[i + 1];
        else if (cli_parse_int(argv[i], argv[i + 1], opts[k].lo, INT_MAX,
                               (int *)((char *)a + opts[k].int_off)) < 0)
            return 2;
    }
#undef NONE
    int any_shape = a->layers || a->hidden || a->heads || a->intermediate || a->max_positions ||
                    a->type_vocab;
    const char *missing = !a->vocab     ? "--vocab"
                          : !a->intents ? "--intents"
                          : !a->slots   ? "--slots"
                          : !a->out     ? "--out"
                                        : NULL;
    if (!missing && !a->config && !(a->layers && a->hidden && a->heads && a->intermediate))
        missing = "--config or all of --layers, --hidden, --heads, --intermediate";
    if (missing || (a->config && any_shape)) {
        if (missing)
            fprintf(stderr, "parley model init: needs %s\n", missing);
        else
            fprintf(stderr, "parley model init: --config and the shape flags exclude each other\n");
        usage(stderr);
        return 2;
    }
    return 0;
}

static int init(int argc, char **argv)
{
    init_args a = { .seed = 1 };
    parley_nlu_model_params p = parley_nlu_model_params_default();
    parley_nlu_info in;
    char *intents = NULL, *slots = NULL;
    const char **intent_list = NULL, **slot_list = NULL;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    int ni = count_commas(a.intents) + 1, ns = count_commas(a.slots) + 1;
    if (!(intents = strdup(a.intents)) || !(slots = strdup(a.slots)) ||
        !(intent_list = calloc((size_t)ni, sizeof *intent_list)) ||
        !(slot_list = calloc((size_t)ns, sizeof *slot_list))) {
        fprintf(stderr, "parley model init: out of memory\n");
        rc = 1;
        goto done;
    }
    p.config = a.config;
    p.layers = a.layers;
    p.hidden = a.hidden;
    p.heads = a.heads;
    p.intermediate = a.intermediate;
    p.max_positions = a.max_positions;
    p.type_vocab = a.type_vocab;
    p.vocab = a.vocab;
    p.intents = intent_list;
    p.n_intents = split_commas(intents, intent_list, ni);
    p.slot_tags = slot_list;
    p.n_slot_tags = split_commas(slots, slot_list, ns);
    p.seed = (unsigned long long)a.seed;
    parley_status st = parley_nlu_model_create(a.out, &p, &in);
    if (st != PARLEY_OK) {
        rc = cli_fail("model init", st);
        goto done;
    }
    printf("wrote %s: %zu parameters (%d layers, hidden %d, %d heads, vocab %d), %d intents, %d "
           "slot tags\n",
           a.out, in.n_params, in.layers, in.hidden, in.heads, in.vocab_size, in.n_intents,
           in.n_slot_tags);
done:
    free(intent_list);
    free(slot_list);
    free(intents);
    free(slots);
    return rc;
}

int cmd_model(int argc, char **argv)
{
    if (argc >= 2 && cli_is_help(argv[1])) {
        usage(stdout);
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "init")) {
        fprintf(stderr, "parley model: unknown subcommand '%s'\n", argc >= 2 ? argv[1] : "");
        usage(stderr);
        return 2;
    }
    for (int i = 2; i < argc; i++)
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return 0;
        }
    return init(argc, argv);
}
