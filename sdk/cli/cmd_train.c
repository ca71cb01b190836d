/* cmd_train.c — `parley train`: train a joint intent/slot model from annotated examples.
 *
 * A shell over parley_train_run() (parley/train.h): it parses and cross-checks the options, prints
 * progress (a live \r-updated line on a terminal, plain log lines otherwise) and a
 * summary, and turns the first Ctrl-C into a clean stop that keeps the training state for
 * --resume. Before training it reads DIR/training.json: a model made from the same data and
 * options is left as it is, and one made from another data file is not replaced, unless
 * --force. All training logic, and every file written, belongs to the library.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sdk/cli/cli.h"
#include "sdk/cli/train_cli.h"

enum { EXIT_STOPPED = 130 }; /* the shell's code for "ended by SIGINT" */

static void usage(FILE *f)
{
    parley_train_params d = parley_train_params_default();
    fprintf(f,
            "usage: parley train --data PATH [--dev PATH] --out DIR [options]\n"
            "       parley train --explain --data PATH [options]\n"
            "\n"
            "Trains a joint intent/slot BERT model and writes it to DIR (config.json,\n"
            "model.safetensors, vocab.txt). PATH is a Rasa-style nlu.yaml file or a JointBERT\n"
            "folder (seq.in, seq.out, label). With --dev the best epoch by dev sentence accuracy\n"
            "is kept, otherwise the last. DIR/train_state/ holds what --resume needs while a run\n"
            "is unfinished; it is removed when the run completes. DIR is replaced whole when\n"
            "the run ends (a failed run leaves it as it was), so it must hold only a model.\n"
            "\n"
            "data:\n"
            "  --data PATH          training examples (required)\n"
            "  --dev PATH           dev examples, scored after each epoch\n"
            "  --augment N          up to N variants of each example with slot values drawn from\n"
            "                       the nlu.yaml's lookup tables, or where it has none from the\n"
            "                       values the intent's examples tag; 0 = off (default: sized\n"
            "                       to the data)\n"
            "  --background N       up to N sentences of general English (beside the default\n"
            "                       encoder) added to data of under 2,000 examples as its\n"
            "                       out-of-scope intent where the encoder reads the intent,\n"
            "                       so that requests the bot does not serve fall back; 0 =\n"
            "                       none (default: sized to the data)\n"
            "  --builtin on|off     common replies (\"yep\", \"nah\", \"see ya\") added to\n"
            "                       the intents named greet, goodbye, affirm, deny and\n"
            "                       thank_you (default: on below 2,000 examples)\n"
            "  --word-dropout X     chance that a training word piece is shown as [UNK], so\n"
            "                       unseen slot values are tagged from context (default %g)\n"
            "  --slot-weight X      loss = intent loss + X * slot loss (default: sized, 1, or\n"
            "                       the tagged words per example when the intent is the\n"
            "                       sparse features' alone)\n"
            "  --sparse on|off      sparse features (words, character n-grams, word shapes,\n"
            "                       lookup-table matches) beside the encoder (default: on\n"
            "                       below 1,000 examples per intent and, with slots, below\n"
            "                       4,000 examples; on with lookup tables, regexes or\n"
            "                       --intent-encoder off)\n"
            "  --sparse-lr X        peak learning rate of their weights (SGD; default %g; the\n"
            "                       slot map's is 4 X when the intent is theirs alone)\n"
            "  --intent-encoder on|off  the intent from the encoder and the sparse features, or\n"
            "                       from the sparse features alone (default: off below 150\n"
            "                       examples per intent, 60 when slots are tagged, or when\n"
            "                       they alone get 90%% of few examples with slots right,\n"
            "                       cross-fitted)\n"
            "  --pretrain-epochs N  passes of masked-LM pretraining on the training text before\n"
            "                       the labels, on the CPU; 0 = none (default: 20 for a new\n"
            "                       model from random weights without sparse features, on\n"
            "                       the CPU; then lr 5e-4 and 20 epochs are the defaults)\n"
            "  --resume             continue the stopped run in DIR with its own settings (only\n"
            "                       --data, --dev, --out, --threads, --device, --precision and\n"
            "                       --quiet apply)\n"
            "  --explain            print what training would do with the data and why (its\n"
            "                       profile, the recipe decided from it, the rules), and stop\n"
            "  --force              train even when DIR/training.json says the model there was\n"
            "                       made from the same data and options (it is then skipped),\n"
            "                       or from another data file (it is then kept: choose another\n"
            "                       --out, or give --force to replace it)\n",
            (double)d.word_dropout, (double)PARLEY_TRAIN_DEFAULT_SPARSE_LR);
    cli_train_common_help(f, &d,
                          "its heads\n"
                          "                       are replaced when its labels differ from the "
                          "data's. Without\n"
                          "                       it, a new model of under 2,000 examples starts "
                          "from the default\n"
                          "                       encoder where tools/encoder.sh built it "
                          "($PARLEY_ENCODER, else\n"
                          "                       ~/.cache/parley/encoder); --init none: from "
                          "random weights",
                          parley_train_default_lr(1));
    fprintf(f,
            "\n"
            "The first Ctrl-C stops after the current step and saves the state for --resume\n"
            "(exit code %d); exit codes are otherwise 0 done, 1 failed, 2 bad usage.\n",
            EXIT_STOPPED);
}

/* ---- options --------------------------------------------------------------------------- */

#define P(f) offsetof(parley_train_params, f)
static const opt_def opts[] = {
    { "--data", OPT_STR, P(data), 0, 0, 0, G_ALWAYS },
    { "--dev", OPT_STR, P(dev), 0, 0, 0, G_ALWAYS },
    { "--augment", OPT_INT, P(augment), 0, 0, 1000, G_SETTING },
    { "--pretrain-epochs", OPT_INT, P(pretrain_epochs), 0, 0, 10000, G_SETTING },
    { "--background", OPT_INT, P(background), 0, 0, 100000, G_SETTING },
    { "--builtin", OPT_SWITCH, P(builtin), 0, 0, 0, G_SETTING },
    { "--word-dropout", OPT_FLOAT, P(word_dropout), 0, 0, 0.99, G_SETTING },
    { "--slot-weight", OPT_FLOAT, P(slot_weight), 0, 0, 1000, G_SETTING },
    { "--sparse", OPT_SWITCH, P(sparse), 0, 0, 0, G_SETTING },
    { "--sparse-lr", OPT_FLOAT, P(sparse_lr), 0, 0, 1000, G_SETTING },
    { "--intent-encoder", OPT_SWITCH, P(intent_encoder), 0, 0, 0, G_SETTING },
    { "--resume", OPT_FLAG, P(resume), 0, 0, 0, G_ALWAYS },
    { "--force", OPT_MARK, 0, 0, 0, 0, G_FORCE },
    { "--explain", OPT_MARK, 0, 0, 0, 0, G_EXPLAIN },
};
#undef P
enum { N_OPTS = sizeof opts / sizeof opts[0] };

/* Fills p from argv; returns 0, or 2 after printing a usage error (1 for --help, after
 * printing the help). */
static int parse_args(int argc, char **argv, parley_train_params *p, int *quiet, int *force,
                      int *explain)
{
    opt_parse o = { .cmd = "train", .usage = usage };
    int rc = cli_parse_opts(&o, opts, N_OPTS, argc, argv, p);
    *quiet = o.quiet;
    *force = (o.given & G_FORCE) != 0;
    *explain = (o.given & G_EXPLAIN) != 0;
    if (rc)
        return rc;
    const int given = o.given, vocab_opts = o.vocab_opts;
    const char *clash = NULL;
    if (*explain && (!p->data || p->resume))
        clash = "--explain needs --data, and explains a new run (not --resume)";
    else if (!*explain && (!p->data || !p->out))
        clash = "--data and --out are required";
    else if (p->resume && (given & G_SETTING))
        clash = "--resume continues with the stopped run's own settings: give only --data, --dev, "
                "--out, "
                "--threads, --device, --precision, --quiet";
    else if (p->init && strcmp(p->init, "none") && (given & (G_SHAPE | G_VOCAB)))
        clash = "--init brings its own shape and vocabulary: drop the shape and vocabulary options";
    else if (vocab_opts > 1)
        clash = "give --vocab or --vocab-size, not both";
    else if (p->shape.hidden > 0 && p->shape.heads > 0 && p->shape.hidden % p->shape.heads)
        clash = "--hidden must be a multiple of --heads";
    return clash ? cli_usage_error(&o, clash) : 0;
}

/* ---- progress -------------------------------------------------------------------------- */

static void print_start(const parley_train_progress *pr)
{
    const parley_train_shape *c = &pr->shape;
    const struct {
        int n;
        const char *what;
    } added[] = { { pr->n_augmented, "slot-value variants" },
                  { pr->n_background, "background sentences" },
                  { pr->n_builtin, "built-in replies" },
                  { pr->n_lowercase, "lower-case copies" } };
    fprintf(stderr, "train: %d examples", pr->n_train);
    const char *sep = " (with ";
    for (size_t i = 0; i < sizeof added / sizeof added[0]; i++)
        if (added[i].n) {
            fprintf(stderr, "%s%d %s", sep, added[i].n, added[i].what);
            sep = ", ";
        }
    if (sep[0] == ',')
        fputc(')', stderr);
    fprintf(stderr, ", %d intents, %d slot tags", pr->n_intents, pr->n_tags);
    if (pr->n_dev)
        fprintf(stderr, "; dev %d examples", pr->n_dev);
    fprintf(stderr, "\ntrain: model L%d H%d A%d I%d P%d, vocabulary %d%s, %.2fM parameters%s\n",
            c->layers, c->hidden, c->heads, c->intermediate, c->max_positions, pr->vocab_size,
            pr->vocab_learned ? " (learned)" : "", (double)pr->n_params / 1e6,
            pr->heads_replaced ? ", new heads" : "");
    if (pr->sparse_sentence || pr->sparse_word)
        fprintf(stderr, "train: sparse features: %d sentence, %d word\n", pr->sparse_sentence,
                pr->sparse_word);
    for (const char *s = pr->chosen; s && *s;) {
        size_t n = strcspn(s, "\n");
        fprintf(stderr, "train: sized to the data: %.*s\n", (int)n, s);
        s += n + (s[n] == '\n');
    }
    fprintf(stderr, "train: %d epochs, %ld steps, on %s\n", pr->epochs, pr->steps, pr->device);
    if (pr->n_truncated)
        fprintf(stderr,
                "train: warning: %d training examples are longer than %d pieces and were cut\n",
                pr->n_truncated, c->max_positions);
    if (pr->step)
        fprintf(stderr, "train: resuming at step %ld\n", pr->step);
}

/* What DIR/training.json says about training again: 0 go on, else the exit code after
 * saying why not (or that nothing is to be done). */
static int against_record(const parley_train_params *p, int force)
{
    parley_train_verdict v;
    parley_status st = parley_train_record_compare(p, &v);
    if (st != PARLEY_OK)
        return cli_fail("train", st);
    if (v == PARLEY_TRAIN_UP_TO_DATE && !force) {
        printf("%s is up to date: trained from %s as it is now, with the same options "
               "(--force trains it again)\n",
               p->out, p->data);
        return -1;
    }
    if (v == PARLEY_TRAIN_OTHER_DATA && !force) {
        char was[4096];
        if (parley_train_record_data(p->out, was, sizeof was) != PARLEY_OK)
            snprintf(was, sizeof was, "other data");
        fprintf(stderr,
                "parley train: %s holds a model trained from %s, not %s: choose another --out, "
                "or give --force to replace it\n",
                p->out, was, p->data);
        return 1;
    }
    if (v == PARLEY_TRAIN_UNRECORDED)
        fprintf(stderr, "train: replacing the model in %s (it has no training.json)\n", p->out);
    return 0;
}

int cmd_train(int argc, char **argv)
{
    parley_train_params p = parley_train_params_default();
    parley_train_result res;
    train_view v = { .start = print_start };
    int force = 0, explain = 0;
    int rc = parse_args(argc, argv, &p, &v.quiet, &force, &explain);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (explain) {
        char *text;
        parley_status st = parley_train_explain(&p, &text);
        if (st != PARLEY_OK)
            return cli_fail("train", st);
        fputs(text, stdout);
        parley_train_explain_free(text);
        return 0;
    }
    if (!p.resume && (rc = against_record(&p, force)) != 0)
        return rc < 0 ? 0 : rc;
    v.tty = isatty(fileno(stderr));
    p.progress = cli_train_progress;
    p.user_data = &v;
    cli_train_signals(1);
    parley_status st = parley_train_run(&p, &res);
    cli_train_signals(0);
    cli_train_end_line(&v);
    if (st != PARLEY_OK)
        return cli_fail("train", st);
    char wall[32];
    if (res.stopped_pretraining) {
        printf("stopped in the pretraining on the training text after %s; nothing is kept to "
               "resume\n",
               cli_duration(res.wall_s, wall, sizeof wall));
        return EXIT_STOPPED;
    }
    if (res.stopped) {
        printf("stopped at step %ld (epoch %d done) after %s; continue with: parley train --resume "
               "--data %s%s%s "
               "--out %s\n",
               res.steps_done, res.epochs_done, cli_duration(res.wall_s, wall, sizeof wall), p.data,
               p.dev ? " --dev " : "", p.dev ? p.dev : "", p.out);
        return EXIT_STOPPED;
    }
    printf("trained in %s, %.0f examples/s; model in %s (epoch %d)",
           cli_duration(res.wall_s, wall, sizeof wall), res.examples_per_s, p.out, res.best_epoch);
    if (res.has_dev)
        printf("; best dev: intent %.2f%%, slot F1 %.2f%%, sentence %.2f%%",
               100 * res.best.intent_accuracy, 100 * res.best.slot_f1,
               100 * res.best.sentence_accuracy);
    printf("\n");
    return 0;
}
