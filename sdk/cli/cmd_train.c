/* cmd_train.c — `parley train`: train a joint intent/slot model from annotated examples.
 *
 * A shell over train_run() (nlu/train.h): it parses and cross-checks the options, prints
 * progress (a live \r-updated line on a terminal, plain log lines otherwise) and a
 * summary, and turns the first Ctrl-C into a clean stop that keeps the training state for
 * --resume. All training logic, and every file written, belongs to the library.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nlu/train.h"
#include "nlu/wp_learn.h"
#include "sdk/cli/cli.h"

enum {
    LOG_EVERY = 50,      /* steps between log lines when stderr is not a terminal */
    EXIT_STOPPED = 130,  /* the shell's code for "ended by SIGINT" */
};

static void usage(FILE *f)
{
    train_params d = train_params_default();
    fprintf(f,
            "usage: parley train --data PATH [--dev PATH] --out DIR [options]\n"
            "\n"
            "Trains a joint intent/slot BERT model and writes it to DIR (config.json,\n"
            "model.safetensors, vocab.txt). PATH is a Rasa-style nlu.yaml file or a JointBERT\n"
            "folder (seq.in, seq.out, label). With --dev the best epoch by dev sentence accuracy\n"
            "is kept, otherwise the last. DIR/train_state/ holds what --resume needs while a run\n"
            "is unfinished; it is removed when the run completes.\n"
            "\n"
            "data and model:\n"
            "  --data PATH          training examples (required)\n"
            "  --dev PATH           dev examples, scored after each epoch\n"
            "  --out DIR            model directory to write (required)\n"
            "  --init DIR           start from this model (its vocabulary and shape); its heads\n"
            "                       are replaced when its labels differ from the data's\n"
            "  --layers N           new model: encoder layers (default %d)\n"
            "  --hidden N           new model: hidden size (default %d)\n"
            "  --heads N            new model: attention heads (default %d)\n"
            "  --intermediate N     new model: feed-forward size (default %d)\n"
            "  --max-positions N    new model: longest input in pieces (default %d)\n"
            "  --vocab FILE         new model: use this vocab.txt ...\n"
            "  --vocab-size N       ... or learn a WordPiece vocabulary of at most N tokens from\n"
            "                       the training text (default %d)\n"
            "training:\n"
            "  --epochs N           passes over the data (default %d)\n"
            "  --batch N            examples per step (default %d)\n"
            "  --augment N          up to N variants of each example with slot values drawn from\n"
            "                       the nlu.yaml's lookup tables; 0 = off (default %d)\n"
            "  --lr X               peak learning rate (default %g, or %g with --init)\n"
            "  --warmup X           linear warmup: a fraction of all steps if X has a '.', else a\n"
            "                       number of steps (default %g); then linear decay to 0\n"
            "  --weight-decay X     AdamW weight decay, not on biases and LayerNorm (default %g)\n"
            "  --dropout X          dropout probability (default %g)\n"
            "  --word-dropout X     chance that a training word piece is shown as [UNK], so\n"
            "                       unseen slot values are tagged from context (default %g)\n"
            "  --slot-weight X      loss = intent loss + X * slot loss (default %g)\n"
            "  --clip X             clip gradients to this global norm; 0 = off (default %g)\n"
            "  --seed N             seed of the initialization, shuffling and dropout (default %llu)\n"
            "  --threads N          CPU threads (default: all cores); results are reproducible\n"
            "                       for a given seed and thread count\n"
            "  --device D           cpu (cuda is not built for training)\n"
            "  --resume             continue the stopped run in DIR with its own settings (only\n"
            "                       --data, --dev, --out, --threads, --device, --quiet apply)\n"
            "  --quiet              no progress on stderr; the summary is still printed\n"
            "\n"
            "The first Ctrl-C stops after the current step and saves the state for --resume\n"
            "(exit code %d); exit codes are otherwise 0 done, 1 failed, 2 bad usage.\n",
            d.layers, d.hidden, d.heads, d.intermediate, d.max_positions, WP_LEARN_DEFAULT_SIZE, d.epochs, d.batch, d.augment,
            (double)train_default_lr(0), (double)train_default_lr(1), (double)d.warmup_fraction,
            (double)d.weight_decay, (double)d.dropout, (double)d.word_dropout, (double)d.slot_weight, (double)d.clip,
            (unsigned long long)d.seed, EXIT_STOPPED);
}

/* ---- options --------------------------------------------------------------------------- */

typedef enum opt_kind { OPT_STR, OPT_INT, OPT_U64, OPT_FLOAT, OPT_WARMUP, OPT_FLAG } opt_kind;

/* Which options go together: a new model's shape and vocabulary are not for --init, and
 * a resumed run keeps its own settings. */
enum { G_ALWAYS = 0, G_SHAPE = 1, G_VOCAB = 2, G_SETTING = 4 };

typedef struct opt_def {
    const char *name;
    opt_kind kind;
    size_t off;         /* into train_params */
    double lo, hi;
    int group;
} opt_def;

#define P(f) offsetof(train_params, f)
static const opt_def opts[] = {
    { "--data", OPT_STR, P(data), 0, 0, G_ALWAYS },
    { "--dev", OPT_STR, P(dev), 0, 0, G_ALWAYS },
    { "--out", OPT_STR, P(out), 0, 0, G_ALWAYS },
    { "--init", OPT_STR, P(init), 0, 0, G_SETTING },
    { "--layers", OPT_INT, P(layers), 1, 64, G_SHAPE | G_SETTING },
    { "--hidden", OPT_INT, P(hidden), 1, 16384, G_SHAPE | G_SETTING },
    { "--heads", OPT_INT, P(heads), 1, 256, G_SHAPE | G_SETTING },
    { "--intermediate", OPT_INT, P(intermediate), 1, 65536, G_SHAPE | G_SETTING },
    { "--max-positions", OPT_INT, P(max_positions), 3, 8192, G_SHAPE | G_SETTING },
    { "--vocab", OPT_STR, P(vocab), 0, 0, G_VOCAB | G_SETTING },
    { "--vocab-size", OPT_INT, P(vocab_size), 6, 1 << 20, G_VOCAB | G_SETTING },
    { "--epochs", OPT_INT, P(epochs), 1, 100000, G_SETTING },
    { "--batch", OPT_INT, P(batch), 1, 65536, G_SETTING },
    { "--augment", OPT_INT, P(augment), 0, 1000, G_SETTING },
    { "--lr", OPT_FLOAT, P(lr), 1e-9, 10, G_SETTING },
    { "--warmup", OPT_WARMUP, 0, 0, 0, G_SETTING },
    { "--weight-decay", OPT_FLOAT, P(weight_decay), 0, 10, G_SETTING },
    { "--dropout", OPT_FLOAT, P(dropout), 0, 0.99, G_SETTING },
    { "--word-dropout", OPT_FLOAT, P(word_dropout), 0, 0.99, G_SETTING },
    { "--slot-weight", OPT_FLOAT, P(slot_weight), 0, 1000, G_SETTING },
    { "--clip", OPT_FLOAT, P(clip), 0, 1e9, G_SETTING },
    { "--seed", OPT_U64, P(seed), 0, 0, G_SETTING },
    { "--threads", OPT_INT, P(threads), 0, 1024, G_ALWAYS },
    { "--device", OPT_STR, P(device), 0, 0, G_ALWAYS },
    { "--resume", OPT_FLAG, P(resume), 0, 0, G_ALWAYS },
};
#undef P
enum { N_OPTS = sizeof opts / sizeof opts[0] };

static int bad_value(const char *opt, const char *s, const char *want)
{
    fprintf(stderr, "parley: train: %s wants %s, got '%s'\n", opt, want, s ? s : "");
    return -1;
}

static int parse_float(const opt_def *o, const char *s, float *out)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || errno || end == s || *end || !(v >= o->lo && v <= o->hi)) {
        char want[64];
        snprintf(want, sizeof want, "a number in [%g, %g]", o->lo, o->hi);
        return bad_value(o->name, s, want);
    }
    *out = (float)v;
    return 0;
}

/* "0.1" is a fraction of all steps, "100" a step count. */
static int parse_warmup(const char *s, train_params *p)
{
    static const opt_def frac = { "--warmup", OPT_FLOAT, 0, 0, 1, 0 };
    if (s && strchr(s, '.')) {
        p->warmup_steps = -1;
        return parse_float(&frac, s, &p->warmup_fraction);
    }
    int steps;
    if (cli_parse_int("--warmup", s, 0, 1L << 30, &steps) != 0)
        return -1;
    p->warmup_steps = steps;
    return 0;
}

static int parse_u64(const char *opt, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = s && *s != '-' ? strtoull(s, &end, 10) : 0;
    if (!s || *s == '-' || errno || end == s || *end)
        return bad_value(opt, s, "a non-negative integer");
    *out = (uint64_t)v;
    return 0;
}

static int parse_value(const opt_def *o, const char *s, train_params *p)
{
    void *dst = (char *)p + o->off;
    switch (o->kind) {
    case OPT_STR:
        if (!s || !*s)
            return bad_value(o->name, s, "a path or name");
        *(const char **)dst = s;
        return 0;
    case OPT_INT:
        return cli_parse_int(o->name, s, (long)o->lo, (long)o->hi, dst);
    case OPT_FLOAT:
        return parse_float(o, s, dst);
    case OPT_WARMUP:
        return parse_warmup(s, p);
    case OPT_U64:
        return parse_u64(o->name, s, dst);
    case OPT_FLAG:
        break;
    }
    return 0;
}

/* Fills p from argv; returns 0, or 2 after printing a usage error (1 for --help, after
 * printing the help). */
static int parse_args(int argc, char **argv, train_params *p, int *quiet)
{
    int given = 0, vocab_opts = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            usage(stdout);
            return 1;
        }
        if (!strcmp(a, "--quiet")) {
            *quiet = 1;
            continue;
        }
        const opt_def *o = NULL;
        for (int k = 0; k < N_OPTS && !o; k++)
            if (!strcmp(a, opts[k].name))
                o = &opts[k];
        if (!o) {
            fprintf(stderr, "parley: train: unknown option '%s' (parley train --help)\n", a);
            return 2;
        }
        if (o->kind == OPT_FLAG) {
            *(int *)((char *)p + o->off) = 1;
            continue;
        }
        if (parse_value(o, i + 1 < argc ? argv[i + 1] : NULL, p) != 0)
            return 2;
        i++;
        given |= o->group;
        vocab_opts += (o->group & G_VOCAB) != 0;
    }
    const char *clash = NULL;
    if (!p->data || !p->out)
        clash = "--data and --out are required";
    else if (p->resume && (given & G_SETTING))
        clash = "--resume continues with the stopped run's own settings: give only --data, --dev, --out, "
                "--threads, --device, --quiet";
    else if (p->init && (given & (G_SHAPE | G_VOCAB)))
        clash = "--init brings its own shape and vocabulary: drop the shape and vocabulary options";
    else if (vocab_opts > 1)
        clash = "give --vocab or --vocab-size, not both";
    else if (p->hidden % p->heads)
        clash = "--hidden must be a multiple of --heads";
    if (clash) {
        fprintf(stderr, "parley: train: %s\n", clash);
        return 2;
    }
    return 0;
}

/* ---- progress -------------------------------------------------------------------------- */

typedef struct view {
    int quiet, tty;
    double last_draw;       /* when the live line was last drawn (monotonic seconds) */
    int line_open;          /* a \r line is on screen without its newline */
} view;

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
    signal(SIGINT, SIG_DFL); /* a second Ctrl-C ends the process at once */
}

static const char *duration(double s, char *buf, size_t cap)
{
    long t = s > 0 && s < 1e9 ? lround(s) : 0;
    if (t >= 3600)
        snprintf(buf, cap, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        snprintf(buf, cap, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, cap, "%.1fs", s > 0 ? s : 0.0);
    return buf;
}

static void end_line(view *v)
{
    if (v->line_open) {
        fputs("\r\033[K", stderr);
        v->line_open = 0;
    }
}

static void print_start(const train_progress *pr)
{
    const bert_config *c = pr->config;
    fprintf(stderr, "train: %d examples", pr->n_train);
    if (pr->n_augmented)
        fprintf(stderr, " (%d of them lookup variants)", pr->n_augmented);
    fprintf(stderr, ", %d intents, %d slot tags", pr->n_intents, pr->n_tags);
    if (pr->n_dev)
        fprintf(stderr, "; dev %d examples", pr->n_dev);
    fprintf(stderr, "\ntrain: model L%d H%d A%d I%d P%d, vocabulary %d%s, %.2fM parameters%s\n", c->layers, c->hidden,
            c->heads, c->intermediate, c->max_positions, pr->vocab_size, pr->vocab_learned ? " (learned)" : "",
            (double)pr->n_params / 1e6, pr->heads_replaced ? ", new heads" : "");
    fprintf(stderr, "train: %d epochs, %ld steps\n", pr->epochs, pr->steps);
    if (pr->n_truncated)
        fprintf(stderr, "train: warning: %d training examples are longer than %d pieces and were cut\n",
                pr->n_truncated, c->max_positions);
    if (pr->step)
        fprintf(stderr, "train: resuming at step %ld\n", pr->step);
}

static int on_progress(const train_progress *pr, void *user_data)
{
    view *v = user_data;
    char eta[32];
    if (v->quiet)
        return interrupted;
    switch (pr->event) {
    case TRAIN_START:
        print_start(pr);
        break;
    case TRAIN_STEP:
        if (v->tty) {
            /* Ten redraws a second at most: the line is for eyes, not logs. */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            double now = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
            if (pr->step == pr->steps || now - v->last_draw >= 0.1) {
                fprintf(stderr, "\r\033[Kepoch %d/%d  step %ld/%ld  loss %.4f  %.0f ex/s  ETA %s", pr->epoch,
                        pr->epochs, pr->step, pr->steps, (double)pr->loss, pr->examples_per_s,
                        duration(pr->eta_s, eta, sizeof eta));
                v->last_draw = now;
                v->line_open = 1;
            }
        } else if (pr->step % LOG_EVERY == 0) {
            fprintf(stderr, "epoch %d/%d step %ld/%ld loss %.4f lr %.3g %.0f ex/s ETA %s\n", pr->epoch, pr->epochs,
                    pr->step, pr->steps, (double)pr->loss, (double)pr->lr, pr->examples_per_s,
                    duration(pr->eta_s, eta, sizeof eta));
        }
        break;
    case TRAIN_EPOCH:
        end_line(v);
        fprintf(stderr, "epoch %d/%d done: loss %.4f", pr->epoch, pr->epochs, (double)pr->loss);
        if (pr->has_dev)
            fprintf(stderr, "  dev intent %.2f%%  slot F1 %.2f%%  sentence %.2f%%", 100 * pr->dev.intent_accuracy,
                    100 * pr->dev.slot_f1, 100 * pr->dev.sentence_accuracy);
        fprintf(stderr, "%s\n", pr->best ? (pr->has_dev ? "  (best, saved)" : "  (saved)") : "");
        break;
    }
    fflush(stderr);
    return interrupted;
}

int cmd_train(int argc, char **argv)
{
    train_params p = train_params_default();
    train_result res;
    view v = { 0 };
    int rc = parse_args(argc, argv, &p, &v.quiet);
    if (rc)
        return rc == 1 ? 0 : rc;
    v.tty = isatty(fileno(stderr));
    p.progress = on_progress;
    p.user_data = &v;
    interrupted = 0;
    signal(SIGINT, on_sigint);
    parley_status st = train_run(&p, &res);
    signal(SIGINT, SIG_DFL);
    end_line(&v);
    if (st != PARLEY_OK)
        return cli_fail("train", st);
    char wall[32];
    if (res.stopped) {
        printf("stopped at step %ld (epoch %d done) after %s; continue with: parley train --resume --data %s%s%s "
               "--out %s\n",
               res.steps_done, res.epochs_done, duration(res.wall_s, wall, sizeof wall), p.data, p.dev ? " --dev " : "",
               p.dev ? p.dev : "", p.out);
        return EXIT_STOPPED;
    }
    printf("trained in %s, %.0f examples/s; model in %s (epoch %d)", duration(res.wall_s, wall, sizeof wall),
           res.examples_per_s, p.out, res.best_epoch);
    if (res.has_dev)
        printf("; best dev: intent %.2f%%, slot F1 %.2f%%, sentence %.2f%%", 100 * res.best.intent_accuracy,
               100 * res.best.slot_f1, 100 * res.best.sentence_accuracy);
    printf("\n");
    return 0;
}
