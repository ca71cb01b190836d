/* train_cli.c — option parsing and the progress view shared by `parley train` and
 * `parley pretrain` (see train_cli.h). The commands own their tables, their help and
 * the checks between options; this file owns how a value is read and how progress looks.
 */
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sdk/cli/cli.h"
#include "sdk/cli/train_cli.h"

enum { LOG_EVERY = 50 }; /* steps between log lines when stderr is not a terminal */

/* ---- options --------------------------------------------------------------------------- */

#define P(f) offsetof(parley_train_params, f)
static const opt_def common[] = {
    { "--out", OPT_STR, P(out), 0, 0, 0, G_ALWAYS },
    { "--init", OPT_STR, P(init), 0, 0, 0, G_SETTING },
    { "--layers", OPT_INT, P(shape.layers), 0, 1, 64, G_SHAPE | G_SETTING },
    { "--hidden", OPT_INT, P(shape.hidden), 0, 1, 16384, G_SHAPE | G_SETTING },
    { "--heads", OPT_INT, P(shape.heads), 0, 1, 256, G_SHAPE | G_SETTING },
    { "--intermediate", OPT_INT, P(shape.intermediate), 0, 1, 65536, G_SHAPE | G_SETTING },
    { "--max-positions", OPT_INT, P(shape.max_positions), 0, 3, 8192, G_SHAPE | G_SETTING },
    { "--vocab", OPT_STR, P(vocab), 0, 0, 0, G_VOCAB | G_SETTING },
    { "--vocab-size", OPT_INT, P(vocab_size), 0, 6, 1 << 20, G_VOCAB | G_SETTING },
    { "--epochs", OPT_INT, P(epochs), 0, 1, 100000, G_SETTING },
    { "--batch", OPT_INT, P(batch), 0, 1, 65536, G_SETTING },
    { "--lr", OPT_FLOAT, P(lr), 0, 1e-9, 10, G_SETTING },
    { "--warmup", OPT_WARMUP, P(warmup_fraction), P(warmup_steps), 0, 0, G_SETTING },
    { "--weight-decay", OPT_FLOAT, P(weight_decay), 0, 0, 10, G_SETTING },
    { "--dropout", OPT_FLOAT, P(dropout), 0, 0, 0.99, G_SETTING },
    { "--clip", OPT_FLOAT, P(clip), 0, 0, 1e9, G_SETTING },
    { "--seed", OPT_U64, P(seed), 0, 0, 0, G_SETTING },
    { "--threads", OPT_INT, P(threads), 0, 0, 1024, G_ALWAYS },
    { "--device", OPT_STR, P(device), 0, 0, 0, G_ALWAYS },
    { "--precision", OPT_STR, P(precision), 0, 0, 0, G_ALWAYS },
};
#undef P
enum { N_COMMON = sizeof common / sizeof common[0] };

/* A default as help shows it: v, or "sized to the data" for PARLEY_AUTO. */
static const char *sized(char *buf, size_t cap, double v)
{
    if (v == PARLEY_AUTO)
        return "sized to the data";
    snprintf(buf, cap, "%g", v);
    return buf;
}

void cli_train_common_help(FILE *f, const parley_train_params *d, const char *init_note,
                           float lr_init)
{
    char ep[32], ba[32], lr[32], wd[32], sh[4][32];
    /* Training sizes the rate with the rest (epochs PARLEY_AUTO); pretraining has a fixed one. */
    const double lr_new = d->epochs > 0 ? parley_train_default_lr(0) : PARLEY_AUTO;
    fprintf(f,
            "model:\n"
            "  --out DIR            model directory to write (required)\n"
            "  --init DIR           start from this model (its vocabulary and shape); %s\n"
            "  --layers N           new model: encoder layers (default %s)\n"
            "  --hidden N           new model: hidden size (default %s)\n"
            "  --heads N            new model: attention heads (default %s)\n"
            "  --intermediate N     new model: feed-forward size (default %s)\n"
            "  --max-positions N    new model: longest input in pieces (default %d)\n"
            "  --vocab FILE         new model: use this vocab.txt ...\n"
            "  --vocab-size N       ... or learn a WordPiece vocabulary of at most N tokens from\n"
            "                       the training text (default %d)\n"
            "training:\n"
            "  --epochs N           passes over the data (default %s)\n"
            "  --batch N            examples per step (default %s)\n"
            "  --lr X               peak learning rate (default %s, or %g with --init)\n"
            "  --warmup X           linear warmup: a fraction of all steps if X has a '.', else a\n"
            "                       number of steps (default %g); then linear decay to 0\n"
            "  --weight-decay X     AdamW weight decay, not on biases and LayerNorm (default %s)\n"
            "  --dropout X          dropout probability (default %g)\n"
            "  --clip X             clip gradients to this global norm; 0 = off (default %g)\n"
            "  --seed N             seed of the initialization, shuffling and dropout (default "
            "%llu)\n"
            "  --threads N          CPU threads (default: all cores); results are reproducible\n"
            "                       for a given seed and thread count\n"
            "  --device D           cpu (default), cuda, cuda:N, or auto (a GPU when one is "
            "usable,\n"
            "                       else the CPU)\n"
            "  --precision P        on a GPU: bf16 (default; BF16 GEMMs, FP32 weights and sums)\n"
            "                       or fp32 (to compare with the CPU)\n"
            "  --quiet              no progress on stderr; the summary is still printed\n",
            init_note, sized(sh[0], sizeof sh[0], d->shape.layers),
            sized(sh[1], sizeof sh[1], d->shape.hidden), sized(sh[2], sizeof sh[2], d->shape.heads),
            sized(sh[3], sizeof sh[3], d->shape.intermediate), d->shape.max_positions,
            d->vocab_size, sized(ep, sizeof ep, d->epochs), sized(ba, sizeof ba, d->batch),
            sized(lr, sizeof lr, lr_new), (double)lr_init, (double)d->warmup_fraction,
            sized(wd, sizeof wd, d->weight_decay), (double)d->dropout, (double)d->clip,
            (unsigned long long)d->seed);
}

int cli_usage_error(const opt_parse *o, const char *what)
{
    fprintf(stderr, "parley %s: %s\n", o->cmd, what);
    return 2;
}

static int bad_value(const opt_parse *o, const char *opt, const char *s, const char *want)
{
    fprintf(stderr, "parley %s: %s wants %s, got '%s'\n", o->cmd, opt, want, s ? s : "");
    return -1;
}

static int parse_float(const opt_parse *o, const char *opt, double lo, double hi, const char *s,
                       float *out)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || errno || end == s || *end || !(v >= lo && v <= hi)) {
        char want[64];
        snprintf(want, sizeof want, "a number in [%g, %g]", lo, hi);
        return bad_value(o, opt, s, want);
    }
    *out = (float)v;
    return 0;
}

/* "0.1" is a fraction of all steps, "100" a step count. */
static int parse_warmup(const opt_parse *o, const opt_def *d, const char *s, char *base)
{
    long *steps = (long *)(base + d->off2);
    if (s && strchr(s, '.')) {
        *steps = -1;
        return parse_float(o, d->name, 0, 1, s, (float *)(base + d->off));
    }
    int n;
    if (cli_parse_int(d->name, s, 0, 1L << 30, &n) != 0)
        return -1;
    *steps = n;
    return 0;
}

static int parse_u64(const opt_parse *o, const char *opt, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = s && *s != '-' ? strtoull(s, &end, 10) : 0;
    if (!s || *s == '-' || errno || end == s || *end)
        return bad_value(o, opt, s, "a non-negative integer");
    *out = (uint64_t)v;
    return 0;
}

/* Reads the value of d from argv[*i + 1] (and on, for a list); advances *i past it. */
static int parse_value(const opt_parse *o, const opt_def *d, int argc, char **argv, int *i,
                       char *base)
{
    const char *s = *i + 1 < argc ? argv[*i + 1] : NULL;
    void *dst = base + d->off;
    (*i)++;
    switch (d->kind) {
    case OPT_STR:
        if (!s || !*s)
            return bad_value(o, d->name, s, "a path or name");
        *(const char **)dst = s;
        return 0;
    case OPT_INT: return cli_parse_int(d->name, s, (long)d->lo, (long)d->hi, dst);
    case OPT_FLOAT: return parse_float(o, d->name, d->lo, d->hi, s, dst);
    case OPT_WARMUP: return parse_warmup(o, d, s, base);
    case OPT_U64: return parse_u64(o, d->name, s, dst);
    case OPT_LIST: {
        int n = 0;
        while (*i + n < argc && strncmp(argv[*i + n], "--", 2) != 0)
            n++;
        if (!n)
            return bad_value(o, d->name, s, "one or more paths");
        *(const char *const **)dst = (const char *const *)&argv[*i];
        *(int *)(base + d->off2) = n;
        *i += n - 1;
        return 0;
    }
    case OPT_FLAG:
        (*i)--;
        *(int *)dst = 1;
        return 0;
    case OPT_MARK: (*i)--; return 0;
    case OPT_SWITCH:
        if (!s || (strcmp(s, "on") && strcmp(s, "off")))
            return bad_value(o, d->name, s, "on or off");
        *(parley_switch *)dst = !strcmp(s, "on") ? PARLEY_SWITCH_ON : PARLEY_SWITCH_OFF;
        return 0;
    }
    return 0;
}

int cli_parse_opts(opt_parse *o, const opt_def *opts, int n, int argc, char **argv, void *params)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            o->usage(stdout);
            return 1;
        }
        if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
            continue;
        }
        const opt_def *d = NULL;
        for (int k = 0; k < n && !d; k++)
            if (!strcmp(a, opts[k].name))
                d = &opts[k];
        for (int k = 0; k < N_COMMON && !d; k++)
            if (!strcmp(a, common[k].name))
                d = &common[k];
        if (!d) {
            const char *names[64];
            int k = 0;
            for (int j = 0; j < n && k < 60; j++)
                names[k++] = opts[j].name;
            for (int j = 0; j < N_COMMON && k < 60; j++)
                names[k++] = common[j].name;
            names[k++] = "--quiet";
            names[k++] = "--help";
            names[k] = NULL;
            return cli_unknown_option(o->cmd, a, names);
        }
        if (parse_value(o, d, argc, argv, &i, params) != 0)
            return 2;
        o->given |= d->group;
        o->vocab_opts += (d->group & G_VOCAB) != 0;
    }
    return 0;
}

/* ---- progress -------------------------------------------------------------------------- */

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
    signal(SIGINT, SIG_DFL); /* a second Ctrl-C ends the process at once */
}

void cli_train_signals(int on)
{
    interrupted = 0;
    signal(SIGINT, on ? on_sigint : SIG_DFL);
}

const char *cli_duration(double s, char *buf, size_t cap)
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

void cli_train_end_line(train_view *v)
{
    if (v->line_open) {
        fputs("\r\033[K", stderr);
        v->line_open = 0;
    }
}

int cli_train_progress(const parley_train_progress *pr, void *user_data)
{
    train_view *v = user_data;
    char eta[32];
    if (v->quiet)
        return interrupted;
    const char *epoch = pr->pretraining ? "pretraining epoch" : "epoch";
    switch (pr->event) {
    case PARLEY_TRAIN_START:
        if (pr->pretraining)
            fprintf(stderr,
                    "train: pretraining on the training text first (masked LM): %d lines, %d "
                    "held out, %d epochs, %ld steps\n",
                    pr->n_train + pr->n_dev, pr->n_dev, pr->epochs, pr->steps);
        else
            v->start(pr);
        break;
    case PARLEY_TRAIN_STEP:
        if (v->tty) {
            /* Ten redraws a second at most: the line is for eyes, not logs. */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            double now = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
            if (pr->step == pr->steps || now - v->last_draw >= 0.1) {
                fprintf(stderr, "\r\033[K%s %d/%d  step %ld/%ld  loss %.4f  %.0f ex/s  ETA %s",
                        epoch, pr->epoch, pr->epochs, pr->step, pr->steps, (double)pr->loss,
                        pr->examples_per_s, cli_duration(pr->eta_s, eta, sizeof eta));
                v->last_draw = now;
                v->line_open = 1;
            }
        } else if (pr->step % LOG_EVERY == 0) {
            fprintf(stderr, "%s %d/%d step %ld/%ld loss %.4f lr %.3g %.0f ex/s ETA %s\n", epoch,
                    pr->epoch, pr->epochs, pr->step, pr->steps, (double)pr->loss, (double)pr->lr,
                    pr->examples_per_s, cli_duration(pr->eta_s, eta, sizeof eta));
        }
        break;
    case PARLEY_TRAIN_EPOCH:
        cli_train_end_line(v);
        fprintf(stderr, "%s %d/%d done: loss %.4f", epoch, pr->epoch, pr->epochs, (double)pr->loss);
        if (pr->has_dev)
            fprintf(stderr, "  dev intent %.2f%%  slot F1 %.2f%%  sentence %.2f%%",
                    100 * pr->dev.intent_accuracy, 100 * pr->dev.slot_f1,
                    100 * pr->dev.sentence_accuracy);
        if (pr->has_mlm)
            fprintf(stderr, "  held-out masked-LM loss %.4f  accuracy %.2f%%", pr->mlm_loss,
                    100 * pr->mlm_accuracy);
        fprintf(stderr, "%s\n", pr->best ? (pr->has_dev ? "  (best, saved)" : "  (saved)") : "");
        break;
    }
    fflush(stderr);
    return interrupted;
}
