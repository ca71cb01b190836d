/* fuzz_config.c — libFuzzer target for a model's config.json (nlu/model/config.c, over cJSON and
 * sdk/base/json.c).
 *
 * The input is a config.json. A refusal must carry a message. A config that loads must pass
 * bert_config_check (what the loader promises), load the same shape with shape_only, and
 * survive a round trip: bert_config_write's file must load back equal, labels and
 * layer_norm_eps included. Nothing here allocates a model: that is fuzz_safetensors.c.
 */
#include <string.h>

#include "nlu/model/model.h"
#include "sdk/base/files.h"
#include "tests/fuzz/fuzz_input.h"

static void expect_same_shape(const bert_config *a, const bert_config *b, const char *what)
{
    FUZZ_EXPECT(a->hidden == b->hidden && a->layers == b->layers && a->heads == b->heads &&
                        a->intermediate == b->intermediate &&
                        a->max_positions == b->max_positions && a->type_vocab == b->type_vocab &&
                        a->ln_eps == b->ln_eps,
                "%s: another shape", what);
}

static void expect_same_labels(char *const *a, int na, char *const *b, int nb, const char *what)
{
    FUZZ_EXPECT(na == nb, "%s: %d labels, then %d", what, na, nb);
    for (int i = 0; i < na; i++)
        FUZZ_EXPECT(!strcmp(a[i], b[i]), "%s: label %d '%s', then '%s'", what, i, a[i], b[i]);
}

static void round_trip(const bert_config *c)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/written.json", fuzz_dir());
    pl_atomic a = { 0 };
    parley_status st;
    if ((st = pl_atomic_begin(&a, path)) != PARLEY_OK ||
        (st = bert_config_write(c, &a)) != PARLEY_OK || (st = pl_atomic_commit(&a)) != PARLEY_OK)
        FUZZ_EXPECT(0, "writing a loaded config: %s", parley_errmsg());
    pl_atomic_abort(&a);
    bert_config back;
    st = bert_config_load(path, 0, &back);
    FUZZ_EXPECT(st == PARLEY_OK, "a written config loads back: %s", parley_errmsg());
    expect_same_shape(c, &back, "round trip");
    FUZZ_EXPECT(c->vocab_size == back.vocab_size, "round trip: vocab_size");
    expect_same_labels(c->intent_labels, c->n_intents, back.intent_labels, back.n_intents,
                       "round trip: intents");
    expect_same_labels(c->slot_labels, c->n_slots, back.slot_labels, back.n_slots,
                       "round trip: slots");
    bert_config_clear(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("config.json", data, size);
    bert_config c, shape;
    parley_status st = bert_config_load(path, 0, &c);
    if (st != PARLEY_OK) {
        fuzz_expect_refusal(st);
        FUZZ_EXPECT(!c.intent_labels && !c.slot_labels, "a refused config is cleared");
        return 0;
    }
    FUZZ_EXPECT(bert_config_check(&c, path) == PARLEY_OK, "a loaded config is usable: %s",
                parley_errmsg());
    FUZZ_EXPECT(bert_param_count(&c) > 0, "parameters");
    st = bert_config_load(path, 1, &shape);
    FUZZ_EXPECT(st == PARLEY_OK, "shape_only refuses what a full load takes: %s", parley_errmsg());
    expect_same_shape(&c, &shape, "shape_only");
    bert_config_clear(&shape);
    round_trip(&c);
    bert_config_clear(&c);
    return 0;
}
