/* test_model_create.c — new model directories through the public API (parley_nlu_model_create).
 *
 * A model made from shape fields or from a config.json opens with parley_nlu_open and has
 * the shape and labels asked for ("O" put first only when missing); the shape create reports
 * is the one the opened model reports; a seed gives the same file every time, another seed
 * another file; bad params fail with the right status and message and write nothing; the
 * labels read back from the directory alone (parley_nlu_labels_read) are the ones written;
 * and every allocation failure is clean.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parley/nlu.h"
#include "tests/check.h"
#include "tests/fault.h"
#include "tests/tmpdir.h"

static const char *vocab_path;
static const char *intents[] = { "order", "greet" };
static const char *tags[] = { "B-size", "I-size" };

static parley_nlu_model_params small(void)
{
    parley_nlu_model_params p = parley_nlu_model_params_default();
    p.layers = 2, p.hidden = 16, p.heads = 4, p.intermediate = 32, p.max_positions = 24;
    p.vocab = vocab_path;
    p.intents = intents, p.n_intents = 2;
    p.slot_tags = tags, p.n_slot_tags = 2;
    return p;
}

static char *read_all(const char *file, long *n)
{
    FILE *f = fopen(file, "rb");
    char *d = NULL;
    if (f && fseek(f, 0, SEEK_END) == 0 && (*n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (d = malloc((size_t)*n)) && fread(d, 1, (size_t)*n, f) != (size_t)*n) {
        free(d);
        d = NULL;
    }
    if (f)
        fclose(f);
    return d;
}

static int same_file(const char *a, const char *b)
{
    long na = 0, nb = 0;
    char *x = read_all(a, &na), *y = read_all(b, &nb);
    int same = x && y && na == nb && !memcmp(x, y, (size_t)na);
    free(x);
    free(y);
    return same;
}

static int same_info(const parley_nlu_info *a, const parley_nlu_info *b)
{
    return a->layers == b->layers && a->hidden == b->hidden && a->heads == b->heads &&
           a->intermediate == b->intermediate && a->max_positions == b->max_positions &&
           a->type_vocab == b->type_vocab && a->vocab_size == b->vocab_size &&
           a->n_intents == b->n_intents && a->n_slot_tags == b->n_slot_tags &&
           a->n_params == b->n_params;
}

static void test_from_fields(void)
{
    parley_nlu_model_params p = small();
    parley_nlu_info made, opened;
    p.seed = 0;
    CHECK(parley_nlu_model_create(tmpdir_path("a"), &p, &made) == PARLEY_OK, "create: %s",
          parley_errmsg());
    parley_nlu *nlu = NULL;
    CHECK(parley_nlu_open(tmpdir_path("a"), NULL, &nlu) == PARLEY_OK, "open: %s", parley_errmsg());
    if (!nlu)
        return;
    CHECK(parley_nlu_get_info(nlu, &opened) == PARLEY_OK && same_info(&made, &opened),
          "create reports the shape the model has");
    CHECK(made.layers == 2 && made.hidden == 16 && made.heads == 4 && made.intermediate == 32 &&
                  made.max_positions == 24 && made.type_vocab == 2 && made.vocab_size == 47 &&
                  made.n_intents == 2 && made.n_slot_tags == 3 && made.n_params > 0,
          "the shape asked for, type_vocab defaulting to 2");
    CHECK(!strcmp(parley_nlu_intent_label(nlu, 1), "greet") &&
                  !strcmp(parley_nlu_slot_tag(nlu, 0), "O") &&
                  !strcmp(parley_nlu_slot_tag(nlu, 2), "I-size"),
          "labels, \"O\" put first");
    parley_nlu_close(nlu);

    /* The same seed gives the same file; another seed another; 0 is a seed of its own. */
    CHECK(parley_nlu_model_create(tmpdir_path("a0"), &p, NULL) == PARLEY_OK, "again");
    p.seed = 1;
    CHECK(parley_nlu_model_create(tmpdir_path("a1"), &p, NULL) == PARLEY_OK, "seed 1");
    CHECK(same_file(tmpdir_path("a/model.safetensors"), tmpdir_path("a0/model.safetensors")),
          "same seed");
    CHECK(!same_file(tmpdir_path("a/model.safetensors"), tmpdir_path("a1/model.safetensors")),
          "other seed");
    CHECK(same_file(tmpdir_path("a/vocab.txt"), vocab_path), "vocab.txt copied");

    /* "O" given: kept where it is, not added twice. */
    const char *with_o[] = { "B-size", "O" };
    p.slot_tags = with_o;
    CHECK(parley_nlu_model_create(tmpdir_path("o"), &p, NULL) == PARLEY_OK &&
                  parley_nlu_open(tmpdir_path("o"), NULL, &nlu) == PARLEY_OK,
          "with O: %s", parley_errmsg());
    if (nlu) {
        CHECK(parley_nlu_slot_tag_count(nlu) == 2 && !strcmp(parley_nlu_slot_tag(nlu, 1), "O"),
              "O kept in place");
        parley_nlu_close(nlu);
    }
}

static void test_from_config(void)
{
    FILE *f = fopen(tmpdir_path("bert_config.json"), "w");
    if (!f)
        return;
    fputs("{\"hidden_size\": 8, \"num_hidden_layers\": 1, \"num_attention_heads\": 2,"
          " \"intermediate_size\": 16, \"max_position_embeddings\": 12, \"type_vocab_size\": 1,"
          " \"vocab_size\": 30522, \"intent_labels\": [\"x\"]}",
          f);
    fclose(f);
    parley_nlu_model_params p = small();
    parley_nlu_info in;
    p.layers = p.hidden = p.heads = p.intermediate = p.max_positions = 0;
    p.config = tmpdir_path("bert_config.json");
    CHECK(parley_nlu_model_create(tmpdir_path("c"), &p, &in) == PARLEY_OK, "config: %s",
          parley_errmsg());
    CHECK(in.layers == 1 && in.hidden == 8 && in.heads == 2 && in.intermediate == 16 &&
                  in.max_positions == 12 && in.type_vocab == 1 && in.vocab_size == 47 &&
                  in.n_intents == 2,
          "the shape from the file, vocabulary and labels from the params");
}

static void expect_error(const char *what, parley_nlu_model_params p, parley_status want,
                         const char *says)
{
    parley_status st = parley_nlu_model_create(tmpdir_path("x"), &p, NULL);
    CHECK(st == want && strstr(parley_errmsg(), says), "%s: %s: %s", what, parley_status_str(st),
          parley_errmsg());
}

static void test_errors(void)
{
    parley_nlu_model_params p = small();
    p.heads = 3;
    expect_error("heads", p, PARLEY_ERR_CONFIG, "\"num_attention_heads\": 3 does not divide");
    p = small();
    p.slot_tags = (const char *[]){ "B-size", "B-size" };
    expect_error("duplicate tag", p, PARLEY_ERR_CONFIG, "appears twice");
    p = small();
    p.n_intents = 0;
    expect_error("no intents", p, PARLEY_ERR_CONFIG, "intent_labels");
    p = small();
    p.vocab = "/nonexistent/vocab.txt";
    expect_error("vocab", p, PARLEY_ERR_IO, "/nonexistent/vocab.txt");
    p = small();
    p.config = vocab_path;
    expect_error("config and shape", p, PARLEY_ERR_INVALID_ARG, "exclude");
    p = small();
    p.intermediate = 0;
    expect_error("no shape", p, PARLEY_ERR_INVALID_ARG, "intermediate");
    p = small();
    p.intents = (const char *[]){ "a", NULL };
    expect_error("NULL label", p, PARLEY_ERR_INVALID_ARG, "NULL label");
    CHECK(parley_nlu_model_create(NULL, NULL, NULL) == PARLEY_ERR_INVALID_ARG, "NULL dir");
    struct stat sb;
    CHECK(stat(tmpdir_path("x"), &sb) != 0, "failed creates write nothing");
}

static parley_status create_fault(void *ctx)
{
    (void)ctx;
    parley_nlu_model_params p = small();
    return parley_nlu_model_create(tmpdir_path("fault"), &p, NULL);
}

/* Intents as written, each B-/I- tag's entity once and sorted; a missing model is NOT_FOUND. */
static void test_labels(void)
{
    static const char *many_tags[] = { "O",      "B-topping", "I-topping",
                                       "B-size", "I-size",    "B-address" };
    parley_nlu_model_params p = small();
    p.slot_tags = many_tags, p.n_slot_tags = 6;
    CHECK(parley_nlu_model_create(tmpdir_path("new/parents/labels"), &p, NULL) == PARLEY_OK,
          "create: %s", parley_errmsg());
    parley_nlu_labels *l = NULL;
    CHECK(parley_nlu_labels_read(tmpdir_path("new/parents/labels"), &l) == PARLEY_OK && l,
          "read: %s", parley_errmsg());
    if (l) {
        CHECK(l->n_intents == 2 && !strcmp(l->intents[0], "order") &&
                      !strcmp(l->intents[1], "greet"),
              "intents as written: %d", l->n_intents);
        CHECK(l->n_entities == 3 && !strcmp(l->entities[0], "address") &&
                      !strcmp(l->entities[1], "size") && !strcmp(l->entities[2], "topping"),
              "entities once each, sorted: %d", l->n_entities);
    }
    parley_nlu_labels_free(l);
    parley_nlu_labels_free(NULL);
    l = (parley_nlu_labels *)&l;
    CHECK(parley_nlu_labels_read(tmpdir_path("no-such-model"), &l) == PARLEY_ERR_NOT_FOUND &&
                  l == NULL && strstr(parley_errmsg(), "config.json"),
          "a missing model: %s", parley_errmsg());
    CHECK(parley_nlu_labels_read(NULL, &l) == PARLEY_ERR_INVALID_ARG, "NULL dir");
}

static parley_status labels_fault(void *ctx)
{
    (void)ctx;
    parley_nlu_labels *l = NULL;
    parley_status st = parley_nlu_labels_read(tmpdir_path("new/parents/labels"), &l);
    parley_nlu_labels_free(l);
    return st;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_model_create tests/nlu/vocab_small.txt\n");
        return 2;
    }
    vocab_path = argv[1];
    tmpdir_make("create");
    test_from_fields();
    test_from_config();
    test_errors();
    test_labels();
    CHECK(fault_sweep("labels read", labels_fault, NULL) > 3, "the labels read allocates");
    long points = fault_sweep("model create", create_fault, NULL);
    CHECK(points > 10, "%ld allocation failure points", points);
    tmpdir_remove();
    return check_done();
}
