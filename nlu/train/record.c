/* record.c — OUT/training.json, the record of how a model was made (record.h), and the
 * public calls that read it (parley_train_record_compare, parley_train_record_data,
 * parley_train_record_command).
 *
 *   {"format": "parley-training-record", "version": 1, "parley_version": "0.x",
 *    "data": {"path": "nlu.yaml", "realpath": "/abs/nlu.yaml", "fnv1a64": "hex"},
 *    "dev": null or the same, "examples": written examples (lookup variants not counted),
 *    "init": null or the same of the model it started from (given, or the default encoder),
 *    "background": null or the same of the background sentences it could add
 *                  (background.h: added where the encoder reads the intent),
 *    "options": {"layers", ..., "seed", "init", "builtin", "sparse", "intent_encoder":
 *                as given ("" when left to the data)},   every setting that changes the weights
 *    "run": {"device", "precision", "threads", "wall_s", "best_epoch"},
 *    "epochs": [{"epoch", "loss", "dev": {"intent_accuracy", "slot_f1",
 *                "sentence_accuracy"}}]}
 *
 * The checksum is FNV-1a over the data's bytes (a JointBERT folder: seq.in, seq.out, label;
 * a model folder: config.json, model.safetensors, vocab.txt): a way to see that the examples
 * or the starting weights changed, not a defence against anyone. Two runs agree when their
 * data, dev and init (absolute path and checksum) and options do; the default encoder counts
 * as init where it was used, or would be now (a model of the recorded examples), so a model
 * made before it was built is not up to date once it is; the same for the background. The device
 * and thread count are recorded but not compared. What to do about a difference is the caller's
 * choice
 * (`parley train`).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "nlu/train/background.h"
#include "nlu/train/encoder.h"
#include "nlu/train/record.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"
#include "sdk/base/json.h"
#include "sdk/base/names.h"
#include "sdk/base/strbuf.h"

enum { RECORD_VERSION = 1, DATA_MAX_BYTES = 1 << 30, RECORD_MAX_BYTES = 1 << 24 };
static const char RECORD_FORMAT[] = "parley-training-record";

struct train_record {
    cJSON *root;   /* the record so far */
    cJSON *epochs; /* its "epochs" array */
};

/* The files of a folder that a checksum covers. */
static const char *const DATA_PARTS[] = { "seq.in", "seq.out", "label" };
static const char *const MODEL_PARTS[] = { "config.json", "model.safetensors", "vocab.txt" };
enum { N_PARTS = 3 };

/* The FNV-1a of path's bytes into *h; a folder's parts (N_PARTS names). */
static parley_status hash_data(const char *path, const char *const *parts, uint64_t *h)
{
    struct stat sb;
    int dir = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
    *h = PL_FNV_SEED;
    for (size_t i = 0; i < (dir ? (size_t)N_PARTS : 1u); i++) {
        char file[PATH_MAX + 16];
        snprintf(file, sizeof file, "%s%s%s", path, dir ? "/" : "", dir ? parts[i] : "");
        char *text;
        size_t len;
        parley_status st = pl_read_file(file, DATA_MAX_BYTES, &text, &len);
        if (st != PARLEY_OK)
            return st;
        *h = pl_fnv(*h, text, len);
        pl_free(text);
    }
    return PARLEY_OK;
}

/* {"path", "realpath", "fnv1a64"} of a data set or model (a folder's parts as hash_data),
 * or JSON null for path NULL. */
static parley_status data_json(const char *path, const char *const *parts, cJSON **out)
{
    *out = NULL;
    if (!path) {
        *out = cJSON_CreateNull();
        return *out ? PARLEY_OK : pl_nomem("the training record");
    }
    uint64_t h;
    char real[PATH_MAX], hex[17];
    parley_status st = hash_data(path, parts, &h);
    if (st != PARLEY_OK)
        return st;
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddStringToObject(o, "path", path) ||
        !cJSON_AddStringToObject(o, "realpath", realpath(path, real) ? real : path) ||
        !cJSON_AddStringToObject(o, "fnv1a64", hex)) {
        cJSON_Delete(o);
        return pl_nomem("the training record");
    }
    *out = o;
    return PARLEY_OK;
}

/* An auto/on/off choice as the record keeps it and `parley train` reads it: "" (auto), "on"
 * or "off". */
static const char *switch_word(parley_switch v)
{
    return v == PARLEY_SWITCH_ON ? "on" : v == PARLEY_SWITCH_OFF ? "off" : "";
}

/* The settings that change the weights, as the record keeps them. */
static cJSON *options_json(const parley_train_params *p)
{
    cJSON *o = cJSON_CreateObject();
    const struct {
        const char *name;
        double v;
    } nums[] = {
        { "layers", p->shape.layers },
        { "hidden", p->shape.hidden },
        { "heads", p->shape.heads },
        { "intermediate", p->shape.intermediate },
        { "max_positions", p->shape.max_positions },
        { "vocab_size", p->vocab_size },
        { "epochs", p->epochs },
        { "batch", p->batch },
        { "augment", p->augment },
        { "background", p->background },
        { "pretrain_epochs", p->pretrain_epochs },
        { "lr", p->lr },
        { "warmup_fraction", p->warmup_fraction },
        { "warmup_steps", (double)p->warmup_steps },
        { "weight_decay", p->weight_decay },
        { "dropout", p->dropout },
        { "word_dropout", p->word_dropout },
        { "slot_weight", p->slot_weight },
        { "clip", p->clip },
        { "seed", (double)p->seed },
    };
    int ok = o && cJSON_AddStringToObject(o, "vocab", p->vocab ? p->vocab : "") &&
             cJSON_AddStringToObject(o, "init", p->init ? p->init : "") &&
             cJSON_AddStringToObject(o, "builtin", switch_word(p->builtin)) &&
             cJSON_AddStringToObject(o, "sparse", switch_word(p->sparse)) &&
             cJSON_AddStringToObject(o, "intent_encoder", switch_word(p->intent_encoder));
    for (size_t i = 0; ok && i < sizeof nums / sizeof nums[0]; i++)
        ok = cJSON_AddNumberToObject(o, nums[i].name, nums[i].v) != NULL;
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Adds item (owned; NULL means out of memory) to o as key; frees it when it cannot. */
static parley_status attach(cJSON *o, const char *key, cJSON *item)
{
    if (item && cJSON_AddItemToObject(o, key, item))
        return PARLEY_OK;
    cJSON_Delete(item);
    return pl_nomem("the training record");
}

/* The part of a record two runs of p on n_examples must share to make the same model. */
static parley_status identity_json(const parley_train_params *p, int n_examples, cJSON **out)
{
    char dir[PATH_MAX], bg_dir[PATH_MAX];
    const char *init = train_start_dir(p, n_examples, dir, sizeof dir),
               *bg = p->background ? train_background_dir(n_examples, bg_dir, sizeof bg_dir) : NULL;
    cJSON *o = cJSON_CreateObject(), *data = NULL, *dev = NULL, *from = NULL, *back = NULL;
    parley_status st = o ? PARLEY_OK : pl_nomem("the training record");
    if (st == PARLEY_OK && (st = data_json(p->data, DATA_PARTS, &data)) == PARLEY_OK &&
        (st = attach(o, "data", data)) == PARLEY_OK &&
        (st = data_json(p->dev, DATA_PARTS, &dev)) == PARLEY_OK &&
        (st = attach(o, "dev", dev)) == PARLEY_OK &&
        (st = attach(o, "examples", cJSON_CreateNumber(n_examples))) == PARLEY_OK &&
        (st = data_json(init, MODEL_PARTS, &from)) == PARLEY_OK &&
        (st = attach(o, "init", from)) == PARLEY_OK &&
        (st = data_json(bg, DATA_PARTS, &back)) == PARLEY_OK &&
        (st = attach(o, "background", back)) == PARLEY_OK)
        st = attach(o, "options", options_json(p));
    if (st != PARLEY_OK) {
        cJSON_Delete(o);
        return st;
    }
    *out = o;
    return PARLEY_OK;
}

parley_status train_record_open(const parley_train_params *p, int n_examples, train_record **out)
{
    *out = NULL;
    train_record *r = pl_calloc(1, sizeof *r);
    if (!r)
        return pl_nomem("the training record");
    parley_status st = identity_json(p, n_examples, &r->root);
    if (st != PARLEY_OK) {
        train_record_free(r);
        return st;
    }
    cJSON *run = NULL;
    int ok = cJSON_AddStringToObject(r->root, "format", RECORD_FORMAT) &&
             cJSON_AddNumberToObject(r->root, "version", RECORD_VERSION) &&
             cJSON_AddStringToObject(r->root, "parley_version", parley_version()) &&
             (run = cJSON_AddObjectToObject(r->root, "run")) &&
             cJSON_AddStringToObject(run, "device", p->device && *p->device ? p->device : "cpu") &&
             cJSON_AddStringToObject(run, "precision", p->precision ? p->precision : "bf16") &&
             cJSON_AddNumberToObject(run, "threads", p->threads) &&
             (r->epochs = cJSON_AddArrayToObject(r->root, "epochs"));
    if (!ok) {
        train_record_free(r);
        return pl_nomem("the training record");
    }
    *out = r;
    return PARLEY_OK;
}

parley_status train_record_recipe(train_record *r, const char *json)
{
    cJSON *o = cJSON_Parse(json);
    if (!o || !cJSON_AddItemToObject(r->root, "recipe", o)) {
        cJSON_Delete(o);
        return pl_nomem("the record's recipe");
    }
    return PARLEY_OK;
}

void train_record_epoch(train_record *r, const parley_train_progress *pr)
{
    cJSON *e = cJSON_CreateObject(), *dev = NULL;
    if (!e || !cJSON_AddItemToArray(r->epochs, e)) {
        cJSON_Delete(e);
        return;
    }
    cJSON_AddNumberToObject(e, "epoch", pr->epoch);
    cJSON_AddNumberToObject(e, "loss", pr->loss);
    if (pr->has_dev && (dev = cJSON_AddObjectToObject(e, "dev"))) {
        cJSON_AddNumberToObject(dev, "intent_accuracy", pr->dev.intent_accuracy);
        cJSON_AddNumberToObject(dev, "slot_f1", pr->dev.slot_f1);
        cJSON_AddNumberToObject(dev, "sentence_accuracy", pr->dev.sentence_accuracy);
    }
}

parley_status train_record_write(train_record *r, const char *dir, const parley_train_result *res)
{
    cJSON *run = cJSON_GetObjectItem(r->root, "run");
    cJSON_AddNumberToObject(run, "wall_s", res->wall_s);
    cJSON_AddNumberToObject(run, "best_epoch", res->best_epoch);
    char *text = cJSON_Print(r->root), path[PATH_MAX + 32];
    if (!text)
        return pl_nomem("the training record");
    snprintf(path, sizeof path, "%s/training.json", dir);
    pl_atomic a;
    parley_status st = pl_atomic_begin(&a, path);
    if (st == PARLEY_OK && (st = pl_atomic_write(&a, text, strlen(text))) == PARLEY_OK &&
        (st = pl_atomic_write(&a, "\n", 1)) == PARLEY_OK)
        st = pl_atomic_commit(&a);
    else if (st != PARLEY_OK)
        pl_atomic_abort(&a);
    cJSON_free(text);
    return st;
}

void train_record_free(train_record *r)
{
    if (!r)
        return;
    cJSON_Delete(r->root);
    pl_free(r);
}

/* Reads DIR/training.json; PARLEY_ERR_NOT_FOUND when there is none. */
static parley_status read_record(const char *dir, cJSON **out)
{
    char path[PATH_MAX + 32], *text;
    size_t len;
    snprintf(path, sizeof path, "%s/training.json", dir);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return pl_fail(PARLEY_ERR_NOT_FOUND, "%s: no training record", path);
    parley_status st = pl_read_file(path, RECORD_MAX_BYTES, &text, &len);
    if (st != PARLEY_OK)
        return st;
    st = pl_json_parse(text, len, path, out);
    pl_free(text);
    const cJSON *f = st == PARLEY_OK ? cJSON_GetObjectItem(*out, "format") : NULL;
    if (st == PARLEY_OK && !(cJSON_IsString(f) && !strcmp(f->valuestring, RECORD_FORMAT))) {
        cJSON_Delete(*out);
        *out = NULL;
        return pl_fail(PARLEY_ERR_FORMAT, "%s: not a parley training record", path);
    }
    return st;
}

/* The "realpath" of the record's data, or "". */
static const char *data_real(const cJSON *rec)
{
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "data"), "realpath");
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* Whether records a and b name the same file with the same bytes as `key` (the path as
 * given may differ: "nlu.yaml" from its folder, "bot/nlu.yaml" from above it). */
static int same_data(const cJSON *a, const cJSON *b, const char *key)
{
    const cJSON *x = cJSON_GetObjectItem(a, key), *y = cJSON_GetObjectItem(b, key);
    if (cJSON_IsNull(x) || cJSON_IsNull(y))
        return cJSON_IsNull(x) && cJSON_IsNull(y);
    return cJSON_Compare(cJSON_GetObjectItem(x, "realpath"), cJSON_GetObjectItem(y, "realpath"),
                         1) &&
           cJSON_Compare(cJSON_GetObjectItem(x, "fnv1a64"), cJSON_GetObjectItem(y, "fnv1a64"), 1);
}

parley_status parley_train_record_compare(const parley_train_params *p,
                                          parley_train_verdict *verdict)
{
    if (!p || !p->out || !p->data || !verdict)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_train_record_compare: NULL argument");
    char cfg[PATH_MAX + 32];
    struct stat sb;
    snprintf(cfg, sizeof cfg, "%s/config.json", p->out);
    int model = stat(cfg, &sb) == 0;
    cJSON *rec = NULL, *now = NULL;
    parley_status st = read_record(p->out, &rec);
    if (st == PARLEY_ERR_NOT_FOUND) {
        *verdict = model ? PARLEY_TRAIN_UNRECORDED : PARLEY_TRAIN_NEW;
        return PARLEY_OK;
    }
    /* The data's count as recorded: where the data changed, the verdict does not hang on it. */
    const cJSON *n = cJSON_GetObjectItem(rec, "examples");
    if (st != PARLEY_OK ||
        (st = identity_json(p, cJSON_IsNumber(n) ? n->valueint : -1, &now)) != PARLEY_OK) {
        cJSON_Delete(rec);
        return st;
    }
    int same = model && same_data(rec, now, "data") && same_data(rec, now, "dev") &&
               same_data(rec, now, "init") && same_data(rec, now, "background") &&
               cJSON_Compare(cJSON_GetObjectItem(rec, "options"),
                             cJSON_GetObjectItem(now, "options"), 1);
    *verdict = same                                     ? PARLEY_TRAIN_UP_TO_DATE
               : strcmp(data_real(rec), data_real(now)) ? PARLEY_TRAIN_OTHER_DATA
                                                        : PARLEY_TRAIN_CHANGED;
    cJSON_Delete(rec);
    cJSON_Delete(now);
    return PARLEY_OK;
}

parley_status parley_train_record_data(const char *model_dir, char *buf, size_t cap)
{
    if (!model_dir || !buf || !cap)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_train_record_data: NULL argument");
    cJSON *rec;
    parley_status st = read_record(model_dir, &rec);
    if (st != PARLEY_OK)
        return st;
    const char *path = data_real(rec);
    if (!*path || strlen(path) >= cap)
        st = pl_fail(PARLEY_ERR_FORMAT, "%s/training.json: no data path", model_dir);
    else
        snprintf(buf, cap, "%s", path);
    cJSON_Delete(rec);
    return st;
}

/* Appends " WORD" to b, single-quoted for a POSIX shell when it holds anything but
 * letters, digits and -_./=:+,@ (an empty word too). */
static void shell_word(pl_strbuf *b, const char *w)
{
    int plain = *w != '\0';
    for (const char *c = w; *c && plain; c++)
        plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                strchr("-_./=:+,@", *c);
    if (plain) {
        pl_strbuf_printf(b, " %s", w);
        return;
    }
    pl_strbuf_printf(b, " '");
    for (const char *c = w; *c; c++)
        pl_strbuf_printf(b, *c == '\'' ? "'\\''" : "%c", *c);
    pl_strbuf_printf(b, "'");
}

/* The `parley train` options of a record's "options" that differ from the defaults (those
 * given), as flags, in b: each key's flag is its name with dashes ("max_positions":
 * --max-positions), but for the warmup, whose one flag takes a fraction or a step count. */
static void option_flags(const cJSON *o, pl_strbuf *b)
{
    const parley_train_params d = parley_train_params_default();
    cJSON *def = options_json(&d);
    if (!def) {
        b->failed = 1;
        return;
    }
    for (const cJSON *v = o ? o->child : NULL; v; v = v->next) {
        const cJSON *was = cJSON_GetObjectItem(def, v->string);
        if (!was || !strncmp(v->string, "warmup_", 7))
            continue;
        /* Whole numbers (counts, the seed) as they are; the rest were floats widened to
         * double when recorded: compared and written as floats. */
        const int whole = cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble);
        int given = cJSON_IsString(v)                            ? *v->valuestring != '\0'
                    : !cJSON_IsNumber(v) || !cJSON_IsNumber(was) ? 0
                    : whole ? v->valuedouble != was->valuedouble
                            : (float)v->valuedouble != (float)was->valuedouble;
        if (!given)
            continue;
        pl_strbuf_printf(b, " --");
        for (const char *c = v->string; *c; c++)
            pl_strbuf_printf(b, "%c", *c == '_' ? '-' : *c);
        if (cJSON_IsString(v))
            shell_word(b, v->valuestring);
        else
            pl_strbuf_printf(b, whole ? " %.0f" : " %.7g",
                             whole ? v->valuedouble : (double)(float)v->valuedouble);
    }
    cJSON_Delete(def);
    const cJSON *steps = cJSON_GetObjectItem(o, "warmup_steps"),
                *frac = cJSON_GetObjectItem(o, "warmup_fraction");
    if (cJSON_IsNumber(steps) && steps->valuedouble >= 0)
        pl_strbuf_printf(b, " --warmup %.0f", steps->valuedouble);
    else if (cJSON_IsNumber(frac) && (float)frac->valuedouble != d.warmup_fraction) {
        char f[32];
        snprintf(f, sizeof f, "%.7g", (double)(float)frac->valuedouble);
        pl_strbuf_printf(b, " --warmup %s%s", f, strchr(f, '.') ? "" : ".0");
    }
}

parley_status parley_train_record_command(const char *model_dir, const char *data, char *buf,
                                          size_t cap)
{
    if (!model_dir || !buf || !cap)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_train_record_command: NULL argument");
    cJSON *rec;
    parley_status st = read_record(model_dir, &rec);
    if (st != PARLEY_OK)
        return st;
    pl_strbuf b = { 0 };
    const cJSON *dev = cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "dev"), "realpath");
    const int has_data = data || *data_real(rec) != '\0';
    char real[PATH_MAX];
    /* Another file than the model's: parley train keeps such a model unless forced. */
    const int other = data && (!realpath(data, real) || strcmp(real, data_real(rec)));
    pl_strbuf_printf(&b, "parley train --data");
    shell_word(&b, data ? data : data_real(rec));
    if (cJSON_IsString(dev)) {
        pl_strbuf_printf(&b, " --dev");
        shell_word(&b, dev->valuestring);
    }
    pl_strbuf_printf(&b, " --out");
    shell_word(&b, model_dir);
    option_flags(cJSON_GetObjectItem(rec, "options"), &b);
    if (other)
        pl_strbuf_printf(&b, " --force");
    cJSON_Delete(rec);
    if (!has_data)
        st = pl_fail(PARLEY_ERR_FORMAT, "%s/training.json: no data path", model_dir);
    else if (b.failed || !b.s)
        st = pl_nomem("%s/training.json: the command", model_dir);
    else if (b.len >= cap)
        st = pl_fail(PARLEY_ERR_INVALID_ARG, "%s/training.json: the command needs %zu bytes",
                     model_dir, b.len + 1);
    else
        memcpy(buf, b.s, b.len + 1);
    pl_free(b.s);
    return st;
}
