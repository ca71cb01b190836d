/* cmd_pretrain.c — `parley pretrain`: masked-language-model pretraining of an encoder on
 * plain text, for `parley train --init` to fine-tune.
 *
 * A shell over parley_pretrain_run() (parley/train.h): it parses and cross-checks the options
 * (most are train's, train_cli.c), prints progress and a summary, and turns the first
 * Ctrl-C into a clean stop that keeps the model so far. All the work, and every file
 * written, belongs to the library.
 */
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#include "sdk/cli/cli.h"
#include "sdk/cli/train_cli.h"

enum { EXIT_STOPPED = 130 };

_Static_assert(offsetof(parley_pretrain_params, train) == 0,
               "train_cli's common options write into a parley_train_params first");

static void usage(FILE *f)
{
    parley_pretrain_params d = parley_pretrain_params_default();
    fprintf(f,
            "usage: parley pretrain --text FILE... --out DIR [options]\n"
            "\n"
            "Pretrains a BERT encoder with the masked-language-model objective on plain text (one\n"
            "sentence or utterance per line) and writes DIR (config.json, model.safetensors,\n"
            "vocab.txt, mlm_head.safetensors) after every epoch. Fine-tune it with\n"
            "parley train --init DIR. Blank lines and repeated lines are dropped; a share of the\n"
            "lines is held out and scored after each epoch (masked-LM loss and accuracy).\n"
            "\n"
            "text:\n"
            "  --text FILE...       plain-text files (required)\n"
            "  --mask-prob X        chance that a piece is chosen for prediction; of those 80%%\n"
            "                       become [MASK], 10%% a random piece, 10%% stay (default %g)\n"
            "  --holdout X          fraction of the lines held out for scoring (default %g)\n",
            (double)d.mask_prob, (double)d.holdout);
    cli_train_common_help(f, &d.train,
                          "pretraining goes on from it (and from its mlm_head.safetensors)",
                          parley_train_default_lr(0));
    fprintf(f,
            "\n"
            "The first Ctrl-C stops after the current step and saves the model so far (exit code\n"
            "%d); exit codes are otherwise 0 done, 1 failed, 2 bad usage.\n",
            EXIT_STOPPED);
}

#define P(f) offsetof(parley_pretrain_params, f)
static const opt_def opts[] = {
    { "--text", OPT_LIST, P(text), P(n_text), 0, 0, G_ALWAYS },
    { "--mask-prob", OPT_FLOAT, P(mask_prob), 0, 0.01, 0.99, G_SETTING },
    { "--holdout", OPT_FLOAT, P(holdout), 0, 0, 0.5, G_SETTING },
};
#undef P

static void print_start(const parley_train_progress *pr)
{
    const parley_train_shape *c = &pr->shape;
    fprintf(stderr, "pretrain: %d lines, %d held out\n", pr->n_train + pr->n_dev, pr->n_dev);
    fprintf(stderr,
            "pretrain: model L%d H%d A%d I%d P%d, vocabulary %d%s, %.2fM parameters trained\n",
            c->layers, c->hidden, c->heads, c->intermediate, c->max_positions, pr->vocab_size,
            pr->vocab_learned ? " (learned)" : "", (double)pr->n_params / 1e6);
    fprintf(stderr, "pretrain: %d epochs, %ld steps\n", pr->epochs, pr->steps);
    if (pr->n_truncated)
        fprintf(stderr, "pretrain: %d lines are longer than %d pieces and were cut\n",
                pr->n_truncated, c->max_positions);
}

int cmd_pretrain(int argc, char **argv)
{
    parley_pretrain_params p = parley_pretrain_params_default();
    parley_pretrain_result res;
    train_view v = { .start = print_start };
    opt_parse o = { .cmd = "pretrain", .usage = usage };
    int rc = cli_parse_opts(&o, opts, sizeof opts / sizeof opts[0], argc, argv, &p);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (!p.n_text || !p.train.out)
        return cli_usage_error(&o, "--text and --out are required");
    if (p.train.init && (o.given & (G_SHAPE | G_VOCAB)))
        return cli_usage_error(&o, "--init brings its own shape and vocabulary: drop the shape and "
                                   "vocabulary options");
    if (o.vocab_opts > 1)
        return cli_usage_error(&o, "give --vocab or --vocab-size, not both");
    if (p.train.shape.hidden % p.train.shape.heads)
        return cli_usage_error(&o, "--hidden must be a multiple of --heads");
    v.quiet = o.quiet;
    v.tty = isatty(fileno(stderr));
    p.train.progress = cli_train_progress;
    p.train.user_data = &v;
    cli_train_signals(1);
    parley_status st = parley_pretrain_run(&p, &res);
    cli_train_signals(0);
    cli_train_end_line(&v);
    if (st != PARLEY_OK)
        return cli_fail("pretrain", st);
    char wall[32];
    printf("%s after %ld steps (%d epochs) in %s, %.0f lines/s; model in %s",
           res.stopped ? "stopped" : "pretrained", res.steps_done, res.epochs_done,
           cli_duration(res.wall_s, wall, sizeof wall), res.examples_per_s, p.train.out);
    if (res.n_holdout && res.epochs_done)
        printf("; held-out masked-LM loss %.4f, accuracy %.2f%%", res.mlm_loss,
               100 * res.mlm_accuracy);
    printf("\n");
    return res.stopped ? EXIT_STOPPED : 0;
}
