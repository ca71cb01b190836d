/* cmd_check.c — `parley check PIPELINE.yaml`: a bot's files checked together.
 *
 * Checks the graph, then every file it names — each model (nlu.bert's `model`), each domain
 * (dialog.frames' `domain`, against the labels of the model its node is linked to) — and
 * the training examples (--data, or the nlu.yaml beside the graph, or the data the model's
 * training.json names), and lists every problem found, not only the first: one error
 * per file that fails, with FILE:LINE:COL, and warnings about what would make the bot
 * weak: intents the domain uses with few examples, an example under two intents, a slot no
 * example fills, a lookup table's value an example holds unmarked, a model older than its
 * examples, a response that says a slot that can be unset where it is said. The checks themselves
 * are the library's (parley_pipeline_check, the dialog manager's dm_open, parley_data_read); this
 * file reads the graph's and domain's YAML only to find the files and the names to compare.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dialog/dialog.h"
#include "sdk/base/yaml_doc.h"
#include "sdk/cli/cli.h"

enum { MIN_EXAMPLES = 5 }; /* fewer examples of an intent than this earn a warning */

typedef struct check {
    const char *graph;
    char dir[4096]; /* the graph's folder: relative paths start there */
    const char *data;
    int errors, warnings;
} check;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: parley check PIPELINE.yaml [--data NLU.yaml]\n"
            "\n"
            "Checks a bot's files together and lists every problem at once: the graph, each\n"
            "model it names, each domain (against the model its dialog is linked to) and the\n"
            "training examples (--data, else the nlu.yaml beside the graph, else the file the\n"
            "model was trained from). Warnings: an intent the domain uses with fewer than %d\n"
            "examples, an example under two intents, a slot no example fills, a value of a\n"
            "lookup table that an example holds without marking it, a model older than its\n"
            "examples, a response that says a slot that can be unset where it is said (add\n"
            "a variation with condition [{type: slot, name: SLOT, value: null}] before it).\n"
            "Exit code 0 with no errors (warnings allowed), 1 otherwise.\n",
            MIN_EXAMPLES);
}

static void error(check *c, const char *what)
{
    printf("error: %s\n", what);
    c->errors++;
}

static void warning(check *c, const char *fmt, const char *a, const char *b, const char *d)
{
    printf("warning: ");
    printf(fmt, a, b, d);
    printf("\n");
    c->warnings++;
}

/* path relative to the graph's folder, in buf ("" when it does not fit: opening it then
 * fails, naming nothing worse than an empty path). */
static const char *resolve(const check *c, const char *path, char *buf, size_t cap)
{
    int n = path[0] == '/' ? snprintf(buf, cap, "%s", path)
                           : snprintf(buf, cap, "%s/%s", c->dir, path);
    if (n < 0 || (size_t)n >= cap)
        buf[0] = '\0';
    return buf;
}

/* A node's param as written in the graph, or NULL. */
static const char *param(const yd_node *node, const char *name)
{
    const yd_node *v = yd_get(yd_get(node, "params"), name);
    return v && v->kind == YD_SCALAR ? v->str : NULL;
}

/* The node named `name` in the graph's node list, or NULL. */
static const yd_node *node_named(const yd_node *nodes, const char *name, size_t len)
{
    for (size_t i = 0; i < nodes->n; i++) {
        const yd_node *n = yd_get(nodes->items[i], "name");
        if (n && n->kind == YD_SCALAR && strlen(n->str) == len && !strncmp(n->str, name, len))
            return nodes->items[i];
    }
    return NULL;
}

/* The model of the nlu.bert node that feeds the dialog node's `nlu` input, or NULL. */
static const char *linked_model(const yd_node *nodes, const yd_node *dialog)
{
    const yd_node *in = yd_get(yd_get(dialog, "inputs"), "nlu");
    if (!in || in->kind != YD_SCALAR || !strchr(in->str, '.'))
        return NULL;
    const yd_node *src = node_named(nodes, in->str, (size_t)(strchr(in->str, '.') - in->str));
    return src ? param(src, "model") : NULL;
}

/* The model's labels, or NULL after reporting why not. */
static parley_nlu_labels *check_model(check *c, const char *model)
{
    char path[4096], data[4096];
    parley_nlu_labels *labels = NULL;
    resolve(c, model, path, sizeof path);
    if (parley_nlu_labels_read(path, &labels) != PARLEY_OK) {
        error(c, parley_errmsg());
        if (!c->data && access(resolve(c, "nlu.yaml", data, sizeof data), F_OK) != 0)
            snprintf(data, sizeof data, "nlu.yaml");
        printf("  (no model in %s yet? train it first: parley train --data %s --out %s)\n", path,
               c->data ? c->data : data, path);
        return NULL;
    }
    return labels;
}

/* A dm_warnings callback: the domain's warning, counted. */
static void domain_warning(void *ctx, const char *message)
{
    warning(ctx, "%s%s%s", message, "", "");
}

/* The count of a domain's problems, and the check they are counted in. */
typedef struct domain_errors {
    check *c;
    int n;
} domain_errors;

/* A dm_params.on_problem callback: one problem of the domain, counted. */
static void domain_error(void *ctx, const char *message)
{
    domain_errors *e = ctx;
    error(e->c, message);
    e->n++;
}

/* Opens the domain as the dialog node would, on a store in a fresh temporary folder. */
static void check_domain(check *c, const char *domain, const parley_nlu_labels *labels)
{
    char path[4096], tmp[] = "/tmp/parley-check-XXXXXX", store[4200];
    if (!mkdtemp(tmp)) {
        error(c, "cannot make a temporary folder for the domain's store");
        return;
    }
    snprintf(store, sizeof store, "%s/check.db", tmp);
    dm_params p = { .domain_path = resolve(c, domain, path, sizeof path),
                    .store_path = store,
                    .known_intents = labels ? labels->intents : NULL,
                    .n_known_intents = labels ? (size_t)labels->n_intents : 0,
                    .known_slots = labels ? labels->entities : NULL,
                    .n_known_slots = labels ? (size_t)labels->n_entities : 0,
                    .on_problem = domain_error };
    domain_errors errors = { c, 0 };
    p.problem_ctx = &errors;
    dm_manager *dm = NULL;
    if (dm_open(&p, &dm) != PARLEY_OK) {
        if (!errors.n) /* the domain's are listed: this is the store's */
            error(c, parley_errmsg());
    } else if (dm_warnings(dm, domain_warning, c) != PARLEY_OK)
        error(c, parley_errmsg());
    dm_close(dm);
    static const char *const ends[] = { "", "-wal", "-shm" };
    for (size_t e = 0; e < 3; e++) {
        char f[4300];
        snprintf(f, sizeof f, "%s%s", store, ends[e]);
        unlink(f);
    }
    rmdir(tmp);
}

/* How many examples have `intent`. */
static int count_intent(const parley_data *d, const char *intent)
{
    int n = 0;
    for (int i = 0; i < d->n_examples; i++)
        n += !strcmp(d->examples[i].intent, intent);
    return n;
}

/* Whether some example marks a value of `slot`. */
static int slot_filled(const parley_data *d, const char *slot)
{
    for (int i = 0; i < d->n_examples; i++)
        for (int s = 0; s < d->examples[i].n_slots; s++)
            if (!strcmp(d->examples[i].slots[s], slot))
                return 1;
    return 0;
}

/* The warnings about the examples against the domain (its YAML, when it parsed). */
static void warn_data(check *c, const parley_data *d, const char *data, const yd_node *domain)
{
    char where[4200];
    const yd_node *intents = yd_get(domain, "intents"), *slots = yd_get(domain, "slots");
    for (size_t i = 0; intents && intents->kind == YD_SEQ && i < intents->n; i++) {
        const yd_node *v = intents->items[i];
        int n = v->kind == YD_SCALAR ? count_intent(d, v->str) : MIN_EXAMPLES;
        char count[32];
        snprintf(count, sizeof count, "%d", n);
        snprintf(where, sizeof where, "%s:%d:%d", v->file, v->line, v->col);
        if (n < MIN_EXAMPLES)
            warning(c,
                    "%s: intent '%s' has %s example(s) in the training data: give it at "
                    "least 5 so the model learns it",
                    where, v->str, count);
    }
    for (size_t i = 0; slots && slots->kind == YD_MAP && i < slots->n; i++) {
        const yd_node *s = slots->items[i], *by = yd_get(s, "filled_by"),
                      *ent = yd_get(s, "entity");
        if (by && by->kind == YD_SCALAR && !strcmp(by->str, "action"))
            continue;
        const char *entity = ent && ent->kind == YD_SCALAR ? ent->str : slots->keys[i]->str;
        snprintf(where, sizeof where, "%s:%d:%d", slots->keys[i]->file, slots->keys[i]->line,
                 slots->keys[i]->col);
        if (!slot_filled(d, entity))
            warning(c,
                    "%s: slot '%s': no example in %s marks a value of it, so the model never "
                    "fills it",
                    where, entity, data);
    }
    for (int i = 0; i < d->n_examples; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(d->examples[i].text, d->examples[j].text) &&
                strcmp(d->examples[i].intent, d->examples[j].intent)) {
                snprintf(where, sizeof where, "%s: '%s' is an example of", data,
                         d->examples[i].text);
                warning(c, "%s both '%s' and '%s': the model cannot learn both", where,
                        d->examples[j].intent, d->examples[i].intent);
                break;
            }
    for (int i = 0; i < d->n_unmarked; i++) {
        const parley_data_unmarked *u = &d->unmarked[i];
        snprintf(where, sizeof where, "%s: '%s' (%s)", data, d->examples[u->example].text,
                 d->examples[u->example].intent);
        warning(c,
                "%s holds '%s', a value of the lookup table '%s', without marking it: the "
                "model learns it as no slot there (mark it, or reword the example)",
                where, u->value, u->table);
    }
}

/* Warns when the model's weights are older than the examples, with the command that trains
 * it from them as it was made (its training.json's options), or the plain one when it has
 * no record. */
static void warn_age(check *c, const char *model, const char *data)
{
    char path[4096], weights[4200], cmd[16384];
    struct stat ms, ds;
    snprintf(weights, sizeof weights, "%s/model.safetensors", resolve(c, model, path, sizeof path));
    if (stat(weights, &ms) != 0 || stat(data, &ds) != 0 || ms.st_mtime >= ds.st_mtime)
        return;
    if (parley_train_record_command(path, data, cmd, sizeof cmd) != PARLEY_OK)
        snprintf(cmd, sizeof cmd, "parley train --data %s --out %s", data, path);
    warning(c, "the model in %s is older than %s: retrain it: %s", path, data, cmd);
}

/* The training data to check: --data, the nlu.yaml beside the graph, or the data the model
 * was trained from (its training.json). */
static const char *find_data(const check *c, const char *model, char *buf, size_t cap)
{
    char path[4096];
    if (c->data)
        return c->data;
    if (access(resolve(c, "nlu.yaml", buf, cap), F_OK) == 0)
        return buf;
    if (model &&
        parley_train_record_data(resolve(c, model, path, sizeof path), buf, cap) == PARLEY_OK)
        return buf;
    return NULL;
}

/* Checks every model and domain of the graph and the training data. */
static void check_files(check *c, const yd_node *nodes)
{
    const char *model = NULL, *domain_file = NULL;
    for (size_t i = 0; nodes && nodes->kind == YD_SEQ && i < nodes->n; i++) {
        const yd_node *nd = nodes->items[i], *k = yd_get(nd, "kind");
        if (!k || k->kind != YD_SCALAR)
            continue;
        if (!strcmp(k->str, "nlu.bert") && param(nd, "model")) {
            model = param(nd, "model");
            parley_nlu_labels_free(check_model(c, model));
        } else if (!strcmp(k->str, "dialog.frames") && param(nd, "domain")) {
            const char *m = param(nd, "model") ? param(nd, "model") : linked_model(nodes, nd);
            parley_nlu_labels *labels = NULL;
            if (m) {
                char path[4096];
                parley_nlu_labels_read(resolve(c, m, path, sizeof path), &labels);
            }
            domain_file = param(nd, "domain");
            check_domain(c, domain_file, labels);
            parley_nlu_labels_free(labels);
        }
    }
    char data_buf[4096], path[4096];
    const char *data = find_data(c, model, data_buf, sizeof data_buf);
    parley_data *d = NULL;
    if (!data) {
        printf("note: no training data found to check (give --data NLU.yaml)\n");
        return;
    }
    if (parley_data_read(data, &d) != PARLEY_OK) {
        error(c, parley_errmsg());
        return;
    }
    yd_doc *dom = NULL;
    if (domain_file && yd_parse_file(resolve(c, domain_file, path, sizeof path), &dom) == PARLEY_OK)
        warn_data(c, d, data, yd_root(dom));
    if (model)
        warn_age(c, model, data);
    yd_free(dom);
    parley_data_free(d);
}

int cmd_check(int argc, char **argv)
{
    check c = { 0 };
    for (int i = 1; i < argc; i++) {
        static const char *const names[] = { "--data", "--help", NULL };
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--data") && i + 1 < argc) {
            c.data = argv[++i];
        } else if (argv[i][0] != '-' && !c.graph) {
            c.graph = argv[i];
        } else {
            return cli_unknown_option("check", argv[i], names);
        }
    }
    if (!c.graph) {
        usage(stderr);
        return 2;
    }
    const char *slash = strrchr(c.graph, '/');
    snprintf(c.dir, sizeof c.dir, "%.*s", slash ? (int)(slash - c.graph) : 1,
             slash ? c.graph : ".");
    if (parley_pipeline_check(c.graph) != PARLEY_OK)
        error(&c, parley_errmsg());
    yd_doc *doc = NULL;
    if (yd_parse_file(c.graph, &doc) == PARLEY_OK)
        check_files(&c, yd_get(yd_root(doc), "nodes"));
    yd_free(doc);
    printf("%s: %d error(s), %d warning(s)\n", c.graph, c.errors, c.warnings);
    return c.errors ? 1 : 0;
}
