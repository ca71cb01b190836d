/* cmd_init.c — `parley init [DIR]`: a starter bot in a folder, its model trained at once.
 *
 * Writes the files of samples/starter/ (carried inside the tool: nlu.yaml, domain.yaml,
 * pipeline.yaml, a README and conversation tests) into DIR, never over a file that is
 * there, then trains the model the pipeline names (DIR/models/nlu) with a shape small
 * enough to take seconds, so `parley chat DIR/pipeline.yaml` answers right away. The
 * training is parley_train_run's; this file writes files and prints what to do next.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdk/cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: parley init [DIR] [--no-train]\n"
               "\n"
               "Creates a starter bot (a coffee-shop order) in DIR (default: the current folder):\n"
               "  nlu.yaml       training examples: intents and slots\n"
               "  domain.yaml    slots, replies, the order form, rules\n"
               "  pipeline.yaml  the graph: text in, model, dialog, replies out\n"
               "  README.md      what each file does and how to change the bot\n"
               "  tests/         conversation tests for `parley test`\n"
               "and trains its model into DIR/models/nlu (seconds). Files already there, and\n"
               "a model folder there, are never overwritten: init stops before writing anything.\n"
               "  --no-train  write the files only (train later with parley train)\n");
}

/* Makes `path` and its missing parents (mode 0777 less the umask); 0 or -1 with errno. */
static int make_dirs(char *path)
{
    for (char *s = path + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        int r = mkdir(path, 0777);
        *s = '/';
        if (r != 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(path, 0777) == 0 || errno == EEXIST ? 0 : -1;
}

/* DIR/name in buf. */
static const char *join(const char *dir, const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", dir, name);
    return buf;
}

/* Writes every starter file; returns 0, or 1 after printing why not. With `model`, the
 * model folder init trains into must not be there either: init replaces nothing it did
 * not create. */
static int write_files(const char *dir, int model)
{
    char path[4096];
    struct stat sb;
    if (model && lstat(join(dir, "models/nlu", path, sizeof path), &sb) == 0) {
        fprintf(stderr,
                "parley init: %s is there already; init trains its model there and replaces "
                "nothing it did not create: choose a new folder, or move that model away "
                "(or init --no-train, then parley train)\n",
                path);
        return 1;
    }
    for (const cli_file *f = cli_starter_files; f->name; f++)
        if (access(join(dir, f->name, path, sizeof path), F_OK) == 0) {
            fprintf(stderr,
                    "parley init: %s is there already; init writes nothing over a file: "
                    "choose a new folder\n",
                    path);
            return 1;
        }
    for (const cli_file *f = cli_starter_files; f->name; f++) {
        join(dir, f->name, path, sizeof path);
        char *slash = strrchr(path, '/');
        *slash = '\0';
        int r = make_dirs(path);
        *slash = '/';
        FILE *out = r == 0 ? fopen(path, "wx") : NULL;
        int ok = out && fputs(f->text, out) >= 0;
        if (out && fclose(out) != 0)
            ok = 0;
        if (!ok) {
            fprintf(stderr, "parley init: %s: %s\n", path, strerror(errno));
            return 1;
        }
    }
    return 0;
}

/* Trains DIR/models/nlu from DIR/nlu.yaml with the defaults, as `parley train` would: sized
 * to the starter's 63 examples, a small model that trains in seconds. */
static int train(const char *dir)
{
    char data[4096], out[4096];
    parley_train_params p = parley_train_params_default();
    p.data = join(dir, "nlu.yaml", data, sizeof data);
    p.out = join(dir, "models/nlu", out, sizeof out);
    p.device = "cpu";
    parley_train_result res;
    printf("training the model...\n");
    fflush(stdout);
    parley_status st = parley_train_run(&p, &res);
    if (st != PARLEY_OK)
        return cli_fail("init", st);
    printf("model trained in %.1f s: %s\n", res.wall_s, p.out);
    return 0;
}

int cmd_init(int argc, char **argv)
{
    const char *dir = NULL;
    int no_train = 0;
    for (int i = 1; i < argc; i++) {
        static const char *const names[] = { "--no-train", "--help", NULL };
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--no-train")) {
            no_train = 1;
        } else if (argv[i][0] != '-' && !dir) {
            dir = argv[i];
        } else if (argv[i][0] != '-') {
            fprintf(stderr, "parley init: one folder at a time ('%s' and '%s')\n", dir, argv[i]);
            return 2;
        } else {
            return cli_unknown_option("init", argv[i], names);
        }
    }
    if (!dir)
        dir = ".";
    if (write_files(dir, !no_train))
        return 1;
    printf("wrote a starter bot in %s: nlu.yaml, domain.yaml, pipeline.yaml, voice.yaml, web/, "
           "README.md, tests/\n",
           dir);
    if (!no_train && train(dir))
        return 1;
    printf("\nnext:\n"
           "  parley chat %s/pipeline.yaml      talk to it (/help in the chat)\n"
           "  cd %s && parley test               run its conversation tests\n"
           "  parley check %s/pipeline.yaml     check the files together after a change\n"
           "  parley train --data %s/nlu.yaml --out %s/models/nlu   retrain after editing "
           "nlu.yaml\n"
           "  cd %s && parley run voice.yaml     by voice and text in a browser: "
           "http://localhost:8765/\n",
           dir, dir, dir, dir, dir, dir);
    return 0;
}
