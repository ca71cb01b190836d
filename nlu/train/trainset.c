/* trainset.c — the training set as a run trains on it, and the profile measured from it
 * (trainset.h). The counts a recipe reads are taken here, once; the rules that read them
 * are recipe.c's.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "nlu/cuda/cuda_bert.h"
#include "nlu/train/background.h"
#include "nlu/train/builtin.h"
#include "nlu/train/encoder.h"
#include "nlu/train/sparse_train.h"
#include "nlu/train/synonyms.h"
#include "nlu/train/train_util.h"
#include "nlu/train/trainset.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/strbuf.h"

parley_status train_set_extend(ds_dataset *ds, int augment, int builtin, int lowercase,
                               uint64_t seed, train_set_added *added)
{
    parley_status st;
    int synonyms = 0, copies = 0, n;
    if ((builtin && (st = train_add_builtin(ds, &added->builtin, NULL)) != PARLEY_OK) ||
        (st = train_synonym_lookups(ds, &synonyms, NULL)) != PARLEY_OK ||
        (st = train_synonym_variants(ds, &copies, NULL)) != PARLEY_OK)
        return st;
    added->variants += copies;
    if (augment) {
        if ((st = (ds->n_lookups ? ds_augment_lookups : ds_augment_own_values)(ds, augment, seed,
                                                                               &n)) != PARLEY_OK)
            return st;
        added->variants += n;
    }
    if (lowercase && (st = ds_augment_lowercase(ds, &added->lowercase)) != PARLEY_OK)
        return st;
    return PARLEY_OK;
}

parley_status train_set_background(ds_dataset *ds, int background, train_set_added *added)
{
    char dir[PATH_MAX];
    if (!background)
        return PARLEY_OK;
    if (!train_encoder_folder("background", dir, sizeof dir))
        return pl_fail(PARLEY_ERR_NOT_FOUND,
                       "train: this run has %d background sentences, and they are not beside the "
                       "default encoder (bash tools/encoder.sh builds them)",
                       background);
    return train_add_background(ds, dir, background, &added->background);
}

int train_set_own_values(const ds_dataset *ds, const train_set_added *added)
{
    return !ds->n_lookups && added->variants > 0;
}

parley_status train_set_unvaried_intents(const ds_dataset *ds, int **out, int *n)
{
    int *in = pl_malloc(((size_t)ds->n_examples + 1) * sizeof *in);
    *out = in;
    *n = 0;
    if (!in)
        return pl_nomem("the intents' weights");
    for (int e = 0; e < ds->n_examples; e++)
        if (ds->examples[e].variant_of < 0)
            in[(*n)++] = ds->examples[e].intent;
    return PARLEY_OK;
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The profile of ds as written. */
static parley_status written(const ds_dataset *ds, int gpu, train_profile *pf)
{
    char dir[PATH_MAX];
    const int ni = ds->n_intents;
    int *counts = pl_calloc((size_t)ni + 1, sizeof *counts);
    if (!counts)
        return pl_nomem("the data's profile");
    for (int e = 0; e < ds->n_examples; e++)
        counts[ds->examples[e].intent]++;
    qsort(counts, (size_t)ni, sizeof *counts, cmp_int);
    *pf = (train_profile){
        .examples = ds->n_examples,
        .intents = ni,
        .per_intent_min = ni ? counts[0] : 0,
        .per_intent_median = !ni      ? 0
                             : ni % 2 ? counts[ni / 2]
                                      : 0.5 * (counts[ni / 2 - 1] + counts[ni / 2]),
        .tags_slots = ds->n_slots > 0,
        .lookups = ds->n_lookups,
        .regexes = ds->n_regexes,
        .gpu = gpu,
        .encoder = train_default_encoder(dir, sizeof dir),
        .background = train_encoder_folder("background", dir, sizeof dir),
        .probe_scored = -1,
    };
    pl_free(counts);
    return PARLEY_OK;
}

/* The probe (recipe.h) on ds as extended: the sparse features' intent, cross-fitted as the
 * pre-fit's cross-fitting fits it, the intents weighted as the few-examples course weighs
 * them. */
static parley_status probe(const parley_train_params *p, const ds_dataset *ds, int own_values,
                           train_profile *pf)
{
    int *intents = NULL, n;
    float *weight = NULL;
    parley_status st;
    if ((st = train_set_unvaried_intents(ds, &intents, &n)) == PARLEY_OK &&
        (st = train_class_weights(intents, n, ds->n_intents, &weight, NULL)) == PARLEY_OK) {
        const sparse_prefit_params pp = {
            .epochs = train_prefit_epochs(ds->n_examples, TRAIN_PREFIT_BATCH, NULL),
            .batch = TRAIN_PREFIT_BATCH,
            .lr = p->sparse_lr > 0 ? p->sparse_lr : PARLEY_TRAIN_DEFAULT_SPARSE_LR,
            .seed = train_mix(p->seed, TRAIN_PREFIT_SALT),
            .class_weight = weight,
        };
        st = train_sparse_probe(ds, train_word_norm_by_kind(pf->examples), own_values, &pp,
                                TRAIN_CROSSFIT_FOLDS, &pf->probe_right, &pf->probe_scored);
    }
    pl_free(intents);
    pl_free(weight);
    return st;
}

parley_status train_profile_measure(const parley_train_params *p, ds_dataset *ds, int gpu,
                                    train_set_added *added, train_profile *pf)
{
    int augment, builtin, lowercase;
    parley_status st;
    if ((st = written(ds, gpu, pf)) != PARLEY_OK)
        return st;
    train_recipe_extension(p, pf, &augment, &builtin, &lowercase);
    if ((st = train_set_extend(ds, augment, builtin, lowercase, p->seed, added)) != PARLEY_OK)
        return st;
    const int own_values = train_set_own_values(ds, added);
    long words = 0;
    for (int e = 0; e < ds->n_examples; e++)
        words += ds->examples[e].untagged ? 0 : ds->examples[e].n_words;
    pf->encoder_examples = ds->n_examples - added->lowercase - (own_values ? added->variants : 0);
    pf->set_examples = ds->n_examples;
    pf->tagged_words = (double)words / ds->n_examples;
    return train_recipe_wants_probe(p, pf) ? probe(p, ds, own_values, pf) : PARLEY_OK;
}

parley_status parley_train_explain(const parley_train_params *p, char **text)
{
    ds_dataset *ds = NULL;
    train_set_added added = { 0 };
    train_profile pf;
    train_recipe r = { 0 };
    pl_strbuf b = { 0 };
    char *table = NULL, *values = NULL, *profile = NULL;
    int gpu;
    parley_status st;
    *text = NULL;
    if (!p || !p->data)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "train: the training data is required");
    if ((st = train_parse_device(p->device, &gpu)) != PARLEY_OK ||
        (st = ds_load(p->data, &ds)) != PARLEY_OK)
        goto done;
    if (ds->n_examples == 0) {
        st = pl_fail(PARLEY_ERR_CONFIG, "%s: no training examples", p->data);
        goto done;
    }
    if ((st = train_profile_measure(p, ds, gpu != CUDA_DEVICE_CPU, &added, &pf)) != PARLEY_OK ||
        (st = train_recipe_decide(p, &pf, &r)) != PARLEY_OK ||
        (st = train_recipe_table(0, &table)) != PARLEY_OK ||
        (st = train_recipe_values(&r, &values)) != PARLEY_OK ||
        (st = train_profile_values(&pf, &profile)) != PARLEY_OK)
        goto done;
    pl_strbuf_printf(&b,
                     "profile of %s:\n  %d examples written, %d intents (per intent: fewest %d, "
                     "median %g), %s, %d lookup tables, %d regexes\n  %s; the default encoder "
                     "%s, its background sentences %s\n  the training set: %d examples the "
                     "encoder is shown (%.1f per intent), %d in all (%d variants, %d built-in "
                     "replies, %d lower-case copies); %.1f words per tagged example\n",
                     p->data, pf.examples, pf.intents, pf.per_intent_min, pf.per_intent_median,
                     pf.tags_slots ? "slots tagged" : "no slot tagged", pf.lookups, pf.regexes,
                     pf.gpu ? "a GPU" : "the CPU", pf.encoder ? "built" : "not built",
                     pf.background ? "there" : "not there", pf.encoder_examples,
                     (double)pf.encoder_examples / (pf.intents ? pf.intents : 1), pf.set_examples,
                     added.variants, added.builtin, added.lowercase, pf.tagged_words);
    if (pf.probe_scored >= 0)
        pl_strbuf_printf(&b,
                         "  probe: the sparse features alone get the intent of %d of %d "
                         "written examples, cross-fitted (%d folds)\n",
                         pf.probe_right, pf.probe_scored, TRAIN_CROSSFIT_FOLDS);
    pl_strbuf_printf(&b, "recipe:\n");
    for (const char *s = r.notes; s && *s;) {
        size_t n = strcspn(s, "\n");
        pl_strbuf_printf(&b, "  %.*s\n", (int)n, s);
        s += n + (s[n] == '\n');
    }
    const char *heads[2] = { "the profile's values", "the recipe's values" },
               *texts[2] = { profile, values };
    for (int k = 0; k < 2; k++) {
        pl_strbuf_printf(&b, "%s:\n", heads[k]);
        for (const char *s = texts[k]; *s;) {
            size_t n = strcspn(s, "\n");
            pl_strbuf_printf(&b, "  %.*s\n", (int)n, s);
            s += n + (s[n] == '\n');
        }
    }
    pl_strbuf_printf(&b, "the rules:\n%s", table);
    if (b.failed || !b.s) {
        st = pl_nomem("explaining the recipe");
        goto done;
    }
    *text = b.s;
    b.s = NULL;
done:
    pl_free(b.s);
    pl_free(table);
    pl_free(values);
    pl_free(profile);
    train_recipe_clear(&r);
    ds_free(ds);
    return st;
}

void parley_train_explain_free(char *text)
{
    pl_free(text);
}
