/* background.c — background sentences added to a small training set as its out-of-scope
 * intent (background.h): where they are found, how many, and adding them.
 *
 * The count, 300, was chosen among 100, 300 and 1,000 (bench/RESULTS.md#fewshot-10): fewer cover
 * too few topics to catch much, more take the bot's own sentences too (the few-examples course
 * weighs the intent as the median intent all the same, defaults.h).
 */
#include <string.h>

#include "nlu/train/background.h"
#include "nlu/train/encoder.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"

enum { BACKGROUND_SIZED = 300 }; /* sentences added when the count is left to the data */

const char *train_background_dir(int n_examples, char *dir, size_t size)
{
    return train_few_written(n_examples) && train_encoder_folder("background", dir, size) ? dir
                                                                                          : NULL;
}

int train_background_count(const parley_train_params *p, train_notes *notes)
{
    if (p->background > 0)
        return p->background;
    train_note(notes,
               "background %d: sentences of general English added as the out-of-scope intent, "
               "so that requests the bot does not serve fall back; the encoder reads the intent "
               "(--background 0: none)",
               BACKGROUND_SIZED);
    return BACKGROUND_SIZED;
}

/* The intent the background joins (background.h). */
static const char *out_of_scope_intent(const ds_dataset *ds)
{
    return ds_intent_index(ds, "out_of_scope") < 0 && ds_intent_index(ds, "nlu_fallback") >= 0
                   ? "nlu_fallback"
                   : "out_of_scope";
}

parley_status train_add_background(ds_dataset *ds, const char *dir, int n, int *added)
{
    ds_dataset *bg = NULL;
    int intent, *tags = NULL, most = 1;
    size_t *lens = NULL;
    *added = 0;
    parley_status st = ds_load_jointbert(dir, &bg);
    if (st != PARLEY_OK)
        return pl_wrap(st, "the background sentences (tools/encoder.sh writes them again; "
                           "--background 0 trains without them)");
    for (int i = 0; i < bg->n_examples; i++)
        most = bg->examples[i].n_words > most ? bg->examples[i].n_words : most;
    tags = pl_calloc((size_t)most, sizeof *tags); /* all O */
    lens = pl_malloc((size_t)most * sizeof *lens);
    if (!tags || !lens) {
        st = pl_nomem("the background sentences");
        goto done;
    }
    if ((st = ds_add_intent(ds, out_of_scope_intent(ds), &intent)) != PARLEY_OK)
        goto done;
    for (int i = 0; i < bg->n_examples && *added < n; i++) {
        const ds_example *e = &bg->examples[i];
        int appended;
        for (int w = 0; w < e->n_words; w++)
            lens[w] = strlen(e->words[w]);
        if ((st = ds_add(ds, e->n_words, (const char *const *)e->words, lens, tags, intent, 0, NULL,
                         DS_DROP_SAME_TEXT, NULL, &appended)) != PARLEY_OK)
            goto done;
        if (appended)
            ds->examples[ds->n_examples - 1].untagged = 1;
        *added += appended;
    }
done:
    pl_free(tags);
    pl_free(lens);
    ds_free(bg);
    return st;
}
