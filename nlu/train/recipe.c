/* recipe.c — the training recipe (recipe.h): the table of rows, and the one function that
 * applies them to a profile. Each row names a setting, its rule by regime and modifier, the
 * reason, and the evidence: an anchor in bench/RESULTS.md. The arithmetic of a rule (its
 * bounds and the lines it writes) is defaults.c's; this file decides in which order, on which
 * count, and holds the result. A new sized default is one row here, its rule in defaults.c,
 * and its cases in tests/nlu/train/recipes/.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nlu/train/background.h"
#include "nlu/train/builtin.h"
#include "nlu/train/encoder.h"
#include "nlu/train/recipe.h"
#include "nlu/train/wp_learn.h"
#include "sdk/base/alloc.h"
#include "sdk/base/json.h"
#include "sdk/base/strbuf.h"

/* One row of the table: what --explain prints and docs/training.md shows. */
typedef struct recipe_row {
    const char *setting, *rule, *reason, *evidence;
} recipe_row;

/* Regimes on the examples as written: under 200, under 2,000, under 4,000, under 5,000, and
 * from 5,000. Modifiers: examples per intent as the encoder sees them (lookup variants
 * counted), the data's tags, lookup tables and regexes, the device, the default encoder. */
static const recipe_row ROWS[] = {
    { "start",
      "the default encoder under 2,000 examples (no shape or vocabulary given), else "
      "random weights; --init: that model",
      "the general English a bot's few examples never show", "fewshot-9" },
    { "shape",
      "2 layers of 128 (2 heads, 256 feed-forward) under 2,000 examples, BERT-mini's "
      "from there",
      "on so few examples the bigger encoder learns no more, 6-9x slower", "fewshot-8" },
    { "sparse",
      "on under 1,000 examples per intent, with lookup tables or regexes, or with "
      "--intent-encoder off; off from there, and from 4,000 examples that tag slots",
      "full SNIPS: intent 0.2 lower with them; held-out ATIS: slot F1 and sentence lower",
      "recipe-sparse" },
    { "pretrain-epochs", "20 for a new model from random weights without sparse features, else 0",
      "full SNIPS: slot F1 +1.3, sentence +2.3 over 4 seeds", "fewshot-20" },
    { "augment",
      "8 lookup variants under 10 per intent, 4 under 50, 2 under 5,000 examples, 0 "
      "from there; without lookup tables 4 own-value variants under 60 per intent "
      "with slots",
      "a variant shows a slot value the examples do not", "fewshot-18" },
    { "batch", "8 under 200 examples, 16 under 2,000, 32 from there",
      "small batches give small data more steps", "issue-3-accuracy" },
    { "lr",
      "1e-3 x sqrt(batch / 32); 5e-4 x sqrt(batch / 32) after pretraining on the own "
      "text; 5e-5 with --init",
      "measured on SNIPS and ATIS", "pretraining" },
    { "weight-decay", "0.01", "BERT's value", "issue-3-accuracy" },
    { "builtin", "on under 2,000 examples", "users say \"yep\" and \"see ya\"", "fewshot-13" },
    { "lowercase", "copies under 2,000 examples", "the sparse features read a word's shape",
      "fewshot-15" },
    { "intent-encoder",
      "off under 150 examples per intent, 60 with slots; with slots under "
      "4,000 examples the probe decides: off from 90%, on under 72% where "
      "background sentences come with the encoder",
      "few examples: the encoder memorizes; the probe tells who reads the intent", "fewshot-8" },
    { "background",
      "300 under 2,000 examples where the encoder reads the intent and they are "
      "built, else 0",
      "a bot learns where its intents end", "fewshot-10" },
    { "epochs",
      "about 1,200 steps, 20 to 80 (30 without sparse features or pretraining); 0 "
      "when the intent is the sparse features' and no slot is tagged",
      "small data needs many passes, big data few", "fewshot-19" },
    { "few-examples",
      "under 4,000 examples, or the intent the sparse features' alone: sparse "
      "pre-fit, word rows by kind, intents weighted to the median",
      "fitted alone first helps few examples, costs many", "fewshot-3" },
    { "slot-weight",
      "1; the tagged words per example where the intent is the sparse "
      "features' and slots are tagged",
      "the slot loss is a mean over words", "fewshot-5" },
    { "slot-map-lr",
      "4 x sparse lr where the intent is the sparse features' and slots are "
      "tagged, else sparse lr",
      "the slot map moves the slots only", "fewshot-5" },
};

static int rows_n(void)
{
    return (int)(sizeof ROWS / sizeof ROWS[0]);
}

/* The data set of the profile, as the rules of defaults.c read one (counts only). */
static ds_dataset counts_of(const train_profile *pf)
{
    return (ds_dataset){ .n_examples = pf->examples,
                         .n_intents = pf->intents,
                         .n_slots = pf->tags_slots,
                         .n_lookups = pf->lookups };
}

/* Where background sentences would come: they are built, not refused, and the data is
 * small. */
static int background_there(const parley_train_params *p, const train_profile *pf)
{
    return p->background != 0 && pf->background && train_few_written(pf->examples);
}

/* The default encoder as a start: no init, shape or vocabulary given, small data, built. */
static int from_encoder(const parley_train_params *p, const train_profile *pf)
{
    const int default_vocab =
            !p->vocab && (!p->vocab_size || p->vocab_size == WP_LEARN_DEFAULT_SIZE);
    return !p->init && default_vocab && train_small_data(&p->shape, pf->examples) && pf->encoder;
}

/* The sparse features, and the intent's reader by the count (before the probe). */
static void counted(const parley_train_params *p, const train_profile *pf, int *sparse, int *only,
                    train_notes *notes)
{
    *sparse = train_sparse_on(pf->encoder_examples, pf->intents, pf->examples, pf->tags_slots,
                              pf->lookups + pf->regexes > 0, p->sparse, p->intent_encoder, notes);
    *only = *sparse && train_intent_sparse_only(pf->encoder_examples, pf->intents, pf->tags_slots,
                                                p->intent_encoder, notes);
}

int train_recipe_wants_probe(const parley_train_params *p, const train_profile *pf)
{
    int sparse, only;
    counted(p, pf, &sparse, &only, NULL);
    return sparse && train_check_sparse_intent(pf->examples, pf->tags_slots, p->intent_encoder) &&
           (!only || ((train_init_dir(p) || from_encoder(p, pf)) && background_there(p, pf)));
}

void train_recipe_extension(const parley_train_params *p, const train_profile *pf, int *augment,
                            int *builtin, int *lowercase)
{
    train_sizes s = train_sizes_of(p);
    const ds_dataset ds = counts_of(pf);
    train_size_data(&s, &ds, TRAIN_START_NEW, NULL);
    *augment = s.augment;
    *builtin = train_builtin_on(p->builtin, pf->examples);
    *lowercase = train_few_written(pf->examples);
}

parley_status train_recipe_decide(const parley_train_params *p, const train_profile *pf,
                                  train_recipe *out)
{
    train_notes notes = { 0 };
    train_recipe *r = out;
    const ds_dataset ds = counts_of(pf);
    train_sizes s = train_sizes_of(p);
    memset(r, 0, sizeof *r);
    r->from_init = train_init_dir(p) != NULL;
    r->from_encoder = from_encoder(p, pf);
    if (r->from_encoder)
        train_note(&notes,
                   "init the default encoder, pretrained on general English, for a new model of "
                   "%d examples (--init none: random weights)",
                   pf->examples);
    r->shape = r->from_init || r->from_encoder
                       ? (parley_train_shape){ .max_positions = p->shape.max_positions }
                       : train_size_shape(&p->shape, pf->examples, &notes);
    int sparse, only;
    counted(p, pf, &sparse, &only, NULL);
    r->sparse = sparse;
    const int random_start = !r->from_init && !r->from_encoder;
    r->pretrain_epochs = train_size_pretrain(p->pretrain_epochs, random_start, !sparse, &notes);
    train_size_data(&s, &ds,
                    r->from_init         ? TRAIN_START_INIT
                    : r->pretrain_epochs ? TRAIN_START_OWN_TEXT
                                         : TRAIN_START_NEW,
                    &notes);
    r->augment = s.augment;
    r->batch = s.batch;
    r->lr = s.lr;
    r->weight_decay = s.weight_decay;
    r->builtin = train_builtin_on(p->builtin, pf->examples);
    r->lowercase = train_few_written(pf->examples);
    if (p->builtin == PARLEY_SWITCH_AUTO)
        train_note(&notes, "builtin %s: %d examples, %s 2,000 (--builtin %s)",
                   r->builtin ? "on" : "off", pf->examples, r->builtin ? "under" : "at least",
                   r->builtin ? "off: none" : "on: added");
    train_note(&notes, "lower-case copies %s: %d examples, %s 2,000", r->lowercase ? "on" : "off",
               pf->examples, r->lowercase ? "under" : "at least");
    counted(p, pf, &sparse, &only, &notes);
    if (train_recipe_wants_probe(p, pf)) {
        if (pf->probe_scored < 0) {
            train_notes_clear(&notes);
            return pl_fail(PARLEY_ERR_INTERNAL, "the recipe: the probe was not measured");
        }
        only = train_intent_sparse_enough(pf->probe_right, pf->probe_scored, only, &notes);
    }
    r->intent_sparse_only = only;
    if (background_there(p, pf)) {
        if (only)
            train_note(&notes, "background none: the intent is the sparse features' alone, "
                               "which would take the words they have not seen for out of scope");
        else
            r->background = train_background_count(p, &notes);
    }
    const int n_train = pf->set_examples + r->background;
    const int with_slots = only && pf->tags_slots;
    train_size_epochs(&s, n_train, only && !pf->tags_slots, !sparse && !r->pretrain_epochs, &notes);
    r->epochs = s.epochs;
    r->slot_weight = train_slot_weight(p->slot_weight, with_slots, pf->tagged_words, &notes);
    r->sparse_lr = p->sparse_lr > 0 ? p->sparse_lr : PARLEY_TRAIN_DEFAULT_SPARSE_LR;
    r->slot_map_lr = train_slot_map_lr(r->sparse_lr, with_slots, &notes);
    r->few_examples = train_few_examples(pf->examples, only, sparse, &notes);
    r->word_norm_by_kind = train_word_norm_by_kind(pf->examples);
    r->prefit_epochs = r->few_examples && sparse
                               ? train_prefit_epochs(n_train, TRAIN_PREFIT_BATCH, &notes)
                               : 0;
    r->intent_slot_tags = with_slots;
    r->crossfit_temperature = only && !p->dev;
    r->dropout = p->dropout;
    r->word_dropout = p->word_dropout;
    r->clip = p->clip;
    r->warmup_fraction = p->warmup_fraction;
    r->warmup_steps = p->warmup_steps;
    r->seed = p->seed;
    if (notes.failed) {
        train_notes_clear(&notes);
        return pl_nomem("the recipe's notes");
    }
    r->notes = notes.text;
    return PARLEY_OK;
}

void train_recipe_clear(train_recipe *r)
{
    pl_free(r->notes);
    r->notes = NULL;
}

/* ---- the record ------------------------------------------------------------------------ */

/* The recipe's fields (and the profile's, below), for writing and reading them alike. */
typedef struct recipe_field {
    const char *name;
    size_t at;
    char kind; /* 'i' int, 'l' long, 'f' float, 'd' double, 'u' uint64 (a decimal string) */
} recipe_field;

#define RF(f, k)                         \
    {                                    \
#f, offsetof(train_recipe, f), k \
    }
static const recipe_field FIELDS[] = {
    RF(from_encoder, 'i'),
    RF(from_init, 'i'),
    RF(shape.layers, 'i'),
    RF(shape.hidden, 'i'),
    RF(shape.heads, 'i'),
    RF(shape.intermediate, 'i'),
    RF(shape.max_positions, 'i'),
    RF(pretrain_epochs, 'i'),
    RF(augment, 'i'),
    RF(builtin, 'i'),
    RF(lowercase, 'i'),
    RF(background, 'i'),
    RF(sparse, 'i'),
    RF(intent_sparse_only, 'i'),
    RF(word_norm_by_kind, 'i'),
    RF(intent_slot_tags, 'i'),
    RF(epochs, 'i'),
    RF(batch, 'i'),
    RF(lr, 'f'),
    RF(weight_decay, 'f'),
    RF(dropout, 'f'),
    RF(word_dropout, 'f'),
    RF(slot_weight, 'f'),
    RF(clip, 'f'),
    RF(sparse_lr, 'f'),
    RF(slot_map_lr, 'f'),
    RF(warmup_fraction, 'f'),
    RF(warmup_steps, 'l'),
    RF(few_examples, 'i'),
    RF(prefit_epochs, 'i'),
    RF(crossfit_temperature, 'i'),
    RF(seed, 'u'),
};
#undef RF

/* The profile's fields, as the golden tests and --explain write them. */
#define PF(f, k)                          \
    {                                     \
#f, offsetof(train_profile, f), k \
    }
static const recipe_field PROFILE_FIELDS[] = {
    PF(examples, 'i'),         PF(intents, 'i'),
    PF(per_intent_min, 'i'),   PF(per_intent_median, 'd'),
    PF(tags_slots, 'i'),       PF(lookups, 'i'),
    PF(regexes, 'i'),          PF(gpu, 'i'),
    PF(encoder, 'i'),          PF(background, 'i'),
    PF(encoder_examples, 'i'), PF(set_examples, 'i'),
    PF(tagged_words, 'd'),     PF(probe_right, 'i'),
    PF(probe_scored, 'i'),
};
#undef PF

/* "name value" lines of fields[0..n) of the struct at base. */
static parley_status values_of(const void *base, const recipe_field *fields, size_t n, char **out)
{
    pl_strbuf b = { 0 };
    for (size_t i = 0; i < n; i++) {
        const char *at = (const char *)base + fields[i].at;
        if (fields[i].kind == 'i')
            pl_strbuf_printf(&b, "%s %d\n", fields[i].name, *(const int *)at);
        else if (fields[i].kind == 'l')
            pl_strbuf_printf(&b, "%s %ld\n", fields[i].name, *(const long *)at);
        else if (fields[i].kind == 'f')
            pl_strbuf_printf(&b, "%s %.4g\n", fields[i].name, (double)*(const float *)at);
        else if (fields[i].kind == 'd')
            pl_strbuf_printf(&b, "%s %.4g\n", fields[i].name, *(const double *)at);
        else
            pl_strbuf_printf(&b, "%s %llu\n", fields[i].name,
                             (unsigned long long)*(const uint64_t *)at);
    }
    if (b.failed || !b.s) {
        pl_free(b.s);
        return pl_nomem("the values");
    }
    *out = b.s;
    return PARLEY_OK;
}

parley_status train_profile_values(const train_profile *pf, char **out)
{
    return values_of(pf, PROFILE_FIELDS, sizeof PROFILE_FIELDS / sizeof PROFILE_FIELDS[0], out);
}

int train_profile_set(train_profile *pf, const char *name, double value)
{
    for (size_t i = 0; i < sizeof PROFILE_FIELDS / sizeof PROFILE_FIELDS[0]; i++) {
        char *at = (char *)pf + PROFILE_FIELDS[i].at;
        if (strcmp(PROFILE_FIELDS[i].name, name))
            continue;
        if (PROFILE_FIELDS[i].kind == 'd')
            *(double *)at = value;
        else
            *(int *)at = (int)value;
        return 1;
    }
    return 0;
}

parley_status train_recipe_json(const train_recipe *r, char **out)
{
    cJSON *o = cJSON_CreateObject();
    int ok = o != NULL;
    for (size_t i = 0; ok && i < sizeof FIELDS / sizeof FIELDS[0]; i++) {
        const char *at = (const char *)r + FIELDS[i].at;
        char num[24];
        switch (FIELDS[i].kind) {
        case 'i': ok = cJSON_AddNumberToObject(o, FIELDS[i].name, *(const int *)at) != NULL; break;
        case 'l':
            ok = cJSON_AddNumberToObject(o, FIELDS[i].name, (double)*(const long *)at) != NULL;
            break;
        case 'f':
            ok = cJSON_AddNumberToObject(o, FIELDS[i].name, *(const float *)at) != NULL;
            break;
        default:
            snprintf(num, sizeof num, "%llu", (unsigned long long)*(const uint64_t *)at);
            ok = cJSON_AddStringToObject(o, FIELDS[i].name, num) != NULL;
        }
    }
    ok = ok && cJSON_AddStringToObject(o, "notes", r->notes ? r->notes : "") != NULL;
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    *out = text ? pl_strdup(text) : NULL;
    cJSON_free(text);
    cJSON_Delete(o);
    return *out ? PARLEY_OK : pl_nomem("writing the recipe");
}

parley_status train_recipe_values(const train_recipe *r, char **out)
{
    return values_of(r, FIELDS, sizeof FIELDS / sizeof FIELDS[0], out);
}

parley_status train_recipe_parse(const char *json, const char *where, train_recipe *out)
{
    cJSON *o = NULL;
    parley_status st = pl_json_parse(json, strlen(json), where, &o);
    memset(out, 0, sizeof *out);
    for (size_t i = 0; st == PARLEY_OK && i < sizeof FIELDS / sizeof FIELDS[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, FIELDS[i].name);
        char *at = (char *)out + FIELDS[i].at;
        if (FIELDS[i].kind == 'u' ? !cJSON_IsString(v) : !cJSON_IsNumber(v)) {
            st = pl_fail(PARLEY_ERR_FORMAT, "%s: the recipe's \"%s\" is missing", where,
                         FIELDS[i].name);
        } else if (FIELDS[i].kind == 'i') {
            *(int *)at = v->valueint;
        } else if (FIELDS[i].kind == 'l') {
            *(long *)at = (long)v->valuedouble;
        } else if (FIELDS[i].kind == 'f') {
            *(float *)at = (float)v->valuedouble;
        } else {
            *(uint64_t *)at = strtoull(v->valuestring, NULL, 10);
        }
    }
    const cJSON *notes = cJSON_GetObjectItemCaseSensitive(o, "notes");
    if (st == PARLEY_OK && cJSON_IsString(notes) && !(out->notes = pl_strdup(notes->valuestring)))
        st = pl_nomem("reading the recipe");
    cJSON_Delete(o);
    return st;
}

parley_status train_recipe_table(int markdown, char **out)
{
    pl_strbuf b = { 0 };
    if (markdown)
        pl_strbuf_printf(&b, "| setting | rule | why | evidence |\n| --- | --- | --- | --- |\n");
    for (int i = 0; i < rows_n(); i++)
        pl_strbuf_printf(&b,
                         markdown ? "| %s | %s | %s | bench/RESULTS.md#%s |\n"
                                  : "%s: %s\n    why: %s (bench/RESULTS.md#%s)\n",
                         ROWS[i].setting, ROWS[i].rule, ROWS[i].reason, ROWS[i].evidence);
    if (b.failed || !b.s) {
        pl_free(b.s);
        return pl_nomem("the recipe's table");
    }
    *out = b.s;
    return PARLEY_OK;
}
